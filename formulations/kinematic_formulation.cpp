#include "formulations/kinematic_formulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/shape_schedule.hpp"

namespace clm {

namespace {
std::string names_of(const Model& model, const std::vector<int>& idx) {
  const auto names = model.coordinate_names();
  std::string s;
  for (int i : idx) s += (s.empty() ? "" : ", ") + names[i];
  return s;
}
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
}  // namespace

std::string KinematicFormulation::refuses(const Model& model) {
  const auto& act = model.actuated_coordinates();
  if (act.empty())
    return "problem " + model.name() + " declares no actuated coordinates (kActuatedCoordinates); the kinematic "
           "formulation prescribes them";
  const int n_p = model.n() - static_cast<int>(act.size());
  if (model.m() != n_p)
    return "formulation kinematic needs as many constraints as passive coordinates (m = n_p, seed 000 eq. 2.14); "
           "problem " + model.name() + " has m = " + std::to_string(model.m()) + ", n_p = " + std::to_string(n_p);
  return {};
}

KinematicFormulation::KinematicFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), std::move(options)) {
  if (const std::string why = refuses(*model_); !why.empty()) throw InputError(why);
  actuated_ = model_->actuated_coordinates();
  std::sort(actuated_.begin(), actuated_.end());
  for (int i = 0; i < n_; ++i)
    if (!std::binary_search(actuated_.begin(), actuated_.end(), i)) passive_.push_back(i);
  n_a_ = static_cast<int>(actuated_.size());
  n_p_ = static_cast<int>(passive_.size());
  const ShapeSchedule& shape = options_.shape;
  std::vector<int> missing;
  for (int a : actuated_) {
    const auto it = std::find(shape.coordinates.begin(), shape.coordinates.end(), a);
    if (it == shape.coordinates.end()) missing.push_back(a);
    else schedule_index_.push_back(static_cast<int>(it - shape.coordinates.begin()));
  }
  if (!missing.empty())
    throw InputError("formulation kinematic prescribes every actuated coordinate of problem " + model_->name() + " (" +
                     names_of(*model_, actuated_) + ") and needs a [shape] entry for each; missing: " +
                     names_of(*model_, missing));
  if (shape.coordinates.size() != actuated_.size() || shape.functions.size() != shape.coordinates.size())
    throw InputError("formulation kinematic: the [shape] names coordinates that are not actuated in problem " +
                     model_->name() + " (actuated: " + names_of(*model_, actuated_) + ")");
  q_ = Vec::Zero(n_);
  qd_zero_ = Vec::Zero(n_);
  qa_ = Vec::Zero(n_a_);
  qda_ = Vec::Zero(n_a_);
  qdda_ = Vec::Zero(n_a_);
  qa_sched_ = Vec::Zero(n_a_);
  qda_sched_ = Vec::Zero(n_a_);
  qdda_sched_ = Vec::Zero(n_a_);
  rhs_ = Vec::Zero(m_);
  qdp_ = Vec::Zero(n_p_);
  W_p_ = Mat::Zero(m_, n_p_);
  W_a_ = Mat::Zero(m_, n_a_);
  lu_ = Eigen::PartialPivLU<Mat>(n_p_);
  svd_ = Eigen::JacobiSVD<Mat>(n_p_, n_p_);
}

void KinematicFormulation::assemble(double t, const Eigen::Ref<const Vec>& y) {
  options_.shape.evaluate(t, qa_sched_, qda_sched_, qdda_sched_);
  for (int j = 0; j < n_a_; ++j) {
    qa_[j] = qa_sched_[schedule_index_[j]];
    qda_[j] = qda_sched_[schedule_index_[j]];
    q_[actuated_[j]] = qa_[j];
  }
  for (int i = 0; i < n_p_; ++i) q_[passive_[i]] = y[i];
  model_->evaluate(t, q_, qd_zero_, kConstraintJacobian, *ws_, terms_);
  for (int i = 0; i < n_p_; ++i) W_p_.col(i) = terms_.A.col(passive_[i]);
  for (int j = 0; j < n_a_; ++j) W_a_.col(j) = terms_.A.col(actuated_[j]);
}

int KinematicFormulation::wp_rank(double& ratio) {
  svd_.compute(W_p_);
  const auto& s = svd_.singularValues();
  ratio = 0;
  if (s.size() == 0 || !(s[0] > 0) || !s.allFinite()) return 0;
  ratio = s[s.size() - 1] / s[0];
  int rank = 0;
  for (Eigen::Index i = 0; i < s.size(); ++i) rank += s[i] > kKinematicRankRatio * s[0];
  return rank;
}

