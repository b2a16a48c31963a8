// Chaplygin sleigh [seed-000, "Chaplygin's Sleigh"]: a rigid body on a horizontal plane whose blade at
// p = r_c - b e1' cannot slip sideways. q = (x, y, theta), (x, y) the centre of mass.
//   T = m/2 (xd^2 + yd^2) + Ic/2 thetad^2, V = 0,
//   A(q) = (-sin theta, cos theta, -b)   (v_p . e2' = 0).
// Reduced dynamics [seed-000, after eq. 2.18]: u' = b w^2, w' = -beta u w, beta = m b / (m b^2 + Ic),
// with u = xd cos(theta) + yd sin(theta) and w = thetad.
#pragma once

#include <vector>

#include <array>
#include <algorithm>
#include <cmath>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/rolling_contact.hpp"
#include "problems/body_velocity_spec.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct ChaplyginSleigh {
  static constexpr const char* kName = "chaplygin_sleigh";
  static constexpr const char* kDescription =
      "rigid body with a knife edge at distance b behind the centre of mass; q = (x, y, theta)";
  static constexpr int kDof = 3;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // Velocities the `substituted` formulation solves A qd = 0 for ([seed-002]'s mistake): yd (divides by cos(theta): the chart is singular at theta = pi/2 mod pi).
  static constexpr std::array kEliminated = {1};
  // det A_D of that chart, for the substituted formulation's chart-singularity message.
  static constexpr const char* kChartCondition = "cos(theta)";

  double m = 1.0;
  double Ic = 0.5;
  double b = 0.3;
  static constexpr std::array kParameters = {
      ParameterSpec<ChaplyginSleigh>{"m", &ChaplyginSleigh::m, "mass [kg]"},
      ParameterSpec<ChaplyginSleigh>{"Ic", &ChaplyginSleigh::Ic, "moment of inertia about the centre of mass [kg m^2]"},
      ParameterSpec<ChaplyginSleigh>{"b", &ChaplyginSleigh::b, "distance from the centre of mass back to the blade [m]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"centre_of_mass", "m"}, {"blade", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
    out[2] = q[0] - b * std::cos(q[2]);  // the blade, b behind the centre of mass along the heading
    out[3] = q[1] - b * std::sin(q[2]);
  }
  // Body velocities (problems/body_velocity_spec.hpp): the velocities the sleigh's reduced equations are in.
  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kVelocities{
        {"u1", "m/s", "forward speed of the centre of mass, xd cos(theta) + yd sin(theta)"},
        {"omega", "rad/s", "turning rate, thetad"}};
    return kVelocities;
  }
  void body_velocity_values(double /*t*/, const Vec& q, const Vec& qd, Vec& out) const {
    out[0] = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    out[1] = qd[2];
  }
  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    if (!(m > 0)) throw InputError("chaplygin_sleigh: parameter m must be > 0");
    if (!(Ic > 0)) throw InputError("chaplygin_sleigh: parameter Ic must be > 0");
    if (!std::isfinite(b)) throw InputError("chaplygin_sleigh: parameter b must be finite");
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    diagonal_mass_matrix<T>(M, m, m, Ic);
  }
  template <class T>
  T potential(const VecN<T, 3>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    blade_normal(q[2], A.row(0));
    A(0, 2) = T(-b);
  }
  // Servo directions (formulations/servo_direction.hpp; [seed-004], Beghin): "lateral_com", a sideways force
  // lambda (-sin theta, cos theta) applied at the centre of mass instead of at the blade (the ideal reaction
  // A^T lambda also carries the torque -b lambda). It keeps the blade from slipping (A M^-1 B^T = 1/m) but
  // exerts no torque, so thetad stays constant; the reduced motion is u' = b w^2 (u grows linearly), with
  // lambda = m w u, and the force does work m b w^2 u (tests/servo_test.cpp derives and checks it).
  static constexpr std::array<const char*, 1> kServoDirections = {"lateral_com"};
  template <class T>
  void servo_direction(const VecN<T, 3>& q, MatN<T, 1, 3>& B, int /*which*/) const {
    blade_normal(q[2], B.row(0));
    B(0, 2) = T(0.0);
  }
  // Translation along the blade and rotation about the blade point [seed-000, after eq. 2.18].
  // Transversal frame for fernandez_bloch: the sideways direction of the blade, (-sin, cos, 0), A X = 1.
  template <class T>
  void transversal_frame(const VecN<T, 3>& q, MatN<T, 3, 1>& X) const {
    blade_normal(q[2], X.col(0));
    X(2, 0) = T(0.0);
  }
  template <class T>
  void velocity_basis(const VecN<T, 3>& q, MatN<T, 3, Eigen::Dynamic>& S) const {
    using std::cos;
    using std::sin;
    blade_direction(q[2], S.col(0));
    S(2, 0) = T(0.0);
    S(0, 1) = -b * sin(q[2]);
    S(1, 1) = b * cos(q[2]);
    S(2, 1) = T(1.0);
  }
  // Exact motion from consistent (q0, qd0). With u = xd cos(theta) + yd sin(theta), w = thetad, K = m b^2 + Ic
  // and beta = m b / K, the energy E = (m u^2 + K w^2)/2 is conserved, so w^2 = m (c^2 - u^2)/K with
  // c = sqrt(2E/m), and u' = b w^2 = beta (c^2 - u^2):
  //   u = c tanh(s t + tau0),  s = beta c,  tau0 = atanh(u0/c),
  //   w = w0 cosh(tau0) / cosh(s t + tau0)         (= sign(w0) sqrt(m/K) c sech(s t + tau0)),
  //   theta = theta0 + w0 cosh(tau0)/s (gd(s t + tau0) - gd(tau0)),  gd(z) = atan(sinh z) (the gudermannian).
  // Then (xd, yd) = u e1 + b w e2 with e1 = (cos theta, sin theta), e2 = (-sin theta, cos theta), integrated
  // by composite 10-point Gauss-Legendre on panels no longer than half the shortest time scale
  // (1/|s|, 1/max|w|): the integrand is analytic, so this is accurate to rounding (~1e-14 relative).
  // w0 = 0: uniform straight motion. b = 0 (beta = 0): u and w constant, a circle (line if w0 = 0).
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    return closed_form_from(0.0, q0, t, q0, qd0, q, qd);
  }
  // The same motion, with x, y integrated over [t_prev, t] only, from the position q_prev at t_prev: a
  // sampled reference then costs O(t_end) in all (issue 9: from 0 at every sample it was O(t_end^2)). The
  // reduced solution (u, w, theta) stays parameterized from t = 0: re-deriving tau0 = atanh(u/c) from a
  // later state loses digits as u -> c (2e-4 at t = 200).
  bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0, Vec& q,
                        Vec& qd) const {
    const double th0 = q0[2], w0 = qd0[2];
    const double u0 = qd0[0] * std::cos(th0) + qd0[1] * std::sin(th0);
    const double K = m * b * b + Ic, beta = m * b / K;
    const double c = std::sqrt(u0 * u0 + K * w0 * w0 / m);
    // |u0| = c up to rounding means w0 is negligible: the same uniform motion (and atanh would overflow).
    const bool uniform = (w0 == 0 || beta == 0 || std::abs(u0) >= c);
    const double s = beta * c;
    double tau0 = 0, w_peak = std::abs(w0);
    if (!uniform) {
      tau0 = std::atanh(u0 / c);
      w_peak = std::abs(w0) * std::cosh(tau0);
    }
    // (u, w, theta) at time tau.
    auto reduced = [&](double tau, double& u, double& w, double& th) {
      if (uniform) {
        u = u0;
        w = w0;
        th = th0 + w0 * tau;
        return;
      }
      const double z = s * tau + tau0;
      u = c * std::tanh(z);
      w = w0 * std::cosh(tau0) / std::cosh(z);
      th = th0 + w0 * std::cosh(tau0) / s * (std::atan(std::sinh(z)) - std::atan(std::sinh(tau0)));
    };
    static constexpr double kNodes[5][2] = {
        {0.14887433898163122, 0.29552422471475298}, {0.43339539412924721, 0.26926671930999652},
        {0.67940956829902444, 0.21908636251598201}, {0.86506336668898454, 0.14945134915058036},
        {0.97390652851717174, 0.066671344308688069}};
    const double rate = std::max(std::abs(s), w_peak);
    const long panels = std::max(1L, static_cast<long>(std::ceil(std::abs(t - t_prev) * rate / 0.5)));
    const double h = (t - t_prev) / panels;
    double x = q_prev[0], y = q_prev[1];
    for (long p = 0; p < panels; ++p) {
      const double mid = t_prev + (p + 0.5) * h;
      for (const auto& [node, weight] : kNodes) {
        for (double sign : {-1.0, 1.0}) {
          double u, w, th;
          reduced(mid + sign * node * 0.5 * h, u, w, th);
          const double ct = std::cos(th), st = std::sin(th);
          x += 0.5 * h * weight * (u * ct - b * w * st);
          y += 0.5 * h * weight * (u * st + b * w * ct);
        }
      }
    }
    double u, w, th;
    reduced(t, u, w, th);
    q << x, y, th;
    qd << u * std::cos(th) - b * w * std::sin(th), u * std::sin(th) + b * w * std::cos(th), w;
    return true;
  }
  // Multiplier under M qdd = A^T lambda: Ic wd = -b lambda and wd = -beta u w give
  // lambda = + m Ic/(m b^2 + Ic) thetad (xd cos theta + yd sin theta) ([seed-000] prints the opposite sign;
  // for b = 0 it is the centripetal m u w).
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    const double u = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    lambda[0] = m * Ic / (m * b * b + Ic) * qd[2] * u;
  }
  // Forward speed u = 1, turning rate w = 0.8: q = 0, qd = S (1, 0.8).
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0, 0, 0;
    qd0 << 1.0, 0.8 * b, 0.8;
  }
};

}  // namespace clm
