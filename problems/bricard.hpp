// Bricard's mechanism, problem A04 of the IFToMM multibody benchmark library [IFToMM-library], [GDLC-2006]:
// a closed loop of five movable bars (1 m, 1 kg, uniform, square cross-section 0.1 m) and six revolute joints,
// the sixth "bar" being the ground, gravity 9.81 m/s^2 along -y, 10 s from rest. Grubler's count gives
// 5 x 6 - 6 x 5 = 0 degrees of freedom; the joint axes' orientation [Bricard-1897] gives it one: the
// constraints are redundant. The loop (as the benchmark's public implementations build it: MBS-BOS's OpenSim
// model of A04 [sw-mbs-bos], Exudyn's bricardMechanism.py, both citing the benchmark specification, whose own
// text was not readable here; docs/references.md):
//
//   joint  P1 = (0, 0, 0)   axis y  (ground)      bar 1: P1 -> P2 along +x
//          P2 = (1, 0, 0)   axis z                bar 2: P2 -> P3 along -y
//          P3 = (1, -1, 0)  axis x                bar 3: P3 -> P4 along +z
//          P4 = (1, -1, 1)  axis y                bar 4: P4 -> P5 along -x
//          P5 = (0, -1, 1)  axis z                bar 5: P5 -> P6 along +y
//          P6 = (0, 0, 1)   axis x  (ground)      ground: P6 -> P1
//
// (times L). Every joint axis is perpendicular to both bars it joins and to the next joint's axis. The
// benchmark's reference point P3 is the joint between bars 2 and 3 (MBS-BOS records Link_2's end there);
// the joints are numbered P1..P6 along the loop so that it keeps that name.
//
// Coordinates: natural coordinates [GdJB-1994] (García de Jalón's points and unit vectors): the four moving
// joints P2..P5 and the unit vectors a2..a5 of their axes (P1, P6, a1 = y, a6 = x are fixed), n = 24. A joint
// is a point and an axis shared by the two bars it connects, so the revolute joints cost nothing; each bar
// i (from P_i to P_{i+1}, d = P_{i+1} - P_i) is a rigid body through the 4 scalar constraints
//   |d|^2 = L^2,  d . a_i = 0,  d . a_{i+1} = 0,  a_i . a_{i+1} = 0     (5 bars: 20 rows)
// and each moving axis is a unit vector, |a_j|^2 = 1 (4 rows): m = 24 = n, Grubler's 0 DOF, while A has rank
// 23 on the constraint manifold (mobility 1). All constraints are quadratic polynomials.
//
// A body point is r = P_i + xi1 d + xi2 a_i + xi3 a_{i+1} (xi1 in [0, 1] along the bar, xi2, xi3 in
// [-s/2, s/2] across its square section of side s), linear in q, so M is constant:
//   T_i = m/2 [ (1/3)|P_i'|^2 + (1/3)|P_{i+1}'|^2 + (1/3) P_i'.P_{i+1}' + (s^2/12)(|a_i'|^2 + |a_{i+1}'|^2) ],
// which is the cuboid's inertia exactly: m (L^2 + s^2)/12 about a transverse axis through the centre, m s^2/6
// about the bar's own axis. V = m g sum_i (y_i + y_{i+1})/2.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"

namespace clm {

struct Bricard {
  static constexpr const char* kName = "bricard";
  static constexpr const char* kDescription =
      "Bricard's mechanism (IFToMM benchmark A04): 5 bars, 6 revolute joints in natural coordinates, redundant "
      "constraints (m = n = 24, rank 23, mobility 1)";
  static constexpr int kDof = 24;
  static constexpr int kConstraints = 24;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {
      "x2",  "y2",  "z2",  "x3",  "y3",  "z3",  "x4",  "y4",  "z4",  "x5",  "y5",  "z5",
      "a2x", "a2y", "a2z", "a3x", "a3y", "a3z", "a4x", "a4y", "a4z", "a5x", "a5y", "a5z"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "m", "m", "m", "m", "m", "m", "m", "m", "m", "m",
                                                     "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"};

  // The benchmark's reference point P3 (core/published_reference.hpp): q columns x3, y3, z3.
  static constexpr const char* kReferencePointName = "P3";
  static constexpr std::array kReferencePointCoordinates = {3, 4, 5};

  double L = 1.0;
  double mass = 1.0;
  double side = 0.1;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<Bricard>{"L", &Bricard::L, "bar length [m] (all five bars and the ground link)"},
      ParameterSpec<Bricard>{"mass", &Bricard::mass, "mass of each bar [kg]"},
      ParameterSpec<Bricard>{"side", &Bricard::side, "side of the bars' square cross-section [m] (> 0: the axes "
                                                     "need inertia, M must be positive definite)"},
      ParameterSpec<Bricard>{"g", &Bricard::g, "gravity [m/s^2], along -y"},
  };

