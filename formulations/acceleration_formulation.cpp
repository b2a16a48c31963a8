#include "formulations/acceleration_formulation.hpp"


#include <algorithm>

namespace clm {

AccelerationFormulation::AccelerationFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), options) {
  q_.resize(n_);
  qd_.resize(n_);
  qdd_.resize(n_);
  lambda_.resize(m_);
  observed_rate_.resize(2 * n_);
}

void AccelerationFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  minimum_norm_.reset();
  singular_evaluations_ = 0;
  if (requires_independent_constraints_) {
    if (!supports_redundant_constraints_) {
      require_full_rank(q);
    } else if (const int rank = constraint_rank(q); m_ > 0 && rank < m_) {
      minimum_norm_ = make_redundant_solver(rank);
      minimum_norm_force_ = Vec::Zero(n_);
      minimum_norm_gamma_ = Vec::Zero(m_);
    }
  }
  sparse_ = choose_sparse_path();
  if (sparse_ && sparse_terms_.A.rows() != m_) {  // once per formulation: the patterns and the solver
    sparse_terms_ = model_->make_sparse_terms();
    sparse_force_ = Vec::Zero(n_);
    sparse_gamma_ = Vec::Zero(m_);
    sparse_velocity_residual_ = Vec::Zero(m_);
    make_sparse_solver();
  }
  y.resize(2 * n_);
  y << q, qd;
}

bool AccelerationFormulation::choose_sparse_path() const {
  // Redundant constraints keep the dense minimum-norm path (documented).
  return wants_sparse_linear_algebra(options_, *model_, name(), has_sparse_path()) && !minimum_norm_;
}

std::unique_ptr<RedundantConstraintSolver> AccelerationFormulation::make_redundant_solver(int r) const {
  return std::make_unique<MinimumNormMultipliers>(n_, m_, r);
}

void AccelerationFormulation::rhs(double t, const Vec& y, Vec& dy) {
  q_ = y.head(n_);
  qd_ = y.tail(n_);
  if (sparse_) {
    model_->evaluate_sparse(t, q_, qd_, model_terms_, *ws_, sparse_terms_);
    try {
      sparse_force_ = sparse_terms_.F - sparse_terms_.c;
      sparse_constraint_acceleration_rhs(sparse_gamma_);
      solve_sparse();
      if (singular_position_solve_applies() && last_pivot_ratio() < kSingularPositionScreen)
        solve_at_singular_position();
    } catch (const NumericalFailure&) {
      const SparseModelTerms& st = sparse_terms_;
      if (!st.M.coeffs().allFinite() || !st.c.allFinite() || !st.F.allFinite() || !st.A.coeffs().allFinite() ||
          !st.Adot_qd.allFinite() || !q_.allFinite() || !qd_.allFinite())
        throw NumericalFailure(name() + ": non-finite model terms (M, c, F, A or Adot qd overflowed; parameters or "
                                        "state out of range?)");
      if (!singular_position_solve_applies()) throw;
      solve_at_singular_position();
    }
    dy.head(n_) = qd_;
    dy.tail(n_) = qdd_;
    return;
  }
  model_->evaluate(t, q_, qd_, model_terms_, *ws_, terms_);
  try {
    if (minimum_norm_) {
      minimum_norm_force_ = terms_.F - terms_.c;
      constraint_acceleration_rhs(minimum_norm_gamma_);
      minimum_norm_->solve(terms_, minimum_norm_force_, minimum_norm_gamma_, name(), qdd_, lambda_);
    } else {
      solve_accelerations();
      if (singular_position_solve_applies() && last_pivot_ratio() < kSingularPositionScreen)
        solve_at_singular_position();
    }
  } catch (const NumericalFailure&) {
    // A "singular" matrix built from overflowed terms (g = 1e300, a state gone to infinity) is not a
    // singular mechanism: say what it is. Checked only on failure, so the hot path pays nothing.
    if (!terms_.M.allFinite() || !terms_.c.allFinite() || !terms_.F.allFinite() || !terms_.A.allFinite() ||
        !terms_.Adot_qd.allFinite() || !q_.allFinite() || !qd_.allFinite())
      throw NumericalFailure(name() + ": non-finite model terms (M, c, F, A or Adot qd overflowed; parameters or "
                                      "state out of range?)");
    if (!singular_position_solve_applies()) throw;
    solve_at_singular_position();
  }
  dy.head(n_) = qd_;
  dy.tail(n_) = qdd_;
}

