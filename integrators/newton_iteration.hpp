// The simplified-Newton pieces the fixed-step implicit methods share (implicit_midpoint, variational,
// trapezoidal; midpoint_discrete_mechanics' round-off test is its own): the tolerance of the iteration and
// the convergence test on the rate of its increments [HW-II, IV.8], as radau5's.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace clm {

inline constexpr double kNewtonEps = std::numeric_limits<double>::epsilon();
// Newton stops when the estimated remaining error is below this fraction of atol + rtol |y|.
inline constexpr double kNewtonFraction = 0.01;

// The Newton tolerance in the scaled norm: kNewtonFraction of the tolerance, but never below what round-off
// in y allows (|dz_i| ~ 10 eps |y_i| is |dz|_scaled ~ 10 eps / rtol).
inline double newton_tolerance(double rtol) {
  return std::max(kNewtonFraction, rtol > 0 ? 10 * kNewtonEps / rtol : 0.0);
}

// The next step after an accepted one of size h_next (the integrator's h_), for a method that halves its
// step when Newton fails: back towards the run's step dt, doubling at most.
inline double recovered_step(double h_next, double dt) { return h_next < dt ? std::min(dt, 2 * h_next) : h_next; }

// After iteration k (from 0) with increment norm dn (scaled): the rate theta = dn / dn_old from the second
// iteration on (written to `theta`, the method's measure for keeping its matrix), eta = theta / (1 - theta).
// Converged when eta dn <= tol, at the earliest after two iterations so that the rate of the step is
// measured; failed when dn is not finite, theta >= 0.99, or the remaining iterations cannot reach tol at
// this rate.
class NewtonRateTest {
 public:
  enum Verdict { kIterate, kConverged, kFailed };
  NewtonRateTest(int max_iterations, double tol) : max_iterations_(max_iterations), tol_(tol) {}

  Verdict after(int k, double dn, double& theta) {
    if (!std::isfinite(dn)) return kFailed;
    if (k > 0) {
      theta = dn / dn_old_;
      if (!(theta < 0.99)) return kFailed;
      eta_ = theta / (1 - theta);
      // The remaining iterations cannot reach the tolerance at this rate.
      if (eta_ * dn * std::pow(theta, max_iterations_ - 1 - k) > tol_) return kFailed;
    }
    if (k >= 1 && eta_ * dn <= tol_) return kConverged;
    dn_old_ = std::max(dn, kNewtonEps);
    return kIterate;
  }

 private:
  int max_iterations_;
  double tol_;
  double dn_old_ = 0, eta_ = 1;
};

}  // namespace clm
