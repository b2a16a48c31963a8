// The simulation driver: the output grid, divergence, numerical failure, step-size underflow, the step
// limit, after_step projection, and no allocation per step.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "allocation_counter.hpp"
#include "run_allocations.hpp"
#include "core/simulate.hpp"
#include "test_odes.hpp"

using namespace clm;
using clm::testing::HopfOscillator;
using clm::testing::Quadratic;

namespace {

struct Samples {
  std::vector<double> t;
  std::vector<Vec> y;
  SampleCallback callback() {
    return [this](double ti, const Vec& yi) {
      t.push_back(ti);
      y.push_back(yi);
    };
  }
};

struct GridCase {
  const char* integrator;
  double dt;
  bool fixed_step;
  double tolerance;  // on the samples against the closed form
};

// Throws NumericalFailure once t passes t_fail (a singular matrix half-way through a run).
class FailsAt final : public OdeSystem {
 public:
  explicit FailsAt(double t_fail) : t_fail_(t_fail) {}
  int dimension() const override { return 1; }
  void rhs(double t, const Vec& y, Vec& dy) override {
    if (t > t_fail_) throw NumericalFailure("constraint matrix became singular");
    dy[0] = -y[0];
  }

 private:
  double t_fail_;
};

// A jump of 1e30 in the right-hand side at t = 0.5: the error estimate of a step across it never falls
// below the tolerance, so the adaptive step shrinks without bound.
class Cliff final : public OdeSystem {
 public:
  int dimension() const override { return 1; }
  void rhs(double t, const Vec&, Vec& dy) override { dy[0] = t < 0.5 ? 0.0 : 1e30; }
};

// y' = 1 with y clamped to <= 0.4 after every step (a stand-in for a projection).
class Clamped final : public OdeSystem {
 public:
  int dimension() const override { return 1; }
  void rhs(double, const Vec&, Vec& dy) override { dy[0] = 1.0; }
  bool after_step(double, Vec& y) override {
    if (y[0] <= 0.4) return false;
    y[0] = 0.4;
    return true;
  }
};

}  // namespace

// Samples land exactly on t0 + k * output_every and on t_end, once each, for fixed steps that divide the
// spacing, fixed steps coarser than it (interpolated), adaptive dopri5 (dense output) and dopri5 fixed.
TEST(Simulate, SamplesExactlyOnTheOutputGrid) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  const double t0 = 0.25, t_end = 1.2345, dt_out = 0.01;
  for (const GridCase& c : {GridCase{"rk4", 0.003, false, 1e-9}, GridCase{"rk4", 0.0237, false, 2e-6},
                            GridCase{"euler", 0.001, false, 2e-3}, GridCase{"dopri5", 0, false, 1e-8},
                            GridCase{"dopri5", 0.0237, true, 1e-7}}) {
    auto integ = integrator_registry().get(c.integrator).make();
    IntegratorSettings s;
    s.dt = c.dt;
    s.fixed_step = c.fixed_step;
    s.rtol = s.atol = 1e-10;
    SimulationSettings sim;
    sim.t0 = t0;
    sim.t_end = t_end;
    sim.output_every = dt_out;
    Samples out;
    // The system's clock starts at t0: shift the closed form.
    auto r = simulate(sys, *integ, sys.exact(t0), sim, s, out.callback());
    ASSERT_EQ(r.status, "ok") << r.message;
    const size_t expected = 100;  // t0 + k * 0.01 for k = 0..98, then t_end
    ASSERT_EQ(out.t.size(), expected) << c.integrator;
    EXPECT_EQ(r.samples, static_cast<long>(expected));
    for (size_t k = 0; k + 1 < expected; ++k) EXPECT_EQ(out.t[k], t0 + k * dt_out) << c.integrator << " k = " << k;
    EXPECT_EQ(out.t.back(), t_end);
    EXPECT_EQ(r.t_reached, t_end);
    double err = 0;
    for (size_t k = 0; k < out.t.size(); ++k)
      err = std::max(err, (out.y[k] - sys.exact(out.t[k])).lpNorm<Eigen::Infinity>());
    EXPECT_LT(err, c.tolerance) << c.integrator << " dt " << c.dt;
    // Effective step: 0.003 is shrunk to 0.01 / 4; a coarser step is kept; adaptive runs report 0.
    if (c.dt == 0.003) { EXPECT_DOUBLE_EQ(r.dt_effective, 0.0025); }
    if (c.dt == 0.0237) { EXPECT_EQ(r.dt_effective, 0.0237); }
    if (c.dt == 0) { EXPECT_EQ(r.dt_effective, 0.0); }
  }
}

