// `ida`: SUNDIALS IDA ([sw-sundials]; variable-order (1-5) BDF for F(t, Y, Y') = 0, Newton iterations on a
// dense linear solver) applied to the constrained mechanical system itself as a DAE, in the stabilized
// index-2 form of Gear, Gupta and Leimkuhler [GGL-1985] ([HW-II, VII.1] "index reduction"):
//   holonomic  Y = (q, v, lambda, mu):  q' = v - A(q)^T mu,  M(q) v' + c(q, v) = F + A(q)^T lambda,
//                                       0 = h(q),  0 = A(q) v;
//   Pfaffian   Y = (q, v, lambda):      q' = v,  M(q) v' + c(q, v) = F + A(q)^T lambda,  0 = A(q) v,
//   mixed      Y = (q, v, lambda, mu):  the holonomic form with mu and h for the position rows only
//                                       (q' = v - A_h(q)^T mu, 0 = h(q), A_h = dh/dq the first rows of A),
//                                       0 = A(q) v for every row (core/problem.hpp, kMixed),
// with M, c, F, A, h from the Model (autodiff) and the suite's sign convention, so lambda is the multiplier
// every formulation writes. The extra multiplier mu of GGL keeps q on h(q) = 0 as well as v on A v = 0; it
// is zero on exact solutions. Both constraint rows are solved by every Newton iteration, so the
// constraints hold to the Newton tolerance at every step (no drift). lambda and mu are index-2 variables:
// they are excluded from IDA's local error test (IDASetSuppressAlg), as usual for index-2 variables [BCP-1996].
//
// Consistent initial data: IDACalcIC (IDA_YA_YDP_INIT, [BHP-1998]) computes lambda, mu and (q', v') from
// (q0, v0). IDACalcIC handles index-1 systems only, and in the index-2 form above the constraint rows do
// not involve these unknowns; so while it runs the residual's constraint rows are their time derivatives,
// A q' = 0 and A v' + Adot v = 0 (the kkt system's acceleration constraint). The guesses are
// lambda = mu = 0, q' = v0, v' = 0; the result is consistent for the index-2 system as well (h(q0) = 0,
// A v0 = 0 hold for the runner's projected initial state), and IDA is re-initialized with it.
//
// Like cvode: each do_step is one IDA step (IDA_ONE_STEP) with the stop time at the caller's limit; dense
// output is IDA's interpolant (IDAGetDky); the iteration matrix dF/dY + cj dF/dY' is the suite's own
// forward differences of the residual with IDA's increments (IDA's internal difference quotient allocates
// a vector per Jacobian); failures end the run "failed" with the return code's name and IDA's message.
// Statistics: steps, residual evaluations (as rhs evaluations: IDA's, those of the Jacobian, and
// IDACalcIC's), Jacobian evaluations, Newton iterations (IDACalcIC's and the steps'), and as rejected
// steps the error-test and convergence failures. step_multipliers() is lambda at the step end, and a sample
// inside a step gets lambda from IDA's interpolant (multipliers_at).
// Limit, measured: below rtol 1e-10 the holonomic problems with several constraints fail at the start with
// IDA_CONV_FAIL (four_bar, slider_crank, closed_chain at rtol 1e-12; IDA's own difference-quotient Jacobian
// too): the index-2 iteration matrix's condition grows like 1/h^2, and Newton cannot resolve the algebraic
// variables to the tolerance. Looser algebraic tolerances get through (1e-8: four_bar in 41k steps over
// 10 s) at a cost no reference run should pay; dopri5 or radau5 on kkt are the tight-tolerance methods.
// It runs with --formulation kkt only (integrators/mechanical_system.hpp), without Baumgarte gains (they
// belong to kkt's ODE, which ida does not integrate) and without coordinate projection.
#pragma once

#include <memory>
#include <string>

#include "core/integrator.hpp"

namespace clm {

class IdaIntegrator final : public Integrator {
 public:
  IdaIntegrator();
  ~IdaIntegrator() override;
  std::string name() const override { return "ida"; }
  std::string jacobian_used() const override { return "finite_difference"; }  // IDA's iteration matrix
  int order() const override { return 5; }  // BDF's highest order
  bool adaptive() const override { return true; }
  void interpolate(double t, Vec& y) const override;
  std::string refuses(const IntegratorSettings& s) const override;

  std::string refuses_formulation(const Formulation& f) const override;
  bool integrates_constrained_system() const override { return true; }
  std::string accepts() const override {
    return "formulation kkt without Baumgarte gains; holonomic (GGL index 2), Pfaffian (index 2) and mixed (GGL on "
           "the position rows) problems";
  }
  const Vec* step_multipliers() const override { return &lambda_; }
  // lambda(t) from IDA's interpolant on the last step (lambda at the step end for t there).
  const Vec* multipliers_at(double t) const override;

  struct Sundials;  // IDA memory, context, vectors, matrix, solver and the residual's buffers (ida_integrator.cpp)

 protected:
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kPositiveRtol; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  void update_statistics();

  std::unique_ptr<Sundials> s_;
  Vec lambda_;  // the multipliers at the last step end (IDACalcIC's at t0)
};

}  // namespace clm
