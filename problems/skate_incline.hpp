// Chaplygin skate on an inclined plane [seed-004]: q = (x, y, phi) of the blade point, x downhill,
// g the downhill component of gravity,
//   L = m/2 (xd^2 + yd^2) + J/2 phid^2 + m g x,   constraint xd sin(phi) - yd cos(phi) = 0
// (no velocity across the blade). Equations (M qdd + dV/dq = A^T lambda, A = (sin phi, -cos phi, 0)):
//   J phidd = 0                    => phi = phi0 + w t,
//   forward speed v (qd = v (cos phi, sin phi)):  vd = g cos(phi),
//   across the blade:  m v w = -m g sin(phi) - lambda   => lambda = -m (v phid + g sin phi).
// Closed form for w != 0, with a = v0 - g sin(phi0)/w:
//   v = a + g sin(phi)/w,
//   x = x0 + a (sin phi - sin phi0)/w + g (cos 2phi0 - cos 2phi)/(4 w^2),
//   y = y0 - a (cos phi - cos phi0)/w + (g/w) (t/2 - (sin 2phi - sin 2phi0)/(4 w)),
// from rest with phi0 = 0: x = g sin^2(w t)/(2 w^2), y = g (w t - sin(2 w t)/2)/(2 w^2) (docs/design.md); the skate
// drifts sideways at mean speed g/(2w) and does not slide down on average. For w = 0 it accelerates
// uniformly along the fixed line of the blade: v = v0 + g cos(phi0) t.
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/rolling_contact.hpp"
#include "problems/body_velocity_spec.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct SkateIncline {
  static constexpr const char* kName = "skate_incline";
  static constexpr const char* kDescription =
      "Chaplygin skate on an inclined plane (seed 004), x downhill; q = (x, y, phi)";
  static constexpr int kDof = 3;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x", "y", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // Velocities the `substituted` formulation solves A qd = 0 for ([seed-002]'s mistake): yd (divides by cos(phi)).
  static constexpr std::array kEliminated = {1};

  double m = 1.0;
  double J = 0.1;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<SkateIncline>{"m", &SkateIncline::m, "mass [kg]"},
      ParameterSpec<SkateIncline>{"J", &SkateIncline::J, "moment of inertia about the blade point [kg m^2]"},
      ParameterSpec<SkateIncline>{"g", &SkateIncline::g, "downhill component of gravity [m/s^2]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"blade", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];  // x downhill
    out[1] = q[1];
  }
  // Body velocities (problems/body_velocity_spec.hpp): speed along the blade and turning rate.
  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kVelocities{
        {"v", "m/s", "forward speed along the blade, xd cos(phi) + yd sin(phi)"}, {"omega", "rad/s", "turning rate, phid"}};
    return kVelocities;
  }
  void body_velocity_values(double /*t*/, const Vec& q, const Vec& qd, Vec& out) const {
    out[0] = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    out[1] = qd[2];
  }
  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    require_positive(kName, {{m, "m"}, {J, "J"}});
    require_finite(kName, {{g, "g"}});
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    diagonal_mass_matrix<T>(M, m, m, J);
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    return -m * g * q[0];
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    using std::cos;
    using std::sin;
    A(0, 0) = sin(q[2]);
    A(0, 1) = -cos(q[2]);
    A(0, 2) = T(0.0);
  }
  // Sliding along the blade and turning.
  // Transversal frame for fernandez_bloch: the sideways direction of the blade, (sin, -cos, 0), A X = 1.
  template <class T>
  void transversal_frame(const VecN<T, 3>& q, MatN<T, 3, 1>& X) const {
    MatN<T, 1, 3> A;
    pfaffian(q, A);
    X = A.transpose();
  }
  template <class T>
  void velocity_basis(const VecN<T, 3>& q, MatN<T, 3, Eigen::Dynamic>& S) const {
    blade_direction(q[2], S.col(0));
    S(2, 0) = T(0.0);
    S(0, 1) = T(0.0);
    S(1, 1) = T(0.0);
    S(2, 1) = T(1.0);
  }

  // For |w t| < 0.5 the 1/w^2 terms cancel (relative error ~ eps/(w t)^2); there x and y come from
  // Gauss-Legendre quadrature of v (cos phi, sin phi) with v = v0 + g t cos(phi0 + w t/2) sinc(w t/2),
  // which is exact for w = 0 (uniform acceleration along the blade) and accurate to rounding for small w t.
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const double phi0 = q0[2], w = qd0[2];
    const double v0 = qd0[0] * std::cos(phi0) + qd0[1] * std::sin(phi0);
    const double phi = phi0 + w * t;
    auto speed = [&](double tau) {
      const double half = 0.5 * w * tau;
      return v0 + g * tau * std::cos(phi0 + half) * (half == 0 ? 1.0 : std::sin(half) / half);
    };
    const double v = speed(t);
    if (std::abs(w * t) >= 0.5) {
      const double a = v0 - g * std::sin(phi0) / w;
      q[0] = q0[0] + a * (std::sin(phi) - std::sin(phi0)) / w +
             g * (std::cos(2 * phi0) - std::cos(2 * phi)) / (4 * w * w);
      q[1] = q0[1] - a * (std::cos(phi) - std::cos(phi0)) / w +
             (g / w) * (0.5 * t - (std::sin(2 * phi) - std::sin(2 * phi0)) / (4 * w));
    } else {
      // The integrand varies on the time scale 1/|w| > 2 t: one 10-point panel is exact to rounding.
      static constexpr double kNodes[5][2] = {
          {0.14887433898163122, 0.29552422471475298}, {0.43339539412924721, 0.26926671930999652},
          {0.67940956829902444, 0.21908636251598201}, {0.86506336668898454, 0.14945134915058036},
          {0.97390652851717174, 0.066671344308688069}};
      double x = q0[0], y = q0[1];
      for (const auto& [node, weight] : kNodes) {
        for (double sign : {-1.0, 1.0}) {
          const double tau = 0.5 * t * (1 + sign * node), vt = speed(tau), ph = phi0 + w * tau;
          x += 0.5 * t * weight * vt * std::cos(ph);
          y += 0.5 * t * weight * vt * std::sin(ph);
        }
      }
      q[0] = x;
      q[1] = y;
    }
    q[2] = phi;
    qd << v * std::cos(phi), v * std::sin(phi), w;
    return true;
  }
  // lambda = -m (v phid + g sin phi), v = xd cos phi + yd sin phi.
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    const double v = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    lambda[0] = -m * (v * qd[2] + g * std::sin(q[2]));
  }
  // From rest, blade pointing downhill, turning at 2 rad/s (the docs/design.md special case).
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0, 0, 0;
    qd0 << 0, 0, 2.0;
  }
};

}  // namespace clm
