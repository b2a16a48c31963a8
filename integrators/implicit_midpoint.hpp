// The implicit midpoint rule y1 = y0 + h f(t0 + h/2, (y0 + y1)/2): the one-stage Gauss collocation method,
// order 2, A-stable and symplectic (Hairer, Lubich & Wanner, Geometric Numerical Integration, II.1 and
// VI.3), so on a Hamiltonian system in canonical coordinates the energy error stays bounded instead of
// drifting. Fixed step h = IntegratorSettings::dt.
//
// The stage equation for z = y1 - y0, z = h f(t0 + h/2, y0 + z/2), is solved by simplified Newton with the
// matrix I - (h/2) J, J = df/dy by finite differences (integrators/finite_difference_jacobian.hpp). J and
// its LU are kept across steps while Newton contracts fast (rate < 0.1) and recomputed otherwise. Newton
// stops (after at least two iterations, so that the rate theta is measured) when its estimated remaining
// error, theta/(1 - theta) |dz|, is below 1% of the tolerance atol + rtol |y| (or at round-off). If it does not converge, it is retried once with a fresh Jacobian;
// failing that, the step is rejected (step() returns false) and halved, after Drake's fixed-step
// integrators; later accepted steps double back up to dt.
//
// Dense output: cubic Hermite from the end-point derivatives (the method's own collocation polynomial is
// only linear). This costs one rhs evaluation per step, which also gives the Newton predictor z = h f(y0).
#pragma once

#include "integrators/implicit_integrator.hpp"
#include "integrators/hermite.hpp"
#include "integrators/newton_iteration.hpp"

namespace clm {

class ImplicitMidpoint final : public ImplicitIntegrator, public ReportsNewtonFailure {
 public:
  const NewtonFailure& last_newton_failure() const override { return failure_; }
  std::string name() const override { return "implicit_midpoint"; }
  int order() const override { return 2; }
  bool adaptive() const override { return false; }

  void interpolate(double t, Vec& y) const override { prev_.interpolate(t_, y_, f_, t, y); }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  // The Newton tolerance is a fraction of atol + rtol |y| (rtol = 0 allowed).
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kNonNegative; }
  // Simplified Newton for z on a step of size h; true when converged (z_ then holds y1 - y0).
  bool solve_stage(double h);

  double rtol_ = 0, atol_ = 0, dt_ = 0, newton_tol_ = 0;
  StepStart prev_;  // the last step's start (dense output)
  double theta_ = 1.0;        // last contraction rate
  NewtonFailure failure_;     // the last step whose Newton iteration failed
  Vec z_, dz_, ym_, fm_, res_, scale_;
  Mat newton_matrix_;
  Eigen::PartialPivLU<Mat> lu_;
};

}  // namespace clm
