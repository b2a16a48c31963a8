// RATTLE: the constrained variational integrator for holonomic constraints h(q) = 0 (SHAKE [Ryckaert-1977],
// RATTLE [Andersen-1983]; [LR-2004, section 7]; [HLW-GNI, VII.1]; as a constrained discrete Lagrangian
// [MW-2001]), One step of the midpoint discrete Euler-Lagrange equations with the constraint forces
// A(q0)^T nu and A(q1)^T mu (integrators/variational_integrator.hpp, where the equations are): the new
// positions satisfy h(q1) = 0 to the Newton tolerance, the new velocities A(q1) qd1 = 0 to round-off. The
// discrete flow is symplectic on the constraint manifold, symmetric and of order 2, so the energy error
// stays bounded (no drift) over long times [HLW-GNI, VII.1.4]. Constant M and q-dependent M
// (slider_crank, closed_chain) alike: the midpoint discrete Lagrangian needs only dL/dq and p = M qd from
// the model (autodiff). Generalized forces F(t, q, qd) enter as midpoint forcing h/2 F(t + h/2, q_m, v) on
// each side (discrete Lagrange-d'Alembert [MW-2001]; order 2, no longer symplectic when F does work).
//
// rattle integrates the constrained system itself, so it runs with formulation kkt (which names that
// system, integrators/mechanical_system.hpp) and refuses other formulations, coordinate projection,
// Baumgarte gains (it keeps the constraints itself) and purely Pfaffian problems (those need dla or nh_rattle).
// A mixed model's position rows are held as above, h(q1) = 0; its velocity rows by the midpoint discrete
// constraint A_v(q_m) (q1 - q0)/h = 0 [MP-2006] with the impulse A_v(q0)^T nu, and A_v(q1) qd1 = 0 at the end
// (order 2 against the reduced twin, measured in tests/mixed_constraints_test.cpp).
// The state is kkt's y = (q, qd). The multipliers written as lambda are the discrete ones, in the suite's
// convention M qdd + c = F + A^T lambda: lambda_start = 2 nu / h and lambda_end = 2 mu / h are each only
// O(h) from lambda(t) and lambda(t + h) (measured on the pendulum: errors halve with h), but their mean is the
// SHAKE multiplier, O(h^2) from lambda(t + h/2); the value written for a step is that mean
// extrapolated linearly to the step end from the previous step's mean (the continuous lambda(t0) before the
// first), O(h^2) at the step end where samples land (steps are aligned to the output grid when
// dt <= output_every). Fixed step dt; Newton tolerance from rtol and atol.
#pragma once

#include "integrators/variational_integrator.hpp"

namespace clm {

class Rattle final : public VariationalIntegrator {
 public:
  std::string name() const override { return "rattle"; }
  std::string refuses_formulation(const Formulation& f) const override;
  bool integrates_constrained_system() const override { return true; }
  std::string accepts() const override { return "formulation kkt; holonomic and mixed problems"; }
  const Vec* step_multipliers() const override { return &lambda_; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  void do_reset_state() override;

  Vec lambda_;                         // written as lambda: the estimate at the end of the last step
  Vec lambda_mid_, lambda_mid_prev_;   // (lambda_start + lambda_end)/2 of the last and the previous step
  double t_mid_prev_ = 0;              // midpoint time of the previous step
};

}  // namespace clm
