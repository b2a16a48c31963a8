// verlet (integrators/verlet.hpp): measured order by step halving against a tight dopri5 run of the same
// formulation on a q-dependent-M problem (penalty on pendulum_polar, with the position spring and a
// generalized force), the stiff penalty sleigh (velocity-dependent force solved implicitly), refusals in one
// line, and no heap allocation per step.
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
#include "recorded_run.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

// `method` on formulation f over [0, T]: n constant steps (fixed_step for dopri5 when n > 0) or, n = 0,
// dopri5 at rtol 1e-13 (the reference). The final state and the statistics.
Vec final_state(Formulation& f, const std::string& method, const Vec& y0, double T, int n, StepStatistics* st = nullptr) {
  auto integ = integrator_registry().get(method).make();
  IntegratorSettings s;
  s.rtol = 1e-13;
  s.atol = 1e-15;
  s.dt = n > 0 ? T / n : 1e-4;
  integ->initialize(f, 0.0, y0, s);
  while (integ->time() < T) EXPECT_TRUE(integ->step(T));
  if (n > 0) EXPECT_EQ(integ->statistics().steps, n);
  if (st) *st = integ->statistics();
  return integ->state();
}

}  // namespace

// Penalty on pendulum_polar (M = diag(m, m r^2) depends on q) with N = 10, the position spring k = 50 and
// the horizontal force fx = 0.3: order 2 by step halving against dopri5 at rtol 1e-13 on the same
// formulation. Measured errors 4.840e-4, 1.210e-4, 3.026e-5, 7.566e-6 (slope 1.9999); 3.55 Newton
// iterations per step at the finest step.
TEST(Verlet, OrderTwoOnPenaltyWithQDependentMass) {
  auto model = make_model("pendulum_polar", {{"fx", 0.3}});
  FormulationOptions o;
  o.N = 10;
  o.k = 50;
  auto f = formulation_registry().get("penalty").make(model, o);
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  const double T = 1;
  const Vec ref = final_state(*f, "dopri5", y0, T, 0);
  std::vector<double> hs, errs;
  StepStatistics st;
  for (int k = 0; k < 4; ++k) {
    const int n = 50 << k;
    const Vec y = final_state(*f, "verlet", y0, T, n, &st);
    hs.push_back(T / n);
    errs.push_back((y - ref).lpNorm<Eigen::Infinity>());
  }
  const double p = fit_loglog(hs, errs).slope;
  const double newton = double(st.newton_iterations) / st.steps;
  std::printf("  errors %.3e %.3e %.3e %.3e slope %.4f; finest: %.2f Newton iterations per step\n", errs[0], errs[1],
              errs[2], errs[3], p, newton);
  EXPECT_GE(p, 1.98);
  EXPECT_LE(p, 2.01);
  EXPECT_LE(newton, 4.0);
  EXPECT_EQ(st.rejected_steps, 0);
}

