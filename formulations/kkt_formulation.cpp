#include "formulations/kkt_formulation.hpp"

namespace clm {

KktFormulation::KktFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), lu_(n_ + m_) {
  K_ = Mat::Zero(n_ + m_, n_ + m_);
  b_.resize(n_ + m_);
  x_.resize(n_ + m_);
  gamma_.resize(m_);
}

void KktFormulation::solve_accelerations() {
  K_.topLeftCorner(n_, n_) = terms_.M;
  K_.topRightCorner(n_, m_) = -terms_.A.transpose();
  K_.bottomLeftCorner(m_, n_) = terms_.A;
  constraint_acceleration_rhs(gamma_);
  b_.head(n_) = terms_.F - terms_.c;
  b_.tail(m_) = gamma_;
  lu_.compute(K_);
  x_ = lu_.solve(b_);
  if (!x_.allFinite()) throw NumericalFailure("kkt: singular KKT matrix (dependent constraints or singular M)");
  qdd_ = x_.head(n_);
  lambda_ = x_.tail(m_);
}

}  // namespace clm
