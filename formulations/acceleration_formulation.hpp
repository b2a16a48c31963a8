// Shared body of the formulations whose state is (q, qd) and whose work is one linear solve for the
// accelerations (and multipliers) per evaluation: kkt, schur, penalty, augmented_lagrangian, added_mass, servo.
// A subclass says only how it solves; buffers are sized once here.
#pragma once

#include <memory>

#include "core/formulation.hpp"
#include "formulations/minimum_norm_multipliers.hpp"
#include "formulations/sparse_acceleration_solver.hpp"

namespace clm {

// jacobian = auto (OdeSystem::own_jacobian_is_cheaper) for a formulation with an exact Jacobian: a rule fixed
// from bench_integrators' JacobianRun / JacobianCall (docs/design.md, "The exact Jacobian"), not a timing at
// the run's start, so that a run's numbers never depend on the machine's load: the exact Jacobian where the
// model's terms come from automatic differentiation and it has at least kExactJacobianMinDof coordinates
// (four_bar, n = 9: 38 against 113 us per Jacobian), finite differences below (near parity: the sleigh, the
// rolling disk, the pendulum, n <= 4) and for models with hand-written terms (closed_chain: its rhs is cheap,
// 644 against 174 us at n = 16). A run takes the same steps and Newton iterations with either Jacobian, so the
// cheaper Jacobian is the cheaper run.
// Shared by every formulation with an exact Jacobian (also fernandez_bloch, which is not an acceleration one).
inline constexpr int kExactJacobianMinDof = 6;
inline bool exact_jacobian_is_cheaper(const Model& model) {
  return !model.uses_analytic_terms() && model.n() >= kExactJacobianMinDof;
}

// The singular-position solve (AccelerationFormulation::solve_at_singular_position): an evaluation goes there when
// its factorization's pivot ratio (the kkt LU's min |u_ii| / max |u_ii|, or S's L_ii^2 for schur) falls below
// kSingularPositionScreen, and solves S + delta I, delta = kSingularPositionRegularization max_i S_ii. Chosen by
// measurement on n_four_bar, loops 2, 5 s (4 singular passages), rtol 1e-8, projection both, kkt and schur, dense
// and sparse, dopri5 and radau5 (docs/findings.md): screens 1e-8 .. 1e-11 and delta 1e-12 .. 1e-7 all pass;
// B0's largest distance from the reduced motion is 5e-8 .. 2.7e-6 at (1e-9, 1e-8), up to 3e-4 with delta 1e-12
// (too little regularization leaves the stage errors / sigma^2 in), and the screen at 1e-9 sends ~1000 of ~4000
// evaluations of a dopri5 run there. Only problems with kSingularPositions under position projection look at
// the pivot ratio at all: every other run's numbers are those of the regular solve.
inline constexpr double kSingularPositionScreen = 1e-9;
inline constexpr double kSingularPositionRegularization = 1e-8;

class AccelerationFormulation : public Formulation {
 public:
  AccelerationFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  int dimension() const override { return 2 * n_; }
  bool state_starts_with_q_qd() const override { return true; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  // kkt and schur on a problem with singular positions: {"singular_evaluations"} (see singular_fallback_).
  std::vector<std::string> extra_names() const override;

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;
  // Given terms_ at (q, qd), fill qdd_ and lambda_. Throws NumericalFailure when singular.
  virtual void solve_accelerations() = 0;
  // -Adot qd - 2 alpha A qd - beta^2 h: the right-hand side of A qdd = ... with Baumgarte stabilization.
  void constraint_acceleration_rhs(Vec& out) const;

  Vec q_, qd_, qdd_, lambda_;
  // What rhs() asks the model for, and whether initial_state() refuses rank-deficient constraints: the
  // limit formulations (penalty, added_mass) need other terms and no independent constraints.
  unsigned model_terms_ = kDynamics;
  bool requires_independent_constraints_ = true;
  // kkt and schur: a consistent rank-deficient A at q0 (redundant constraints) is accepted; then every evaluation
  // solves for the minimum-norm multipliers (formulations/minimum_norm_multipliers.hpp) instead of
  // solve_accelerations(), whose fast path is left untouched for full-rank runs.
  bool supports_redundant_constraints_ = false;
  // The solver of the redundant path for rank r (kkt: MinimumNormSaddlePoint, schur: MinimumNormMultipliers).
  virtual std::unique_ptr<RedundantConstraintSolver> make_redundant_solver(int r) const;
  std::unique_ptr<RedundantConstraintSolver> minimum_norm_;  // made by initial_state() when rank A(q0) < m
  Vec minimum_norm_force_, minimum_norm_gamma_;

  // ---- Singular positions (problems with kSingularPositions whose positions projection keeps on h = 0) ----
  // Near a singular position A(q) has a singular value sigma that tends to 0. The regular solve's multiplier
  // along it is (its part of gamma - A M^-1 f) / sigma^2; on the motion that part vanishes like sigma^2, but an
  // integrator's stage values lie off the motion by their local error, and divided by sigma^2 that error
  // becomes an acceleration no error estimate accepts: dopri5 and radau5 shrank their steps to underflow at
  // A02's first singular position, and a minimum-norm solve only where the LU failed did not change that
  // (docs/findings.md). So an evaluation whose factorization is near rank loss (pivot ratio below
  // kSingularPositionScreen) or fails is solved in the Schur form with S + delta I (Tikhonov): the multiplier's
  // components along directions with sigma^2 far below delta are damped to zero (those rows are not enforced
  // for the instants the motion spends there; the projection after the step restores them), the others change
  // by delta / sigma^2 relative. The damping is smooth in sigma, so an error estimate sees no jump where the
  // truncated pseudo-inverse would switch a direction off. qdd is unique where A has full rank; lambda's split
  // between rows that become dependent is the regularized (least-norm) one. kkt and schur, dense and sparse
  // (the sparse path solves with a SparseSchurSolver of its own, made at the first such evaluation); counted in
  // singular_evaluations (an extra column of problems with singular positions). Without projection the run
  // still ends at the singular position (core/formulation.hpp).
  bool singular_position_solve_applies() const {
    return supports_redundant_constraints_ && !minimum_norm_ && positions_projected() &&
           model_->has_singular_positions();
  }
  void solve_at_singular_position();
  // The conditioning of the last solve_accelerations() / solve_sparse(): a pivot ratio (1 where not known).
  virtual double last_pivot_ratio() const { return 1.0; }
  // Its buffers, made at the first such evaluation: the dense Schur form (M's Cholesky, Y = M^-1 A^T, S) or,
  // on the sparse path, a SparseSchurSolver.
  Eigen::LLT<Mat> singular_llt_M_, singular_llt_S_;
  Mat singular_Y_, singular_S_;
  std::unique_ptr<SparseSchurSolver> singular_sparse_;
  Vec singular_free_, singular_gamma_;
  long singular_evaluations_ = 0;

  Vec observed_rate_;  // read_state's dy (2n, sized by the constructor: observe() does not allocate)

  // ---- The exact Jacobian of the saddle-point formulations (kkt, schur, augmented_lagrangian) --------------
  // J = d(qd, qdd)/d(q, qd) by implicit differentiation of [M -A^T; A 0][qdd; lambda] = [F - c; gamma]:
  //   [M -A^T; A 0][dqdd; dlambda] = [-dc - dM qdd + dA^T lambda; dgamma - dA qdd],
  //   gamma = -Adot qd - 2 alpha A qd - beta^2 h  (Baumgarte terms as the rhs applies them),
  // with dM, dA, dc and d(Adot qd) from Model::dynamics_derivatives (autodiff; F is state-independent for the
  // models that provide them). The right-hand sides are built here, the solve is the subclass's
  // (solve_linearized), reusing what its rhs() left at y. Available on the dense path of models with
  // dynamics derivatives (no time dependence, no state-dependent force); not on the sparse path, whose
  // Jacobian would have to be sparse too to pay, nor with redundant constraints (minimum-norm path).
  bool saddle_jacobian_available() const;
  void saddle_jacobian(double t, const Vec& y, Mat& J);
  // jacobian = auto: the rule clm::exact_jacobian_is_cheaper below.
  bool exact_jacobian_is_cheaper() const { return clm::exact_jacobian_is_cheaper(*model_); }
  // Given jac_rhs_ ((n + m) x 2n: the stacked right-hand sides above, column l for q_l, n + l for qd_l) at
  // the state of the last rhs(), overwrite its top n rows with dqdd. No heap allocation after the first call.
  virtual void solve_linearized() {}
  Mat jac_rhs_;
  // Sized on the first saddle_jacobian() call (once per run), not at construction: dM alone is n^3 numbers,
  // which every kkt / schur run would pay for while most runs never ask for a Jacobian.
  bool jac_sized_ = false;
  virtual void size_linearized_solver() {}
  // The stabilization gains of the constraint row A qdd = -Adot qd - 2 alpha A qd - beta2 h that the rhs applies,
  // as saddle_jacobian differentiates it: kkt's and schur's Baumgarte gains (beta2 = beta^2, 0 for Pfaffian
  // problems); the augmented Lagrangian's 2 xi omega and omega^2 enter as alpha = xi omega, beta2 = omega^2.
  // d/dq_l (l = 0..n-1) of the matrix whose transpose carries the constraint force R^T lambda, the term
  // dR^T lambda of the first block row above: A for every formulation but servo, whose force is B^T lambda.
  // Called once per Jacobian, after the dynamics derivatives at y.
  virtual const std::vector<Mat>& reaction_derivatives(const DynamicsDerivatives& d) { return d.dA; }
  virtual void stabilization_gains(double& alpha, double& beta2) const {
    alpha = options_.baumgarte_alpha;
    beta2 = model_->has_position_rows() ? options_.baumgarte_beta * options_.baumgarte_beta : 0.0;
  }

 private:
  DynamicsDerivatives jac_deriv_;
  Vec jac_dy_;

 protected:

  // ---- The sparse path (kkt, schur; formulations/sparse_acceleration_solver.hpp) ---------------------------
  // Chosen by initial_state() (FormulationOptions::linear_algebra): then rhs() evaluates SparseModelTerms and
  // calls solve_sparse() instead of the dense terms and solve_accelerations(). Redundant constraints (a
  // rank-deficient A at q0) stay on the dense minimum-norm path.
 public:
  bool uses_sparse_path() const { return sparse_; }

 protected:
  virtual bool has_sparse_path() const { return false; }
  // Builds the solver from sparse_terms_'s patterns (once per run).
  virtual void make_sparse_solver() {}
  // Given sparse_terms_ at (q, qd), sparse_force_ = F - c and sparse_gamma_ (constraint_acceleration_rhs's
  // value), fill qdd_ and lambda_.
  virtual void solve_sparse() {}
  bool sparse_ = false;
  SparseModelTerms sparse_terms_;
  Vec sparse_force_, sparse_gamma_;
  mutable Vec sparse_velocity_residual_;  // A qd (Baumgarte)

 private:
  bool choose_sparse_path() const;
  void sparse_constraint_acceleration_rhs(Vec& out) const;
};

}  // namespace clm
