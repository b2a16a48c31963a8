// The limit gap of a penalty or added_mass run (issue 39): how far its motion at a finite N is from the constrained
// motion it approximates (Kozlov's theorems: penalty -> nonholonomic, added_mass -> vakonomic), estimated from the
// run itself and one companion run at N / 2.
//
// Why N / 2: the gap falls like 1/N (the Kozlov studies fit slopes within 0.012 of -1 on the sleigh, the skate and
// the disk, docs/findings.md), so q_{N/2} - q_N = C (2/N - 1/N) = C / N, the gap of q_N itself, to leading order; and
// the companion at N / 2 is less stiff than the run, so the estimate costs at most one more run. Where the 1/N law
// does not yet hold (small N), the estimate is an estimate; the Kozlov studies measure the gap against the limit
// itself and do not run it.
//
// The two runs are compared on their common sample times, at most about kMaxProbeRows of them (every stride-th
// sample and the last one): memory does not grow with the number of samples.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace clm {

// A bounded record of a run's positions: sample k is kept when k is a multiple of the stride (chosen from the run's
// sample bound so that at most about kMaxProbeRows are kept), and the last sample always.
class PositionProbe {
 public:
  static constexpr long kMaxProbeRows = 512;
  // sample_bound: the run's bound on its samples (runs/runner.hpp sample_bound; 0 when unbounded: then every
  // sample up to kMaxProbeRows, and the last).
  explicit PositionProbe(double sample_bound);
  void add(double t, const Vec& q);

  const std::vector<double>& times() const { return t_; }
  const std::vector<double>& positions() const { return q_; }  // row-major, times() x n
  long n() const { return n_; }

 private:
  long stride_ = 1;
  long seen_ = 0;
  long n_ = 0;
  bool last_is_extra_ = false;  // the last row holds a sample off the stride, replaced by the next one
  std::vector<double> t_, q_;
};

// The estimate: max over the common sample times of |q_a - q_b|_2, the scale max |q|_2 of the run, and how many times
// were compared. gap is NaN (and why says why) when the probes share no time but the first.
struct LimitGapEstimate {
  double gap = std::numeric_limits<double>::quiet_NaN();
  double q_scale = 0;
  long compared = 0;
  std::string why;
};
LimitGapEstimate compare_probes(const PositionProbe& run, const PositionProbe& companion);

}  // namespace clm
