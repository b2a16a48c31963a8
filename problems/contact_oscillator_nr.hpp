// The non-reversible contact oscillator of Modin and Verdier [MV-2020], as implemented in the odelab code of
// Verdier [sw-odelab] (NonReversibleContactOscillator in odelab/system/nonholonomic/contactoscillator.py):
// the contact oscillator of [MP-2006, Example 5.2] (problems/contact_oscillator.hpp) with its momentum
// shifted by the gradient of S(q) = k cos z.
//
// What the perturbation is. odelab writes the system in (q, P) with the Hamiltonian
//   H(q, P) = 1/2 (|q|^2 + |P + grad S|^2) + eps/2 x^2 z^2,   velocity qd = dH/dP = P + grad S,
// the constraint xd + y zd = 0 on that velocity (unchanged) and the force -dH/dq. P = p - grad S is a
// translation of the momentum fibres by the exact 1-form dS: a symplectic change of variables, so the system
// stays integrable, but the standard reversibility map (q, P) -> (q, -P) is no longer a reversing symmetry
// [MV-2020] (it is not even one of the constraint surface, A(q)(P + grad S) = 0). By the Legendre transform
// (P = dL/dqd = qd - grad S) the Lagrangian is
//   L = 1/2 |qd|^2 + qd . a(q) - V(q),   a(q) = -grad S = (0, 0, k sin z),
// the Problem's gyroscopic term (core/problem.hpp). qd . a = -d/dt S(q) is a total time derivative, so the
// Lagrange-d'Alembert equations, and with them the exact motion (q(t), qd(t)), the energy H = T + V and the
// second integral H - H_y, are exactly those of contact_oscillator with the same eps: the autodiff c gains
// (Da - Da^T) qd = 0 (Da is the Hessian of -S, symmetric). What changes is what a momentum-based integrator
// sees: p = dL/dqd = qd + a(q) and dL/dq gain a and Da^T qd, and a discrete Lagrangian such as the midpoint
// rule turns the exact S(q0) - S(q1) into (q1 - q0) . a(q_mid), so dla / nh_rattle step a different,
// non-reversible discrete map; formulations integrating (q, qd) (kkt with an ODE integrator) compute the same
// motion as on contact_oscillator. That is the point of the test problem [MV-2020].
//
// Parameters: eps as in contact_oscillator (default 0, as odelab's NonReversibleContactOscillator(); its
// tests run the non-reversible problem with the default), k the strength of S = k cos z (default 1 = odelab's
// S = cos z; odelab also declares a perturbation_size = 0.2 that its code never uses). Initial data: those of
// contact_oscillator in (q, qd) (odelab's initial_cos likewise shifts P so that the velocity is the
// reversible one's). No closed form.
#pragma once

#include <array>
#include <cmath>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/contact_oscillator.hpp"

namespace clm {

struct ContactOscillatorNr {
  static constexpr const char* kName = "contact_oscillator_nr";
  static constexpr const char* kDescription =
      "non-reversible contact oscillator (Modin-Verdier): contact_oscillator with p shifted by grad S, "
      "S = k cos z, i.e. L gains qd . a, a = (0, 0, k sin z); same motion, different momentum";
  static constexpr int kDof = 3;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "z"};
  static constexpr const char* kCoordinateUnits[] = {"-", "-", "-"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;

  double eps = 0.0;
  double k = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<ContactOscillatorNr>{"eps", &ContactOscillatorNr::eps,
                                         "strength of the nonlinear coupling eps/2 x^2 z^2 in V (0: linear)"},
      ParameterSpec<ContactOscillatorNr>{"k", &ContactOscillatorNr::k,
                                         "strength of the momentum shift grad S, S = k cos z (0: reversible)"},
  };

  // H - H_y (contact_oscillator.hpp): the exact flow is the reversible one's, so it is conserved too.
  double second_integral(const Vec& q, const Vec& qd) const { return ContactOscillator::second_integral(q, qd, eps); }

  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    ContactOscillator::validate_eps(kName, eps);
    if (!std::isfinite(k)) throw InputError("contact_oscillator_nr: parameter k must be finite");
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    diagonal_mass_matrix<T>(M, 1.0, 1.0, 1.0);
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    return ContactOscillator::potential(q, eps);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    ContactOscillator::contact_pfaffian(q, A);
  }
  // a = -grad S, S = k cos z.
  template <class T>
  void gyroscopic(const VecN<T, 3>& q, VecN<T, 3>& a) const {
    using std::sin;
    a[0] = T(0.0);
    a[1] = T(0.0);
    a[2] = k * sin(q[2]);
  }
  void default_initial(Vec& q0, Vec& qd0) const { ContactOscillator::initial_sin(eps, q0, qd0); }
};

}  // namespace clm
