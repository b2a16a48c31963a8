// A planar pendulum whose pivot is driven along a prescribed path: the suite's reference problem for a
// rheonomic (time-dependent) holonomic constraint h(q, t) = 0 (core/problem.hpp).
//   q = (x, y) of the bob, y up, gravity along -y; pivot P(t) = (X, Y) = (a sin(w t), b cos(w t));
//   T = m/2 (xd^2 + yd^2), V = m g y, h(q, t) = (|q - P(t)|^2 - L^2)/2.
// Everything else comes from autodiff: A = (q - P)^T, the velocity constraint A qd + b = 0 with
// b = dh/dt = -(q - P) . Pdot, and the acceleration bias |qd - Pdot|^2 - (q - P) . Pddot.
// In the minimal coordinate theta (from the downward vertical: q = P + L (sin th, -cos th)) the motion is
//   L thd_dot = -(g sin th + Xdd cos th + Ydd sin th),
// and the multiplier (suite's sign convention, negative under tension)
//   lambda = m ((sin th Xdd - cos th Ydd - g cos th)/L - thd^2)
// (tests/time_dependent_test.cpp integrates the theta equation independently and compares).
// The moving pivot does work on the bob: the energy T + V is not conserved.
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/planar_bob.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct DrivenPendulum {
  static constexpr const char* kName = "driven_pendulum";
  static constexpr const char* kDescription =
      "pendulum whose pivot moves along (a sin(w t), b cos(w t)); q = (x, y), rheonomic h(q, t) = "
      "(|q - P(t)|^2 - L^2)/2";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"x", "y"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m"};

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  double a = 0.1;  // horizontal amplitude of the pivot
  double b = 0.05;  // vertical amplitude of the pivot
  double w = 3.0;  // drive frequency
  using S = DrivenPendulum;
  static constexpr std::array kParameters = {
      ParameterSpec<S>{"m", &S::m, "bob mass [kg]"},
      ParameterSpec<S>{"L", &S::L, "rod length [m]"},
      ParameterSpec<S>{"g", &S::g, "gravity [m/s^2], along -y"},
      ParameterSpec<S>{"a", &S::a, "pivot amplitude along x [m]: X = a sin(w t)"},
      ParameterSpec<S>{"b", &S::b, "pivot amplitude along y [m]: Y = b cos(w t)"},
      ParameterSpec<S>{"w", &S::w, "drive angular frequency [rad/s]"},
  };

  // Points of interest (problems/point_spec.hpp): the driven pivot, a function of t, and the bob.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"pivot", "m"}, {"bob", "m"}};
    return kPoints;
  }
  void point_positions(double t, const Vec& q, Vec& out) const {
    double P[2], Pd[2], Pdd[2];
    pivot(t, P, Pd, Pdd);
    out[0] = P[0];
    out[1] = P[1];
    out[2] = q[0];
    out[3] = q[1];
  }
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    require_positive(kName, {{m, "m"}, {L, "L"}});
    for (const auto& p : kParameters)
      if (!std::isfinite(this->*(p.member)))
        throw InputError("driven_pendulum: parameter " + std::string(p.name) + " must be finite");
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
  void constraint(const VecN<T, 2>& q, const T& t, VecN<T, 1>& h) const {
    using std::cos;
    using std::sin;
    const T dx = q[0] - a * sin(w * t), dy = q[1] - b * cos(w * t);
    h[0] = rod_constraint(dx, dy, L);
  }

  // The pivot's position, velocity and acceleration at t (the minimal-coordinate reference, default_initial).
  void pivot(double t, double P[2], double Pd[2], double Pdd[2]) const {
    const double s = std::sin(w * t), c = std::cos(w * t);
    P[0] = a * s;
    P[1] = b * c;
    Pd[0] = a * w * c;
    Pd[1] = -b * w * s;
    Pdd[0] = -a * w * w * s;
    Pdd[1] = -b * w * w * c;
  }

  // theta = 0.5 rad from the downward vertical, thetad = 0.3 rad/s relative to the moving pivot, at t = 0.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double th = 0.5, thd = 0.3;
    double P[2], Pd[2], Pdd[2];
    pivot(0.0, P, Pd, Pdd);
    q0 << P[0] + L * std::sin(th), P[1] - L * std::cos(th);
    qd0 << Pd[0] + L * std::cos(th) * thd, Pd[1] + L * std::sin(th) * thd;
  }
};

}  // namespace clm
