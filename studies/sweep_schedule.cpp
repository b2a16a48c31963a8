#include "studies/sweep_schedule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <string>

namespace clm {

SweepSchedule::SweepSchedule(const std::vector<double>& cost, const std::vector<long>& reference, size_t references)
    : order_(cost.size()), reference_(reference), taken_(cost.size(), false), reference_ready_(references, false),
      runs_left_(cost.size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
}

std::optional<SweepTask> SweepSchedule::take() {
  if (stopped_) return std::nullopt;
  if (next_reference_ < reference_ready_.size()) return SweepTask{SweepTask::Kind::kReference, next_reference_++};
  while (first_open_ < order_.size() && taken_[first_open_]) ++first_open_;
  for (size_t j = first_open_; j < order_.size(); ++j) {
    if (taken_[j]) continue;
    const long r = reference_[order_[j]];
    if (r >= 0 && !reference_ready_[static_cast<size_t>(r)]) continue;
    taken_[j] = true;
    --runs_left_;
    return SweepTask{SweepTask::Kind::kRun, order_[j]};
  }
  return std::nullopt;
}

std::optional<SweepTask> SweepSchedule::next(double* waited) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::optional<std::chrono::steady_clock::time_point> since;
  std::optional<SweepTask> task;
  // Only runs whose references are still being computed: wait for one of them.
  while (!(task = take()) && !stopped_ && runs_left_ > 0) {
    if (!since) since = std::chrono::steady_clock::now();
    changed_.wait(lock);
  }
  if (since && waited) *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - *since).count();
  return task;
}

std::optional<SweepTask> SweepSchedule::try_next() {
  std::lock_guard<std::mutex> lock(mutex_);
  return take();
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

double simulated_wall_seconds(const std::vector<double>& cost, const std::vector<long>& reference,
                              const std::vector<double>& run_seconds, const std::vector<double>& reference_seconds,
                              int jobs) {
  if (jobs < 1) throw std::invalid_argument("simulated_wall_seconds: jobs must be at least 1");
  if (run_seconds.size() != cost.size() || reference.size() != cost.size())
    throw std::invalid_argument("simulated_wall_seconds: one cost, reference and time per run");
  for (const long r : reference)
    if (r >= static_cast<long>(reference_seconds.size()))
      throw std::invalid_argument("simulated_wall_seconds: a run needs reference " + std::to_string(r) + " of " +
                                  std::to_string(reference_seconds.size()));
  SweepSchedule schedule(cost, reference, reference_seconds.size());
  // A worker computing a task until `end`; ordered by end, then worker, so the simulation is deterministic.
  struct Busy {
    double end;
    int worker;
    std::optional<size_t> reference;  // the reference it computes, if any
    bool operator>(const Busy& o) const { return end != o.end ? end > o.end : worker > o.worker; }
  };
  std::priority_queue<Busy, std::vector<Busy>, std::greater<Busy>> busy;
  std::vector<int> idle(static_cast<size_t>(jobs));
  std::iota(idle.begin(), idle.end(), 0);
  double now = 0, wall = 0;
  for (;;) {
    // The idle workers take what the schedule hands out now, lowest worker first, until it has nothing (it
    // changes only when a reference completes, below).
    std::sort(idle.begin(), idle.end());
    size_t taken = 0;
    for (std::optional<SweepTask> task; taken < idle.size() && (task = schedule.try_next()); ++taken) {
      const bool is_reference = task->kind == SweepTask::Kind::kReference;
      const double seconds = is_reference ? reference_seconds.at(task->index) : run_seconds.at(task->index);
      busy.push({now + seconds, idle[taken], is_reference ? std::optional<size_t>(task->index) : std::nullopt});
    }
    idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(taken));
    if (busy.empty()) break;  // nothing in progress, nothing to hand out: every task was done
    const Busy finished = busy.top();
    busy.pop();
    now = finished.end;
    wall = std::max(wall, now);
    if (finished.reference) schedule.reference_done(*finished.reference);
    idle.push_back(finished.worker);
  }
  return wall;
}

double estimated_run_cost(double t_end, double dt, double rtol, bool adaptive, int n, int m) {
  const double steps = adaptive ? t_end * std::pow(std::max(rtol, 1e-16), -0.2) : t_end / std::max(dt, 1e-300);
  const double size = static_cast<double>(n + m);
  return steps * size * size;
}

}  // namespace clm