std::string KinematicFormulation::rank_text(int rank, double ratio) const {
  return "W_p (the constraint columns of the passive coordinates " + names_of(*model_, passive_) + ") has rank " +
         std::to_string(rank) + " < " + std::to_string(n_p_) + " (smallest singular value " + short_number(ratio) +
         " of the largest; rank counts those above " + short_number(kKinematicRankRatio) + ")";
}

void KinematicFormulation::initial_state(const Vec& q, const Vec& /*qd*/, Vec& y) {
  if (q.size() != n_) throw InputError("formulation kinematic: q0 needs " + std::to_string(n_) + " entries");
  y.resize(n_p_);
  for (int i = 0; i < n_p_; ++i) y[i] = q[passive_[i]];
  assemble(0.0, y);
  double ratio = 0;
  const int rank = wp_rank(ratio);
  if (rank < n_p_)
    throw InputError("formulation kinematic cannot start problem " + model_->name() + ": at q0 " +
                     rank_text(rank, ratio) + ", so qd_p = -W_p^-1 W_a qd_a is not defined");
  lu_.compute(W_p_);
  last_det_sign_ = lu_.determinant() > 0 ? 1.0 : -1.0;
  reported_ = false;
}

void KinematicFormulation::rhs(double t, const Vec& y, Vec& dy) {
  assemble(t, y);
  lu_.compute(W_p_);
  if (!well_conditioned(pivot_ratio(lu_.matrixLU().diagonal())))
    throw NumericalFailure("kinematic: W_p is singular (LU pivot ratio below " + short_number(kConditionFloor) + ")");
  rhs_.noalias() = -W_a_ * qda_;
  dy = lu_.solve(rhs_);
}

bool KinematicFormulation::after_step(double t, Vec& y) {
  assemble(t, y);
  double ratio = 0;
  const int rank = wp_rank(ratio);
  if (rank < n_p_) {
    reported_ = true;  // the message names the rank already (failure_context adds nothing)
    throw NumericalFailure("kinematic: " + rank_text(rank, ratio) +
                           ": the prescribed shape drives the passive velocities to infinity");
  }
  lu_.compute(W_p_);
  const double sign = lu_.determinant() > 0 ? 1.0 : -1.0;
  if (last_det_sign_ != 0 && sign != last_det_sign_) {
    reported_ = true;
    throw NumericalFailure("kinematic: det W_p changed sign within the step ending here: W_p (the constraint "
                           "columns of the passive coordinates " + names_of(*model_, passive_) +
                           ") became singular (rank < " + std::to_string(n_p_) + ") inside it; smallest singular "
                           "value now " + short_number(ratio) + " of the largest");
  }
  last_det_sign_ = sign;
  return false;
}

std::string KinematicFormulation::failure_context(double t, const Vec& y) {
  if (reported_ || y.size() != n_p_ || !y.allFinite()) return {};
  assemble(t, y);
  double ratio = 0;
  const int rank = wp_rank(ratio);
  return rank < n_p_ ? " (" + rank_text(rank, ratio) + ")" : std::string();
}

Mat KinematicFormulation::input_fields(double t, const Vec& y) {
  assemble(t, y);
  lu_.compute(W_p_);
  Mat G = Mat::Zero(n_, n_a_);
  const Mat X = -lu_.solve(W_a_);
  for (int j = 0; j < n_a_; ++j) {
    for (int i = 0; i < n_p_; ++i) G(passive_[i], j) = X(i, j);
    G(actuated_[j], j) = 1.0;
  }
  return G;
}

void KinematicFormulation::read_state(double t, const Vec& y, Observation& obs) {
  assemble(t, y);
  lu_.compute(W_p_);
  rhs_.noalias() = -W_a_ * qda_;
  qdp_ = lu_.solve(rhs_);
  obs.q = q_;
  obs.qd = Vec::Zero(n_);
  for (int i = 0; i < n_p_; ++i) obs.qd[passive_[i]] = qdp_[i];
  for (int j = 0; j < n_a_; ++j) obs.qd[actuated_[j]] = qda_[j];
  obs.lambda.resize(0);
  double ratio = 0;
  wp_rank(ratio);
  obs.extras.assign(1, ratio);
}

}  // namespace clm
