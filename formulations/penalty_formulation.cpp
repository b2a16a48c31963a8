#include "formulations/penalty_formulation.hpp"

#include <cmath>

namespace clm {

PenaltyFormulation::PenaltyFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), llt_(n_), jacobian_llt_(n_) {
  if (!(options_.N > 0) || !std::isfinite(options_.N))
    throw InputError("penalty: option N must be a finite number > 0 (got " + std::to_string(options_.N) + ")");
  if (!(options_.k >= 0) || !std::isfinite(options_.k))
    throw InputError("penalty: option k must be a finite number >= 0 (got " + std::to_string(options_.k) + ")");
  // Refused for velocity rows alone (a holonomic problem without rows, m = 0, takes it as it always did).
  if (options_.k != 0 && !model_->holonomic() && !model_->has_position_rows())
    throw InputError("penalty: option k (position spring k/2 |h|^2) needs position constraints h(q) = 0; problem " +
                     model_->name() + " has velocity rows only (A(q) qd + b = 0), set k = 0");
  spring_ = options_.k != 0;
  model_terms_ = kMassMatrix | kBias | kForce | kConstraintJacobian | (spring_ ? kConstraintValue : 0u) |
                 (model_->time_dependent() ? kConstraintRate : 0u);
  requires_independent_constraints_ = false;  // A^T A may be singular: the penalty does not care
  violation_ = Vec::Zero(m_);
  force_ = Vec::Zero(n_);
  if (model_->has_dynamics_derivatives()) deriv_ = model_->make_derivatives();
  dy_work_ = Vec::Zero(2 * n_);
  aqd_l_ = Vec::Zero(m_);
  block_ = Mat::Zero(n_, n_);
  ata_ = Mat::Zero(n_, n_);
}

void PenaltyFormulation::jacobian(double t, const Vec& y, Mat& J) {
  rhs(t, y, dy_work_);  // terms_, qdd_, lambda_ at y
  // Matrix right-hand sides: Eigen's LLT (the rhs path's CholeskySolver serves vectors; same factor).
  jacobian_llt_.compute(terms_.M);
  model_->dynamics_derivatives(q_, qd_, *ws_, deriv_);
  const bool forced = model_->has_generalized_force();
  if (forced) model_->generalized_force_derivatives(t, q_, qd_, *ws_, deriv_.dF_dq, deriv_.dF_dqd);
  const int n = n_;
  const double N = options_.N;
  J.setZero();
  J.topRightCorner(n, n).setIdentity();
  // Columns for qd.
  ata_.noalias() = terms_.A.transpose() * terms_.A;
  block_ = -deriv_.dc_dqd - N * ata_;
  if (forced) block_ += deriv_.dF_dqd;
  jacobian_llt_.solveInPlace(block_);
  J.bottomRightCorner(n, n) = block_;
  // Columns for q.
  for (int l = 0; l < n; ++l) {
    auto col = block_.col(l);
    col = -deriv_.dc_dq.col(l);
    if (forced) col += deriv_.dF_dq.col(l);
    col.noalias() += deriv_.dA[l].transpose() * lambda_;
    aqd_l_.noalias() = deriv_.dA[l] * qd_;
    aqd_l_ *= N;
    if (spring_) aqd_l_.head(terms_.h.size()) += options_.k * terms_.A.col(l).head(terms_.h.size());  // dh/dq_l
    col.noalias() -= terms_.A.transpose() * aqd_l_;
    col.noalias() -= deriv_.dM[l] * qdd_;
  }
  jacobian_llt_.solveInPlace(block_);
  J.bottomLeftCorner(n, n) = block_;
}

void PenaltyFormulation::solve_accelerations() {
  // lambda_N = -N (A qd + b) - k h; the penalty force is A^T lambda_N (b: the velocity term of a moving
  // constraint, empty otherwise; h: the position rows, the first rows of a mixed problem).
  violation_.noalias() = terms_.A * qd_;
  if (terms_.b.size() > 0) violation_ += terms_.b;
  lambda_ = -options_.N * violation_;
  if (spring_) lambda_.head(terms_.h.size()).noalias() -= options_.k * terms_.h;
  force_ = terms_.F - terms_.c;
  force_.noalias() += terms_.A.transpose() * lambda_;
  if (!llt_.compute(terms_.M)) throw NumericalFailure("penalty: Cholesky of the mass matrix M failed");
  qdd_ = force_;
  llt_.solve_in_place(qdd_);
  if (!qdd_.allFinite()) throw NumericalFailure("penalty: non-finite accelerations");
}

void PenaltyFormulation::read_state(double t, const Vec& y, Observation& obs) {
  AccelerationFormulation::read_state(t, y, obs);  // evaluates rhs, so violation_ is current
  obs.extras.assign(1, options_.N * violation_.squaredNorm());
}

}  // namespace clm
