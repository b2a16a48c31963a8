#include "runs/run_summary.hpp"

#include "core/value_parsing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// std::string constants: assigning string literals here trips GCC 12's false -Wrestrict (PR 105329).
const std::string kReferenceQ = "q", kReferenceNone = "none";

// A running maximum in which a NaN, once seen, stays (a NaN drift means the run broke down).
void update_max(double& m, double x) { m = std::isnan(x) ? x : std::max(m, x); }

}  // namespace

RunSummaryAccumulator::RunSummaryAccumulator(const Model& model, const Vec& q0, const Vec& qd0,
                                             bool vakonomic_on_nonholonomic, const AccuracySettings& accuracy)
    : model_(model), accuracy_(accuracy), q0_(q0), qd0_(qd0), holonomic_(model.holonomic()), position_rows_(model.has_position_rows()),
      point_(model.reference_point()) {
  vakonomic_on_nonholonomic_ = vakonomic_on_nonholonomic;
  ws_ = model.make_workspace();
  terms_ = model.make_terms();
  m_qd_ = Vec::Zero(model.n());
  if (point_) {
    point_run_.resize(point_->size());
    point_ref_.resize(point_->size());
  }
  // The closed forms are nonholonomic motions and multipliers: no reference for a vakonomic-family run.
  if (!vakonomic_on_nonholonomic) {
    q_reference_ = model.closed_form(0.0, q0_, qd0_, q_ref_, qd_ref_);
    q_next_ = q_ref_;
    qd_next_ = qd_ref_;
    lambda_reference_ = model.m() > 0 && model.closed_form_multiplier(q0_, qd0_, lambda_ref_);
    lambda_at_ref_ = lambda_ref_;
  }
  // The reference of the error figures: a reference run when one is given, else the closed form.
  const ReferenceTrajectory* ref = accuracy_.reference;
  if (ref && ref->source == ReferenceSource::kReferenceRun) {
    if (ref->n != model.n()) {
      note_ = "the reference run has " + std::to_string(ref->n) + " coordinates, the problem " +
              std::to_string(model.n());
    } else {
      source_ = ReferenceSource::kReferenceRun;
      lambda_known_ = ref->m == model.m() && model.m() > 0;
      run_q_.resize(ref->n);
      run_qd_.resize(ref->n);
      run_lambda_.resize(ref->m);
    }
  } else if (q_reference_) {
    source_ = ReferenceSource::kClosedForm;
    lambda_known_ = lambda_reference_;
  } else if (ref) {
    note_ = ref->description.empty() ? std::string("no reference") : ref->description;
  } else if (!model.published_reference_withheld().empty()) {
    withheld_ = model.published_reference_withheld();
  } else if (const PublishedReference* pub = model.published_reference();
             pub && !vakonomic_on_nonholonomic && pub->q.size() == model.n()) {
    // Published values hold for the default initial state and at their own time only.
    Vec q_default, qd_default;
    model.default_initial(q_default, qd_default);
    const bool same_start = q0 == q_default && qd0 == qd_default;
    const bool same_time = std::abs(accuracy_.t_end - pub->t) <= 1e-12 * std::max(1.0, std::abs(pub->t));
    if (!same_start) {
      withheld_ = "the published values [" + pub->source + "] hold for the default initial state, and this run starts elsewhere";
    } else if (!same_time) {
      withheld_ = "the published values [" + pub->source + "] are at t = " + format_number(pub->t) + ", and run.t_end = " +
                  format_number(accuracy_.t_end);
    }
    if (same_start && same_time) {
      source_ = ReferenceSource::kPublished;
      published_ = pub;
      lambda_known_ = pub->lambda.size() == model.m() && model.m() > 0;
      published_q_.resize(model.n());
      published_qd_.resize(model.n());
      published_lambda_.resize(model.m());
    }
  }
  every_sample_ = source_ == ReferenceSource::kClosedForm || source_ == ReferenceSource::kReferenceRun;
}

