// Rigid bodies for problems written from body poses: a problem that can say where each body is (centre of
// mass c(q), orientation R(q), body -> world) gets its mass matrix and the velocity Jacobians of its material
// points by automatic differentiation of those poses, instead of hand-derived velocities:
//
//   T = 1/2 qd^T M(q) qd,   M = sum_b m_b J_b^T J_b + W_b^T I_b W_b,
//   J_b = d c_b / dq (3 x n),   W_b = body angular velocity Jacobian, column i = vee(R^T dR/dq_i) (3 x n),
//
// I_b the inertia about the centre of mass in body axes. The poses are evaluated once with the scalar
// Tangent<T, n> (core/tangent.hpp) seeded with the n coordinate directions, so the value parts are the poses
// and the tangent parts their derivatives, whatever scalar T the core differentiates the problem with.
// The velocity of a material point p of a body (at world position p now) is J_p qd with
// J_p = d/dq [c(q) + R(q) l], l = R^T (p - c) held fixed (point_jacobian): rolling-contact constraints.
// Small fixed-size algebra over any scalar (std::array, no Eigen: the scalar may be a nested Tangent).
#pragma once

#include <array>
#include <cmath>
#include <type_traits>

#include "core/tangent.hpp"

namespace clm::rigid {

template <class S>
using Vec3 = std::array<S, 3>;
template <class S>
using Mat3 = std::array<std::array<S, 3>, 3>;  // row-major: R[i][j]

template <class S>
Mat3<S> multiply(const Mat3<S>& a, const Mat3<S>& b) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
  return r;
}
template <class S>
Vec3<S> apply(const Mat3<S>& a, const Vec3<S>& x) {
  Vec3<S> r;
  for (int i = 0; i < 3; ++i) r[i] = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2];
  return r;
}
template <class S>
  requires(!std::is_same_v<S, double>)
Vec3<S> apply(const Mat3<S>& a, const std::array<double, 3>& x) {
  Vec3<S> r;
  for (int i = 0; i < 3; ++i) r[i] = a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2];
  return r;
}
template <class S>
Vec3<S> add(const Vec3<S>& a, const Vec3<S>& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
template <class S>
Vec3<S> subtract(const Vec3<S>& a, const Vec3<S>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

// Elementary rotations (right-handed, angle a about the x, y, z axis).
template <class S>
Mat3<S> rot_x(const S& a) {
  using std::cos;
  using std::sin;
  const S c = cos(a), s = sin(a);
  return {{{S(1.0), S(0.0), S(0.0)}, {S(0.0), c, -s}, {S(0.0), s, c}}};
}
template <class S>
Mat3<S> rot_y(const S& a) {
  using std::cos;
  using std::sin;
  const S c = cos(a), s = sin(a);
  return {{{c, S(0.0), s}, {S(0.0), S(1.0), S(0.0)}, {-s, S(0.0), c}}};
}
template <class S>
Mat3<S> rot_z(const S& a) {
  using std::cos;
  using std::sin;
  const S c = cos(a), s = sin(a);
  return {{{c, -s, S(0.0)}, {s, c, S(0.0)}, {S(0.0), S(0.0), S(1.0)}}};
}
// Rotation by angle a about the constant unit axis u (Rodrigues): cos a I + sin a [u]x + (1 - cos a) u u^T.
template <class S>
Mat3<S> rot_axis(const std::array<double, 3>& u, const S& a) {
  using std::cos;
  using std::sin;
  const S c = cos(a), s = sin(a), k = 1.0 - c;
  Mat3<S> r;
  const double ux[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = (i == j ? c : S(0.0)) + s * ux[i][j] + k * (u[i] * u[j]);
  return r;
}

// The pose of one body differentiated along D coordinate directions.
template <class T, int D>
struct Pose {
  Vec3<Tangent<T, D>> c;  // centre of mass, world
  Mat3<Tangent<T, D>> R;  // orientation, body -> world
};

// Inertial data of a body: mass and inertia about the centre of mass in body axes (symmetric).
struct BodyInertia {
  double m = 0;
  std::array<std::array<double, 3>, 3> I{};
};

// M += m J^T J + W^T I W for the first n coordinates (n <= D); M is any matrix with M(i, j) of scalar T.
template <class T, int D, class MatOut>
void add_body_mass_matrix(const Pose<T, D>& pose, const BodyInertia& body, int n, MatOut& M) {
  std::array<Vec3<T>, D> J, W;  // columns
  for (int i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) J[i][a] = pose.c[a].d[i];
    // W_i = vee(R^T dR_i): (R^T dR)_{21}, (R^T dR)_{02}, (R^T dR)_{10}.
    auto rt_dr = [&](int r, int s) {
      T acc = pose.R[0][r].v * pose.R[0][s].d[i];
      acc += pose.R[1][r].v * pose.R[1][s].d[i];
      acc += pose.R[2][r].v * pose.R[2][s].d[i];
      return acc;
    };
    W[i] = {rt_dr(2, 1), rt_dr(0, 2), rt_dr(1, 0)};
  }
  for (int i = 0; i < n; ++i) {
    Vec3<T> IW;
    for (int a = 0; a < 3; ++a) IW[a] = body.I[a][0] * W[i][0] + body.I[a][1] * W[i][1] + body.I[a][2] * W[i][2];
    for (int j = i; j < n; ++j) {
      T e = body.m * (J[i][0] * J[j][0] + J[i][1] * J[j][1] + J[i][2] * J[j][2]);
      e += IW[0] * W[j][0] + IW[1] * W[j][1] + IW[2] * W[j][2];
      M(i, j) += e;
      if (j != i) M(j, i) += e;
    }
  }
}

// Velocity Jacobian (3 x n, columns) of the material point of the body currently at world position p.
template <class T, int D>
std::array<Vec3<T>, D> point_jacobian(const Pose<T, D>& pose, const Vec3<T>& p, int n) {
  Vec3<T> r, l;
  for (int a = 0; a < 3; ++a) r[a] = p[a] - pose.c[a].v;
  for (int a = 0; a < 3; ++a) l[a] = pose.R[0][a].v * r[0] + pose.R[1][a].v * r[1] + pose.R[2][a].v * r[2];
  std::array<Vec3<T>, D> J;
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < 3; ++a)
      J[i][a] = pose.c[a].d[i] + pose.R[a][0].d[i] * l[0] + pose.R[a][1].d[i] * l[1] + pose.R[a][2].d[i] * l[2];
  return J;
}

}  // namespace clm::rigid
