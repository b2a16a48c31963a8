// Issue 24 item 2: a run outside its formulation's validity conditions says so (RunRecord::validity, a warning,
// the /summary column and run attribute `validity`), and a run inside them says nothing, at every tolerance.
#include <gtest/gtest.h>

#include <cmath>

#include "clmbench_process.hpp"
#include "runs/results_writer.hpp"
#include "runs/runner.hpp"
#include "runs/validity_monitor.hpp"
#include "run_spec_for.hpp"

namespace clm {
namespace {

RunSpec spec_for(const std::string& problem, const std::string& formulation, const std::string& integrator) {
  RunSpec s = testing::spec_for(problem, formulation, integrator);
  s.t_end = 10;
  s.output_every = 0.01;
  return s;
}

RunRecord run(const RunSpec& spec) { return testing::execute(spec); }

// The vertical disk is the theorem's case: its residuals are the drift's (1.1-1.2 |A qd|), never flagged, from
// a loose adaptive tolerance to a coarse fixed step.
TEST(ValidityMonitor, FernandezBlochOnTheDiskIsValidAtEveryTolerance) {
  for (const double rtol : {1e-2, 1e-3, 1e-6, 1e-9, 1e-12}) {
    RunSpec s = spec_for("rolling_disk", "fernandez_bloch", "dopri5");
    s.rtol = s.atol = rtol;
    const RunRecord r = run(s);
    EXPECT_EQ(r.status, "ok");
    // The theorem's conditions hold at every tolerance. At rtol 1e-2 and 1e-3 the run's own energy check fails
    // (energy error 0.47 and 0.011 of the energy in motion, runs/own_checks.hpp): that is the only flag.
    if (rtol >= 1e-3)
      EXPECT_EQ(r.validity.rfind("own checks failed: energy error", 0), 0u) << "rtol " << rtol << ": " << r.validity;
    else
      EXPECT_EQ(r.validity, "") << "rtol " << rtol;
  }
  RunSpec s = spec_for("rolling_disk", "fernandez_bloch", "rk4");
  s.dt = 0.05;
  EXPECT_EQ(run(s).validity, "");
}

// The sleigh and the skate on an incline violate the conditions (the flat sleigh already at its consistent start,
// where no drift excuses it): q errors of order one against the nonholonomic motion, status "ok", and now a
// validity line, also among the warnings the command prints.
TEST(ValidityMonitor, FernandezBlochOutsideItsTheoremIsFlagged) {
  const RunRecord sleigh = run(spec_for("chaplygin_sleigh", "fernandez_bloch", "dopri5"));
  EXPECT_EQ(sleigh.status, "ok");
  EXPECT_GT(sleigh.summary.q_error_max, 1.0);
  EXPECT_NE(sleigh.validity.find("fernandez_bloch outside its theorem"), std::string::npos) << sleigh.validity;
  EXPECT_NE(sleigh.validity.find("at t = 0,"), std::string::npos) << sleigh.validity;
  EXPECT_EQ(std::count(sleigh.warnings.begin(), sleigh.warnings.end(), sleigh.validity), 1);
  const RunRecord skate = run(spec_for("skate_incline", "fernandez_bloch", "dopri5"));
  EXPECT_NE(skate.validity.find("fernandez_bloch outside its theorem"), std::string::npos) << skate.validity;
  // The /summary row carries it (and the run attribute of the same name, run_attributes()).
  const SummaryTable row = summary_of(sleigh);
  bool found = false;
  for (const auto& c : row)
    if (c.name == "validity") {
      found = true;
      EXPECT_EQ(std::get<std::vector<std::string>>(c.values).at(0), sleigh.validity);
    }
  EXPECT_TRUE(found);
}

// Kozlov's limit: penalty at N = 10 leaves |A qd| at 4.8 % of |qd| (q error 0.5 m against the nonholonomic
// motion) and is flagged; at N = 1000 (0.05 %, q error 5e-3) it is not (its limit gap, 5.1e-3 above the run's
// tolerance, is: runs/limit_gap.hpp).
TEST(ValidityMonitor, PenaltyFarFromKozlovsLimitIsFlagged) {
  RunSpec s = spec_for("chaplygin_sleigh", "penalty", "radau5");
  s.options.N = 10;
  const RunRecord far = run(s);
  EXPECT_NE(far.validity.find("penalty far from Kozlov's limit at N = 10"), std::string::npos) << far.validity;
  EXPECT_GT(far.summary.q_error_max, 0.4);  // 0.50
  s.options.N = 1000;
  const RunRecord near = run(s);
  EXPECT_EQ(near.validity.find("far from Kozlov's limit"), std::string::npos) << near.validity;
  EXPECT_EQ(near.validity.rfind("limit gap: penalty at N = 1000 is an estimated 5.1", 0), 0u) << near.validity;
  EXPECT_LT(near.summary.q_error_max, 1e-2);
  EXPECT_NEAR(near.limit_gap / near.summary.q_error_max, 1.0, 1e-2);
}

// What a user sees: one warning line from `run`, the info table's closing line naming the run, and the condition
// in `info --run`.
TEST(ValidityMonitor, TheCommandLineSaysItOnceAndInfoNamesTheRun) {
  testing::ScratchDir dir("validity");
  const auto r = dir.run("run --problem chaplygin_sleigh --formulation fernandez_bloch --integrator dopri5 --t-end 1 "
                         "--out fb.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("clmbench: warning: run chaplygin_sleigh_fernandez_bloch_dopri5: fernandez_bloch outside its "
                           "theorem", 0), 0u) << lines[0];
  const auto info = dir.run("info fb.h5");
  EXPECT_NE(info.out.find("# 1 run flagged (outside the formulation's validity conditions, or failing the run's own checks): "
                           "chaplygin_sleigh_fernandez_bloch_dopri5"),
            std::string::npos) << info.out;
  const auto one = dir.run("info fb.h5 --run chaplygin_sleigh_fernandez_bloch_dopri5");
  EXPECT_NE(one.out.find("validity = fernandez_bloch outside its theorem"), std::string::npos) << one.out;
}

Observation observation(int m, double drift, std::vector<double> extras) {
  Observation o;
  o.q = Vec::Zero(2);
  o.qd = Vec::Constant(2, 1.0);
  o.lambda = Vec::Constant(m, 1.0);
  o.drift_velocity = drift;
  o.extras = std::move(extras);
  return o;
}

// The thresholds themselves, on synthetic samples (|lambda| = 1, |qd| = sqrt 2).
TEST(ValidityMonitor, ThresholdsOnSyntheticSamples) {
  const std::vector<std::string> fb{"fb_condition_1", "fb_condition_2"};
  {
    ValidityMonitor v("fernandez_bloch", fb, 0);
    v.add(0, observation(1, 0, {5e-7, 0}));                         // on C, below 1e-6 |lambda|
    v.add(1, observation(1, 1e-3, {0, 5e-2}));                      // off C: allowed 1e-6 + 100 * 1e-3 / sqrt 2
    EXPECT_EQ(v.finish(), "");
  }
  {
    ValidityMonitor v("fernandez_bloch", fb, 0);
    v.add(0, observation(1, 0, {2e-6, 0}));
    EXPECT_NE(v.finish().find("at t = 0,"), std::string::npos);
  }
  {
    ValidityMonitor v("substituted", {"chart_rcond"}, 0);
    v.add(0, observation(1, 0, {0.5}));
    v.add(1, observation(1, 0, {0.02}));
    EXPECT_EQ(v.finish(), "");
    v.add(2, observation(1, 0, {0.005}));
    EXPECT_NE(v.finish().find("chart_rcond fell to 0.005 at t = 2"), std::string::npos) << v.finish();
  }
  {
    ValidityMonitor v("added_mass", {"modified_energy"}, 50);
    v.add(0, observation(1, 0.01, {0}));  // 0.01 / sqrt 2 = 0.0071 of |qd|
    EXPECT_EQ(v.finish(), "");
    v.add(1, observation(1, 0.02, {0}));
    EXPECT_NE(v.finish().find("added_mass far from Kozlov's limit at N = 50"), std::string::npos) << v.finish();
  }
  ValidityMonitor kkt("kkt", {}, 0);
  kkt.add(0, observation(1, 10, {}));
  EXPECT_EQ(kkt.finish(), "");
}

}  // namespace
}  // namespace clm
