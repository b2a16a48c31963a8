#include "runs/own_checks.hpp"

#include <cmath>
#include <cstdio>

namespace clm {

void MultiplierAlternation::add(const Vec& lambda) {
  if (lambda.size() == 0 || !lambda.allFinite()) return;
  if (steps_ == 0) {
    prev_ = lambda;
    prev2_ = lambda;
  }
  // Counted only where the increments reverse (a negative dot product of lambda_k - lambda_{k-1} and
  // lambda_{k-1} - lambda_{k-2}): a smooth lambda under changing step sizes (ida's BDF) has a second difference of
  // order lambda' (h_k - h_{k-1}) with increments of one sign, which is no alternation.
  if (steps_ >= 2 && (lambda - prev_).dot(prev_ - prev2_) < 0)
    max_amplitude_ = std::max(max_amplitude_, 0.25 * (lambda - 2.0 * prev_ + prev2_).lpNorm<Eigen::Infinity>());
  max_lambda_ = std::max(max_lambda_, lambda.lpNorm<Eigen::Infinity>());
  prev2_ = prev_;
  prev_ = lambda;
  ++steps_;
}

double MultiplierAlternation::ratio() const {
  if (steps_ < 3) return std::nan("");
  return max_amplitude_ / std::max(max_lambda_, 1e-300);
}

namespace {

std::string figure(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace

std::string own_check_failures(const RunSummary& s, const std::string& formulation, double alternation_ratio) {
  if (formulation == "penalty" || formulation == "added_mass") return {};
  // The vakonomic multipliers solve other equations ([L] = lambda [Phi] + lambdadot A^T, lambda(0) chosen): they
  // are not the constrained motion's Lagrange multipliers even on holonomic rows, so only its energy is judged.
  const bool lagrange_multipliers = formulation != "vakonomic";
  std::string out;
  auto fail = [&](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  if (std::isfinite(s.energy_check) && s.energy_check > kOwnCheckEnergy)
    fail(std::isfinite(s.max_rel_energy_error)
             ? "energy error " + figure(s.energy_check) + " of the energy in motion (limit " + figure(kOwnCheckEnergy) + ")"
             : "energy balance residual " + figure(s.energy_check) + " (limit " + figure(kOwnCheckEnergy) + ")");
  // fernandez_bloch studies a start off the constraint (initial_offset) and its decay: its drift is the finding.
  if (formulation != "fernandez_bloch" && std::isfinite(s.drift_check) && s.drift_check > kOwnCheckDrift)
    fail("constraint drift " + figure(s.drift_check) + " (|h| against |A_h| |q|, |A qd + b| against |A| |qd|; limit " +
         figure(kOwnCheckDrift) + ")");
  if (lagrange_multipliers && std::isfinite(s.constraint_force_consistency) &&
      s.constraint_force_consistency > kOwnCheckMultipliers)
    fail("constraint forces A^T lambda " + figure(s.constraint_force_consistency) +
         " from the problem's own at the computed states (limit " + figure(kOwnCheckMultipliers) + ")");
  if (lagrange_multipliers && std::isfinite(alternation_ratio) && alternation_ratio > kOwnCheckAlternation)
    fail("lambda alternates step to step, amplitude " + figure(alternation_ratio) +
         " of max |lambda| (a parasitic mode, or noise in the method's multipliers; limit " +
         figure(kOwnCheckAlternation) + ")");
  return out.empty() ? out : "own checks failed: " + out;
}

}  // namespace clm
