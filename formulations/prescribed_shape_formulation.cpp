#include "formulations/prescribed_shape_formulation.hpp"

#include <algorithm>

namespace clm {

std::string PrescribedShapeFormulation::refuses(const Model& model) {
  if (model.actuated_coordinates().empty())
    return "problem " + model.name() + " has no actuated (shape) coordinates to prescribe";
  return {};
}

PrescribedShapeFormulation::PrescribedShapeFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), std::move(options)),
      na_(static_cast<int>(model_->actuated_coordinates().size())),
      np_(n_ - na_),
      lu_(n_ + m_) {
  if (const std::string why = refuses(*model_); !why.empty()) throw InputError("prescribed_shape: " + why);
  actuated_ = model_->actuated_coordinates();
  const ShapeSchedule& shape = options_.shape;
  if (shape.coordinates != actuated_) {
    const std::vector<std::string> names = model_->coordinate_names();
    std::string missing;
    for (int i : actuated_)
      if (std::find(shape.coordinates.begin(), shape.coordinates.end(), i) == shape.coordinates.end())
        missing += (missing.empty() ? "" : ", ") + names[i];
    throw InputError("prescribed_shape: problem " + model_->name() + " needs a [shape] function for every actuated "
                     "coordinate" + (missing.empty() ? std::string() : "; missing: " + missing));
  }
  for (int i = 0; i < n_; ++i)
    if (std::find(actuated_.begin(), actuated_.end(), i) == actuated_.end()) passive_.push_back(i);
  q_.resize(n_);
  qd_.resize(n_);
  qdd_.resize(n_);
  lambda_.resize(m_);
  force_.resize(n_);
  qa_.resize(na_);
  qda_.resize(na_);
  qdda_.resize(na_);
  rhs_.resize(n_ + m_);
  // The columns of F_a are constant: -E_a in the force rows, zero in the constraint rows.
  Mat& K = lu_.matrix();
  K.setZero();
}

void PrescribedShapeFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  require_full_rank(q);
  y.resize(2 * np_);
  for (int j = 0; j < np_; ++j) {
    y[j] = q[passive_[j]];
    y[np_ + j] = qd[passive_[j]];
  }
}

void PrescribedShapeFormulation::solve(double t, const Vec& y) {
  options_.shape.evaluate(t, qa_, qda_, qdda_);
  for (int j = 0; j < np_; ++j) {
    q_[passive_[j]] = y[j];
    qd_[passive_[j]] = y[np_ + j];
  }
  for (int k = 0; k < na_; ++k) {
    q_[actuated_[k]] = qa_[k];
    qd_[actuated_[k]] = qda_[k];
  }
  model_->evaluate(t, q_, qd_, kDynamics, *ws_, terms_);
  // [M_p  -E_a  -A^T] [qdd_p; F_a; lambda] = F - c - M_a qdd_a
  // [A_p   0     0  ]                        = -Adot qd - A_a qdd_a
  // (the whole bias of the acceleration constraint, time derivatives included, is terms_.Adot_qd).
  Mat& K = lu_.matrix();
  K.setZero();
  rhs_.head(n_) = terms_.F - terms_.c;
  rhs_.tail(m_) = -terms_.Adot_qd;
  for (int j = 0; j < np_; ++j) {
    K.col(j).head(n_) = terms_.M.col(passive_[j]);
    K.col(j).tail(m_) = terms_.A.col(passive_[j]);
  }
  for (int k = 0; k < na_; ++k) {
    K(actuated_[k], np_ + k) = -1;
    rhs_.head(n_).noalias() -= terms_.M.col(actuated_[k]) * qdda_[k];
    rhs_.tail(m_).noalias() -= terms_.A.col(actuated_[k]) * qdda_[k];
  }
  K.block(0, n_, n_, m_) = -terms_.A.transpose();
  const double pivots = lu_.solve_in_place(rhs_);
  if (!well_conditioned(pivots) || !rhs_.allFinite()) {
    if (!terms_.M.allFinite() || !terms_.c.allFinite() || !terms_.A.allFinite() || !q_.allFinite() || !qd_.allFinite())
      throw NumericalFailure("prescribed_shape: non-finite model terms (M, c, A or Adot qd overflowed; parameters or "
                             "state out of range?)");
    throw NumericalFailure("prescribed_shape: singular system for (qdd_p, F_a, lambda) (the passive columns of A "
                           "lost rank, or M is singular on the passive coordinates)");
  }
  for (int j = 0; j < np_; ++j) qdd_[passive_[j]] = rhs_[j];
  for (int k = 0; k < na_; ++k) qdd_[actuated_[k]] = qdda_[k];
  lambda_ = rhs_.tail(m_);
}

void PrescribedShapeFormulation::rhs(double t, const Vec& y, Vec& dy) {
  solve(t, y);
  for (int j = 0; j < np_; ++j) {
    dy[j] = qd_[passive_[j]];
    dy[np_ + j] = qdd_[passive_[j]];
  }
}

void PrescribedShapeFormulation::read_state(double t, const Vec& y, Observation& obs) {
  solve(t, y);
  obs.q = q_;
  obs.qd = qd_;
  obs.lambda = lambda_;
  obs.actuator_force = rhs_.segment(np_, na_);
  obs.actuator_power = obs.actuator_force.dot(qda_);
}

}  // namespace clm