// t_end a multiple of output_every up to round-off (0.1 * 3 != 0.3): no sliver sample, no duplicate.
TEST(Simulate, GridEndingOnTEndHasNoDuplicate) {
  HopfOscillator sys(1.0, 0.8, 0.0);
  for (const char* name : {"rk4", "dopri5"}) {
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    s.dt = 0.01;
    SimulationSettings sim;
    sim.t_end = 0.3;
    sim.output_every = 0.1;
    Samples out;
    auto r = simulate(sys, *integ, sys.initial(), sim, s, out.callback());
    ASSERT_EQ(r.status, "ok");
    ASSERT_EQ(out.t.size(), 4u) << name;
    EXPECT_EQ(out.t[0], 0.0);
    EXPECT_EQ(out.t[1], 0.1);
    EXPECT_EQ(out.t[2], 0.2);
    EXPECT_EQ(out.t[3], 0.3);
  }
}

// Constant steps over a long run land on every output time without slivers: 50 additions of dt = 0.002 miss
// t0 + 50 dt by up to 2.8e-12 near t = 535, above the old round-off allowance 1e-9 dt, and the missed part was
// then left as a step of ~5e-10 that rattle's Newton could not take (closed_chain(8), t = 535). Exactly
// t_end / dt steps, none shorter than dt.
TEST(Simulate, ConstantStepsLeaveNoSliversOverLongRuns) {
  HopfOscillator sys(1.0, 0.8, 0.0);
  auto integ = integrator_registry().get("euler").make();
  IntegratorSettings s;
  s.dt = 0.002;
  SimulationSettings sim;
  sim.t_end = 1000;
  sim.output_every = 0.1;
  Samples out;
  auto r = simulate(sys, *integ, sys.initial(), sim, s, out.callback());
  ASSERT_EQ(r.status, "ok");
  EXPECT_EQ(r.stats.steps, 500000);  // before the fix: 500011 (11 sliver steps)
  EXPECT_EQ(out.t.size(), 10001u);
  EXPECT_EQ(out.t.back(), 1000.0);
}

// output_every <= 0: t0, then one sample per accepted step, ending exactly at t_end.
TEST(Simulate, SamplePerStepWhenOutputEveryIsZero) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  for (const char* name : {"rk4", "dopri5"}) {
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    s.dt = 0.03;
    s.rtol = s.atol = 1e-8;
    SimulationSettings sim;
    sim.t_end = 1.0;
    sim.output_every = 0;
    Samples out;
    auto r = simulate(sys, *integ, sys.initial(), sim, s, out.callback());
    ASSERT_EQ(r.status, "ok");
    EXPECT_EQ(static_cast<long>(out.t.size()), r.stats.steps + 1) << name;
    for (size_t k = 1; k < out.t.size(); ++k) EXPECT_GT(out.t[k], out.t[k - 1]);
    EXPECT_EQ(out.t.back(), 1.0);
    if (std::string(name) == "rk4") { EXPECT_EQ(r.stats.steps, 34); }  // 33 steps of 0.03, then 0.01
  }
}

