// The nonlinear contact oscillator [MP-2006, Example 5.2], a standard test problem for nonholonomic
// integrators, as implemented in the odelab code of Verdier [sw-odelab] (ContactOscillator in
// odelab/system/nonholonomic/contactoscillator.py): q = (x, y, z),
//   L = 1/2 |qd|^2 - 1/2 |q|^2 - eps/2 x^2 z^2,    one Pfaffian constraint  xd + y zd = 0,  A(q) = (1, 0, y).
// y does not feel the constraint force (A has no y entry), so it is a free harmonic oscillator and
// H_y = (y^2 + yd^2)/2 is conserved besides the energy H; H - H_y is the second integral [MP-2006],
// [sw-odelab] ("radius"), which on the constraint (xd = -y zd) reads
//   H - H_y = 1/2 (x^2 + (1 + eps x^2) z^2 + (1 + y^2) zd^2)                        (second_integral below).
// The system is reversible integrable [MV-2020], which is why nonholonomic integrators conserve H and
// H - H_y so well on it; contact_oscillator_nr (problems/contact_oscillator_nr.hpp) is its non-reversible
// counterpart. No closed form.
#pragma once

#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"

namespace clm {

struct ContactOscillator {
  static constexpr const char* kName = "contact_oscillator";
  static constexpr const char* kDescription =
      "McLachlan-Perlmutter contact oscillator (Ex. 5.2), q = (x, y, z), xd + y zd = 0, "
      "V = |q|^2/2 + eps x^2 z^2/2; second integral H - H_y";
  static constexpr int kDof = 3;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "z"};
  static constexpr const char* kCoordinateUnits[] = {"-", "-", "-"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // Velocity the `substituted` formulation solves A qd = 0 for: xd = -y zd (A_D = 1, a global chart).
  static constexpr std::array kEliminated = {0};

  double eps = 0.3;  // odelab's tests run ContactOscillator(epsilon=.3)
  static constexpr std::array kParameters = {
      ParameterSpec<ContactOscillator>{"eps", &ContactOscillator::eps,
                                       "strength of the nonlinear coupling eps/2 x^2 z^2 in V (0: linear)"},
  };

  // The time step of [sw-odelab]'s tests, h = 2 sin(pi / N) with N = 40 steps per period of y.
  static double odelab_time_step(int steps_per_period = 40) { return 2 * std::sin(std::numbers::pi / steps_per_period); }

  // H_y = (y^2 + yd^2)/2, the energy of the free y oscillator (conserved by the exact flow).
  static double energy_y(const Vec& q, const Vec& qd) { return 0.5 * (q[1] * q[1] + qd[1] * qd[1]); }
  // H - H_y in [sw-odelab]'s form (it uses xd = -y zd; off the constraint it differs from
  // H - H_y = 1/2 (xd^2 + zd^2 + x^2 + z^2 + eps x^2 z^2) by (xd^2 - y^2 zd^2)/2).
  static double second_integral(const Vec& q, const Vec& qd, double eps) {
    const double x2 = q[0] * q[0];
    return 0.5 * (x2 + (1 + eps * x2) * q[2] * q[2] + (1 + q[1] * q[1]) * qd[2] * qd[2]);
  }
  double second_integral(const Vec& q, const Vec& qd) const { return second_integral(q, qd, eps); }

  // [sw-odelab]'s initial_sin for y = sin t: H = 3/2, H_y = 1/2, z0 = 0.1 sqrt(2) (its z0s[5]), zd0 = 0,
  // y0 = 0, yd0 = 1, xd0 = 0 and x0 > 0 from H - H_y = 1 (consistent: xd0 + y0 zd0 = 0).
  static constexpr double kZ0 = 0.14142135623730951;
  static void initial_sin(double eps, Vec& q0, Vec& qd0) {
    const double x0 = std::sqrt((2.0 - kZ0 * kZ0) / (1 + eps * kZ0 * kZ0));
    q0 << x0, 0.0, kZ0;
    qd0 << 0.0, 1.0, 0.0;
  }

  int dof() const { return 3; }
  int constraints() const { return 1; }
  // eps > -1 keeps the default initial data real (it needs 1 + eps z0^2 > 0) and V bounded below on the
  // default energy surface; negative eps is admissible for perturbation studies.
  static void validate_eps(const char* name, double eps) {
    if (!std::isfinite(eps) || !(eps > -1))
      throw InputError(std::string(name) + ": parameter eps must be finite and > -1");
  }
  void validate() const { validate_eps(kName, eps); }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    diagonal_mass_matrix<T>(M, 1.0, 1.0, 1.0);
  }
  template <class T>
  static T potential(const VecN<T, 3>& q, double eps) {
    return 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) + 0.5 * eps * q[0] * q[0] * q[2] * q[2];
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    return potential(q, eps);
  }
  template <class T>
  static void contact_pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) {
    A(0, 0) = T(1.0);
    A(0, 1) = T(0.0);
    A(0, 2) = q[1];
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    contact_pfaffian(q, A);
  }
  void default_initial(Vec& q0, Vec& qd0) const { initial_sin(eps, q0, qd0); }
};

}  // namespace clm
