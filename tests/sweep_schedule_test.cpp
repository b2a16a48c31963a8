// The order of a sweep's work (studies/sweep_schedule.hpp, issue 25): references first, each a task of its own;
// then runs longest first; a run only once its reference is complete; stop() releases waiting workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "studies/sweep_schedule.hpp"

namespace clm {
namespace {

using Kind = SweepTask::Kind;

TEST(SweepSchedule, ReferencesFirstThenTheLongestRuns) {
  // Runs 0..4 with costs; runs 1 and 3 need reference 0, run 4 reference 1.
  SweepSchedule s({1.0, 5.0, 3.0, 5.0, 2.0}, {-1, 0, -1, 0, 1}, 2);
  double waited = 0;
  auto a = s.next(&waited), b = s.next(&waited);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->kind, Kind::kReference);
  EXPECT_EQ(a->index, 0u);
  EXPECT_EQ(b->kind, Kind::kReference);
  EXPECT_EQ(b->index, 1u);
  // Both references in progress: the runs without one, longest first (run 2, cost 3; then run 0, cost 1).
  auto c = s.next(&waited);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Kind::kRun);
  EXPECT_EQ(c->index, 2u);
  s.reference_done(0);
  // Now the runs of reference 0, cost 5 each, in list order (stable: 1 before 3), before run 0 (cost 1).
  EXPECT_EQ(s.next(&waited)->index, 1u);
  EXPECT_EQ(s.next(&waited)->index, 3u);
  EXPECT_EQ(s.next(&waited)->index, 0u);
  s.reference_done(1);
  EXPECT_EQ(s.next(&waited)->index, 4u);
  EXPECT_FALSE(s.next(&waited));
  EXPECT_EQ(waited, 0.0);  // never blocked: some run was always ready
}

// A worker that finds only runs waiting for a reference blocks until the reference is done, and says how long.
TEST(SweepSchedule, ARunWaitsForItsReference) {
  SweepSchedule s({1.0}, {0}, 1);
  double waited = 0;
  ASSERT_EQ(s.next(&waited)->kind, Kind::kReference);
  std::atomic<bool> got{false}, started{false};
  double other_waited = 0;
  std::thread worker([&] {
    started = true;
    auto t = s.next(&other_waited);
    got = t && t->kind == Kind::kRun && t->index == 0;
  });
  // The worker scheduled first (on a loaded machine it started after the 50 ms had passed: it never waited).
  while (!started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  s.reference_done(0);
  worker.join();
  EXPECT_TRUE(got.load());
  EXPECT_GT(other_waited, 0.04);
}

TEST(SweepSchedule, StopReleasesWaitingWorkers) {
  SweepSchedule s({1.0, 1.0}, {0, 0}, 1);
  double waited = 0;
  ASSERT_EQ(s.next(&waited)->kind, Kind::kReference);
  std::atomic<int> released{0};
  std::thread a([&] { released += !s.next(&waited); }), b([&] { released += !s.next(&waited); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  s.stop();  // the reference failed: nothing more is handed out
  a.join();
  b.join();
  EXPECT_EQ(released.load(), 2);
}

// The schedule played forward in time (what bench_sweep's scheduled_N figures come from): sums on one job,
// a grid's tail, a run idling for its reference, the order of the estimated costs, the chain of a reference and
// its runs on many jobs; exact event times, so the results are exact.
TEST(SweepSchedule, SimulatedWallTimeFollowsTheScheduleEventByEvent) {
  // One job: every task after the other.
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({1, 1, 1}, {-1, 0, 0}, {1.0, 2.0, 3.0}, {4.0}, 1), 10.0);
  // The tail: three runs of 1 s on two jobs take 2 s, not 1.5.
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({1, 1, 1}, {-1, -1, -1}, {1.0, 1.0, 1.0}, {}, 2), 2.0);
  // Reference 0 (2 s) first on job 0, run 1 (no reference, 1 s) on job 1, which then idles until the
  // reference is done at 2 s; run 0 (needs it, 1 s) ends at 3 s.
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({5, 1}, {0, -1}, {1.0, 1.0}, {2.0}, 2), 3.0);
  // Longest estimated first: runs of 1, 1 and 2 s on two jobs take 2 s when the estimates rank them right,
  // 3 s when they rank the long one last.
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({1, 1, 2}, {-1, -1, -1}, {1.0, 1.0, 2.0}, {}, 2), 2.0);
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({2, 2, 1}, {-1, -1, -1}, {1.0, 1.0, 2.0}, {}, 2), 3.0);
  // As many jobs as tasks: the longest chain, a reference and then its longest run (the long grid on
  // 64 jobs: its 16 references, then 48 runs, at most 3 at a time per reference).
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({1, 1, 1, 1}, {0, 0, 1, 1}, {0.5, 0.25, 0.75, 0.5}, {1.0, 0.5}, 64), 1.5);
  // No task at all: nothing to wait for.
  EXPECT_DOUBLE_EQ(simulated_wall_seconds({}, {}, {}, {}, 4), 0.0);
  EXPECT_THROW(simulated_wall_seconds({1}, {-1}, {1.0}, {}, 0), std::invalid_argument);
  EXPECT_THROW(simulated_wall_seconds({1}, {-1}, {}, {}, 1), std::invalid_argument);
  EXPECT_THROW(simulated_wall_seconds({1}, {1}, {1.0}, {2.0}, 1), std::invalid_argument);  // no reference 1
}

// Cost: steps times (n + m)^2; tighter tolerances and smaller steps cost more.
TEST(SweepSchedule, EstimatedCostOrdersRunsByWork) {
  EXPECT_GT(estimated_run_cost(10, 1e-3, 1e-6, false, 3, 1), estimated_run_cost(10, 1e-2, 1e-6, false, 3, 1));
  EXPECT_GT(estimated_run_cost(6, 1e-3, 1e-10, true, 16, 2), estimated_run_cost(6, 1e-3, 1e-6, true, 16, 2));
  EXPECT_GT(estimated_run_cost(6, 1e-3, 1e-8, true, 16, 2), estimated_run_cost(6, 1e-3, 1e-8, true, 3, 1));
  EXPECT_DOUBLE_EQ(estimated_run_cost(10, 1e-3, 1, false, 3, 1), 10 / 1e-3 * 16);
}

}  // namespace
}  // namespace clm