// y' = y^2, y(0) = 1 blows up at t = 1: "diverged", the samples before are kept and correct. The adaptive
// method stops before t = 1; fixed steps of 1e-3 can only notice on the step after t = 1 - 1e-3 (rk4) or
// lag further behind (euler).
TEST(Simulate, FiniteTimeBlowUpIsDiverged) {
  Quadratic sys;
  struct Case {
    const char* name;
    double t_bound;
    double tolerance;  // on the samples up to t = 0.9
  };
  for (const Case& c : {Case{"dopri5", 1.0, 1e-6}, Case{"rk4", 1.0 + 2e-3, 1e-6}, Case{"euler", 1.1, 0.5}}) {
    auto integ = integrator_registry().get(c.name).make();
    IntegratorSettings s;
    s.dt = 1e-3;
    s.rtol = s.atol = 1e-9;
    SimulationSettings sim;
    sim.t_end = 2.0;
    sim.output_every = 0.1;
    Samples out;
    Vec y0(1);
    y0 << 1.0;
    auto r = simulate(sys, *integ, y0, sim, s, out.callback());
    EXPECT_EQ(r.status, "diverged") << c.name << ": " << r.message;
    EXPECT_LT(r.t_reached, c.t_bound) << c.name;
    EXPECT_GT(r.t_reached, 0.99) << c.name;
    ASSERT_GE(out.t.size(), 10u) << c.name;  // 0, 0.1, ..., 0.9 at least
    for (size_t k = 0; k < out.t.size(); ++k) {
      EXPECT_LE(out.t[k], r.t_reached);
      if (out.t[k] < 0.95) { EXPECT_NEAR(out.y[k][0], 1.0 / (1.0 - out.t[k]), c.tolerance) << c.name; }
    }
    EXPECT_NE(r.message.find("t = "), std::string::npos);
  }
}

TEST(Simulate, DivergenceThresholdIsHonoured) {
  Quadratic sys;
  auto integ = integrator_registry().get("dopri5").make();
  IntegratorSettings s;
  SimulationSettings sim;
  sim.t_end = 2.0;
  sim.divergence_threshold = 100;
  Vec y0(1);
  y0 << 0.5;  // blows up at t = 2; |y| = 100 at t = 1.99
  Samples out;
  auto r = simulate(sys, *integ, y0, sim, s, out.callback());
  EXPECT_EQ(r.status, "diverged");
  EXPECT_GT(r.t_reached, 1.98);
  EXPECT_LT(r.t_reached, 2.0);
  EXPECT_NE(r.message.find("exceeded 100"), std::string::npos) << r.message;
  for (const Vec& y : out.y) EXPECT_LE(y[0], 100.0);
}

TEST(Simulate, NumericalFailureIsFailedWithMessage) {
  for (const char* name : {"rk4", "dopri5"}) {
    FailsAt sys(0.42);
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    s.dt = 0.01;
    SimulationSettings sim;
    sim.t_end = 1.0;
    sim.output_every = 0.1;
    Samples out;
    Vec y0(1);
    y0 << 2.0;
    auto r = simulate(sys, *integ, y0, sim, s, out.callback());
    EXPECT_EQ(r.status, "failed") << name;
    EXPECT_NE(r.message.find("constraint matrix became singular"), std::string::npos) << r.message;
    EXPECT_LE(r.t_reached, 0.42);
    ASSERT_GE(out.t.size(), 4u) << name;  // 0, 0.1, ..., 0.3 (and 0.4) are kept
    EXPECT_NEAR(out.y[3][0], 2.0 * std::exp(-0.3), 1e-8);
  }
  // Failure while evaluating the initial derivative: failed, no crash, nothing sampled.
  FailsAt sys(-1.0);
  auto integ = integrator_registry().get("dopri5").make();
  Samples out;
  Vec y0(1);
  y0 << 1.0;
  auto r = simulate(sys, *integ, y0, SimulationSettings{}, IntegratorSettings{}, out.callback());
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.t_reached, 0.0);
}

TEST(Simulate, StepSizeUnderflowIsFailed) {
  Cliff sys;
  auto integ = integrator_registry().get("dopri5").make();
  IntegratorSettings s;
  s.dt = 0.01;
  SimulationSettings sim;
  sim.t_end = 1.0;
  Samples out;
  Vec y0(1);
  y0 << 0.0;
  auto r = simulate(sys, *integ, y0, sim, s, out.callback());
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.message.find("step size underflow"), std::string::npos) << r.message;
  EXPECT_NEAR(r.t_reached, 0.5, 1e-12);
  EXPECT_GT(r.stats.rejected_steps, 10);
  // 0, 0.01, ..., 0.5: the run gets within round-off (1e-12) of the cliff, which counts as reaching 0.5.
  EXPECT_EQ(out.t.size(), 51u);
}

