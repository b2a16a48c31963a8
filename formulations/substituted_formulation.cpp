#include "formulations/substituted_formulation.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace clm {

std::string SubstitutedFormulation::refuses(const Model& model) {
  // L_c is built from M and V alone (formulations/substitution.hpp): a term qd . a(q) would be dropped.
  if (model.gyroscopic())
    return "substituted: problem " + model.name() +
           " has a gyroscopic term qd . a(q) in its Lagrangian, which the substituted Lagrangian does not carry";
  const auto* sub = model.capability<SubstitutionCapability>();
  if (!sub || sub->eliminated_velocities().empty())
    return "substituted: problem " + model.name() +
           " declares no eliminated velocities (a zoo header's kEliminated; a mechanism file cannot state them)";
  return {};
}

SubstitutedFormulation::SubstitutedFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), options), k_(n_ - m_), substitution_(model_->capability<SubstitutionCapability>()),
      llt_(n_ - m_) {
  if (!refuses(*model_).empty()) throw InputError(refuses(*model_));
  eliminated_ = substitution_->eliminated_velocities();
  chart_condition_ = substitution_->chart_condition();
  q_ = Vec::Zero(n_);
  v_ = Vec::Zero(k_);
  qd_ = Vec::Zero(n_);
  vd_ = Vec::Zero(k_);
  reduced_f_ = Vec::Zero(k_);
  sub_.S = Mat::Zero(n_, k_);
  sub_.Mc = Mat::Zero(k_, k_);
  sub_.cc = Vec::Zero(k_);
}

void SubstitutedFormulation::chart_failure(double det, double rcond) const {
  std::ostringstream msg;
  msg << "substituted: chart singularity: the eliminated velocities (q indices";
  for (int i : eliminated_) msg << ' ' << i;
  msg << ") cannot be solved for (A_D singular: det A_D = " << det << ", 1/cond = " << rcond;
  if (!chart_condition_.empty()) msg << ", " << chart_condition_ << " = " << det;
  msg << ")";
  throw NumericalFailure(msg.str());
}

void SubstitutedFormulation::substitute(double t) {
  substitution_->terms(q_, v_, sub_);
  if (!(sub_.chart_rcond >= kChartRcondFloor)) chart_failure(sub_.det_AD, sub_.chart_rcond);
  qd_.noalias() = sub_.S * v_;
  model_->evaluate(t, q_, qd_, kForce, *ws_, terms_);
}

void SubstitutedFormulation::rhs(double t, const Vec& y, Vec& dy) {
  q_ = y.head(n_);
  v_ = y.tail(k_);
  substitute(t);
  // M_c vd = S^T F - c_c. M_c = S^T M S is positive definite wherever S exists (S has full column rank).
  reduced_f_.noalias() = sub_.S.transpose() * terms_.F;
  reduced_f_ -= sub_.cc;
  if (!llt_.compute(sub_.Mc))
    throw NumericalFailure("substituted: reduced mass matrix M_c = S^T M S is not positive definite");
  vd_ = reduced_f_;
  llt_.solve_in_place(vd_);
  dy.head(n_) = qd_;
  dy.tail(k_) = vd_;
}

bool SubstitutedFormulation::after_step(double /*t*/, Vec& y) {
  q_ = y.head(n_);
  v_ = y.tail(k_);
  substitution_->terms(q_, v_, sub_);
  const double sign = sub_.det_AD > 0 ? 1.0 : (sub_.det_AD < 0 ? -1.0 : 0.0);
  if (!(sub_.chart_rcond >= kChartRcondFloor) || (det_sign_ != 0 && sign != det_sign_))
    chart_failure(sub_.det_AD, sub_.chart_rcond);
  if (det_sign_ == 0) det_sign_ = sign;
  return false;
}

void SubstitutedFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  q_ = q;
  // v = qd_I; qd_D is implied by it (a consistent qd agrees with S v).
  for (int i = 0, a = 0; i < n_; ++i) {
    bool is_eliminated = false;
    for (int d : eliminated_) is_eliminated = is_eliminated || d == i;
    if (!is_eliminated) v_[a++] = qd[i];
  }
  substitution_->terms(q_, v_, sub_);
  if (!(sub_.chart_rcond >= kChartRcondFloor)) chart_failure(sub_.det_AD, sub_.chart_rcond);
  det_sign_ = sub_.det_AD > 0 ? 1.0 : -1.0;
  y.resize(n_ + k_);
  y << q_, v_;
}

void SubstitutedFormulation::read_state(double t, const Vec& y, Observation& obs) {
  q_ = y.head(n_);
  v_ = y.tail(k_);
  substitution_->terms(q_, v_, sub_);
  qd_.noalias() = sub_.S * v_;
  (void)t;
  obs.q = q_;
  obs.qd = qd_;
  // No multiplier: the substituted equations have no constraint force in them.
  obs.lambda = Vec::Constant(m_, std::numeric_limits<double>::quiet_NaN());
  obs.extras.assign(1, sub_.chart_rcond);
}

}  // namespace clm
