// Whether a run stayed inside the conditions under which its formulation follows the motion it is compared
// with (issue 24 item 2). Some formulations compute these conditions along the run as extras, and a run
// that violates them is not an inaccurate run of the right equations: it follows other equations, and its
// status "ok" says nothing about that. The monitor reads the extras sample by sample (no storage; no heap
// allocation after construction) and finish() gives one line saying which condition failed, by how much,
// where first, and what the run therefore follows, or "" when the conditions held (or none are computed).
//
// The conditions and their thresholds:
//   fernandez_bloch  the theorem's two conditions [seed-003, eq. 4.1] (fb_condition_1, fb_condition_2, forces).
//                    On C they are zero where the theorem holds, up to rounding; off C (the drift |A qd| an
//                    integration leaves) they grow with the drift: the vertical disk's residual is 1.1-1.2 |A qd|
//                    at every tolerance from rtol 1e-3 to 1e-12. So a sample violates them when
//                      max(fb_condition_1, fb_condition_2) > L (kFernandezBlochRelative + kDriftAllowance |A qd| / V),
//                    L and V the largest |lambda| (the kkt multipliers at the same states, the force scale of the
//                    second condition) and |qd| so far. The flat sleigh's residual is 0.86 L at t = 0, on C.
//   substituted      chart_rcond (1 / (|A|_1 |A_D^-1|_1)) below kChartWarning = 100 x the formulation's
//                    failure floor: the eliminated velocities are computed from an ill-conditioned A_D, and
//                    about -log10(chart_rcond) digits of them are lost.
//   penalty,         Kozlov's limits hold as N -> infinity: the run follows the nonholonomic (penalty) or
//   added_mass       vakonomic (added_mass) motion only up to the constraint violation the finite N leaves.
//                    Flagged when max_k |A qd|_k > kLimitGap times max_k |qd|_k (the drift_velocity of the
//                    samples against the speed): the run is then far from the limit, a motion with friction
//                    (or added mass) of its own, not the constrained one.
#pragma once

#include <string>
#include <vector>

#include "core/formulation.hpp"

namespace clm {

class ValidityMonitor {
 public:
  static constexpr double kFernandezBlochRelative = 1e-6;
  static constexpr double kDriftAllowance = 100;
  static constexpr double kChartWarning = 1e-2;
  static constexpr double kLimitGap = 1e-2;
  static constexpr double kFloor = 1e-300;

  // formulation: the run's formulation name; extra_names: its Formulation::extra_names(); N: its
  // FormulationOptions::N (quoted in the message).
  ValidityMonitor(const std::string& formulation, const std::vector<std::string>& extra_names, double N);

  void add(double t, const Observation& obs);
  // "" when the run stayed within the conditions, else one line (docs: RunRecord::validity). ended_ok: the run's
  // status is "ok" (a substituted run that failed at its chart's singularity says so in its message).
  std::string finish(bool ended_ok = true) const;

 private:
  enum class Rule { kNone, kFernandezBloch, kChart, kLimit };
  Rule rule_ = Rule::kNone;
  std::string formulation_;
  double N_ = 0;
  int first_ = -1, second_ = -1;  // indices of the extras the rule reads
  double worst_ = 0, worst_t_ = 0;  // the worst figure (fernandez_bloch: residual / allowed; the smallest
                                    // chart_rcond; the largest |A qd|) and its time
  double scale_ = 0;                // the largest |lambda| (fernandez_bloch) or |qd| (limits) so far
  double speed_ = 0;                // the largest |qd| so far (fernandez_bloch)
  double worst_residual_ = 0, worst_allowed_ = 0;  // fernandez_bloch: at the worst sample (worst_ = their ratio)
  bool any_ = false;                // a sample carried the extras
};

}  // namespace clm