TEST(Simulate, StepLimitIsFailed) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  auto integ = integrator_registry().get("rk4").make();
  IntegratorSettings s;
  s.dt = 0.01;
  SimulationSettings sim;
  sim.t_end = 1.0;
  sim.max_steps = 25;
  Samples out;
  SimulationProgress last;  // the progress hook's final call: where the run stopped, not 100 %
  auto r = simulate(sys, *integ, sys.initial(), sim, s, out.callback(), [&](const SimulationProgress& p) { last = p; });
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.message.find("step limit"), std::string::npos) << r.message;
  EXPECT_EQ(r.stats.steps, 25);
  EXPECT_NEAR(r.t_reached, 0.25, 1e-12);
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.steps, 25);
  EXPECT_NEAR(last.fraction(), 0.25, 1e-12);
}

// after_step changes y: samples at step ends show the changed state, and the integrator continues from it
// (reset_state), so y stays clamped for fixed and adaptive methods.
TEST(Simulate, AfterStepProjectionIsHonoured) {
  for (const char* name : {"rk4", "dopri5"}) {
    Clamped sys;
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    s.dt = 0.05;
    SimulationSettings sim;
    sim.t_end = 1.0;
    sim.output_every = 0.1;
    Samples out;
    Vec y0(1);
    y0 << 0.0;
    auto r = simulate(sys, *integ, y0, sim, s, out.callback());
    ASSERT_EQ(r.status, "ok");
    ASSERT_EQ(out.t.size(), 11u);
    EXPECT_NEAR(out.y[3][0], 0.3, 1e-12) << name;
    EXPECT_EQ(out.y.back()[0], 0.4) << name;
  }
}

TEST(Simulate, BadSettingsAreInputErrors) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  auto rk4 = integrator_registry().get("rk4").make();
  IntegratorSettings s;
  s.dt = 0;
  EXPECT_THROW(simulate(sys, *rk4, sys.initial(), SimulationSettings{}, s, [](double, const Vec&) {}), InputError);
  s.dt = 0.1;
  SimulationSettings backwards;
  backwards.t_end = -1;
  EXPECT_THROW(simulate(sys, *rk4, sys.initial(), backwards, s, [](double, const Vec&) {}), InputError);
  EXPECT_THROW(simulate(sys, *rk4, Vec::Zero(3), SimulationSettings{}, s, [](double, const Vec&) {}), InputError);
}

// The driver itself allocates nothing per step: a run ten times longer makes the same number of
// allocations (all of them up front).
TEST(Simulate, NoAllocationPerStep) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  for (const char* name : {"rk4", "dopri5"}) {
    IntegratorSettings s;
    s.dt = 1e-3;
    s.rtol = s.atol = 1e-10;
    // output_every = 0.0007: many interpolated samples
    const auto counts = clm::testing::allocations_of_runs(sys, name, sys.initial(), s, 0.0007, 0.1, 1.0);
    EXPECT_EQ(counts[0], counts[1]) << name;
  }
}

// The progress hook: called every kProgressEvery attempted steps with the time reached (monotone, within
// [t0, t_end]) and once at the end with finished = true, the final time and the steps attempted.
TEST(Simulate, ProgressHookSeesTheRunAdvance) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  auto integ = integrator_registry().get("rk4").make();
  IntegratorSettings s;
  s.dt = 0.001;
  SimulationSettings sim;
  sim.t0 = 1.0;
  sim.t_end = 3.0;
  Samples out;
  std::vector<SimulationProgress> seen;
  auto r = simulate(sys, *integ, sys.initial(), sim, s, out.callback(),
                    [&](const SimulationProgress& p) { seen.push_back(p); });
  ASSERT_EQ(r.status, "ok");
  ASSERT_EQ(r.stats.steps, 2000);
  ASSERT_EQ(seen.size(), 2000 / kProgressEvery + 1 + 1);  // attempts 0, 64, ..., 1984 and the final call
  for (size_t i = 0; i + 1 < seen.size(); ++i) {
    EXPECT_FALSE(seen[i].finished);
    EXPECT_EQ(seen[i].steps, static_cast<long>(i) * kProgressEvery);
    EXPECT_NEAR(seen[i].t, 1.0 + 0.001 * seen[i].steps, 1e-12);
    EXPECT_NEAR(seen[i].fraction(), 0.0005 * seen[i].steps, 1e-12);
  }
  EXPECT_TRUE(seen.back().finished);
  EXPECT_EQ(seen.back().steps, 2000);
  EXPECT_DOUBLE_EQ(seen.back().t, 3.0);
  EXPECT_DOUBLE_EQ(seen.back().fraction(), 1.0);
}
