#include "runs/limit_gap.hpp"

#include <algorithm>
#include <cmath>

namespace clm {

PositionProbe::PositionProbe(double sample_bound) {
  if (sample_bound > 0) stride_ = std::max(1L, static_cast<long>(std::ceil(sample_bound / kMaxProbeRows)));
}

void PositionProbe::add(double t, const Vec& q) {
  if (n_ == 0) n_ = q.size();
  const long k = seen_++;
  // An unbounded run (one sample per step) keeps its first kMaxProbeRows samples and then only its last.
  const bool on_stride = k % stride_ == 0 && static_cast<long>(t_.size()) - (last_is_extra_ ? 1 : 0) < kMaxProbeRows;
  if (last_is_extra_) {  // the previous sample was kept only as the last one: this one replaces it
    t_.pop_back();
    q_.resize(q_.size() - static_cast<size_t>(n_));
  }
  t_.push_back(t);
  q_.insert(q_.end(), q.data(), q.data() + n_);
  last_is_extra_ = !on_stride;
}

LimitGapEstimate compare_probes(const PositionProbe& run, const PositionProbe& companion) {
  LimitGapEstimate e;
  const auto& ta = run.times();
  const auto& tb = companion.times();
  const long n = run.n();
  if (n != companion.n() || n == 0) {
    e.why = "the companion run recorded no comparable samples";
    return e;
  }
  for (size_t k = 0; k < ta.size(); ++k) {
    double s = 0;
    for (long i = 0; i < n; ++i) s += run.positions()[k * n + i] * run.positions()[k * n + i];
    e.q_scale = std::max(e.q_scale, std::sqrt(s));
  }
  double worst = 0;
  for (size_t a = 0, b = 0; a < ta.size() && b < tb.size();) {
    const double tol = 1e-9 * std::max(1.0, std::abs(ta[a]));
    if (ta[a] < tb[b] - tol) {
      ++a;
    } else if (tb[b] < ta[a] - tol) {
      ++b;
    } else {
      double s = 0;
      for (long i = 0; i < n; ++i) {
        const double d = run.positions()[a * n + i] - companion.positions()[b * n + i];
        s += d * d;
      }
      worst = std::max(worst, std::sqrt(s));
      ++e.compared;
      ++a;
      ++b;
    }
  }
  if (e.compared < 2) {
    e.why = "the run and its companion share no sample time after the first";
    return e;
  }
  e.gap = std::isfinite(worst) ? worst : std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(worst)) e.why = "the companion run's positions are not finite";
  return e;
}

}  // namespace clm