void RunSummaryAccumulator::compare(double t, const Observation& obs, const Vec& q_ref, const Vec& qd_ref,
                                    const Vec* lambda_ref) {
  const double eq = obs.q.size() == q_ref.size() ? (obs.q - q_ref).norm() : kNaN;
  const double eqd = obs.qd.size() == qd_ref.size() ? (obs.qd - qd_ref).norm() : kNaN;
  // No multipliers of the right size (substituted writes NaN), or none in the reference: NaN, never 0.
  const double el = lambda_ref && obs.lambda.size() == lambda_ref->size() ? (obs.lambda - *lambda_ref).norm() : kNaN;
  update_max(e_q_max_, eq);
  update_max(e_qd_max_, eqd);
  update_max(e_lambda_max_, el);
  if (point_) {
    if (obs.q.size() == model_.n() && q_ref.size() == model_.n()) {
      point_->evaluate(obs.q, point_run_);
      point_->evaluate(q_ref, point_ref_);
      update_max(e_point_max_, (point_run_ - point_ref_).norm());
    } else {
      update_max(e_point_max_, kNaN);
    }
  }
  e_q_last_ = eq;
  e_qd_last_ = eqd;
  e_lambda_last_ = el;
  latest_ = {eq, eqd, el};
  t_last_ = t;
  // Only the last sample's figures are kept (finish() checks that it is at t_end): O(n), no allocation.
  TestSetAccuracy acc(accuracy_.atol, accuracy_.rtol);
  acc.add(obs.q, q_ref);
  acc.add(obs.qd, qd_ref);
  scd_last_ = acc.scd();
  mescd_last_ = acc.mescd();
}

void RunSummaryAccumulator::use_ideal_multipliers(IdealMultipliers ideal) {
  if (vakonomic_on_nonholonomic_ || lambda_reference_ || model_.m() == 0) return;
  ideal_ = std::move(ideal);
  ideal_consistency_ = static_cast<bool>(ideal_);
  ideal_lambda_ = Vec::Zero(model_.m());
}

