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
    : Formulation(std::move(model), options), compliance_(compliance), saddle_(n_, m_) {
  const bool baumgarte = compliance_ == 0 && (options_.baumgarte_alpha != 0 || options_.baumgarte_beta != 0);
  terms_needed_ = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintCurvature |
                  (baumgarte && model_->has_position_rows() ? kConstraintValue : 0u);
  terms_.C = Mat::Zero(m_, n_);
  q_.resize(n_);
  qd_.resize(n_);
  qdd_.resize(n_);
  lambda_.resize(m_);
  lambdadot_.resize(m_);
  force_.resize(n_);
  if (baumgarte) {
    stabilization_.alpha = options_.baumgarte_alpha;
    stabilization_.beta = model_->has_position_rows() ? options_.baumgarte_beta : 0.0;
  }
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
  force_ = terms_.F - terms_.c;
  force_.noalias() += terms_.C.transpose() * lambda_;
  if (!solve_saddle_point(terms_, force_, qd_, compliance_, stabilization_, saddle_, qdd_, lambdadot_))
    throw NumericalFailure(name() + ": singular acceleration matrix [M -A^T; A e I] (dependent constraints?)");
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
