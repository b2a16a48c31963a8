// The trapezoidal rule as the index-3 augmented Lagrangian scheme with velocity and acceleration projections,
// ALI3-P of Cuadrado, Cardenal and Bayo [CCB-1997] (after Bayo and Ledesma's index-3 augmented Lagrangian),
// the method the IFToMM benchmark library's reference solutions are computed with [IFToMM-library].
// Fixed step h = dt; holonomic constraints h(q) = 0; the model and the options (al_alpha) of the
// augmented_lagrangian formulation it is bound to.
//
// One step from (q_n, qd_n, qdd_n). The trapezoidal rule written for q_{n+1} alone,
//   qd_{n+1} = 2/h q_{n+1} + qdh,    qdh = -(2/h q_n + qd_n),
//   qdd_{n+1} = 4/h^2 q_{n+1} + qddh,  qddh = -(4/h^2 q_n + 4/h qd_n + qdd_n),
// turns the index-3 augmented Lagrangian equations of motion at t_{n+1} (Bayo's sign: A^T lambda* on the left)
//   M qdd + c - F + A^T (lambda* + alpha h(q)) = 0
// into n equations in q_{n+1}, solved by Newton with the multipliers updated after every iteration,
//   [M + (h^2/4) (alpha A^T A + G)] dq = -(h^2/4) [M qdd + c - F + A^T (lambda* + alpha h)],   q += dq,
//   lambda* += alpha h(q),   G = sum_i (lambda* + alpha h)_i d2h_i/dq2 (the constraints' geometric stiffness),
// started from q_n + h qd_n + h^2/2 qdd_n and the last step's lambda*. G comes from the problem's h by autodiff
// (integrators/constraint_hessian.hpp) with al_tangent = full (the default); al_tangent = penalty drops it. The
// tangent is [CCB-1997]'s without the damping and force-stiffness terms (h/2) dc/dqd + (h^2/4) d(c - F)/dq
// (zero for constant M and gravity): small at the steps the scheme is used with. The iteration converges
// linearly, at a rate ~ 1/(1 + alpha h^2/4 sigma) in the constraint directions (sigma an eigenvalue of
// A M^-1 A^T), the multiplier update's, which G does not change: measured the same iterations a step with and
// without it on four_bar and bricard, and the same stall at n_four_bar's singular positions, where sigma -> 0
// (docs/findings.md; a larger alpha passes them). G may make the tangent indefinite: LDL^T, not Cholesky.
// Stopped, after at least two iterations, when |dq| is below 1% of atol + rtol |q|
// in the weighted RMS norm (floored at round-off) and |h(q)| below atol + rtol |q|_inf.
// Then, with P = (h^2/4) alpha A^T A at q_{n+1} and the trapezoidal qd*, qdd*:
//   (M + P) qd_{n+1}  = M qd* - (h^2/4) alpha A^T b          (velocity projection onto A qd + b = 0)
//   (M + P) qdd_{n+1} = M qdd* - (h^2/4) alpha A^T Adot qd  (acceleration projection, Adot qd at the new qd)
// For a moving constraint h(q, t) (core/problem.hpp) b = dh/dt and Adot qd is the whole acceleration bias with
// the time derivatives; the Newton equations take h(q, t_{n+1}). Scleronomic constraints: b = 0. M + P is positive definite whatever the rank of A, so redundant
// constraints (bricard) need nothing special. lambda written: -lambda* after the last update (the suite's
// convention M qdd + c = F + A^T lambda), at the step end. A step whose Newton does not converge in
// kMaxNewtonIterations is rejected and halved (after Drake's fixed-step integrators; later steps double
// back to dt); below dt/16 the run ends "failed" naming alpha h^2/4 (halving slows the multiplier iteration
// down, so it cannot rescue a stalled one). Statistics: rhs_evals counts model
// evaluations (one per Newton iteration, two for the projections), newton_iterations the iterations.
// Dense output: cubic Hermite from the end-point (q, qd) and (qd, qdd) of the projections (f_ holds those,
// not the formulation's rhs: no extra evaluation per step).
//
// Sparse path (problems built from bodies and joints, formulation.linear_algebra as for kkt; docs/design.md
// "Sparse path"): the model's SparseModelTerms, and the tangent M + (h^2/4)(alpha A^T A + G) and the
// projections' M + P as one fixed-pattern sparse L D L^T (core/sparse_augmented_mass.hpp) whose pattern holds
// G's entries (the Hessian's structural pairs, integrators/constraint_hessian.hpp): O(n) per iteration, no
// allocation. The iteration is the same; only the linear algebra differs.
//
// With any other formulation the method refuses to run (one line): an implicit trapezoidal rule on another
// formulation's ODE would duplicate implicit_midpoint (same order, A-stable, Newton on a difference
// Jacobian), and the suite wants this method for what it is, the index-3 reference scheme. With
// augmented_lagrangian on purely Pfaffian problems it refuses as well (index 3 needs h(q)).
//
// Mixed problems (docs/design.md section 1, "Mixed constraints"): the position rows as above; the velocity rows
// A_v qd + b_v = 0 get the velocity-level penalty alpha h/2 (A_v qd + b_v) with their multipliers updated
// alongside, lambda*_v += alpha h/2 (A_v qd + b_v), as the index-3 ALs of nonholonomic systems do at velocity
// level. Through dqd_{n+1}/dq_{n+1} = 2/h that penalty's tangent is (h^2/4) alpha A_v^T A_v, the position rows'
// weight: the tangent M + (h^2/4) alpha A^T A and the projections are unchanged, with A, b and Adot qd of all rows.
// The convergence test takes (h/2) |A_v qd + b_v| beside |h(q)| (both in units of q). G (al_tangent = full) is
// the position rows' geometric stiffness; the velocity rows' d(A_v^T lambda_v)/dq is left out of the tangent.
#pragma once

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/model.hpp"
#include "core/sparse_augmented_mass.hpp"
#include "integrators/constraint_hessian.hpp"
#include "integrators/hermite.hpp"

