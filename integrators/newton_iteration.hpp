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
    last_ = dn;
    if (!std::isfinite(dn)) return failed("the increment is not finite");
    if (k > 0) {
      theta = dn / dn_old_;
      if (!(theta < 0.99)) return failed("the iteration does not contract (rate >= 0.99)");
      eta_ = theta / (1 - theta);
      // The remaining iterations cannot reach the tolerance at this rate.
      if (eta_ * dn * std::pow(theta, max_iterations_ - 1 - k) > tol_)
        return failed("it contracts too slowly to reach the tolerance in the iterations left");
    }
    if (k >= 1 && eta_ * dn <= tol_) return kConverged;
    dn_old_ = std::max(dn, kNewtonEps);
    return kIterate;
  }
  // Why after() said kFailed (a static string; "" before), and the last scaled increment it was given.
  const char* why() const { return why_; }
  double last_increment() const { return last_; }
  double tolerance() const { return tol_; }

 private:
  Verdict failed(const char* why) {
    why_ = why;
    return kFailed;
  }
  const char* why_ = "";
  double last_ = 0;
  int max_iterations_;
  double tol_;
  double dn_old_ = 0, eta_ = 1;
};

// The last failed Newton iteration of a method that halves its step when Newton fails (rattle, verlet under
// penalty, implicit_midpoint): at a tight tolerance such a method can halve down to the smallest step, and the
// run's "step size underflow" says nothing of why (issue 24 item 7). No allocation: `why` is a static string.
// The first failure since the last accepted step is kept: the step halvings that follow it end at step sizes
// where the Newton matrix is ill-conditioned by its 1/h terms, which is not why the step failed.
struct NewtonFailure {
  double t = 0, h = 0;          // the step that failed first: its start and size
  int iterations = 0;           // iterations taken (0: the Newton matrix was singular)
  double increment = 0;         // the last scaled increment norm (weights atol + rtol |y|)
  double tolerance = 0;         // what it had to reach (integrators/newton_iteration.hpp newton_tolerance)
  const char* why = "";         // "" when no step failed

  void note(const NewtonFailure& f) {
    if (*why == '\0') *this = f;
  }
};

// What such a method reports; runs/runner.cpp turns a step-size underflow into this.
class ReportsNewtonFailure {
 public:
  virtual ~ReportsNewtonFailure() = default;
  virtual const NewtonFailure& last_newton_failure() const = 0;
};

}  // namespace clm
