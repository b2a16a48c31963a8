// rattle (integrators/rattle.hpp): measured order by step halving against a tight dopri5 + kkt reference on
// q-dependent-M mechanisms, the constraints at every sample and the bounded energy error over 10^4 pendulum
// periods, the discrete multipliers against the closed-form ones, refusals in one line, and no heap
// allocation per step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "clmbench_process.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

// The reference: kkt + dopri5 at rtol 1e-13, atol 1e-15, samples every `every` up to T.
std::vector<Vec> reference(const std::shared_ptr<const Model>& model, const Vec& y0, double T, double every) {
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("dopri5").make();
  IntegratorSettings s;
  s.rtol = 1e-13;
  s.atol = 1e-15;
  s.dt = 1e-4;
  SimulationSettings sim;
  sim.t_end = T;
  sim.output_every = every;
  std::vector<Vec> out;
  const auto r = simulate(*f, *integ, y0, sim, s, [&](double, const Vec& y) { out.push_back(y); });
  EXPECT_EQ(r.status, "ok") << r.message;
  return out;
}

// rattle with kkt on `model` over [0, T] in n constant steps; the final state.
Vec rattle_final(const std::shared_ptr<const Model>& model, const Vec& y0, double T, int n, StepStatistics* st) {
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("rattle").make();
  IntegratorSettings s;
  s.dt = T / n;
  integ->initialize(*f, 0.0, y0, s);
  while (integ->time() < T) EXPECT_TRUE(integ->step(T));
  EXPECT_EQ(integ->statistics().steps, n);
  if (st) *st = integ->statistics();
  return integ->state();
}

Vec initial_state(const std::shared_ptr<const Model>& model) {
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get("kkt").make(model, {});
  f->initial_state(q0, qd0, y0);
  return y0;
}

}  // namespace

// Order 2 by step halving against kkt + dopri5 at rtol 1e-13 (final state at T = 1, max norm over (q, qd)),
// on the constant-M pendulum and four_bar and the q-dependent-M slider_crank, closed_chain (8 bars) and
// pendulum_polar.
// Measured slopes (errors): pendulum_cartesian 2.0005 (2.4e-3 .. 3.7e-5), four_bar 2.0004 (2.7e-1 ..
// 4.2e-3), slider_crank 2.0038 (2.1e-2 .. 3.3e-4), closed_chain 2.0023 (4.3e-1 .. 6.7e-3), pendulum_polar
// with the force fx = 0.3 1.9998 (1.9e-3 .. 2.9e-5); bands as in integrator_test (1.5 x the distance from
// 2 rounded up, 0.02 on the other side). Newton iterations per step at the finest step: 2.00, 2.03, 2.92,
// 3.67, 2.89 (two is the minimum: the rate must be measured).
TEST(Rattle, OrderTwoByStepHalving) {
  struct Case {
    const char* problem;
    int n0;
    double slope_lo, slope_hi, newton_max;
  };
  for (const Case& c : {Case{"pendulum_cartesian", 50, 1.98, 2.01, 2.1}, Case{"four_bar", 50, 1.98, 2.01, 2.1},
                        Case{"slider_crank", 50, 1.98, 2.01, 3.2}, Case{"closed_chain", 100, 1.98, 2.01, 4.0},
                        Case{"pendulum_polar", 50, 1.98, 2.01, 3.2}}) {
    // pendulum_polar with its horizontal force fx: F(t, q, qd) as midpoint forcing.
    auto model = std::string(c.problem) == "pendulum_polar" ? make_model(c.problem, {{"fx", 0.3}}) : make_model(c.problem);
    const Vec y0 = initial_state(model);
    const double T = 1.0;
    const Vec ref = reference(model, y0, T, T).back();
    std::vector<double> hs, errs;
    StepStatistics st;
    for (int k = 0; k < 4; ++k) {
      const int n = c.n0 << k;
      const Vec y = rattle_final(model, y0, T, n, &st);
      hs.push_back(T / n);
      errs.push_back((y - ref).lpNorm<Eigen::Infinity>());
    }
    const double p = fit_loglog(hs, errs).slope;
    const double newton = double(st.newton_iterations) / st.steps;
    std::printf("  %-18s errors %.3e %.3e %.3e %.3e slope %.4f; finest: %.2f Newton iterations, %.2f residuals "
                "per step, %ld matrices\n", c.problem, errs[0], errs[1], errs[2], errs[3], p, newton,
                double(st.rhs_evals) / st.steps, st.jacobian_evals);
    EXPECT_GE(p, c.slope_lo) << c.problem;
    EXPECT_LE(p, c.slope_hi) << c.problem;
    EXPECT_LE(newton, c.newton_max) << c.problem;
    EXPECT_EQ(st.rejected_steps, 0) << c.problem;
  }
}

