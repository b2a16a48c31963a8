// Issue 24 item 7: a fixed-step method that halves its step when its Newton iteration fails, and so halves down
// to the smallest step, says what failed (the Newton iteration, why, at which step size, with its increment and
// tolerance), not only "step size underflow (h = 7.3e-15)".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "integrators/newton_iteration.hpp"
#include "runs/runner.hpp"
#include "run_spec_for.hpp"

namespace clm {
namespace {

RunSpec spec_for(const std::string& problem, const std::string& integrator) {
  RunSpec s = testing::spec_for(problem, "kkt", integrator);
  s.t_end = 1;
  s.dt = 0.01;
  return s;
}

// Bricard's mechanism has a redundant constraint (A of rank 5 of 6 rows): rattle's Newton matrix is singular at
// every step size. The run says so, names the rank, and what handles redundant constraints.
TEST(NewtonFailureMessage, RattleOnRedundantConstraintsNamesTheSingularNewtonMatrix) {
  std::ostringstream log;
  PreparedRun run = prepare_run(spec_for("bricard", "rattle"), log);
  ASSERT_LT(run.constraint_rank, run.model->m());
  const RunRecord r = execute_run(run, nullptr, false);
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.message.rfind("rattle: the Newton iteration of its implicit step failed at t = 0 for every step size", 0),
            0u) << r.message;
  EXPECT_NE(r.message.find("the Newton matrix is singular"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("rank " + std::to_string(run.constraint_rank) + " of " + std::to_string(run.model->m())),
            std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("step size underflow"), std::string::npos) << r.message;
}

// atol = 0 with a coordinate at 0 gives that coordinate a weight of 0: the first increment is infinite in the
// scaled norm at every step size. The message names the iteration, the first step size, why, the increment, the
// tolerance and the weights' settings.
TEST(NewtonFailureMessage, RattleWithZeroAtolNamesTheIncrementAndTheWeights) {
  RunSpec s = spec_for("four_bar", "rattle");
  s.rtol = 1e-14;
  s.atol = 0;
  std::ostringstream log;
  PreparedRun run = prepare_run(s, log);
  const RunRecord r = execute_run(run, nullptr, false);
  EXPECT_EQ(r.status, "failed");
  for (const char* part : {"rattle: the Newton iteration of its implicit step failed at t = 0 for every step size it "
                           "tried, from h = 0.01 down to ",
                           "at h = 0.01 the increment is not finite (after 1 iterations the scaled increment was inf",
                           "rtol = 1e-14, atol = 0"})
    EXPECT_NE(r.message.find(part), std::string::npos) << part << "\n" << r.message;
  EXPECT_EQ(r.message.find("rank"), std::string::npos) << r.message;  // four_bar's constraints are independent
}

// The verdicts' reasons, which the message quotes.
TEST(NewtonFailureMessage, TheRateTestSaysWhyItFailed) {
  double theta = 1;
  {
    NewtonRateTest test(10, 1e-3);
    EXPECT_EQ(test.after(0, std::numeric_limits<double>::quiet_NaN(), theta), NewtonRateTest::kFailed);
    EXPECT_STREQ(test.why(), "the increment is not finite");
  }
  {
    NewtonRateTest test(10, 1e-3);
    EXPECT_EQ(test.after(0, 1.0, theta), NewtonRateTest::kIterate);
    EXPECT_EQ(test.after(1, 1.5, theta), NewtonRateTest::kFailed);
    EXPECT_STREQ(test.why(), "the iteration does not contract (rate >= 0.99)");
    EXPECT_EQ(test.last_increment(), 1.5);
  }
  {
    NewtonRateTest test(3, 1e-6);
    EXPECT_EQ(test.after(0, 1.0, theta), NewtonRateTest::kIterate);
    EXPECT_EQ(test.after(1, 0.5, theta), NewtonRateTest::kFailed);  // 0.5 * 1 * 0.5^1 > 1e-6
    EXPECT_STREQ(test.why(), "it contracts too slowly to reach the tolerance in the iterations left");
  }
  {
    NewtonRateTest test(10, 1e-3);
    EXPECT_EQ(test.after(0, 1.0, theta), NewtonRateTest::kIterate);
    EXPECT_EQ(test.after(1, 1e-4, theta), NewtonRateTest::kConverged);
    EXPECT_STREQ(test.why(), "");
  }
}

}  // namespace
}  // namespace clm