  int dof() const { return kDof; }
  int constraints() const { return kConstraints; }
  void validate() const {
    auto positive = [](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v)) throw InputError(std::string("bricard: parameter ") + name + " must be > 0");
    };
    positive(L, "L");
    positive(mass, "mass");
    positive(side, "side");
    if (!std::isfinite(g)) throw InputError("bricard: parameter g must be finite");
  }

  // Joint j = 1..6 (P_j) and its axis a_j, fixed for j = 1, 6, else read from q.
  template <class T>
  void joint(const VecN<T, kDof>& q, int j, std::array<T, 3>& p, std::array<T, 3>& a) const {
    if (j == 1) {
      p = {T(0), T(0), T(0)};
      a = {T(0), T(1), T(0)};
    } else if (j == 6) {
      p = {T(0), T(0), T(L)};
      a = {T(1), T(0), T(0)};
    } else {
      const int k = j - 2;
      p = {q[3 * k], q[3 * k + 1], q[3 * k + 2]};
      a = {q[12 + 3 * k], q[12 + 3 * k + 1], q[12 + 3 * k + 2]};
    }
  }

  template <class T>
  void mass_matrix(const VecN<T, kDof>&, MatN<T, kDof, kDof>& M) const {
    M.setZero();
    // Per bar, over (P_i, P_{i+1}, a_i, a_{i+1}): m [1/3 1/6 0 0; 1/6 1/3 0 0; 0 0 s^2/12 0; 0 0 0 s^2/12] (x) I3.
    // Block index of a joint's point / axis in q (-1: fixed).
    auto point = [](int j) { return (j == 1 || j == 6) ? -1 : 3 * (j - 2); };
    auto axis = [](int j) { return (j == 1 || j == 6) ? -1 : 12 + 3 * (j - 2); };
    for (int i = 1; i <= 5; ++i) {
      const int blocks[4] = {point(i), point(i + 1), axis(i), axis(i + 1)};
      const double w[4][4] = {{1.0 / 3, 1.0 / 6, 0, 0},
                              {1.0 / 6, 1.0 / 3, 0, 0},
                              {0, 0, side * side / 12, 0},
                              {0, 0, 0, side * side / 12}};
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
          if (blocks[r] < 0 || blocks[c] < 0 || w[r][c] == 0) continue;
          for (int k = 0; k < 3; ++k) M(blocks[r] + k, blocks[c] + k) += T(mass * w[r][c]);
        }
    }
  }

  template <class T>
  T potential(const VecN<T, kDof>& q) const {
    // Each bar's centre is the midpoint of its joints: sum over bars of (y_i + y_{i+1})/2 counts every moving
    // joint once (P1 and P6 are at y = 0).
    return mass * g * (q[1] + q[4] + q[7] + q[10]);
  }

  template <class T>
  void constraint(const VecN<T, kDof>& q, VecN<T, kConstraints>& h) const {
    std::array<T, 3> p0, a0, p1, a1;
    auto dot = [](const std::array<T, 3>& u, const std::array<T, 3>& v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; };
    for (int i = 1; i <= 5; ++i) {
      joint(q, i, p0, a0);
      joint(q, i + 1, p1, a1);
      const std::array<T, 3> d = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
      const int r = 4 * (i - 1);
      h[r] = 0.5 * (dot(d, d) - T(L * L));
      h[r + 1] = dot(d, a0);
      h[r + 2] = dot(d, a1);
      h[r + 3] = dot(a0, a1);
    }
    for (int k = 0; k < 4; ++k) {
      const T ax = q[12 + 3 * k], ay = q[12 + 3 * k + 1], az = q[12 + 3 * k + 2];
      h[20 + k] = 0.5 * (ax * ax + ay * ay + az * az - T(1));
    }
  }

  // The benchmark's initial configuration (the table above), released from rest as the benchmark's public
  // implementations start it (MBS-BOS's OpenSim model: all pin angles 0, no initial speeds; Exudyn's test
  // model likewise): h = 0 and A qd = 0 exactly. Gravity has a component along the one admissible direction
  // there (the potential's derivative along it is -2.83 N for the defaults), so the loop starts to move.
  void default_initial(Vec& q0, Vec& qd0) const {
    q0.resize(kDof);
    q0 << L, 0, 0, L, -L, 0, L, -L, L, 0, -L, L,  // P2 .. P5
        0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1;         // a2 = z, a3 = x, a4 = y, a5 = z
    qd0 = Vec::Zero(kDof);
  }
};

}  // namespace clm