// The pendulum over 10^4 periods (about 22,000 s at dt = 0.05, 44 steps a period, 4.4e5 steps, ~1 s):
// h(q) = 0 to the Newton tolerance and A qd = 0 to round-off at every sample; the energy error oscillates
// with bounded amplitude (symplectic, no drift): its maximum over the last tenth is that of the first tenth.
// Measured: 10287 periods, 3.00 Newton iterations a step, |h| <= 2.2e-14, |A qd| <= 4.4e-16, energy error
// max 3.4755e-2 in both tenths (ratio 1.0000).
TEST(Rattle, PendulumKeepsConstraintsAndEnergyOver1e4Periods) {
  auto model = make_model("pendulum_cartesian");
  const Vec y0 = initial_state(model);
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("rattle").make();
  IntegratorSettings s;
  s.dt = 0.05;
  SimulationSettings sim;
  sim.t_end = 22000;
  sim.output_every = 0.5;
  Observation o;
  double e0 = 0, hmax = 0, amax = 0, x_prev = 0;
  long periods = 0;  // upward zero crossings of x
  std::vector<double> t, de;
  const auto r = simulate(*f, *integ, y0, sim, s, [&](double tt, const Vec& y) {
    f->observe(tt, y, o);
    if (t.empty()) e0 = o.energy;
    if (!t.empty() && x_prev < 0 && y[0] >= 0) ++periods;
    x_prev = y[0];
    t.push_back(tt);
    de.push_back(std::abs(o.energy - e0));
    hmax = std::max(hmax, o.drift_position);
    amax = std::max(amax, o.drift_velocity);
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  double first = 0, last = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] <= 0.1 * sim.t_end) first = std::max(first, de[i]);
    if (t[i] >= 0.9 * sim.t_end) last = std::max(last, de[i]);
  }
  std::printf("  %ld periods, %ld steps, %.2f Newton iterations/step: max |h| %.2e, |A qd| %.2e; energy error max "
              "first tenth %.4e, last tenth %.4e (ratio %.4f), %.2f s\n", periods, r.stats.steps,
              double(r.stats.newton_iterations) / r.stats.steps, hmax, amax, first, last, last / first,
              r.wall_time_s);
  EXPECT_GE(periods, 10000);
  EXPECT_LE(hmax, 1e-12);
  EXPECT_LE(amax, 1e-12);
  EXPECT_LE(last, 2 * first);
  EXPECT_GE(last, 0.5 * first);
  EXPECT_LE(first, 0.05);  // O(h^2): 3.5e-2 at 44 steps a period
}

// The discrete multipliers written as lambda against the pendulum's closed-form multiplier on the
// reference motion at every step end: O(h^2). Measured max errors over 2 s: 4.633e-2, 1.179e-2, 2.972e-3,
// 7.462e-4 (slope 1.9857); lambda_start or lambda_end alone would be O(h) (2.7e-1 .. 3.4e-2).
TEST(Rattle, MultipliersAreSecondOrder) {
  auto model = make_model("pendulum_cartesian");
  const Vec y0 = initial_state(model);
  const double T = 2.0;
  std::vector<double> hs, errs;
  for (int k = 0; k < 4; ++k) {
    const int n = 100 << k;
    const double h = T / n;
    const auto ref = reference(model, y0, T, h);
    auto f = formulation_registry().get("kkt").make(model, {});
    auto integ = integrator_registry().get("rattle").make();
    IntegratorSettings s;
    s.dt = h;
    integ->initialize(*f, 0.0, y0, s);
    Vec lam(1);
    model->closed_form_multiplier(y0.head(2), y0.tail(2), lam);
    double err = std::abs((*integ->step_multipliers())[0] - lam[0]);  // before the first step: lambda(t0)
    EXPECT_LE(err, 1e-12);
    for (int i = 1; integ->time() < T; ++i) {
      ASSERT_TRUE(integ->step(T));
      const Vec& yr = ref[i];
      model->closed_form_multiplier(yr.head(2), yr.tail(2), lam);
      err = std::max(err, std::abs((*integ->step_multipliers())[0] - lam[0]));
    }
    hs.push_back(h);
    errs.push_back(err);
  }
  const double p = fit_loglog(hs, errs).slope;
  std::printf("  lambda errors %.3e %.3e %.3e %.3e slope %.4f\n", errs[0], errs[1], errs[2], errs[3], p);
  EXPECT_GE(p, 1.95);
  EXPECT_LE(p, 2.02);
  EXPECT_LE(errs[0], 0.05);
}

