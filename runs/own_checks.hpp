// A run's own checks (issue 39; docs/design.md section 5, "What ok means"): what the suite measures about a run
// without any reference, and the one line that says which check failed and by how much. A run that finished
// "ok" and fails one is flagged in its `validity` (the same column as a formulation's validity conditions: the
// report never counts it as the cheapest for an error target; `run`, `info` and the plots show it).
//
// The checks and their thresholds (all relative, 1e-2 but the alternation's 1e-1: they catch a run that is not a solution of its
// equations at the 1 % level, whatever tolerance it asked for; finer accuracy is what the error columns measure):
//   energy       RunSummary::energy_check: the energy error against the energy in motion for a problem that
//                conserves E, the balance residual |E - E0 - W| otherwise. A symplectic or tolerance-controlled run
//                of a smooth problem keeps it at the level of its state error, so 1 % means the motion itself is
//                off by about as much (nh_rattle on the sleigh: 0.9998; explicit Euler's energy gain).
//   multipliers  RunSummary::constraint_force_consistency: the run's constraint force A^T lambda against the problem's
//                own at the computed states (lambda_consistency on the forces: where A^T loses rank, at a singular
//                position or with redundant rows, lambda is not unique but its force is). O(h^2) for rattle,
//                round-off for kkt; nh_rattle's parasitic mode on the sleigh far above 1.
//   drift        RunSummary::drift_check: max |h| against max |A_h|_F |q| (position rows) and max |A qd + b| against
//                max |A|_F |qd|, the larger (dimensionless). Tolerance-controlled
//                and projected runs keep it near their tolerance; 1 % means the motion left its constraints by as
//                much. Not judged for fernandez_bloch (a start off the constraint is what it studies).
//   alternation  the step-to-step alternation of the integrator's own multipliers (rattle, dla, nh_rattle, ida,
//                trapezoidal; from every step, not only the samples): max_k |lambda_k - 2 lambda_{k-1} +
//                lambda_{k-2}| / 4 against max_k |lambda_k|, counted at steps where the increments reverse. A smooth
//                lambda gives O(h^2 |lambda''|) (and no reversals but at its extrema); a parasitic mode (lambda
//                alternating in sign, nh_rattle's two-step character) gives its own amplitude.
// Not judged on multipliers: vakonomic (its lambda solves other equations, even on holonomic rows).
// Not judged: penalty and added_mass (their energy and multipliers are those of a finite-N approximation; their gap to
// the limit is estimated and judged by runs/limit_gap.hpp, their |A qd| by ValidityMonitor), and figures that are NaN
// ("-": the check does not apply).
#pragma once

#include <string>

#include "core/formulation.hpp"
#include "runs/run_summary.hpp"

namespace clm {

inline constexpr double kOwnCheckEnergy = 1e-2;
inline constexpr double kOwnCheckMultipliers = 1e-2;
inline constexpr double kOwnCheckDrift = 1e-2;
// Ten times the others: the algebraic multipliers of ida and rattle's Newton-solved impulses carry step-to-step
// noise of 1-4 % at loose tolerances (four_bar under ida at rtol 1e-4: 2.6 %; closed_chain(16) under rattle at dt
// 7.8e-4: 1.5 %) that the multiplier check already weighs; a parasitic mode grows to the multipliers' own size
// (nh_rattle on the sleigh: 1.0).
inline constexpr double kOwnCheckAlternation = 1e-1;

// The step-to-step alternation of a method's own multipliers, fed after every accepted step. No heap allocation
// after the first step.
class MultiplierAlternation {
 public:
  void add(const Vec& lambda);
  // max_k |second difference|_inf / 4 over max_k |lambda_k|_inf; NaN before three steps or without multipliers.
  double ratio() const;

 private:
  Vec prev_, prev2_;
  long steps_ = 0;
  double max_amplitude_ = 0, max_lambda_ = 0;
};

// "" when every applicable check holds, else one line naming each failed check, its figure and its threshold.
std::string own_check_failures(const RunSummary& s, const std::string& formulation, double alternation_ratio);

}  // namespace clm
