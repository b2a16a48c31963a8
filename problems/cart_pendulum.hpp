// Cart towing a pendulum: the zoo's mixed mechanism (ConstraintKind::kMixed; docs/design.md section 1, "Mixed
// constraints"). A knife-edge cart (a Chaplygin sleigh: centre of mass (x, y), heading theta, blade b ahead of the
// centre) held to the origin by a spring k, towing a bob (xp, yp) of mass mp on a rigid rod of length L hinged at
// the cart's centre, on a plane inclined at alpha (the bob's weight pulls it down the slope, -x).
// q = (x, y, theta, xp, yp):
//   T = m/2 (xd^2 + yd^2) + I/2 thetad^2 + mp/2 (xpd^2 + ypd^2),
//   V = k/2 (x^2 + y^2) + mp g sin(alpha) xp,
//   h(q)  = ((xp - x)^2 + (yp - y)^2 - L^2)/2 = 0                (the rod: a position row),
//   A_v(q) = (-sin theta, cos theta, -b, 0, 0),  A_v qd = 0        (the blade: a velocity row).
// Not integrable (the blade), no closed form: its reference is its twin in reduced coordinates, the rod eliminated
// by xp = x + L cos(phi), yp = y + L sin(phi) (tests/data/mechanisms/cart_pendulum_reduced.toml, a Pfaffian
// mechanism); tests/mixed_constraints_test.cpp holds this header, the mechanism file cart_pendulum.toml and the
// twin to one motion.
#pragma once

#include <array>
#include <cmath>
#include <vector>

#include "core/problem.hpp"
#include "problems/body_velocity_spec.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/point_spec.hpp"
#include "problems/rolling_contact.hpp"

namespace clm {

struct CartPendulum {
  static constexpr const char* kName = "cart_pendulum";
  static constexpr const char* kDescription =
      "knife-edge cart towing a bob on a rigid rod (mixed: the rod a position row, the blade a velocity row); "
      "q = (x, y, theta, xp, yp)";
  static constexpr int kDof = 5;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "xp", "yp"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "m", "m"};
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kMixed;
  static constexpr int kPositionConstraints = 1;
  // Position rows first: lambda = (rod tension / L, blade's sideways force).
  static constexpr const char* kConstraintNames[] = {"rod", "blade"};

  double m = 2.0;
  double I = 0.3;
  double b = 0.25;
  double mp = 0.7;
  double L = 0.8;
  double k = 1.5;
  double g = 9.81;
  double alpha = 0.4;
  static constexpr std::array kParameters = {
      ParameterSpec<CartPendulum>{"m", &CartPendulum::m, "cart mass [kg]"},
      ParameterSpec<CartPendulum>{"I", &CartPendulum::I, "cart moment of inertia about its centre [kg m^2]"},
      ParameterSpec<CartPendulum>{"b", &CartPendulum::b, "blade ahead of the centre [m]"},
      ParameterSpec<CartPendulum>{"mp", &CartPendulum::mp, "bob mass [kg]"},
      ParameterSpec<CartPendulum>{"L", &CartPendulum::L, "rod length [m]"},
      ParameterSpec<CartPendulum>{"k", &CartPendulum::k, "spring holding the cart to the origin [N/m]"},
      ParameterSpec<CartPendulum>{"g", &CartPendulum::g, "gravity [m/s^2]"},
      ParameterSpec<CartPendulum>{"alpha", &CartPendulum::alpha, "inclination of the plane [rad]"},
  };

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"cart", "m"}, {"bob", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
    out[2] = q[3];
    out[3] = q[4];
  }
  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kVelocities{
        {"u", "m/s", "the cart's forward speed, xd cos(theta) + yd sin(theta)"},
        {"omega", "rad/s", "the cart's turning rate, thetad"},
        {"phid", "rad/s", "the rod's turning rate, ((xp - x)(ypd - yd) - (yp - y)(xpd - xd)) / L^2"}};
    return kVelocities;
  }
  void body_velocity_values(double /*t*/, const Vec& q, const Vec& qd, Vec& out) const {
    out[0] = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    out[1] = qd[2];
    out[2] = ((q[3] - q[0]) * (qd[4] - qd[1]) - (q[4] - q[1]) * (qd[3] - qd[0])) / (L * L);
  }

  int dof() const { return kDof; }
  int constraints() const { return kConstraints; }
  int position_constraints() const { return kPositionConstraints; }
  void validate() const {
    require_positive(kName, {{m, "m"}, {I, "I"}, {mp, "mp"}, {L, "L"}});
    require_finite(kName, {{b, "b"}, {k, "k"}, {g, "g"}, {alpha, "alpha"}});
  }

  template <class T>
  void mass_matrix(const VecN<T, kDof>&, MatN<T, kDof, kDof>& M) const {
    diagonal_mass_matrix<T>(M, m, m, I, mp, mp);
  }
  template <class T>
  T potential(const VecN<T, kDof>& q) const {
    return T(0.5 * k) * (q[0] * q[0] + q[1] * q[1]) + T(mp * g * std::sin(alpha)) * q[3];
  }
  template <class T>
  void constraint(const VecN<T, kDof>& q, VecN<T, kPositionConstraints>& h) const {
    const T dx = q[3] - q[0], dy = q[4] - q[1];
    h[0] = T(0.5) * (dx * dx + dy * dy) - T(0.5 * L * L);
  }
  template <class T>
  void pfaffian(const VecN<T, kDof>& q, MatN<T, kConstraints - kPositionConstraints, kDof>& A) const {
    blade_normal(q[2], A.row(0));
    A(0, 2) = T(-b);
    A(0, 3) = T(0.0);
    A(0, 4) = T(0.0);
  }

  // The file's start: heading theta0 = 0.3, rod angle phi0 = 2.0, xd0 = 1, thetad0 = 0.8, phid0 = -1.5, yd0 from
  // the blade; on both rows.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double theta0 = 0.3, phi0 = 2.0, xd0 = 1.0, thetad0 = 0.8, phid0 = -1.5;
    const double yd0 = (std::sin(theta0) * xd0 + b * thetad0) / std::cos(theta0);
    q0.resize(kDof);
    qd0.resize(kDof);
    q0 << 0.1, -0.2, theta0, 0.1 + L * std::cos(phi0), -0.2 + L * std::sin(phi0);
    qd0 << xd0, yd0, thetad0, xd0 - L * std::sin(phi0) * phid0, yd0 + L * std::cos(phi0) * phid0;
  }
};

}  // namespace clm
