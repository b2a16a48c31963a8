// Planar pendulum in polar coordinates [seed-000, "2D pendulum"]: q = (r, theta), theta from the downward
// vertical, holonomic h = r - L, a constant horizontal force fx on the bob.
//   T = m/2 (rd^2 + r^2 thetad^2), V = -m g r cos(theta), F = (fx sin(theta), fx r cos(theta)).
// Closed-form multiplier on the constraint: lambda = -m L thetad^2 - m g cos(theta) - fx sin(theta).
#pragma once

#include <vector>

#include <array>
#include <cmath>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct PendulumPolar {
  static constexpr const char* kName = "pendulum_polar";
  static constexpr const char* kDescription =
      "planar pendulum in polar coordinates q = (r, theta), h = r - L, horizontal force fx";
  static constexpr int kDof = 2;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"r", "theta"};
  static constexpr const char* kCoordinateUnits[] = {"m", "rad"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  // Velocities the `substituted` formulation solves A qd = 0 for ([seed-002]'s mistake): rd (legitimate: the constraint is holonomic, r = L, rd = 0).
  static constexpr std::array kEliminated = {0};

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  double fx = 0.0;
  static constexpr std::array kParameters = {
      ParameterSpec<PendulumPolar>{"m", &PendulumPolar::m, "bob mass [kg]"},
      ParameterSpec<PendulumPolar>{"L", &PendulumPolar::L, "rod length [m]"},
      ParameterSpec<PendulumPolar>{"g", &PendulumPolar::g, "gravity [m/s^2]"},
      ParameterSpec<PendulumPolar>{"fx", &PendulumPolar::fx, "constant horizontal force on the bob [N]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"pivot", "m"}, {"bob", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = 0;
    out[1] = 0;
    out[2] = q[0] * std::sin(q[1]);
    out[3] = -q[0] * std::cos(q[1]);
  }
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    if (!(m > 0) || !std::isfinite(m)) throw InputError("pendulum_polar: parameter m must be > 0");
    if (!(L > 0) || !std::isfinite(L)) throw InputError("pendulum_polar: parameter L must be > 0");
    if (!std::isfinite(g) || !std::isfinite(fx)) throw InputError("pendulum_polar: g and fx must be finite");
  }

  template <class T>
  void mass_matrix(const VecN<T, 2>& q, MatN<T, 2, 2>& M) const {
    M(0, 0) = T(m);
    M(0, 1) = T(0.0);
    M(1, 0) = T(0.0);
    M(1, 1) = m * q[0] * q[0];
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    using std::cos;
    return -m * g * q[0] * cos(q[1]);
  }
  template <class T>
  void constraint(const VecN<T, 2>& q, VecN<T, 1>& h) const {
    h[0] = q[0] - L;
  }
  template <class T, class Q, class Out>
  void generalized_force(const T&, const Q& q, const Q&, Out& F) const {
    using std::cos;
    using std::sin;
    F[0] = fx * sin(q[1]);
    F[1] = fx * q[0] * cos(q[1]);
  }
  // [seed-000]: lambda = -m L thetad^2 - m g cos(theta) - fx sin(theta), on r = L, rd = 0.
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    lambda[0] = -m * L * qd[1] * qd[1] - m * g * std::cos(q[1]) - fx * std::sin(q[1]);
  }
  // One radian from the downward vertical, swinging at 0.5 rad/s (a nonzero velocity exercises Adot qd).
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << L, 1.0;
    qd0 << 0.0, 0.5;
  }
};

}  // namespace clm
