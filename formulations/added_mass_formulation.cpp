#include "formulations/added_mass_formulation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace clm {

namespace {

void require_positive_N(const FormulationOptions& o) {
  if (!(o.N > 0) || !std::isfinite(o.N))
    throw InputError("added_mass: option N must be a finite number > 0 (got " + std::to_string(o.N) + ")");
}

// The constructors check N before the base classes use it (compliance 1/N).
const FormulationOptions& checked(const FormulationOptions& o) {
  require_positive_N(o);
  return o;
}

}  // namespace

AddedMassFormulation::AddedMassFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), checked(options)), llt_(n_) {
  H_ = Mat::Zero(n_, n_);
  violation_ = Vec::Zero(m_);
  force_ = Vec::Zero(n_);
  terms_.C = Mat::Zero(m_, n_);
  model_terms_ = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintCurvature;
  requires_independent_constraints_ = false;  // M + N A^T A is positive definite whatever the rank of A
}

void AddedMassFormulation::solve_accelerations() {
  const double N = options_.N;
  violation_.noalias() = terms_.A * qd_;
  lambda_ = -N * violation_;  // = -mu, vakonomic convention
  // (M + N A^T A) qdd = F - c + C^T lambda - N A^T (Adot qd)
  H_ = terms_.M;
  H_.noalias() += N * (terms_.A.transpose() * terms_.A);
  force_ = terms_.F - terms_.c;
  force_.noalias() += terms_.C.transpose() * lambda_;
  force_.noalias() -= N * (terms_.A.transpose() * terms_.Adot_qd);
  if (!llt_.compute(H_))
    throw NumericalFailure("added_mass: Cholesky of M + N A^T A failed (not positive definite)");
  qdd_ = force_;
  llt_.solve_in_place(qdd_);
  if (!qdd_.allFinite()) throw NumericalFailure("added_mass: non-finite accelerations");
}

void AddedMassFormulation::read_state(double t, const Vec& y, Observation& obs) {
  AccelerationFormulation::read_state(t, y, obs);
  const double added = 0.5 * options_.N * violation_.squaredNorm();
  model_->evaluate(t, q_, qd_, kEnergy, *ws_, terms_);
  obs.extras.assign(1, terms_.energy() + added);
}

AddedMassMultiplierFormulation::AddedMassMultiplierFormulation(std::shared_ptr<const Model> model,
                                                               FormulationOptions options)
    : VakonomicFormulation(std::move(model), checked(options), 1.0 / options.N) {}

void AddedMassMultiplierFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  model_->evaluate(0.0, q, qd, kConstraintJacobian, *ws_, terms_);
  y.resize(2 * n_ + m_);
  y.head(n_) = q;
  y.segment(n_, n_) = qd;
  y.tail(m_) = -options_.N * (terms_.A * qd);
}

void AddedMassMultiplierFormulation::read_state(double t, const Vec& y, Observation& obs) {
  VakonomicFormulation::read_state(t, y, obs);
  model_->evaluate(t, obs.q, obs.qd, kConstraintJacobian | kEnergy, *ws_, terms_);
  const Vec violation = terms_.A * obs.qd;
  const double residual = (obs.lambda + options_.N * violation).norm() / std::max(1.0, obs.lambda.norm());
  obs.extras = {terms_.energy() + 0.5 * options_.N * violation.squaredNorm(), residual};
}

std::unique_ptr<Formulation> make_added_mass(std::shared_ptr<const Model> model, const FormulationOptions& options) {
  if (options.added_mass_form == "direct") return std::make_unique<AddedMassFormulation>(std::move(model), options);
  if (options.added_mass_form == "multiplier")
    return std::make_unique<AddedMassMultiplierFormulation>(std::move(model), options);
  throw InputError("added_mass: option added_mass_form must be 'direct' or 'multiplier' (got '" +
                   options.added_mass_form + "')");
}

}  // namespace clm
