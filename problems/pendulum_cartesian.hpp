// Planar pendulum in Cartesian coordinates: q = (x, y) of the bob, y up, gravity along -y, pivot at the
// origin, holonomic h = (x^2 + y^2 - L^2)/2 (so A = (x, y), a multiplier with units of force per length).
//   T = m/2 (xd^2 + yd^2), V = m g y.
// Multiplier (derived from M qdd = A^T lambda - dV/dq and the acceleration-level constraint
// x xdd + y ydd + xd^2 + yd^2 = 0):
//   (lambda/m)(x^2 + y^2) - g y + |v|^2 = 0   =>   lambda = m (g y - |v|^2) / (x^2 + y^2),
// i.e. lambda = -m (|v|^2 - g y)/L^2 on the constraint; the rod tension is -lambda L.
#pragma once

#include <vector>

#include <array>
#include <cmath>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/planar_bob.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct PendulumCartesian {
  static constexpr const char* kName = "pendulum_cartesian";
  static constexpr const char* kDescription =
      "planar pendulum in Cartesian coordinates q = (x, y), y up, h = (x^2 + y^2 - L^2)/2";
  static constexpr int kDof = 2;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x", "y"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<PendulumCartesian>{"m", &PendulumCartesian::m, "bob mass [kg]"},
      ParameterSpec<PendulumCartesian>{"L", &PendulumCartesian::L, "rod length [m]"},
      ParameterSpec<PendulumCartesian>{"g", &PendulumCartesian::g, "gravity [m/s^2], along -y"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"pivot", "m"}, {"bob", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = 0;
    out[1] = 0;
    out[2] = q[0];
    out[3] = q[1];
  }
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    require_positive(kName, {{m, "m"}, {L, "L"}});
    require_finite(kName, {{g, "g"}});
  }

  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    diagonal_mass_matrix<T>(M, m, m);
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return bob_potential(m, g, q);
  }
  template <class T>
  void constraint(const VecN<T, 2>& q, VecN<T, 1>& h) const {
    h[0] = rod_constraint(q[0], q[1], L);
  }
  // x^2 + y^2 rather than L^2: equal on the constraint, and this is what the KKT solve gives off it too.
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    const double r2 = q[0] * q[0] + q[1] * q[1];
    lambda[0] = m * (g * q[1] - qd.squaredNorm()) / r2;
  }
  // One radian from the downward vertical, swinging at 0.5 rad/s (tangential velocity).
  void default_initial(Vec& q0, Vec& qd0) const {
    const double th = 1.0, thd = 0.5;
    q0 << L * std::sin(th), -L * std::cos(th);
    qd0 << L * std::cos(th) * thd, L * std::sin(th) * thd;
  }
};

}  // namespace clm
