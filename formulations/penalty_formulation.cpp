#include "formulations/penalty_formulation.hpp"

#include <cmath>

namespace clm {

PenaltyFormulation::PenaltyFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), llt_(n_) {
  if (!(options_.N > 0) || !std::isfinite(options_.N))
    throw InputError("penalty: option N must be a finite number > 0 (got " + std::to_string(options_.N) + ")");
  if (!(options_.k >= 0) || !std::isfinite(options_.k))
    throw InputError("penalty: option k must be a finite number >= 0 (got " + std::to_string(options_.k) + ")");
  if (options_.k != 0 && !model_->holonomic())
    throw InputError("penalty: option k (position spring k/2 |h|^2) needs holonomic constraints; problem " +
                     model_->name() + " has Pfaffian constraints, set k = 0");
  spring_ = options_.k != 0;
  model_terms_ = kMassMatrix | kBias | kForce | kConstraintJacobian | (spring_ ? kConstraintValue : 0u);
  requires_independent_constraints_ = false;  // A^T A may be singular: the penalty does not care
  violation_ = Vec::Zero(m_);
  force_ = Vec::Zero(n_);
}

void PenaltyFormulation::solve_accelerations() {
  // lambda_N = -N A qd - k h; the penalty force is A^T lambda_N.
  violation_.noalias() = terms_.A * qd_;
  lambda_ = -options_.N * violation_;
  if (spring_) lambda_.noalias() -= options_.k * terms_.h;
  force_ = terms_.F - terms_.c;
  force_.noalias() += terms_.A.transpose() * lambda_;
  llt_.compute(terms_.M);
  if (llt_.info() != Eigen::Success) throw NumericalFailure("penalty: Cholesky of the mass matrix M failed");
  qdd_ = force_;
  llt_.solveInPlace(qdd_);
  if (!qdd_.allFinite()) throw NumericalFailure("penalty: non-finite accelerations");
}

void PenaltyFormulation::read_state(double t, const Vec& y, Observation& obs) {
  AccelerationFormulation::read_state(t, y, obs);  // evaluates rhs, so violation_ is current
  obs.extras.assign(1, options_.N * violation_.squaredNorm());
}

}  // namespace clm
