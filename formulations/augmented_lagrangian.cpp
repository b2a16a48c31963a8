#include "formulations/augmented_lagrangian.hpp"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace clm {

void AugmentedLagrangianFormulation::validate(const FormulationOptions& o) {
  auto bad = [](const std::string& key, const std::string& rule, double v) {
    std::ostringstream s;
    s << "augmented_lagrangian: option " << key << " must be " << rule << " (got " << v << ")";
    throw InputError(s.str());
  };
  if (!(o.al_alpha > 0) || !std::isfinite(o.al_alpha)) bad("al_alpha", "a finite number > 0", o.al_alpha);
  if (!(o.al_xi >= 0) || !std::isfinite(o.al_xi)) bad("al_xi", "a finite number >= 0", o.al_xi);
  if (!(o.al_omega >= 0) || !std::isfinite(o.al_omega)) bad("al_omega", "a finite number >= 0", o.al_omega);
  if (o.al_iterations < 1) bad("al_iterations", "an integer >= 1", double(o.al_iterations));
  if (!(o.al_tolerance >= 0) || !std::isfinite(o.al_tolerance))
    bad("al_tolerance", "a finite number >= 0", o.al_tolerance);
}

AugmentedLagrangianFormulation::AugmentedLagrangianFormulation(std::shared_ptr<const Model> model,
                                                               FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), llt_(n_) {
  validate(options_);
  // M + alpha A^T A is positive definite for any rank of A: no rank test, no SVD path.
  requires_independent_constraints_ = false;
  model_terms_ = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias |
                 (model_->has_position_rows() ? kConstraintValue : 0u) | (model_->time_dependent() ? kConstraintRate : 0u);
  mbar_ = Mat::Zero(n_, n_);
  for (Vec* v : {&base_, &rhs_}) v->setZero(n_);
  for (Vec* v : {&g_, &r_, &lambda_star_, &dlambda_}) v->setZero(m_);
}

// The iteration on either path: Terms is ModelTerms (dense A) or SparseModelTerms (sparse A); factor(alpha)
// factors M + alpha A^T A (false when it is not positive definite), solve(x) overwrites x with its inverse times x.
template <class Terms, class Factor, class Solve>
void AugmentedLagrangianFormulation::iterate(const Terms& t, const Vec& force, Factor factor, Solve solve) {
  const double alpha = options_.al_alpha;
  // g = Adot qd + 2 xi omega (A qd + b) + omega^2 h: A qdd + g = 0 is the stabilized acceleration constraint.
  // For a time-dependent problem (core/problem.hpp) Adot qd is the whole acceleration-level bias (with the time
  // derivatives), b the velocity constraint's term and h = h(q, t): the stabilization acts on the moving
  // constraint, as kkt's Baumgarte does. (Sparse terms: holonomic and time-independent, no b.)
  g_ = t.Adot_qd;
  const double damping = 2 * options_.al_xi * options_.al_omega;
  if (damping != 0) {
    g_.noalias() += damping * (t.A * qd_);
    if constexpr (std::is_same_v<Terms, ModelTerms>)
      if (t.b.size() > 0) g_ += damping * t.b;
  }
  // omega^2 h on the position rows (the first rows of a mixed problem; sparse terms are holonomic).
  if (model_->has_position_rows() && options_.al_omega != 0)
    g_.head(t.h.size()) += (options_.al_omega * options_.al_omega) * t.h;
  if (!factor(alpha))
    throw NumericalFailure("augmented_lagrangian: Cholesky of M + alpha A^T A failed (M not positive definite)");
  base_ = force;
  base_.noalias() -= alpha * (t.A.transpose() * g_);
  lambda_star_.setZero();
  const double tol = options_.al_tolerance;
  last_iterations_ = 0;
  double last_update = INFINITY;
  for (long i = 0; i < options_.al_iterations; ++i) {
    qdd_ = base_;
    qdd_.noalias() -= t.A.transpose() * lambda_star_;
    solve(qdd_);
    r_ = g_;
    r_.noalias() += t.A * qdd_;
    dlambda_ = alpha * r_;
    lambda_star_ += dlambda_;
    ++last_iterations_;
    // Done when the update is below the tolerance, or when it stopped shrinking: then it is rounding
    // (~alpha eps relative, from the condition of M + alpha A^T A: measured 1e-9 .. 1e-8 on four_bar at
    // alpha = 1e7, reached after 3 updates) and further updates only reshuffle it.
    const double update = dlambda_.lpNorm<Eigen::Infinity>();
    if (update <= tol * lambda_star_.lpNorm<Eigen::Infinity>() || update > 0.5 * last_update) break;
    last_update = update;
  }
  // M qdd + c - F = -A^T lambda*_{i+1}: the suite's lambda is -lambda*.
  lambda_ = -lambda_star_;
  if (!qdd_.allFinite()) throw NumericalFailure("augmented_lagrangian: non-finite accelerations");
}

