// The variational integrator of the midpoint discrete Lagrangian, the engine behind `verlet` and `rattle`
// (integrators/verlet.hpp, integrators/rattle.hpp): one step (q0, p0) -> (q1, p1) of the discrete
// Euler-Lagrange equations in position-momentum form [MW-2001], [HLW-GNI, VI.6 and VII.1],
//
//   L_d(q0, q1) = h L(q_m, v),   q_m = (q0 + q1)/2,  v = (q1 - q0)/h,
//   D1 L_d = h/2 dL/dq(q_m, v) - p(q_m, v),   D2 L_d = h/2 dL/dq(q_m, v) + p(q_m, v),
//
//   p0 + D1 L_d(q0, q1) + h/2 g_m + A(q0)^T nu = 0,  h(q1) = 0      (n + m equations for q1, nu)
//   p1 = D2 L_d(q0, q1) + h/2 g_m + A(q1)^T mu,       A(q1) qd1 = 0  (linear: q1 known)
//
// with p = dL/dqd = M qd (+ a(q)) and qd1 from p1 by the Legendre transform at q1. g_m is the generalized
// force (the problem's F and, under verlet + penalty, the penalty's) evaluated at the midpoint (t + h/2,
// q_m, v): the discrete Lagrange-d'Alembert forcing F_d^- = F_d^+ = h/2 g_m [MW-2001], which keeps
// the method symmetric and of order 2; velocity-dependent forces then simply make the (already implicit)
// equation for q1 depend on them. The constraint rows (rattle only) split the constraint impulse into
// A(q0)^T nu at the start and A(q1)^T mu at the end, as RATTLE does [Andersen-1983], [HLW-GNI, VII.1.4]:
// the new positions satisfy h(q1) = 0 to the Newton tolerance and the new velocities A(q1) qd1 = 0 to
// round-off; lambda = 2 nu / h and mu_c = 2 mu / h approximate the continuous multiplier of
// M qdd + c = F + A^T lambda at t and t + h.
//
// Why the midpoint discrete Lagrangian: with q-dependent M no second-order discrete Lagrangian gives an
// explicit method, and this one needs the model's dL/dq and p at a single point per Newton iteration
// (model terms kLagrangianGradient, kMomentum, by autodiff); it is symplectic for any L and keeps the
// momenta of the symmetries of L (it is a discrete Lagrangian: discrete Noether theorem), symmetric (L_d(q0, q1) = -L_d^{-h}(q1, q0)), hence of even order,
// here 2 [MW-2001], [HLW-GNI, VI.6]. With constant M and V = 0 it is Stormer-Verlet; with a potential it
// samples V at the midpoint instead of averaging it over the end points (Stormer-Verlet's trapezoidal
// L_d): the same order, symplecticity and long-time energy behaviour, one point per iteration.
//
// Solver: Newton on x = (q1, nu) with the residual R1 = p(q_m, v) - p0 - h/2 g_m - A(q0)^T nu (momentum
// units) and R2 = h(q1)/h, so that both blocks of the matrix scale like M/h. The q1-columns of the matrix
// are forward differences of R (n residual evaluations, RADAU5's increments), the nu-columns exact
// (-A(q0)^T; 0). Of the q1-columns, the leading part M(q_m)/h (+ N/2 A^T A under penalty; A(q1)/h in the
// constraint rows) is evaluated afresh at the predictor every step, and only the O(1) remainder is kept
// across steps while Newton contracts fast (rate < 0.1), as implicit_midpoint keeps its Jacobian: with
// the constraint rows refreshed, Newton takes its minimum of two iterations per step on the pendulum and
// four_bar. The matrix is refactored every step. Predictor q1 = q0 +
// h qd0 + h^2/2 qdd0 from the formulation's rhs at the step start. Newton stops (after at least two
// iterations, so that its rate theta is measured) when theta/(1 - theta) |(dq1, dnu)| is below 1% of
// atol + rtol |(q, nu)| in the weighted RMS norm (floored at round-off); a step that does not converge is retried
// once with a fresh matrix, then rejected and halved (later steps double back up to dt), after Drake's
// fixed-step implicit integrators. Statistics: rhs_evals counts residual evaluations (each one model
// evaluation at the midpoint, plus h(q1) for rattle) and the formulation's rhs at the step end (for the
// dense output), jacobian_evals the difference matrices, newton_iterations the iterations.
//
// Dense output: cubic Hermite from the end-point (q, qd) and the formulation's (qd, qdd) there.
#pragma once

