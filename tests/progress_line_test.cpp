// The progress display (runs/progress_line.hpp) driven by a fake clock: nothing for quick work, a
// line redrawn in place on a terminal, plain lines at their pace otherwise, percentage / ETA arithmetic;
// and `clmbench run --progress` end to end.
#include <gtest/gtest.h>

#include <sstream>

#include "clmbench_process.hpp"
#include "core/types.hpp"
#include "runs/progress_line.hpp"

using namespace clm;

namespace {

struct FakeClock {
  double now = 100.0;
  ProgressLine::Clock clock() {
    return [this] { return now; };
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(ProgressLine, TerminalShowsNothingForQuickWorkThenRedrawsInPlace) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kTerminal, "run a", c.clock());
  c.now += 1.9;
  p.update(0.5, "t = 5 of 10");
  EXPECT_EQ(out.str(), "");  // under the 2 s delay
  c.now += 0.2;              // 2.1 s elapsed, 0.42 done: ETA = 2.1 * 0.58 / 0.42 = 2.9 s
  p.update(0.42, "t = 4.2 of 10");
  EXPECT_EQ(out.str(), "\r\033[Krun a:  42.0%, t = 4.2 of 10, elapsed 2 s, ETA 3 s");
  c.now += 0.1;  // within the 0.25 s redraw interval: nothing
  p.update(0.45, "x");
  EXPECT_EQ(count(out.str(), "\r"), 1u);
  c.now += 0.2;
  p.update(0.5, "t = 5 of 10");
  EXPECT_EQ(count(out.str(), "\r"), 2u);
  EXPECT_EQ(count(out.str(), "\n"), 0u);  // never a new line on a terminal
  p.finish(1.0, "done");                  // clears the line for the caller's result line
  EXPECT_TRUE(out.str().ends_with("\r\033[K")) << out.str();
}

TEST(ProgressLine, TerminalQuickWorkLeavesNoTrace) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kTerminal, "run a", c.clock());
  c.now += 1.0;
  p.update(1.0, "t = 10 of 10");
  p.finish(1.0, "done");
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLine, PlainLinesEveryThirtySecondsAndAClosingLine) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kPlain, "sweep", c.clock());
  for (int second = 1; second <= 95; ++second) {
    c.now += 1;
    p.update(second / 100.0, "runs " + std::to_string(second) + "/100");
  }
  // Lines at 30, 60 and 90 s.
  EXPECT_EQ(count(out.str(), "\n"), 3u) << out.str();
  EXPECT_NE(out.str().find("sweep:  30.0%, runs 30/100, elapsed 30 s, ETA 1 min 10 s\n"), std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
  p.finish(0.95, "95 runs");
  EXPECT_TRUE(out.str().ends_with("sweep:  95.0%, 95 runs, elapsed 1 min 35 s\n")) << out.str();
}

TEST(ProgressLine, PlainQuickWorkPrintsNothing) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kPlain, "run a", c.clock());
  c.now += 29;
  p.update(0.9, "x");
  p.finish(1.0, "done");
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLine, AlwaysStartsAtOnceAndCloses) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kAlways, "run a", c.clock());
  p.update(0.0, "t = 0 of 10");
  EXPECT_EQ(out.str(), "run a:   0.0%, t = 0 of 10, elapsed 0 s, ETA -\n");
  c.now += 0.4;
  p.update(0.5, "y");  // under the 1 s interval
  p.finish(1.0, "100 steps, ok");
  EXPECT_EQ(out.str(), "run a:   0.0%, t = 0 of 10, elapsed 0 s, ETA -\nrun a: 100.0%, 100 steps, ok, elapsed 0 s\n");
}

TEST(ProgressLine, NeverPrints) {
  FakeClock c;
  std::ostringstream out;
  ProgressLine p(out, ProgressMode::kNever, "run a", c.clock());
  c.now += 1000;
  p.update(0.5, "x");
  p.finish(1.0, "done");
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLine, DurationsAndModes) {
  EXPECT_EQ(ProgressLine::duration_text(0.4), "0 s");
  EXPECT_EQ(ProgressLine::duration_text(59.4), "59 s");
  EXPECT_EQ(ProgressLine::duration_text(185), "3 min 05 s");
  EXPECT_EQ(ProgressLine::duration_text(7800), "2 h 10 min");
  EXPECT_EQ(ProgressLine::duration_text(-1), "-");
  // Days, and estimates past any lifetime (it was "ETA -9223372036854775808 s": lround overflowed).
  EXPECT_EQ(ProgressLine::duration_text(47 * 3600.0), "47 h 00 min");
  EXPECT_EQ(ProgressLine::duration_text(3 * 86400.0 + 5 * 3600), "3 d 05 h");
  EXPECT_EQ(ProgressLine::duration_text(1e300), "more than 100 years");
  EXPECT_EQ(ProgressLine::duration_text(1e19), "more than 100 years");
  EXPECT_EQ(ProgressLine::number(1234567.0), "1.235e+06");
  EXPECT_EQ(progress_mode("always"), ProgressMode::kAlways);
  EXPECT_EQ(progress_mode("never"), ProgressMode::kNever);
  EXPECT_THROW(progress_mode("sometimes"), InputError);
}

// End to end: --progress always shows the run's progress and its closing line on stderr (stdout keeps
// only the result lines); a bad value is one line and exit 1; without a terminal a quick run prints none.
TEST(ProgressLine, RunCommandShowsProgress) {
  clm::testing::ScratchDir dir("progress");
  const std::string args = "run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --dt 1e-3 --t-end 2 "
                           "--out a.h5";
  auto r = dir.run(args + " --progress always");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("run chaplygin_sleigh_kkt_rk4:   0.0%, t = 0 of 2, 0 steps/s, elapsed 0 s, ETA -\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("run chaplygin_sleigh_kkt_rk4: 100.0%, 2000 steps, ok, elapsed"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find('%'), std::string::npos) << r.out;

  r = dir.run(args + " --progress never");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = dir.run(args);  // auto, stderr is a file: a 2 s run prints nothing
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  r = dir.run(args + " --progress sometimes");
  clm::testing::expect_one_line_error(r, 1, {"--progress", "sometimes"});
}
