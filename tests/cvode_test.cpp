// SUNDIALS CVODE behind the Integrator interface (integrators/cvode_integrator.hpp): agreement with the
// suite's dopri5 on holonomic and nonholonomic problems (BDF and Adams), the stiff penalty sleigh at
// N = 1e6 against the closed form, dense output, failures as a status with CVODE's return code, projection
// (inside CVODE's step with BDF: CVodeSetProjFn), statistics, options, and no heap allocation per step.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "allocation_counter.hpp"
#include "run_allocations.hpp"
#include "clmbench_process.hpp"
#include "core/problem_registry.hpp"
#include "formulations/coordinate_projection.hpp"
#include "recorded_run.hpp"
#include "test_odes.hpp"

using namespace clm;
using clm::testing::max_q_difference;
using clm::testing::record_run;
using clm::testing::RunSettings;

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

// Projection with BDF happens inside CVODE's step (CVodeSetProjFn): the constraints hold to round-off at
// every step end, and CVODE keeps its order and step size, so the projected run takes about as many steps
// as the unprojected one (re-initializing CVODE after every projected step took 25273 steps here). The
// projection statistics are still the ProjectedSystem's. Adams (no CVodeSetProjFn) keeps the driver's
// after_step projection with re-initialization: correct, at order 1.
TEST(Cvode, WithProjection) {
  auto model = make_model("four_bar");
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  auto run = [&](const char* method, double t_end, ProjectionMode mode, ProjectionStatistics* stats) {
    auto f = formulation_registry().get("kkt").make(model, {});
    f->initial_state(q0, qd0, y0);
    ProjectedSystem projected(*f, mode);
    auto integ = integrator_registry().get("cvode").make();
    IntegratorSettings s;
    s.rtol = 1e-6;
    s.atol = 1e-8;
    s.cvode_method = method;
    SimulationSettings sim;
    sim.t_end = t_end;
    sim.output_every = 0;  // a sample per step: every sample is a step end
    double h = 0, Aqd = 0;
    Observation o;
    auto r = simulate(projected, *integ, y0, sim, s, [&](double t, const Vec& y) {
      f->observe(t, y, o);
      h = std::max(h, o.drift_position);
      Aqd = std::max(Aqd, o.drift_velocity);
    });
    EXPECT_EQ(r.status, "ok") << method << ": " << r.message;
    if (stats) *stats = projected.statistics();
    std::printf("  four_bar cvode %s rtol 1e-6 over %g s, projection %s: steps %ld, rhs %ld, max |h| %.2e, "
                "max |A qd| %.2e\n", method, t_end, mode == ProjectionMode::kNone ? "none" : "both", r.stats.steps,
                r.stats.rhs_evals, h, Aqd);
    return std::make_tuple(r.stats.steps, h, Aqd);
  };
  ProjectionStatistics stats;
  const auto [plain_steps, plain_h, plain_Aqd] = run("bdf", 1.0, ProjectionMode::kNone, nullptr);
  const auto [steps, h, Aqd] = run("bdf", 1.0, ProjectionMode::kBoth, &stats);
  EXPECT_LE(h, 1e-12);    // the bar (measured 2.9e-14)
  EXPECT_LE(Aqd, 1e-12);  // (measured 1.4e-15)
  EXPECT_GT(plain_h, 1e3 * std::max(h, 1e-16));
  EXPECT_LE(steps, plain_steps * 3 / 2);  // measured 288 against 337 (re-initializing: 25273)
  EXPECT_GE(stats.projections, steps);    // every accepted step was projected (and some rejected attempts)
  EXPECT_GT(stats.max_position_correction, 0);
  EXPECT_GT(stats.max_velocity_correction, 0);
  const auto [adams_steps, adams_h, adams_Aqd] = run("adams", 0.05, ProjectionMode::kBoth, nullptr);
  EXPECT_LE(adams_h, 1e-12);
  EXPECT_LE(adams_Aqd, 1e-12);
  EXPECT_GT(adams_steps, 0);
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
  // nullspace has no exact Jacobian (kkt, schur and penalty do: tests/exact_jacobian_test.cpp).
  r = dir.run("run --problem chaplygin_sleigh --formulation nullspace --integrator cvode --jacobian autodiff --t-end 0.1 "
              "--out z.h5");
  clm::testing::expect_one_line_error(r, 1, {"autodiff", "nullspace"});
  r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator cvode --jacobian autodiff --t-end 0.1 --out w.h5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
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
  // With the projection inside CVODE's step (CVodeSetProjFn) as well.
  auto model = make_model("four_bar");
  Vec q0, qd0, y;
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get("kkt").make(model, {});
  f->initial_state(q0, qd0, y);
  ProjectedSystem projected(*f, ProjectionMode::kBoth);
  IntegratorSettings s;
  s.rtol = 1e-6;
  s.atol = 1e-8;
  const auto counts = clm::testing::allocations_of_runs(projected, "cvode", y, s, 0.01, 0.2, 2.0);
  EXPECT_EQ(counts[0], counts[1]) << "bdf + projection";
}
