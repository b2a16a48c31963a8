#include "core/formulation.hpp"

#include <sstream>

namespace clm {

Formulation::Formulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : model_(std::move(model)),
      options_(options),
      ws_(model_->make_workspace()),
      terms_(model_->make_terms()),
      n_(model_->n()),
      m_(model_->m()) {}

Formulation::~Formulation() = default;

void Formulation::observe(double t, const Vec& y, Observation& obs) {
  read_state(t, y, obs);
  model_->evaluate(t, obs.q, obs.qd, kEnergy | kConstraintJacobian | kConstraintValue, *ws_, terms_);
  obs.energy = terms_.energy();
  obs.drift_velocity = (terms_.A * obs.qd).norm();
  obs.drift_position = model_->holonomic() ? terms_.h.norm() : 0.0;
}

void Formulation::require_full_rank(const Vec& q) const {
  ModelTerms t = model_->make_terms();
  auto ws = model_->make_workspace();
  model_->evaluate(0.0, q, Vec::Zero(n_), kConstraintJacobian, *ws, t);
  if (m_ == 0) return;
  Eigen::JacobiSVD<Mat> svd(t.A);
  const Vec& s = svd.singularValues();
  const double tol = std::max(n_, m_) * s[0] * 1e-10;
  int rank = 0;
  for (int i = 0; i < s.size(); ++i) rank += s[i] > tol;
  if (s[0] == 0) rank = 0;
  if (rank < m_) {
    std::ostringstream msg;
    msg << "problem " << model_->name() << ": constraint Jacobian A has rank " << rank << " < " << m_
        << " rows at the initial configuration (redundant or singular constraints); " << name()
        << " needs independent constraints";
    throw InputError(msg.str());
  }
}

}  // namespace clm