void AugmentedLagrangianFormulation::solve_accelerations() {
  rhs_ = terms_.F - terms_.c;
  iterate(
      terms_, rhs_,
      [this](double alpha) {
        mbar_ = terms_.M;
        mbar_.noalias() += alpha * (terms_.A.transpose() * terms_.A);
        return llt_.compute(mbar_);
      },
      [this](Vec& x) { llt_.solve_in_place(x); });
}

void AugmentedLagrangianFormulation::size_linearized_solver() {
  jac_base_ = Mat::Zero(n_, 2 * n_);
  jac_x_ = Mat::Zero(n_, 2 * n_);
  jac_mu_ = Mat::Zero(m_, 2 * n_);
  jac_update_ = Mat::Zero(m_, 2 * n_);
}

// jac_rhs_ = [r1; r2] of [M -A^T; A 0][dqdd; dlambda] = [r1; r2] (saddle_jacobian). In Bayo's sign, mu = -dlambda:
// M dqdd + A^T mu = r1, A dqdd = r2, solved by the rhs's own iteration with g = -r2, column by column at once:
//   (M + alpha A^T A) X_i = r1 + alpha A^T r2 - A^T Mu_i,   Mu_{i+1} = Mu_i + alpha (A X_i - r2),
// stopped by the rhs's rule (update below al_tolerance, or no longer halving). llt_ holds the factor of
// M + alpha A^T A that the rhs() at y (saddle_jacobian's first step) computed: no second factorization.
void AugmentedLagrangianFormulation::solve_linearized() {
  const int n = n_, m = m_;
  const double alpha = options_.al_alpha;
  auto r1 = jac_rhs_.topRows(n);
  auto r2 = jac_rhs_.bottomRows(m);
  jac_base_ = r1;
  jac_base_.noalias() += alpha * (terms_.A.transpose() * r2);
  jac_mu_.setZero();
  double last_update = INFINITY;
  for (long i = 0; i < options_.al_iterations; ++i) {
    jac_x_ = jac_base_;
    jac_x_.noalias() -= terms_.A.transpose() * jac_mu_;
    llt_.solve_in_place(jac_x_);
    jac_update_ = -r2;
    jac_update_.noalias() += terms_.A * jac_x_;
    jac_update_ *= alpha;
    jac_mu_ += jac_update_;
    const double update = jac_update_.lpNorm<Eigen::Infinity>();
    if (update <= options_.al_tolerance * jac_mu_.lpNorm<Eigen::Infinity>() || update > 0.5 * last_update) break;
    last_update = update;
  }
  if (!jac_x_.allFinite()) throw NumericalFailure("augmented_lagrangian: non-finite Jacobian");
  r1 = jac_x_;
}

void AugmentedLagrangianFormulation::make_sparse_solver() {
  sparse_mbar_ = std::make_unique<SparseAugmentedMass>(sparse_terms_);
}

// The same iteration on SparseModelTerms, with M + alpha A^T A as the fixed-pattern sparse L D L^T.
void AugmentedLagrangianFormulation::solve_sparse() {
  iterate(
      sparse_terms_, sparse_force_,
      [this](double alpha) {
        sparse_mbar_->assemble(sparse_terms_, alpha);
        return sparse_mbar_->factorize();
      },
      [this](Vec& x) { sparse_mbar_->solve_in_place(x); });
}

}  // namespace clm
