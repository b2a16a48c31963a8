#include "experiments/run_summary.hpp"

#include <cmath>
#include <limits>

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// std::string constants: assigning string literals here trips GCC 12's false -Wrestrict (PR 105329).
const std::string kReferenceQ = "q", kReferenceNone = "none";

// A running maximum in which a NaN, once seen, stays (a NaN drift means the run broke down).
void update_max(double& m, double x) { m = std::isnan(x) ? x : std::max(m, x); }

}  // namespace

RunSummaryAccumulator::RunSummaryAccumulator(const Model& model, const Vec& q0, const Vec& qd0,
                                             bool vakonomic_on_nonholonomic)
    : model_(model), q0_(q0), qd0_(qd0), holonomic_(model.holonomic()) {
  // The closed forms are nonholonomic motions and multipliers: no reference for a vakonomic-family run.
  if (!vakonomic_on_nonholonomic) {
    q_reference_ = model.closed_form(0.0, q0_, qd0_, q_ref_, qd_ref_);
    q_next_ = q_ref_;
    qd_next_ = qd_ref_;
    lambda_reference_ = model.m() > 0 && model.closed_form_multiplier(q0_, qd0_, lambda_ref_);
  }
}

void RunSummaryAccumulator::add(double t, const Observation& obs) {
  if (samples_ == 0) energy0_ = obs.energy;
  ++samples_;
  if (holonomic_) {
    update_max(max_dp_, obs.drift_position);
    last_dp_ = obs.drift_position;
  }
  update_max(max_dv_, obs.drift_velocity);
  last_dv_ = obs.drift_velocity;
  // Relative to E0, but never dividing by less than machine epsilon (a system at rest has E0 = 0).
  const double scale = std::max(std::abs(energy0_), std::numeric_limits<double>::epsilon());
  max_rel_energy_ = std::max(max_rel_energy_, std::abs(obs.energy - energy0_) / scale);
  if (q_reference_ && !std::isnan(q_err_)) {
    // The reference is carried forward from the previous sample (Model::closed_form_from), so a sample
    // costs O(t_k - t_{k-1}), not O(t_k): the summary of a long run is linear in its length (it was
    // quadratic: 147 s for the sleigh at t_end = 1000).
    if (model_.closed_form_from(t_ref_, q_ref_, t, q0_, qd0_, q_next_, qd_next_)) {
      std::swap(q_ref_, q_next_);
      std::swap(qd_ref_, qd_next_);
      t_ref_ = t;
      q_err_ = std::max(q_err_, (obs.q - q_ref_).norm());
    } else {
      q_err_ = kNaN;
    }
  }
  if (lambda_reference_) {
    // Normalized by the largest reference multiplier: lambda may pass through zero along the motion.
    // A formulation without multipliers of the right size contributes nothing to the error (it is NaN).
    model_.closed_form_multiplier(obs.q, obs.qd, lambda_ref_);
    if (obs.lambda.size() == lambda_ref_.size()) lambda_err_ = std::max(lambda_err_, (obs.lambda - lambda_ref_).norm());
    lambda_scale_ = std::max(lambda_scale_, lambda_ref_.norm());
  }
}

RunSummary RunSummaryAccumulator::finish() const {
  RunSummary s;
  const bool any = samples_ > 0;
  s.max_drift_position = holonomic_ && any ? max_dp_ : kNaN;
  s.final_drift_position = holonomic_ && any ? last_dp_ : kNaN;
  s.max_drift_velocity = any ? max_dv_ : kNaN;
  s.final_drift_velocity = any ? last_dv_ : kNaN;
  s.max_rel_energy_error = any ? max_rel_energy_ : kNaN;
  s.q_error_vs_reference = any && q_reference_ ? q_err_ : kNaN;
  s.lambda_consistency =
      any && lambda_reference_ ? lambda_err_ / std::max(lambda_scale_, std::numeric_limits<double>::min()) : kNaN;
  s.error_vs_reference = s.q_error_vs_reference;
  s.reference = std::isnan(s.q_error_vs_reference) ? kReferenceNone : kReferenceQ;
  return s;
}

}  // namespace clm