#include <memory>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "integrators/hermite.hpp"
#include "integrators/newton_iteration.hpp"

namespace clm {

class VariationalIntegrator : public Integrator, public ReportsNewtonFailure {
 public:
  const NewtonFailure& last_newton_failure() const override { return failure_; }
  int order() const override { return 2; }
  bool adaptive() const override { return false; }
  // Newton on the discrete equations with a difference matrix, where the step needs one.
  std::string jacobian_used() const override { return statistics().jacobian_evals > 0 ? "finite_difference" : "none"; }
  void interpolate(double t, Vec& y) const override { prev_.interpolate(t_, y_, f_, t, y); }

 protected:
  // What the subclass asks of the engine; set by bind() in its do_initialize.
  struct Forcing {
    bool constrain = false;  // rattle: the holonomic constraints h(q) = 0 and A(q) qd = 0, with multipliers
    // verlet + penalty: the penalty's force -N A^T A qd (Rayleigh dissipation, at the midpoint) and spring
    // k/2 |h|^2 (a potential, added to L at the midpoint).
    double penalty_N = 0;
    double penalty_k = 0;
  };
  // Binds the model and sizes every workspace (no heap allocation afterwards); y_ = (q, qd) and f_ are set.
  void bind(const Formulation& f, const Forcing& forcing, const IntegratorSettings& s);

  // The multipliers of the last accepted step (rattle): lambda at its start, mu at its end.
  Vec lambda_start_, lambda_end_;
  // The continuous multipliers at (t, q, qd) = (t, y), from the kkt formulation the method is bound to
  // (rattle's lambda at t0, before any step). Not on the hot path.
  void continuous_multipliers(double t, const Vec& y, Vec& lambda);

  bool do_step(double h) override;
  void do_reset_state() override;

 private:
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kNonNegative; }

  // p0_, A0_ from (q, qd) = y_ (after initialize and reset_state).
  void start_from_state();
  // R(x) at x = (q1, nu) for a step of size h from (q0_, p0_); leaves g_m in g_. Counted as an rhs evaluation.
  void residual(double h, const Vec& x, Vec& R);
  // Forward-difference q1-columns of dR/dx at x into Jq_.
  void difference_matrix(double h, const Vec& x);
  // K += sign * (the leading part of dR/dq1 at x): M(q_m)/h (+ N/2 A^T A (q_m) under penalty) in the
  // momentum rows, A(q1)/h in the constraint rows. Evaluated afresh every step (cheap model terms, no
  // derivatives), so that the kept difference part is only the slowly varying remainder.
  void add_leading_part(double h, const Vec& x, double sign, Mat& K);
  // Newton for x; true when converged.
  bool solve(double h);

  const Model* model_ = nullptr;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms mid_, point_;  // model terms at the midpoint, and at an end point
  Forcing forcing_;
  unsigned mid_terms_ = 0, point_terms_ = 0;
  int n_ = 0, mc_ = 0;  // coordinates; constraint rows the method enforces (m for rattle, 0 for verlet)
  int mh_ = 0;          // of those, the rows held at position level, h(q1) = 0 (the first mh_)
  double rtol_ = 0, atol_ = 0, dt_ = 0, newton_tol_ = 0;

  double t0_ = 0;        // start of the step being attempted
  Vec q0_, p0_;          // start of the step: position, momentum
  Mat A0_;               // A(q0) (rattle, penalty)
  Vec x_, dx_, R_, Rp_, xp_;  // Newton unknowns (q1, nu), increment, residuals, perturbed point
  Vec qm_, v_, g_, av_, zero_, sc_;
  Mat Jq_;      // (n + mc) x n: dR/dq1 by differences
  Mat K_;       // Newton matrix [Jq_, (-A0^T; 0)]
  Eigen::PartialPivLU<Mat> lu_;
  Mat S_;       // end-point saddle matrix [M1 -A1^T; A1 0] (n + mc)
  Eigen::PartialPivLU<Mat> lu_end_;
  Vec s_rhs_, s_sol_;
  bool jq_valid_ = false, jq_fresh_ = false;
  double h_jq_ = 0;
  double theta_ = 1;
  NewtonFailure failure_;  // the last step whose Newton iteration failed

  StepStart prev_;  // the last step's start (dense output)
};

}  // namespace clm
