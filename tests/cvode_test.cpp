// SUNDIALS CVODE behind the Integrator interface (integrators/cvode_integrator.hpp): agreement with the
// suite's dopri5 on holonomic and nonholonomic problems (BDF and Adams), the stiff penalty sleigh at
// N = 1e6 against the closed form, dense output, failures as a status with CVODE's return code, projection
// (re-initialization), statistics, options, and no heap allocation per step.
#include <gtest/gtest.h>

#include <cmath>

#include "allocation_counter.hpp"
#include "run_allocations.hpp"
#include "clmbench_process.hpp"
#include "core/problem_registry.hpp"
#include "recorded_run.hpp"
#include "test_odes.hpp"

using namespace clm;
using clm::testing::record_run;
using clm::testing::RunSettings;

namespace {

double max_q_difference(const clm::testing::RecordedRun& a, const clm::testing::RecordedRun& b) {
  EXPECT_EQ(a.t.size(), b.t.size());
  double d = 0;
  for (size_t k = 0; k < std::min(a.t.size(), b.t.size()); ++k) {
    EXPECT_DOUBLE_EQ(a.t[k], b.t[k]);
    d = std::max(d, (a.obs[k].q - b.obs[k].q).lpNorm<Eigen::Infinity>());
  }
  return d;
}

}  // namespace

// The bar: cvode at rtol 1e-10 agrees with kkt + dopri5 to 1e-7 on slider_crank, four_bar and the
// sleigh, at every sample of the output grid (CVODE's own interpolant between its steps).
TEST(Cvode, AgreesWithDopri5) {
  for (const char* problem : {"slider_crank", "four_bar", "chaplygin_sleigh"}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    RunSettings ref;
    ref.t_end = 2;
    ref.output_every = 0.01;
    ref.rtol = 1e-12;
    ref.atol = 1e-14;
    const auto reference = record_run(model, "kkt", q0, qd0, ref);
    for (const char* method : {"bdf", "adams"}) {
      RunSettings rs = ref;
      rs.integrator = "cvode";
      rs.cvode_method = method;
      rs.rtol = 1e-10;
      rs.atol = 1e-12;
      const auto run = record_run(model, "kkt", q0, qd0, rs);
      ASSERT_EQ(run.result.status, "ok") << problem << " " << method << ": " << run.result.message;
      const double d = max_q_difference(run, reference);
      std::printf("  %-16s cvode %-5s rtol 1e-10: max |q - q_dopri5| %.2e, steps %ld, rhs %ld, jac %ld\n", problem,
                  method, d, run.result.stats.steps, run.result.stats.rhs_evals, run.result.stats.jacobian_evals);
      EXPECT_LT(d, 1e-7) << problem << " " << method;
      EXPECT_GT(run.result.stats.rhs_evals, run.result.stats.steps);
      if (std::string(method) == "bdf") {
        EXPECT_GT(run.result.stats.jacobian_evals, 0);
      } else {
        EXPECT_EQ(run.result.stats.jacobian_evals, 0);
      }
    }
  }
}

// Stiff: the penalty sleigh (Kozlov Theorem 1) at N = 1e6 under BDF: within 1e-5 of the nonholonomic closed
// form (the O(1/N) limit error is 2e-6) in fewer than 5000 steps, where dopri5 needs about 1.8 million.
TEST(Cvode, BdfOnThePenaltySleighAtN1e6) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  RunSettings rs;
  rs.integrator = "cvode";
  rs.t_end = 5;
  rs.output_every = 0.05;
  rs.rtol = 1e-8;
  rs.atol = 1e-10;
  rs.options.N = 1e6;
  const auto run = record_run(model, "penalty", q0, qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  double err = 0;
  Vec q, qd;
  for (size_t k = 0; k < run.t.size(); ++k) {
    ASSERT_TRUE(model->closed_form(run.t[k], q0, qd0, q, qd));
    err = std::max(err, (run.obs[k].q - q).lpNorm<Eigen::Infinity>());
  }
  std::printf("  penalty sleigh N 1e6 cvode bdf rtol 1e-8: steps %ld rejected %ld rhs %ld jac %ld, error %.2e\n",
              run.result.stats.steps, run.result.stats.rejected_steps, run.result.stats.rhs_evals,
              run.result.stats.jacobian_evals, err);
  EXPECT_LT(err, 1e-5);                          // the bar (measured 4.0e-6: the O(1/N) limit error)
  EXPECT_LT(run.result.stats.steps, 5000);       // the bar
  EXPECT_LT(run.result.stats.steps, 300);        // and what BDF takes here (196): a regression shows
}

