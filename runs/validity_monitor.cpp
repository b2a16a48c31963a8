#include "runs/validity_monitor.hpp"

#include <algorithm>
#include <cmath>

#include "core/value_parsing.hpp"

namespace clm {

namespace {

int index_of(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

// A sample time as it reads in a message (format_number would print the grid's rounding: 1.3800000000000001).
std::string time_text(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", t);
  return buf;
}

}  // namespace

ValidityMonitor::ValidityMonitor(const std::string& formulation, const std::vector<std::string>& extra_names,
                                 double N)
    : formulation_(formulation), N_(N) {
  if (formulation == "fernandez_bloch") {
    first_ = index_of(extra_names, "fb_condition_1");
    second_ = index_of(extra_names, "fb_condition_2");
    if (first_ >= 0 && second_ >= 0) rule_ = Rule::kFernandezBloch;
  } else if (formulation == "substituted") {
    first_ = index_of(extra_names, "chart_rcond");
    if (first_ >= 0) {
      rule_ = Rule::kChart;
      worst_ = 1;  // chart_rcond <= 1: the smallest is kept
    }
  } else if (formulation == "penalty" || formulation == "added_mass") {
    rule_ = Rule::kLimit;
  }
}

void ValidityMonitor::add(double t, const Observation& obs) {
  switch (rule_) {
    case Rule::kNone:
      return;
    case Rule::kFernandezBloch: {
      if (static_cast<int>(obs.extras.size()) <= std::max(first_, second_)) return;
      if (obs.lambda.allFinite()) scale_ = std::max(scale_, obs.lambda.norm());
      if (obs.qd.allFinite()) speed_ = std::max(speed_, obs.qd.norm());
      const double r = std::max(obs.extras[first_], obs.extras[second_]);
      if (!std::isfinite(r) || !std::isfinite(obs.drift_velocity)) return;
      any_ = true;
      // The residual a state off C by |A qd| has although the theorem holds: the force scale times the relative
      // drift, with room kDriftAllowance (the vertical disk's residual is 1.1-1.2 |A qd| at every tolerance,
      // about 2 in these relative units).
      const double force = std::max(scale_, kFloor);
      const double allowed = force * (kFernandezBlochRelative +
                                      kDriftAllowance * obs.drift_velocity / std::max(speed_, kFloor));
      const double excess = r / allowed;
      if (excess > worst_) {
        worst_ = excess;
        worst_t_ = t;
        worst_residual_ = r;
        worst_allowed_ = allowed;
      }
      return;
    }
    case Rule::kChart: {
      if (static_cast<int>(obs.extras.size()) <= first_) return;
      const double r = obs.extras[first_];
      if (std::isfinite(r)) {
        any_ = true;
        if (r < worst_) {
          worst_ = r;
          worst_t_ = t;
        }
      }
      return;
    }
    case Rule::kLimit: {
      const double drift = obs.drift_velocity;
      if (std::isfinite(drift)) {
        any_ = true;
        if (drift > worst_) {
          worst_ = drift;
          worst_t_ = t;
        }
      }
      if (obs.qd.allFinite()) scale_ = std::max(scale_, obs.qd.norm());
      return;
    }
  }
}

std::string ValidityMonitor::finish(bool ended_ok) const {
  if (!any_) return "";
  switch (rule_) {
    case Rule::kNone:
      return "";
    case Rule::kFernandezBloch:
      if (!(worst_ > 1)) return "";
      return "fernandez_bloch outside its theorem: the conditions of [seed-003, eq. 4.1] fail (max(fb_condition_1, "
             "fb_condition_2) = " + short_number(worst_residual_) + " at t = " + time_text(worst_t_) +
             ", " + short_number(worst_) + " times what the drift there allows, " + short_number(worst_allowed_) +
             "): the run follows the restricted Lagrangian's own motion, not the nonholonomic one";
    case Rule::kChart:
      // A run that failed at the singularity says so in its message already.
      if (!ended_ok || !(worst_ < kChartWarning)) return "";
      return "substituted near its chart's singularity: chart_rcond fell to " + short_number(worst_) + " at t = " +
             time_text(worst_t_) + " (below " + short_number(kChartWarning) + "): about " +
             short_number(-std::log10(std::max(worst_, kFloor))) + " digits of the eliminated velocities are lost";
    case Rule::kLimit: {
      const double gap = worst_ / std::max(scale_, kFloor);
      if (!(gap > kLimitGap)) return "";
      return formulation_ + " far from Kozlov's limit at N = " + format_number(N_) + ": |A qd| reaches " +
             short_number(gap) + " x max|qd| (t = " + time_text(worst_t_) + ", above " + short_number(kLimitGap) +
             "): the run follows a motion with " +
             (formulation_ == "penalty" ? "anisotropic friction" : "added mass") + " of its own, not the " +
             (formulation_ == "penalty" ? "nonholonomic" : "vakonomic") + " one (raise N)";
    }
  }
  return "";
}

}  // namespace clm
