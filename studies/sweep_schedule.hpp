// The order in which a sweep's workers take its work (issue 25): every reference run is a task of its own,
// handed out before any run, so that the jobs compute the references side by side instead of one job
// computing a reference while the others wait for it; then the runs, the longest estimated first, so that
// a grid of uneven runs does not end with one job finishing a long run alone. A run is handed out only once
// its reference is complete; a worker that finds only such runs left waits (the time is reported: it is
// time a job could not compute).
//
// The order changes when a run is computed, never what it computes: each run is computed from its own spec
// and written in grid order, so the files do not depend on it (tests/sweep_test.cpp).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace clm {

struct SweepTask {
  enum class Kind { kReference, kRun } kind = Kind::kRun;
  size_t index = 0;  // kReference: the reference's number; kRun: the run's position in the worker's list
};

class SweepSchedule {
 public:
  // cost[k]: the estimated cost of run k (any unit; larger first, ties in list order); reference[k]: the number
  // of the reference run k needs, or -1 for none; references: how many there are (each needed by some run).
  SweepSchedule(const std::vector<double>& cost, const std::vector<long>& reference, size_t references);

  // The next task, or none once every task was handed out or stop() was called. Blocks while the only runs
  // left wait for references other workers compute; the blocked time is added to *waited (seconds).
  std::optional<SweepTask> next(double* waited);
  // A reference task is complete (also when it failed: its runs then record why they have no reference).
  void reference_done(size_t reference);
  // No further task: wakes every waiting worker.
  void stop();

  // next() without blocking: the task a worker would take now, or none when every task was handed out, the
  // schedule was stopped, or only runs waiting for references are left. The same order as next(); for
  // simulated_wall_seconds, which plays the schedule forward in time.
  std::optional<SweepTask> try_next();

 private:
  std::optional<SweepTask> take();  // with mutex_ held

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<size_t> order_;       // run positions, longest first
  std::vector<long> reference_;     // per run position
  std::vector<bool> taken_;         // per entry of order_
  std::vector<bool> reference_ready_;
  size_t next_reference_ = 0, first_open_ = 0, runs_left_ = 0;
  bool stopped_ = false;
};

// What a sweep's computing would take on `jobs` workers, from the time each of its tasks took (measured at any
// job count, each task on one worker): SweepSchedule's order played forward in time, event by event, a
// worker that finds only runs waiting for references idling until the next reference completes. It counts
// what Amdahl's law with a serial fraction leaves out: a grid's tail (48 runs of uneven length on 16 jobs
// end with some jobs idle) and the waits for references (bench/bench_sweep.cpp, issue 25). Ties go to the
// lowest worker, so the result is deterministic.
double simulated_wall_seconds(const std::vector<double>& cost, const std::vector<long>& reference,
                              const std::vector<double>& run_seconds, const std::vector<double>& reference_seconds,
                              int jobs);

// The relative cost of a run, for the longest-first order: steps (t_end / dt for a fixed step, t_end
// rtol^(-1/5) for an adaptive method) times the work of one step, growing with the size of the system (n + m)^2.
double estimated_run_cost(double t_end, double dt, double rtol, bool adaptive, int n, int m);

}  // namespace clm