void RunSummaryAccumulator::add(double t, const Observation& obs) {
  latest_ = SampleErrors{};  // compare() fills it when this sample is compared
  if (samples_ == 0) {
    energy0_ = obs.energy;
    t0_ = t;
  }
  ++samples_;
  if (position_rows_) {
    update_max(max_dp_, obs.drift_position);
    last_dp_ = obs.drift_position;
  }
  update_max(max_dv_, obs.drift_velocity);
  last_dv_ = obs.drift_velocity;
  // Relative to E0, but never dividing by less than machine epsilon (a system at rest has E0 = 0).
  const double scale = std::max(std::abs(energy0_), std::numeric_limits<double>::epsilon());
  max_rel_energy_ = std::max(max_rel_energy_, std::abs(obs.energy - energy0_) / scale);
  update_max(max_energy_change_, std::abs(obs.energy - energy0_));
  terms_at_sample_ = false;
  if (obs.q.size() == model_.n() && obs.qd.size() == model_.n() && obs.q.allFinite() && obs.qd.allFinite()) {
    // A as well where the multipliers are compared (the constraint-force figure below).
    // A as well for a constrained problem: the constraint-force figure and the drift check's scale below.
    const bool constrained = model_.m() > 0;
    model_.evaluate(t, obs.q, obs.qd, constrained ? (kMassMatrix | kConstraintJacobian) : kMassMatrix, *ws_, terms_);
    terms_at_sample_ = constrained && (lambda_reference_ || ideal_consistency_);
    if (constrained) {
      update_max(velocity_scale_, terms_.A.norm() * obs.qd.norm());
      if (position_rows_) update_max(position_scale_, terms_.A.topRows(model_.position_rows()).norm() * obs.q.norm());
    }
    m_qd_.noalias() = terms_.M * obs.qd;
    update_max(max_kinetic_, 0.5 * obs.qd.dot(m_qd_));
  }
  energy_growth_.add(t - t0_, std::abs(obs.energy - energy0_) / scale);
  drift_growth_.add(t - t0_, holonomic_ ? obs.drift_position : obs.drift_velocity);
  if (!std::isnan(obs.energy_balance_residual)) {
    balance_recorded_ = true;
    forces_worked_ = forces_worked_ || obs.work_forces != 0;
    balance_growth_.add(t - t0_, std::abs(obs.energy_balance_residual) / scale);
    update_max(max_balance_residual_, std::abs(obs.energy_balance_residual));
    update_max(balance_scale_, std::abs(obs.energy));
    update_max(balance_scale_,
               std::abs(obs.work_constraints) + std::abs(obs.work_explicit_time) + std::abs(obs.work_forces));
  }
  bool closed_form_here = false;  // q_ref_, qd_ref_ hold the closed form at t
  if (q_reference_ && !std::isnan(q_err_)) {
    // The reference is carried forward from the previous sample (Model::closed_form_from), so a sample
    // costs O(t_k - t_{k-1}), not O(t_k): the summary of a long run is linear in its length (it was
    // quadratic: 147 s for the sleigh at t_end = 1000).
    if (model_.closed_form_from(t_ref_, q_ref_, t, q0_, qd0_, q_next_, qd_next_)) {
      std::swap(q_ref_, q_next_);
      std::swap(qd_ref_, qd_next_);
      t_ref_ = t;
      q_err_ = std::max(q_err_, (obs.q - q_ref_).norm());
      closed_form_here = true;
    } else {
      q_err_ = kNaN;
    }
  }
  if (source_ == ReferenceSource::kClosedForm) {
    if (closed_form_here) {
      // The multiplier of the true motion: the closed form at the reference state, not at the computed one.
      if (lambda_known_) model_.closed_form_multiplier(q_ref_, qd_ref_, lambda_at_ref_);
      compare(t, obs, q_ref_, qd_ref_, lambda_known_ ? &lambda_at_ref_ : nullptr);
    } else {
      e_q_max_ = e_qd_max_ = e_lambda_max_ = kNaN;
      note_ = "the closed form failed at t = " + format_number(t);
      source_ = ReferenceSource::kNone;
    }
  } else if (source_ == ReferenceSource::kReferenceRun) {
    const ReferenceTrajectory& ref = *accuracy_.reference;
    const size_t k = static_cast<size_t>(samples_ - 1);
    // Same t_end and output_every give the same grid (core/simulate.hpp): sample k is at ref.t[k] exactly.
    if (k < ref.samples() && std::abs(t - ref.t[k]) <= 1e-12 * std::max(1.0, std::abs(t))) {
      const Eigen::Index n = ref.n, m = ref.m;
      run_q_ = Eigen::Map<const Vec>(ref.q.data() + k * n, n);
      run_qd_ = Eigen::Map<const Vec>(ref.qd.data() + k * n, n);
      if (lambda_known_) run_lambda_ = Eigen::Map<const Vec>(ref.lambda.data() + k * m, m);
      compare(t, obs, run_q_, run_qd_, lambda_known_ ? &run_lambda_ : nullptr);
    } else {
      e_q_max_ = e_qd_max_ = e_lambda_max_ = kNaN;
      note_ = "sample " + std::to_string(k) + " at t = " + format_number(t) +
              " has no reference sample at the same time (the reference run has " + std::to_string(ref.samples()) +
              " samples: another output grid)";
      source_ = ReferenceSource::kNone;
    }
  } else if (source_ == ReferenceSource::kPublished) {
    if (std::abs(t - published_->t) <= 1e-12 * std::max(1.0, std::abs(published_->t))) {
      compare(t, obs, published_->q, published_->qd, lambda_known_ ? &published_->lambda : nullptr);
      published_compared_ = true;
      published_q_ = obs.q;
      published_qd_ = obs.qd;
      if (obs.lambda.size() == published_lambda_.size()) published_lambda_ = obs.lambda;
    }
  }
  // Normalized by the largest reference multiplier: lambda may pass through zero along the motion. A run whose
  // multipliers are NaN (substituted has none) gets no figure, never 0.
  if (lambda_reference_ || ideal_consistency_) {
    Vec& star = lambda_reference_ ? lambda_ref_ : ideal_lambda_;
    const bool known = lambda_reference_ ? model_.closed_form_multiplier(obs.q, obs.qd, star)
                                         : ideal_(t, obs.q, obs.qd, star);
    if (obs.lambda.size() != star.size() || !obs.lambda.allFinite()) {
      lambda_missing_ = lambda_missing_ || (obs.lambda.size() == star.size() && obs.lambda.hasNaN());
    } else if (known) {
      lambda_err_ = std::max(lambda_err_, (obs.lambda - star).norm());
      lambda_scale_ = std::max(lambda_scale_, star.norm());
      if (terms_at_sample_) {  // A^T (lambda - lambda*) and A^T lambda* (buffers sized at the first sample)
        star_force_.noalias() = terms_.A.transpose() * star;
        force_diff_.noalias() = terms_.A.transpose() * obs.lambda;
        force_diff_ -= star_force_;
        force_err_ = std::max(force_err_, force_diff_.norm());
        force_scale_ = std::max(force_scale_, star_force_.norm());
        force_compared_ = true;
      }
    }
  }
}

