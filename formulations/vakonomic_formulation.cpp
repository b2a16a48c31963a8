#include "formulations/vakonomic_formulation.hpp"

#include <string>

namespace clm {

VakonomicFormulation::VakonomicFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : VakonomicFormulation(std::move(model), options, 0.0) {
  if (!options_.lambda0.empty() && static_cast<int>(options_.lambda0.size()) != m_)
    throw InputError("vakonomic: option lambda0 has " + std::to_string(options_.lambda0.size()) +
                     " values, problem " + model_->name() + " has " + std::to_string(m_) + " constraints");
}

VakonomicFormulation::VakonomicFormulation(std::shared_ptr<const Model> model, FormulationOptions options,
                                           double compliance)
    : Formulation(std::move(model), options), compliance_(compliance), lu_(n_ + m_) {
  const bool baumgarte = compliance_ == 0 && (options_.baumgarte_alpha != 0 || options_.baumgarte_beta != 0);
  terms_needed_ = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintCurvature |
                  (baumgarte && model_->holonomic() ? kConstraintValue : 0u);
  terms_.C = Mat::Zero(m_, n_);
  q_.resize(n_);
  qd_.resize(n_);
  qdd_.resize(n_);
  lambda_.resize(m_);
  lambdadot_.resize(m_);
  K_ = Mat::Zero(n_ + m_, n_ + m_);
  K_.bottomRightCorner(m_, m_).diagonal().setConstant(compliance_);
  b_.resize(n_ + m_);
  x_.resize(n_ + m_);
  gamma_.resize(m_);
}

void VakonomicFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  require_full_rank(q);
  y.resize(2 * n_ + m_);
  y.head(n_) = q;
  y.segment(n_, n_) = qd;
  for (int a = 0; a < m_; ++a) y[2 * n_ + a] = options_.lambda0.empty() ? 0.0 : options_.lambda0[a];
}

void VakonomicFormulation::rhs(double t, const Vec& y, Vec& dy) {
  q_ = y.head(n_);
  qd_ = y.segment(n_, n_);
  lambda_ = y.tail(m_);
  model_->evaluate(t, q_, qd_, terms_needed_, *ws_, terms_);
  K_.topLeftCorner(n_, n_) = terms_.M;
  K_.topRightCorner(n_, m_) = -terms_.A.transpose();
  K_.bottomLeftCorner(m_, n_) = terms_.A;
  b_.head(n_) = terms_.F - terms_.c;
  b_.head(n_).noalias() += terms_.C.transpose() * lambda_;
  gamma_ = -terms_.Adot_qd;
  if (compliance_ == 0) {
    if (options_.baumgarte_alpha != 0) gamma_.noalias() -= (2 * options_.baumgarte_alpha) * (terms_.A * qd_);
    if (options_.baumgarte_beta != 0 && model_->holonomic())
      gamma_.noalias() -= (options_.baumgarte_beta * options_.baumgarte_beta) * terms_.h;
  }
  b_.tail(m_) = gamma_;
  lu_.compute(K_);
  x_ = lu_.solve(b_);
  if (!x_.allFinite())
    throw NumericalFailure(name() + ": singular acceleration matrix [M -A^T; A e I] (dependent constraints?)");
  qdd_ = x_.head(n_);
  lambdadot_ = x_.tail(m_);
  dy.head(n_) = qd_;
  dy.segment(n_, n_) = qdd_;
  dy.tail(m_) = lambdadot_;
}

void VakonomicFormulation::read_state(double, const Vec& y, Observation& obs) {
  obs.q = y.head(n_);
  obs.qd = y.segment(n_, n_);
  obs.lambda = y.tail(m_);
}

}  // namespace clm