// Samples inside a step (dt = 0.02 > output_every = 0.005) come from the cubic Hermite interpolant of the
// end points' (q, qd) and (qd, qdd): as accurate as the steps themselves. Measured on slider_crank over
// 2 s: max error of (q, qd) 3.436e-2 at step ends, 3.438e-2 inside steps (ratio 1.0006: the global error
// dominates; the interpolation adds no visible error of its own).
TEST(Rattle, DenseOutputInsideSteps) {
  auto model = make_model("slider_crank");
  const Vec y0 = initial_state(model);
  const double T = 2, every = 0.005;
  const auto ref = reference(model, y0, T, every);
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("rattle").make();
  IntegratorSettings s;
  s.dt = 0.02;
  SimulationSettings sim;
  sim.t_end = T;
  sim.output_every = every;
  double at_ends = 0, inside = 0;
  size_t i = 0;
  const auto r = simulate(*f, *integ, y0, sim, s, [&](double t, const Vec& y) {
    ASSERT_LT(i, ref.size());
    const double e = (y - ref[i++]).lpNorm<Eigen::Infinity>();
    const double k = t / s.dt;
    double& worst = std::abs(k - std::round(k)) < 1e-6 ? at_ends : inside;
    worst = std::max(worst, e);
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  EXPECT_EQ(i, ref.size());
  std::printf("  max error at step ends %.3e, inside steps %.3e\n", at_ends, inside);
  EXPECT_LE(inside, 1.01 * at_ends);
}

// Combinations that make no sense are refused before the run, in one line.
TEST(Rattle, RefusalsAreOneLine) {
  clm::testing::ScratchDir dir("rattle_refusal");
  auto r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rattle --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"rattle", "holonomic and mixed problems only", "chaplygin_sleigh", "Pfaffian (nonholonomic) constraints only"});
  r = dir.run("run --problem pendulum_cartesian --formulation schur --integrator rattle --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"rattle", "formulation kkt", "schur"});
  r = dir.run("run --problem four_bar --formulation kkt --integrator rattle --projection both --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"rattle", "projection"});
  r = dir.run("run --problem four_bar --formulation kkt --integrator rattle --baumgarte-alpha 5 "
              "--out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"rattle", "Baumgarte"});
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));
}

// rtol and atol set rattle's Newton tolerance: no "has no effect" warning for them (there is one for rk4).
TEST(Rattle, ToleranceIsReadAsTheNewtonTolerance) {
  clm::testing::ScratchDir dir("rattle_rtol");
  auto r = dir.run("run --problem pendulum_cartesian --formulation kkt --integrator rattle --t-end 0.1 --rtol 1e-8 "
                   "--atol 1e-10 --out x.h5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("has no effect"), std::string::npos) << r.err;
  r = dir.run("run --problem pendulum_cartesian --formulation kkt --integrator rk4 --t-end 0.1 --rtol 1e-8 --out x.h5");
  EXPECT_NE(r.err.find("run.rtol = 1e-08 has no effect"), std::string::npos) << r.err;
}

// Every workspace is sized in initialize: a ten times longer run allocates nothing more (fixed-size
// pendulum, dynamic-size closed_chain).
TEST(Rattle, NoAllocationPerStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  for (const char* problem : {"pendulum_cartesian", "closed_chain"}) {
    auto model = make_model(problem);
    const Vec y0 = initial_state(model);
    auto f = formulation_registry().get("kkt").make(model, {});
    IntegratorSettings s;
    s.dt = 1e-3;
    const auto counts = clm::testing::allocations_of_runs(*f, "rattle", y0, s, 0.01, 0.05, 0.5);
    EXPECT_EQ(counts[0], counts[1]) << problem;
  }
}