void AccelerationFormulation::solve_at_singular_position() {
  // lambda = (S + delta I)^-1 (gamma - A M^-1 f), qdd = M^-1 (f + A^T lambda), S = A M^-1 A^T,
  // delta = kSingularPositionRegularization max_i S_ii (see the header).
  if (singular_free_.size() != n_) {
    singular_free_ = Vec::Zero(n_);
    singular_gamma_ = Vec::Zero(m_);
    if (sparse_) {
      singular_sparse_ = std::make_unique<SparseSchurSolver>(sparse_terms_, model_->sparse_block_size());
    } else {
      singular_llt_M_ = Eigen::LLT<Mat>(n_);
      singular_llt_S_ = Eigen::LLT<Mat>(m_);
      singular_Y_ = Mat::Zero(n_, m_);
      singular_S_ = Mat::Zero(m_, m_);
    }
  }
  bool factored = false;
  if (sparse_) {
    // sparse_force_ and sparse_gamma_ are the regular solve's right-hand sides at this evaluation.
    factored = singular_sparse_->solve_regularized(sparse_terms_, sparse_force_, sparse_gamma_,
                                                   kSingularPositionRegularization, qdd_, lambda_);
  } else {
    singular_llt_M_.compute(terms_.M);
    if (singular_llt_M_.info() == Eigen::Success) {
      singular_Y_ = terms_.A.transpose();
      singular_llt_M_.solveInPlace(singular_Y_);
      singular_S_.noalias() = terms_.A * singular_Y_;
      const double delta = kSingularPositionRegularization * singular_S_.diagonal().cwiseAbs().maxCoeff();
      singular_S_.diagonal().array() += delta;
      singular_llt_S_.compute(singular_S_);
      factored = singular_llt_S_.info() == Eigen::Success &&
                 well_conditioned(pivot_ratio(singular_llt_S_.matrixLLT().diagonal().cwiseAbs2()));
    }
    if (factored) {
      singular_free_ = terms_.F - terms_.c;
      singular_llt_M_.solveInPlace(singular_free_);
      constraint_acceleration_rhs(singular_gamma_);
      lambda_ = singular_gamma_;
      lambda_.noalias() -= terms_.A * singular_free_;
      singular_llt_S_.solveInPlace(lambda_);
      qdd_ = singular_free_;
      qdd_.noalias() += singular_Y_ * lambda_;
    }
  }
  if (!factored)
    throw NumericalFailure(name() + ": singular saddle-point matrix at a singular position, even regularized (M not "
                                    "positive definite?)");
  ++singular_evaluations_;
}

void AccelerationFormulation::read_state(double t, const Vec& y, Observation& obs) {
  rhs(t, y, observed_rate_);  // a member: observe() must not allocate (core/energy_balance.hpp)
  obs.q = q_;
  obs.qd = qd_;
  obs.lambda = lambda_;
  if (supports_redundant_constraints_ && model_->has_singular_positions())
    obs.extras.assign(1, static_cast<double>(singular_evaluations_));
}

std::vector<std::string> AccelerationFormulation::extra_names() const {
  if (supports_redundant_constraints_ && model_->has_singular_positions()) return {"singular_evaluations"};
  return {};
}

void AccelerationFormulation::constraint_acceleration_rhs(Vec& out) const {
  out.noalias() = -terms_.Adot_qd;
  if (options_.baumgarte_alpha != 0) {
    out.noalias() -= (2 * options_.baumgarte_alpha) * (terms_.A * qd_);
    // The velocity constraint of a time-dependent problem is A qd + b = 0 (b empty otherwise).
    if (terms_.b.size() > 0) out.noalias() -= (2 * options_.baumgarte_alpha) * terms_.b;
  }
  // -beta^2 h on the position rows (all rows of a holonomic problem, the first of a mixed one).
  if (options_.baumgarte_beta != 0 && model_->has_position_rows())
    out.head(terms_.h.size()).noalias() -= (options_.baumgarte_beta * options_.baumgarte_beta) * terms_.h;
}

}  // namespace clm