RunSummary RunSummaryAccumulator::finish() const {
  RunSummary s;
  const bool any = samples_ > 0;
  // Without constraints (m = 0: charged_particle, a spring pendulum file) there is no drift to measure: "-", not 0.
  const bool constrained = model_.m() > 0;
  s.max_drift_position = position_rows_ && constrained && any ? max_dp_ : kNaN;
  s.final_drift_position = position_rows_ && constrained && any ? last_dp_ : kNaN;
  s.max_drift_velocity = constrained && any ? max_dv_ : kNaN;
  s.final_drift_velocity = constrained && any ? last_dv_ : kNaN;
  // E changes by the problem's statement: its energy error is the balance's residual, not |E - E0|.
  const bool conserving = !(balance_recorded_ && (model_.time_dependent() || forces_worked_));
  s.max_rel_energy_error = any && conserving ? max_rel_energy_ : kNaN;
  s.q_error_vs_reference = any && q_reference_ ? q_err_ : kNaN;
  s.lambda_consistency = any && (lambda_reference_ || ideal_consistency_) && !lambda_missing_
                             ? lambda_err_ / std::max(lambda_scale_, std::numeric_limits<double>::min())
                             : kNaN;
  s.constraint_force_consistency =
      !std::isnan(s.lambda_consistency) && force_compared_
          ? force_err_ / std::max(force_scale_, std::numeric_limits<double>::min())
          : kNaN;
  if (constrained && any) {
    const double v = velocity_scale_ > 0 ? max_dv_ / velocity_scale_ : kNaN;
    const double p = position_rows_ && position_scale_ > 0 ? max_dp_ / position_scale_ : kNaN;
    s.drift_check = std::isnan(p) ? v : std::isnan(v) ? p : std::max(v, p);
  }
  s.error_vs_reference = s.q_error_vs_reference;
  s.reference = std::isnan(s.q_error_vs_reference) ? kReferenceNone : kReferenceQ;
  s.reference_note = note_;
  s.published_withheld = withheld_;
  s.energy_error_growth = conserving ? energy_growth_.exponent() : balance_growth_.exponent();
  if (any && conserving)
    s.energy_check = max_energy_change_ /
                     std::max({std::abs(energy0_), max_kinetic_, std::numeric_limits<double>::min()});
  s.drift_growth = drift_growth_.exponent();
  s.max_energy_balance_residual =
      balance_recorded_ ? max_balance_residual_ / std::max(balance_scale_, std::numeric_limits<double>::epsilon())
                        : kNaN;
  if (!conserving) s.energy_check = s.max_energy_balance_residual;
  // A published reference that no sample reached (the run stopped before its time): no figures, not zeros.
  if (any && source_ == ReferenceSource::kPublished && !published_compared_) {
    s.reference_note = "the run did not reach the published reference's time t = " + format_number(published_->t);
  } else if (any && source_ != ReferenceSource::kNone) {
    s.reference_source = reference_source_name(source_);
    s.q_error_max = e_q_max_;
    s.qd_error_max = e_qd_max_;
    s.lambda_error_max = lambda_known_ ? e_lambda_max_ : kNaN;
    if (point_) s.reference_point_error_max = e_point_max_;
    // Final-time figures only for a run whose last sample is at t_end (one that stopped early has none).
    const double t_end = accuracy_.t_end;
    if (std::abs(t_last_ - t_end) <= 1e-12 * std::max(1.0, std::abs(t_end))) {
      s.q_error_final = e_q_last_;
      s.qd_error_final = e_qd_last_;
      s.lambda_error_final = lambda_known_ ? e_lambda_last_ : kNaN;
      s.scd = scd_last_;
      s.mescd = mescd_last_;
    }
    if (source_ == ReferenceSource::kPublished) {
      s.published_q = published_q_;
      s.published_qd = published_qd_;
      s.published_lambda = published_lambda_;
    }
  }
  return s;
}

}  // namespace clm