// A system that fails inside CVODE's rhs: the run ends "failed" with the system's own message (rethrown
// after CVODE returns), the samples before kept; a failure of CVODE itself names its return code.
TEST(Cvode, FailuresBecomeAStatus) {
  struct FailsAt final : OdeSystem {
    int dimension() const override { return 1; }
    void rhs(double t, const Vec& y, Vec& dy) override {
      if (t > 0.5) throw NumericalFailure("constraint matrix became singular");
      dy[0] = -y[0];
    }
  } fails;
  auto integ = integrator_registry().get("cvode").make();
  IntegratorSettings s;
  s.rtol = 1e-8;
  SimulationSettings sim;
  sim.output_every = 0.1;
  long samples = 0;
  auto r = simulate(fails, *integ, Vec::Ones(1), sim, s, [&](double, const Vec&) { ++samples; });
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.message.find("constraint matrix became singular"), std::string::npos) << r.message;
  EXPECT_GE(samples, 5);

  struct Blowup final : OdeSystem {  // y' = y^2 from y = 1 blows up at t = 1: CVODE's step underflows
    int dimension() const override { return 1; }
    void rhs(double, const Vec& y, Vec& dy) override { dy[0] = y[0] * y[0]; }
  } blowup;
  auto integ2 = integrator_registry().get("cvode").make();
  sim.t_end = 2;
  sim.divergence_threshold = 1e300;
  r = simulate(blowup, *integ2, Vec::Ones(1), sim, s, [](double, const Vec&) {});
  EXPECT_EQ(r.status, "failed");
  EXPECT_FALSE(r.message.empty());
  EXPECT_LT(r.t_reached, 1.0 + 1e-6);
  EXPECT_GT(r.t_reached, 0.99);
}

// Projection after every step re-initializes CVODE at the projected state: the constraints hold to
// round-off at every sample. (Each re-initialization restarts CVODE at order 1, so this is slow: a short
// run; see integrators/cvode_integrator.hpp.)
TEST(Cvode, WithProjection) {
  auto model = make_model("four_bar");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  RunSettings rs;
  rs.integrator = "cvode";
  rs.t_end = 0.05;
  rs.output_every = 0;  // a sample per step: every sample is a projected state
  rs.rtol = 1e-6;
  rs.atol = 1e-8;
  rs.options.projection = "both";
  const auto run = record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  std::printf("  four_bar cvode bdf rtol 1e-6 + projection over 0.05 s: steps %ld, rhs %ld\n", run.result.stats.steps,
              run.result.stats.rhs_evals);
  for (const auto& o : run.obs) {
    EXPECT_LE(o.drift_position, 1e-12);
    EXPECT_LE(o.drift_velocity, 1e-12);
  }
}

TEST(Cvode, OptionsAndRefusals) {
  clm::testing::ScratchDir dir("cvode");
  auto r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator cvode --cvode-method sometimes --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"sometimes", "cvode"});
  r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --cvode-method adams --t-end 0.1 --out x.h5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cvode_method = adams has no effect"), std::string::npos) << r.err;
  r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator cvode --fixed-step --t-end 0.1 --out y.h5");
  clm::testing::expect_one_line_error(r, 1, {"cvode", "fixed-step"});
  r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator cvode --jacobian autodiff --t-end 0.1 --out z.h5");
  clm::testing::expect_one_line_error(r, 1, {"autodiff", "kkt"});
}

// CVODE's vectors wrap the integrator's memory and its solvers are allocated in initialize: a run ten times
// longer allocates no more.
TEST(Cvode, NoAllocationPerStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  clm::testing::PenaltySleighAutoDiff sys(1.7, 0.35, 0.45, 1e4);
  Vec y0(6);
  y0 << 0, 0, 0, 1, 0.3, 0.2;
  for (const char* method : {"bdf", "adams"}) {
    IntegratorSettings s;
    s.rtol = 1e-8;
    s.atol = 1e-10;
    s.cvode_method = method;
    const auto counts = clm::testing::allocations_of_runs(sys, "cvode", y0, s, 0.01, 0.5, 5.0);
    EXPECT_EQ(counts[0], counts[1]) << method;
  }
}