namespace clm {

void AccelerationFormulation::sparse_constraint_acceleration_rhs(Vec& out) const {
  out.noalias() = -sparse_terms_.Adot_qd;
  if (options_.baumgarte_alpha != 0) {
    sparse_velocity_residual_.noalias() = sparse_terms_.A * qd_;  // a plain vector: no temporary
    out.noalias() -= (2 * options_.baumgarte_alpha) * sparse_velocity_residual_;
  }
  if (options_.baumgarte_beta != 0 && model_->holonomic())
    out.noalias() -= (options_.baumgarte_beta * options_.baumgarte_beta) * sparse_terms_.h;
}

}  // namespace clm

namespace clm {

bool AccelerationFormulation::saddle_jacobian_available() const {
  if (!model_->has_dynamics_derivatives()) return false;
  // The sparse path is chosen by initial_state() from the options alone (and redundancy, checked in
  // saddle_jacobian); an options error is the run's to report, not this query's.
  try {
    return !wants_sparse_linear_algebra(options_, *model_, name(), has_sparse_path());
  } catch (const InputError&) {
    return false;
  }
}

void AccelerationFormulation::saddle_jacobian(double t, const Vec& y, Mat& J) {
  if (minimum_norm_)
    throw InputError(name() + ": jacobian = autodiff is not available with redundant constraints (rank A(q0) < m: "
                              "the minimum-norm path); use jacobian = finite_difference");
  if (sparse_)
    throw InputError(name() + ": jacobian = autodiff is not available on the sparse path; use jacobian = "
                              "finite_difference or formulation.linear_algebra = dense");
  const int n = n_, m = m_;
  if (!jac_sized_) {
    jac_deriv_ = model_->make_derivatives(/*constraint_bias=*/true);
    jac_rhs_ = Mat::Zero(n + m, 2 * n);
    jac_dy_ = Vec::Zero(2 * n);
    size_linearized_solver();
    jac_sized_ = true;
  }
  rhs(t, y, jac_dy_);  // terms_, qdd_, lambda_ and the subclass's factorizations at y
  model_->dynamics_derivatives(q_, qd_, *ws_, jac_deriv_);
  const bool forced = model_->has_generalized_force();
  if (forced) model_->generalized_force_derivatives(t, q_, qd_, *ws_, jac_deriv_.dF_dq, jac_deriv_.dF_dqd);
  const DynamicsDerivatives& d = jac_deriv_;
  double alpha = 0, beta2 = 0;
  stabilization_gains(alpha, beta2);
  const int mh = model_->position_rows();
  const std::vector<Mat>& dR = m > 0 ? reaction_derivatives(d) : d.dA;
  for (int l = 0; l < n; ++l) {
    // d/dq_l
    auto top = jac_rhs_.col(l).head(n);
    top = -d.dc_dq.col(l);
    if (forced) top += d.dF_dq.col(l);
    top.noalias() -= d.dM[l] * qdd_;
    if (m > 0) {
      top.noalias() += dR[l].transpose() * lambda_;
      auto bottom = jac_rhs_.col(l).tail(m);
      bottom = -d.dbias_dq.col(l);
      bottom.noalias() -= d.dA[l] * qdd_;
      if (alpha != 0) bottom.noalias() -= (2 * alpha) * (d.dA[l] * qd_);
      if (beta2 != 0) bottom.head(mh) -= beta2 * terms_.A.col(l).head(mh);  // d/dq (beta2 h) of the position rows
    }
    // d/dqd_l: M and A do not depend on qd.
    auto top_v = jac_rhs_.col(n + l).head(n);
    top_v = -d.dc_dqd.col(l);
    if (forced) top_v += d.dF_dqd.col(l);
    if (m > 0) {
      auto bottom_v = jac_rhs_.col(n + l).tail(m);
      bottom_v = -d.dbias_dqd.col(l);
      if (alpha != 0) bottom_v -= (2 * alpha) * terms_.A.col(l);
    }
  }
  solve_linearized();
  J.setZero();
  J.topRightCorner(n, n).setIdentity();
  J.bottomRows(n) = jac_rhs_.topRows(n);
}

}  // namespace clm
