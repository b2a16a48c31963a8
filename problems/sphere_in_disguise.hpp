// A particle in space held on a sphere, but told so only through velocities (issue 4, item 3): q = (x, y, z),
//   T = m/2 |qd|^2, V = 0,   one Pfaffian constraint  x xd + y yd + z zd = 0   (A(q) = q^T).
// The constraint is d/dt (|q|^2 / 2) = 0, i.e. the holonomic |q| = const in disguise: its distribution
// ker A(q) = T_q(sphere) is involutive (Frobenius), so `clmbench analyze` must call it integrable with an
// accessible dimension of 2 = n - 1, where the sleigh, the disk and the skate reach every direction.
// Dynamics: m qdd = lambda q, so the particle runs uniformly on a great circle of the sphere |q| = |q0|:
//   q(t) = q0 cos(w t) + qd0 sin(w t)/w,  qd(t) = -q0 w sin(w t) + qd0 cos(w t),  w = |qd0| / |q0|,
// and lambda = m qdd . q / |q|^2 = -m w^2 (constant).
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"

namespace clm {

struct SphereInDisguise {
  static constexpr const char* kName = "sphere_in_disguise";
  static constexpr const char* kDescription =
      "particle in space with the Pfaffian constraint q . qd = 0 (the sphere |q| = R in disguise); q = (x, y, z)";
  static constexpr int kDof = 3;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x", "y", "z"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "m"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;

  double m = 1.0;
  double R = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<SphereInDisguise>{"m", &SphereInDisguise::m, "mass [kg]"},
      ParameterSpec<SphereInDisguise>{"R", &SphereInDisguise::R, "initial radius |q0| of the default start [m]"},
  };

  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    if (!(m > 0) || !std::isfinite(m)) throw InputError("sphere_in_disguise: parameter m must be > 0");
    if (!(R > 0) || !std::isfinite(R)) throw InputError("sphere_in_disguise: parameter R must be > 0");
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) M(i, j) = T(i == j ? m : 0.0);
  }
  template <class T>
  T potential(const VecN<T, 3>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    A(0, 0) = q[0];
    A(0, 1) = q[1];
    A(0, 2) = q[2];
  }
  // No velocity_basis on purpose: the sphere has no smooth nowhere-vanishing tangent frame (hairy ball),
  // so the analysis uses the coordinate-partitioned basis.

  // Uniform motion on the great circle through q0 along qd0 (consistent data: q0 . qd0 = 0, q0 != 0).
  // sin(w t)/w is taken as t when w = 0 (the particle at rest stays put).
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const double r = q0.norm();
    if (!(r > 0)) return false;
    const double w = qd0.norm() / r;
    const double c = std::cos(w * t), s = std::sin(w * t);
    const double s_over_w = w == 0 ? t : s / w;
    q = q0 * c + qd0 * s_over_w;
    qd = -q0 * (w * s) + qd0 * c;
    return true;
  }
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    lambda[0] = -m * qd.squaredNorm() / q.squaredNorm();
  }
  // On the x axis at radius R, moving tangentially with qd0 = (0, R, 0.5 R): w = sqrt(1.25) rad/s.
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << R, 0, 0;
    qd0 << 0, R, 0.5 * R;
  }
};

}  // namespace clm
