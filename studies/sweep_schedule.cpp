#include "studies/sweep_schedule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace clm {

SweepSchedule::SweepSchedule(const std::vector<double>& cost, const std::vector<long>& reference, size_t references)
    : order_(cost.size()), reference_(reference), taken_(cost.size(), false), reference_ready_(references, false),
      runs_left_(cost.size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
}

std::optional<SweepTask> SweepSchedule::next(double* waited) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::optional<std::chrono::steady_clock::time_point> since;
  for (;;) {
    if (stopped_) break;
    if (next_reference_ < reference_ready_.size()) return SweepTask{SweepTask::Kind::kReference, next_reference_++};
    if (runs_left_ == 0) break;
    while (first_open_ < order_.size() && taken_[first_open_]) ++first_open_;
    for (size_t j = first_open_; j < order_.size(); ++j) {
      if (taken_[j]) continue;
      const long r = reference_[order_[j]];
      if (r >= 0 && !reference_ready_[static_cast<size_t>(r)]) continue;
      taken_[j] = true;
      --runs_left_;
      if (since && waited)
        *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - *since).count();
      return SweepTask{SweepTask::Kind::kRun, order_[j]};
    }
    // Only runs whose references are still being computed: wait for one of them.
    if (!since) since = std::chrono::steady_clock::now();
    changed_.wait(lock);
  }
  if (since && waited) *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - *since).count();
  return std::nullopt;
}

void SweepSchedule::reference_done(size_t reference) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reference_ready_[reference] = true;
  }
  changed_.notify_all();
}

void SweepSchedule::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

double estimated_run_cost(double t_end, double dt, double rtol, bool adaptive, int n, int m) {
  const double steps = adaptive ? t_end * std::pow(std::max(rtol, 1e-16), -0.2) : t_end / std::max(dt, 1e-300);
  const double size = static_cast<double>(n + m);
  return steps * size * size;
}

}  // namespace clm