namespace clm {

class Trapezoidal final : public Integrator {
 public:
  std::string name() const override { return "trapezoidal"; }
  std::string jacobian_used() const override { return "method_tangent"; }
  int order() const override { return 2; }
  bool adaptive() const override { return false; }
  std::string refuses_formulation(const Formulation& f) const override;
  bool integrates_constrained_system() const override { return true; }
  std::string accepts() const override {
    return "formulation augmented_lagrangian; holonomic and mixed problems (moving constraints included; a mixed "
           "model's velocity rows penalized at velocity level)";
  }
  const Vec* step_multipliers() const override { return &lambda_; }
  void interpolate(double t, Vec& y) const override { prev_.interpolate(t_, y_, f_, t, y); }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  void do_reset_state() override;
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kNonNegative; }
  // Newton on q_{n+1} with the multiplier updates; true when converged (q1_, lambda_star_ hold the result).
  bool solve(double h);
  // lambda* from the state's multipliers (the formulation's, minimum-norm) and qdd from f_.
  void start_from_state();
  // The linear algebra of both paths. evaluate: the model at (t, q1_, qd1_); residual: res_ =
  // -(h^2/4) [M qdd1_ + c - F + A^T lambda_eff_]; factor_tangent: M + beta A^T A (+ (h^2/4) G at q1_ with the
  // weights lambda_eff_ when with_geometric_stiffness), false when singular; solve: x := that matrix^-1 x.
  void evaluate(double t, unsigned what);
  void residual(double h);
  bool factor(double h, double beta, bool with_geometric_stiffness);
  void solve_in_place(Vec& x);
  const Vec& constraint_value() const { return sparse_ ? sterms_.h : terms_.h; }
  // The rows' residual in units of q, at the last evaluation (q1_, qd1_): h(q) for a holonomic problem; for a
  // mixed one h(q) of the position rows and (h/2)(A_v qd + b_v) of the velocity rows (into g_). kConstraintRate
  // for the velocity rows of a moving mixed model, else 0.
  const Vec& constraint_residual(double h);
  unsigned velocity_row_rate() const;
  // y = M x; y -= s A^T v.
  void mass_times(const Vec& x, Vec& y) const;
  void subtract_At_times(double s, const Vec& v, Vec& y) const;

  const Model* model_ = nullptr;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  int n_ = 0, m_ = 0;
  int mh_ = 0;  // position rows (m_ for holonomic problems; a mixed model's velocity rows follow them)
  Vec g_;       // constraint_residual of a mixed model
  double alpha_ = 0, rtol_ = 0, atol_ = 0, dt_ = 0, newton_tol_ = 0, h_tol_ = 0;
  Vec q0_, qd0_, qdd0_, qdh_, qddh_, q1_, qd1_, qdd1_, dq_, res_, sc_, tmp_;
  Vec lambda_star_, lambda_star_prev_, lambda_, lambda_eff_;
  Mat T_;  // M + (h^2/4) alpha A^T A
  Eigen::LLT<Mat> llt_;    // the projections' M + P (positive definite)
  Eigen::LDLT<Mat> ldlt_;  // the Newton tangent (the geometric stiffness may make it indefinite)
  bool sparse_ = false;
  bool use_llt_ = false;  // the dense factorization last made: llt_ (no G) or ldlt_
  SparseModelTerms sterms_;
  std::unique_ptr<SparseAugmentedMass> sparse_tangent_;
  std::vector<int> hessian_slot_;  // slot in sparse_tangent_ of each of the Hessian's entries
  const ConstraintHessian* hessian_ = nullptr;  // al_tangent = full
  std::unique_ptr<ConstraintHessian::Workspace> hessian_ws_;
  StepStart prev_;  // the last step's start (dense output)
};

}  // namespace clm
