// How an error grows over a long run, as one number: the exponent p of its envelope, E(t) ~ t^p, where
// E(t) = max_{s <= t} e(s) is the running maximum and p the least-squares slope of log E against log(t - t0)
// over the run's last two decades of time (t - t0 >= (t_last - t0) / 100). The long-time study (issue 11
// item 7; docs/findings.md) reads the character of an energy error or constraint drift off it:
//   p ~ 0    bounded (a symplectic / variational method's energy error, a projected or exactly kept constraint),
//   p ~ 1/2  a random walk (round-off accumulating in a method that conserves exactly in exact arithmetic),
//   p ~ 1    linear drift (a non-symplectic method's energy, Baumgarte-free constraint drift),
//   p ~ 2 .. quadratic and faster (drift that feeds on itself).
// The running maximum, not e itself, so that an oscillating bounded error does not scatter the fit. NaN
// ("-") when the run covers less than two decades after its first sample time (no last two decades to fit)
// or the envelope is 0 there (an error that is exactly 0: no growth to measure).
// Fixed memory: kPerDecade log-spaced bins of elapsed time from 1e-12 to 1e12 time units, no allocation,
// so the summary of a run does not grow with its samples.
#pragma once

#include <array>
#include <cmath>
#include <limits>

namespace clm {

class GrowthEnvelope {
 public:
  // The error e at elapsed time (t - t0). A NaN error poisons the exponent (the run broke down).
  void add(double elapsed, double e) {
    if (std::isnan(e)) poisoned_ = true;
    if (!(elapsed > 0) || std::isnan(e)) return;
    if (first_ == 0) first_ = elapsed;
    last_ = elapsed;
    const int b = bin(elapsed);
    if (b < 0) return;
    if (!(bin_time_[b] > 0)) bin_max_[b] = e;
    bin_max_[b] = std::max(bin_max_[b], e);
    bin_time_[b] = elapsed;  // the latest time in the bin: the envelope's value holds from there
  }

  double exponent() const {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (poisoned_ || !(first_ > 0) || last_ < 100 * first_) return kNaN;
    const double from = last_ / 100;
    double running = 0, n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int b = 0; b < kBins; ++b) {
      if (!(bin_time_[b] > 0)) continue;
      running = std::max(running, bin_max_[b]);
      if (bin_time_[b] < from || !(running > 0)) continue;
      const double x = std::log10(bin_time_[b]), y = std::log10(running);
      n += 1;
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double d = n * sxx - sx * sx;
    if (n < 3 || !(d > 0)) return kNaN;
    return (n * sxy - sx * sy) / d;
  }

 private:
  static constexpr int kPerDecade = 10, kLowestDecade = -12, kBins = 24 * kPerDecade;
  static int bin(double elapsed) {
    const int b = static_cast<int>(std::floor((std::log10(elapsed) - kLowestDecade) * kPerDecade));
    return b < 0 ? -1 : std::min(b, kBins - 1);
  }
  std::array<double, kBins> bin_max_{}, bin_time_{};
  double first_ = 0, last_ = 0;
  bool poisoned_ = false;
};

}  // namespace clm
