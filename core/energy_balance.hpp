// The energy balance of a time-dependent run (docs/design.md section 1, "energy balance").
//
// For M qdd + c = F + A^T lambda with E = T + V(q, t) (c = Mdot qd - 1/2 d/dq(qd^T M qd) + dV/dq, a gyroscopic
// term doing no work), qd . (M qdd) + 1/2 qd^T Mdot qd + dV/dq . qd = qd . (F + A^T lambda), so
//
//   dE/dt = dV/dt|_q  +  qd . F  +  lambda . (A qd),
//
// the power of the explicit time dependence, of the generalized forces and of the constraint forces. On the
// constraint A qd + b = 0 the last is -lambda . b: the work a moving constraint (a driven pivot, a turntable)
// does; a fixed one does none. lambda . (A qd) is the power of the force the formulation actually applies,
// also off the constraint (penalty's viscous friction -N (A qd + b) included), so E(t) - E(0) - W(t) is zero
// for the exact solution of the formulation's equations and measures the integration error alone (plus any
// energy a coordinate projection removes at a step's end).
//
// W(t) = integral of that power is computed per accepted step by the 4-point Gauss-Lobatto rule [AS-1964, 25.4.32] on the
// integrator's own interpolant over the step (nodes 0, (5 -+ sqrt 5)/10, 1; weights 1/12, 5/12, 5/12, 1/12;
// exact for degree 5): the quadrature error is O(h^7) per step, below the interpolant's, so W is as accurate
// as the dense output (global order 4 with rk4's cubic Hermite, 5 with dopri5's) and, unlike a Riemann sum
// over output samples, independent of the output grid. Why not Simpson: exact only to degree 3, O(h^5) per
// step, global order 4 -- short of dopri5, dop853, radau5. Why not an extra quadrature state appended to y:
// every formulation's state, projection and error control would have to carry it.
// Samples inside a step get W from the same rule over [t_step_start, t_sample].
//
// Cost: four observations per step (three when the previous step's end is reused, i.e. no projection moved
// it); nothing at all for problems without explicit time dependence, for which the runner makes none.
// No heap allocation after construction (formulations' observe() is allocation-free for kkt, schur, penalty
// and nullspace; the allocation test runs them).
#pragma once

#include <memory>

#include "core/formulation.hpp"
#include "core/integrator.hpp"

namespace clm {

class EnergyBalance {
 public:
  // The work done since the start, by component (J).
  struct Work {
    double constraints = 0;    // integral of lambda . (A qd): the moving constraints (penalty: its friction force)
    double explicit_time = 0;  // integral of dV/dt at fixed q
    double forces = 0;         // integral of qd . F(t, q, qd)
    double total() const { return constraints + explicit_time + forces; }
  };

  // Both must outlive the balance; `integrator` is the one stepping `formulation` (through a ProjectedSystem
  // or not).
  EnergyBalance(Formulation& formulation, const Integrator& integrator);

  // W = 0 at the start (t0, y0).
  void start(double t0, const Vec& y0);
  // After the integrator accepted the step [t0, t1] (before OdeSystem::after_step): W(t1) = W(t0) + the step's
  // quadrature. Throws what observe() throws (NumericalFailure).
  void step(double t0, double t1);
  // W at t within the last step [t0, t1] (t1 exactly: the step's total; t0 or the start: W(t0)).
  Work at(double t);

 private:
  // The power components at (t, y) into p (observe, then F, A, dV/dt from the model).
  void power(double t, const Vec& y, Work& p);
  // Quadrature of the power over [t0, t1] along the interpolant, given the power p0 at t0; p1 receives the
  // power at t1.
  Work integrate(double t0, double t1, const Work& p0, Work& p1);

  Formulation& f_;
  const Integrator& integ_;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  Observation obs_;
  Vec y_, aqd_;
  // The last step [t0_, t1_], W at its ends, the power at its start and end, its end state (reused as the next
  // step's start when nothing moved it).
  double t0_ = 0, t1_ = 0;
  Work w0_, w1_, p0_, p1_;
  Vec y1_;
};

}  // namespace clm
