// verlet: the variational (Stormer-Verlet-type) integrator of the midpoint discrete Lagrangian for
// Lagrangian systems without constraints at the position level [MW-2001], [HLW-GNI, VI.6]; the equations
// and the Newton solver are in integrators/variational_integrator.hpp. Order 2, symmetric, symplectic for
// conservative systems. Why this form and not the explicit leapfrog: the leapfrog is the variational
// integrator of a discrete Lagrangian that is explicit only for constant M and velocity-independent forces;
// the suite's mechanisms have q-dependent M (pendulum_polar, slider_crank, closed_chain) and penalty's force
// depends on the velocity, so every step is an implicit equation for q1 anyway, and the midpoint discrete
// Lagrangian solves it with one model evaluation (dL/dq and p, autodiff) per Newton iteration. (On a
// constant-M problem without constraints and velocity-dependent forces, which the zoo does not have, the
// leapfrog would be explicit; this method still takes Newton steps there.)
//
// What it integrates is read from the formulation's Model, not from the formulation's rhs (which is used
// only for the predictor and the dense output), so it accepts exactly the formulations whose motion is that
// of an unconstrained Lagrangian with forces:
//  - penalty on any problem: L (- k/2 |h|^2 with the position spring, holonomic problems), plus F and the
//    anisotropic friction -N A^T A qd (Rayleigh function N/2 |A qd|^2), both as midpoint forcing. The
//    velocity dependence makes the momentum update implicit in v = (q1 - q0)/h; Newton solves it with the
//    rest (its matrix holds N/2 A^T A, refreshed every step). Stiff N costs no stability restriction (the
//    midpoint forcing is A-stable: the penalty sleigh at N = 1e6 runs at N h = 5000), but it is not
//    L-stable: A qd flips sign from step to step instead of decaying, and beyond N h ~ 1e4 Newton
//    struggles and steps get halved; radau5 and cvode are the methods for very stiff penalty runs;
//  - any formulation with state (q, qd) on a problem without constraints (m = 0), where they all describe
//    the same motion.
// Refused in one line: kkt and schur on constrained problems (they keep the constraints; verlet would ignore
// them: use rattle for holonomic constraints, dla / nh_rattle for Pfaffian ones), added_mass (the q-gradient
// of its Lagrangian L + N/2 |A qd|^2 needs dA/dq, which is not a model term; use implicit_midpoint or
// radau5), and the other formulations (nullspace, vakonomic, fernandez_bloch, substituted integrate other
// variables or equations). Coordinate projection applies (the runner projects after each step; verlet
// restarts its momentum from the projected state).
#pragma once

#include "integrators/variational_integrator.hpp"

namespace clm {

class Verlet final : public VariationalIntegrator {
 public:
  std::string name() const override { return "verlet"; }
  std::string refuses_formulation(const Formulation& f) const override;
  std::string accepts() const override {
    return "formulation penalty (any problem); any formulation with state (q, qd) on problems without constraints";
  }

 private:
  void do_initialize(const IntegratorSettings& s) override;
};

}  // namespace clm