// Symplectic on a conservative system with q-dependent M: penalty on pendulum_polar with a negligible
// friction (N = 1e-12) and the spring k = 100 is the Lagrangian L - k/2 (r - L)^2. Over 1000 s (~500
// periods, 1e5 steps of 0.01) the error of its energy T + V + k/2 (r - L)^2 oscillates without drift.
// Measured: max 1.2155e-3 in the first tenth, 1.2158e-3 in the last (ratio 1.0003); 4.37 Newton iterations
// per step.
TEST(Verlet, EnergyBoundedOnAConservativeSystem) {
  auto model = make_model("pendulum_polar");
  FormulationOptions o;
  o.N = 1e-12;
  o.k = 100;
  auto f = formulation_registry().get("penalty").make(model, o);
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  auto integ = integrator_registry().get("verlet").make();
  IntegratorSettings s;
  s.dt = 0.01;
  SimulationSettings sim;
  sim.t_end = 1000;
  sim.output_every = 0.1;
  Observation obs;
  double e0 = NAN, first = 0, last = 0;
  const auto r = simulate(*f, *integ, y0, sim, s, [&](double t, const Vec& y) {
    f->observe(t, y, obs);
    const double stretch = y[0] - 1.0;  // r - L
    const double e = obs.energy + 0.5 * o.k * stretch * stretch;
    if (std::isnan(e0)) e0 = e;
    if (t <= 0.1 * sim.t_end) first = std::max(first, std::abs(e - e0));
    if (t >= 0.9 * sim.t_end) last = std::max(last, std::abs(e - e0));
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  std::printf("  energy error max first tenth %.4e, last tenth %.4e (ratio %.4f), %.2f Newton iterations/step\n",
              first, last, last / first, double(r.stats.newton_iterations) / r.stats.steps);
  EXPECT_GT(first, 0);
  EXPECT_LE(last, 2 * first);
  EXPECT_GE(last, 0.5 * first);
}

// The stiff penalty sleigh (N = 1e6): the friction -N A^T A qd is velocity-dependent, so the momentum
// update is implicit, and Newton solves it with the rest; 1000 steps over 5 s (N h = 5000, far beyond an
// explicit method's N h < ~3) stay within about twice the penalty's own O(1/N) error of the closed form.
// Measured: |q - q_exact| = 3.569e-6 (2.089e-6 at 2000 steps, 1.6e-6 at 8000: the 1/N part), 4.30 Newton
// iterations per step, no rejection. The midpoint forcing is A-stable but not L-stable: at 500 steps
// (N h = 1e4) A qd flips sign from step to step instead of decaying and some steps are halved.
TEST(Verlet, StiffPenaltySleigh) {
  auto model = make_model("chaplygin_sleigh");
  FormulationOptions o;
  o.N = 1e6;
  auto f = formulation_registry().get("penalty").make(model, o);
  Vec q0, qd0, y0, q, qd;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  const double T = 5;
  StepStatistics st;
  const Vec y = final_state(*f, "verlet", y0, T, 1000, &st);
  ASSERT_TRUE(model->closed_form(T, q0, qd0, q, qd));
  const double err = (y.head(3) - q).lpNorm<Eigen::Infinity>();
  std::printf("  |q - q_exact| = %.3e, %.2f Newton iterations per step, %ld rejected\n", err,
              double(st.newton_iterations) / st.steps, st.rejected_steps);
  EXPECT_LE(err, 5e-6);
  EXPECT_EQ(st.rejected_steps, 0);
}

// Where verlet does not apply, the run is refused before it starts, in one line.
TEST(Verlet, RefusalsAreOneLine) {
  clm::testing::ScratchDir dir("verlet_refusal");
  auto r = dir.run("run --problem pendulum_cartesian --formulation kkt --integrator verlet --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"verlet ignores position constraints; use rattle"});
  r = dir.run("run --problem chaplygin_sleigh --formulation schur --integrator verlet --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"verlet ignores the constraints", "penalty"});
  r = dir.run("run --problem chaplygin_sleigh --formulation added_mass --integrator verlet --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"verlet", "added_mass"});
  r = dir.run("run --problem four_bar --formulation nullspace --integrator verlet --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"verlet", "nullspace"});
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));
}

// Every workspace is sized in initialize: a ten times longer run allocates nothing more.
TEST(Verlet, NoAllocationPerStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  for (const char* problem : {"pendulum_polar", "closed_chain"}) {
    auto model = make_model(problem);
    FormulationOptions o;
    o.N = 100;
    o.k = 10;
    auto f = formulation_registry().get("penalty").make(model, o);
    Vec q0, qd0, y0;
    model->default_initial(q0, qd0);
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.dt = 1e-3;
    const auto counts = clm::testing::allocations_of_runs(*f, "verlet", y0, s, 0.01, 0.05, 0.5);
    EXPECT_EQ(counts[0], counts[1]) << problem;
  }
}

// Under coordinate projection (penalty + projection = both): verlet reads the model through the wrapped
// formulation, the runner projects after every step and verlet restarts its momentum from the projected
// state; the constraints then hold at every sample. Measured on pendulum_polar (N = 10) over 2 s:
// max(|h|, |A qd|) = 0 with projection (h = r - L is linear), 1.95 without (N = 10 is a weak penalty).
TEST(Verlet, RunsUnderCoordinateProjection) {
  auto model = make_model("pendulum_polar");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  double drift[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    clm::testing::RunSettings rs;
    rs.integrator = "verlet";
    rs.t_end = 2;
    rs.dt = 1e-3;
    rs.options.N = 10;
    rs.options.projection = k == 0 ? "none" : "both";
    const auto run = clm::testing::record_run(model, "penalty", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    for (const auto& o : run.obs) drift[k] = std::max({drift[k], o.drift_position, o.drift_velocity});
  }
  std::printf("  max drift: %.2e without projection, %.2e with\n", drift[0], drift[1]);
  EXPECT_LE(drift[1], 1e-14);
  EXPECT_GE(drift[0], 1e-3);
}
