// Integrators: convergence orders by step halving (closed-form ODE and a mechanism), the dopri5 error
// control, dense output and step statistics, and the absence of heap allocation per step.
#include <gtest/gtest.h>

#include "core/loglog_fit.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "core/formulation.hpp"
#include "integrators/dormand_prince.hpp"
#include "integrators/hermite.hpp"
#include "test_odes.hpp"

using namespace clm;
using clm::testing::HopfOscillator;
using clm::testing::Relaxation;
using clm::testing::SwitchingFronts;

namespace {

// Integrates [0, T] with n constant steps (fixed_step for adaptive methods) and returns the final state.
Vec integrate_fixed(const std::string& method, OdeSystem& sys, const Vec& y0, double T, int n) {
  auto integ = integrator_registry().get(method).make();
  IntegratorSettings s;
  s.dt = T / n;
  s.fixed_step = true;
  integ->initialize(sys, 0.0, y0, s);
  while (integ->time() < T) EXPECT_TRUE(integ->step(T));
  EXPECT_EQ(integ->time(), T);
  EXPECT_EQ(integ->statistics().steps, n);
  EXPECT_EQ(integ->statistics().rejected_steps, 0);
  return integ->state();
}

// Convergence order: slope of log(err) against log(h) (core/loglog_fit.hpp).
double fitted_slope(const std::vector<double>& h, const std::vector<double>& err) {
  return clm::fit_loglog(h, err).slope;
}

struct OrderCase {
  const char* method;
  int nominal;
  int n0;  // coarsest number of steps; three halvings follow
  // The measured slope must lie in [nominal - below, nominal + above]. Bands are set from the measured
  // slopes (printed with four digits): at least 1.5 times the measured distance from the nominal order on
  // its side, rounded up to 0.01, 0.02, 0.05, 0.1, 0.15, ... (never wider than the former +/- 0.3), and
  // 0.02 on the other side. The slopes are deterministic (errors far above round-off), so the margin only
  // has to absorb platform differences in the last bits.
  double below, above;
};

void expect_order(double p, int nominal, double below, double above, const std::string& what) {
  EXPECT_GE(p, nominal - below) << what << ": measured order " << p;
  EXPECT_LE(p, nominal + above) << what << ": measured order " << p;
}

// Step counts are in the asymptotic range and errors stay well above round-off (>= 1e-12).
double measured_order_hopf(const OrderCase& c) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  const double T = 2.0;
  const Vec exact = sys.exact(T);
  std::vector<double> hs, errs;
  for (int k = 0; k < 4; ++k) {
    const int n = c.n0 << k;
    const Vec y = integrate_fixed(c.method, sys, sys.initial(), T, n);
    hs.push_back(T / n);
    errs.push_back((y - exact).lpNorm<Eigen::Infinity>());
  }
  const double p = fitted_slope(hs, errs);
  std::printf("  hopf %-7s n0 = %4d errors %.3e %.3e %.3e %.3e slope %.4f\n", c.method, c.n0, errs[0], errs[1],
              errs[2], errs[3], p);
  return p;
}

}  // namespace

// Measured: euler 0.9969, rk4 3.9245, dopri5 5.2425 (pre-asymptotic: local slopes 5.66, 5.13, 4.98).
TEST(IntegratorOrder, StepHalvingOnHopfOscillator) {
  for (const OrderCase& c : {OrderCase{"euler", 1, 400, 0.02, 0.02}, OrderCase{"rk4", 4, 40, 0.15, 0.02},
                             OrderCase{"dopri5", 5, 20, 0.02, 0.3}})
    expect_order(measured_order_hopf(c), c.nominal, c.below, c.above, c.method);
}

// Pendulum in polar coordinates through the KKT formulation, non-default parameters and initial data;
// reference: dopri5 with 32 times finer steps than the finest measured run.
TEST(IntegratorOrder, StepHalvingOnPendulumPolarKkt) {
  auto model = make_model("pendulum_polar", {{"m", 1.3}, {"L", 0.7}, {"g", 9.6}, {"fx", 0.6}});
  auto f = formulation_registry().get("kkt").make(model, {});
  Vec q0(2), qd0(2), y0;
  q0 << 0.7, 1.1;
  qd0 << 0.0, -0.8;
  f->initial_state(q0, qd0, y0);
  const double T = 1.5;
  const Vec ref = integrate_fixed("dopri5", *f, y0, T, 4800);
  // Measured: euler 1.0068, rk4 3.9339, dopri5 5.1701.
  for (const OrderCase& c : {OrderCase{"euler", 1, 600, 0.02, 0.02}, OrderCase{"rk4", 4, 60, 0.1, 0.02},
                             OrderCase{"dopri5", 5, 30, 0.02, 0.3}}) {
    std::vector<double> hs, errs;
    for (int k = 0; k < 4; ++k) {
      const int n = c.n0 << k;
      const Vec y = integrate_fixed(c.method, *f, y0, T, n);
      hs.push_back(T / n);
      errs.push_back((y - ref).lpNorm<Eigen::Infinity>());
    }
    const double p = fitted_slope(hs, errs);
    std::printf("  pendulum %-7s errors %.3e %.3e %.3e %.3e slope %.4f\n", c.method, errs[0], errs[1], errs[2],
                errs[3], p);
    expect_order(p, c.nominal, c.below, c.above, c.method);
    EXPECT_GT(errs[3], 1e-12) << c.method << ": finest error is in round-off, the fit would be meaningless";
  }
}

// One step from the exact state: the dense output's error at an interior point is O(h^5) (4th-order
// continuous extension), one order better than a cubic Hermite interpolant.
TEST(Dopri5, DenseOutputLocalOrder) {
  HopfOscillator sys(1.7, 0.5, -0.4);
  const double t0 = 0.35;
  std::vector<double> hs, errs;
  for (int k = 0; k < 4; ++k) {
    const double h = 0.2 / (1 << k);
    DormandPrince5 integ;
    IntegratorSettings s;
    s.dt = h;
    s.fixed_step = true;
    integ.initialize(sys, t0, sys.exact(t0), s);
    ASSERT_TRUE(integ.step(t0 + h));
    Vec y(2);
    double e = 0;
    for (double theta : {0.23, 0.5, 0.81}) {
      integ.interpolate(t0 + theta * h, y);
      e = std::max(e, (y - sys.exact(t0 + theta * h)).lpNorm<Eigen::Infinity>());
    }
    // The interpolant reproduces both end points.
    integ.interpolate(t0, y);
    EXPECT_LT((y - sys.exact(t0)).lpNorm<Eigen::Infinity>(), 1e-15);
    integ.interpolate(t0 + h, y);
    EXPECT_LT((y - integ.state()).lpNorm<Eigen::Infinity>(), 1e-15);
    hs.push_back(h);
    errs.push_back(e);
  }
  const double p = fitted_slope(hs, errs);
  std::printf("  dense output local errors %.3e %.3e %.3e %.3e slope %.4f\n", errs[0], errs[1], errs[2], errs[3], p);
  expect_order(p, 5, 0.15, 0.02, "dopri5 dense output");  // measured 4.9183
}

// Tolerance proportionality: the global error against the closed form stays below C * tol over four
// decades of tolerance, and falls by at least 10^3 over them.
TEST(Dopri5, GlobalErrorScalesWithTolerance) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  std::vector<double> errs;
  for (double tol : {1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12}) {
    auto integ = integrator_registry().get("dopri5").make();
    IntegratorSettings s;
    s.rtol = tol;
    s.atol = tol;
    s.dt = 0;  // automatic initial step
    SimulationSettings sim;
    sim.t_end = 10;
    sim.output_every = 0.05;
    double err = 0;
    auto r = simulate(sys, *integ, sys.initial(), sim, s,
                      [&](double t, const Vec& y) { err = std::max(err, (y - sys.exact(t)).lpNorm<Eigen::Infinity>()); });
    ASSERT_EQ(r.status, "ok");
    std::printf("  tol %.0e: max error %.3e (%.2f tol), steps %ld, rejected %ld\n", tol, err, err / tol, r.stats.steps,
                r.stats.rejected_steps);
    EXPECT_LT(err, 15.0 * tol);
    errs.push_back(err);
  }
  EXPECT_LT(errs.back(), 1e-3 * errs.front());
}

// Dense output at times that are not step ends matches the closed form to within the tolerance. Apart
// from the global error, the interpolant is compared with the exact solution through the step's start:
// that local interpolation error is at the tolerance level and far below a cubic Hermite interpolant's.
TEST(Dopri5, DenseOutputMatchesExactSolutionBetweenSteps) {
  const double w = 3.1;
  HopfOscillator sys(w, 1.6, 1.0);
  const double tol = 1e-6;
  DormandPrince5 integ;
  IntegratorSettings s;
  s.rtol = tol;
  s.atol = tol;
  s.dt = 0;
  integ.initialize(sys, 0.0, sys.initial(), s);
  const double T = 6;
  Vec y(2), y_prev = sys.initial(), f_prev(2), f(2), y_herm(2);
  double err_global = 0, err_ends = 0, err_local = 0, err_local_hermite = 0, h_max = 0;
  int interior = 0;
  while (integ.time() < T) {
    const double t_prev = integ.time();
    if (!integ.step(T)) continue;
    const double h = integ.time() - t_prev;
    h_max = std::max(h_max, h);
    err_ends = std::max(err_ends, (integ.state() - sys.exact(integ.time())).lpNorm<Eigen::Infinity>());
    // The exact trajectory through (t_prev, y_prev) (the system is autonomous).
    const HopfOscillator local(w, y_prev.norm(), std::atan2(y_prev[1], y_prev[0]));
    sys.rhs(t_prev, y_prev, f_prev);
    sys.rhs(integ.time(), integ.state(), f);
    for (double theta : {0.17, 0.5, 0.76}) {
      const double t = t_prev + theta * h;
      integ.interpolate(t, y);
      err_global = std::max(err_global, (y - sys.exact(t)).lpNorm<Eigen::Infinity>());
      err_local = std::max(err_local, (y - local.exact(t - t_prev)).lpNorm<Eigen::Infinity>());
      hermite_interpolate(t_prev, y_prev, f_prev, integ.time(), integ.state(), f, t, y_herm);
      err_local_hermite = std::max(err_local_hermite, (y_herm - local.exact(t - t_prev)).lpNorm<Eigen::Infinity>());
      ++interior;
    }
    y_prev = integ.state();
  }
  std::printf("  dense output: %d interior points, largest step %.3f, global error %.3e (step ends %.3e), "
              "local interpolation error %.3e (cubic Hermite %.3e)\n",
              interior, h_max, err_global, err_ends, err_local, err_local_hermite);
  EXPECT_GT(h_max, 0.05);
  EXPECT_LT(err_global, 15 * tol);
  EXPECT_LT(err_global, 1.1 * err_ends);
  EXPECT_LT(err_local, tol * (1 + 1.6));  // the error scale sc = atol + rtol |y|, |y| <= 1.6
  EXPECT_GT(err_local_hermite, 10 * err_local);
}

// Sharp transients: steps grow along the flat stretches and are rejected at each front; the rejections
// are counted, the statistics are consistent with FSAL (6 evaluations per attempted step, plus the initial
// derivative and the initial-step heuristic), and the accuracy is still met.
TEST(Dopri5, RejectionsOnSharpTransientAreCounted) {
  for (double a : {10.0, 30.0, 100.0}) {
    for (double tol : {1e-5, 1e-7, 1e-9}) {
      SwitchingFronts sys(a, 1.3, 0.6);
      DormandPrince5 integ;
      IntegratorSettings s;
      s.rtol = tol;
      s.atol = tol;
      s.dt = 0;
      Vec y0(1);
      y0 << 0.6;
      integ.initialize(sys, 0.0, y0, s);
      const double T = 5.5;
      long rejected_seen = 0;
      double err = 0;
      while (integ.time() < T) {
        if (integ.step(T))
          err = std::max(err, std::abs(integ.state()[0] - sys.exact(integ.time())));
        else
          ++rejected_seen;
      }
      const auto& st = integ.statistics();
      std::printf("  fronts a %g tol %g: steps %ld, rejected %ld, rhs %ld, max error %.3e\n", a, tol, st.steps,
                  st.rejected_steps, st.rhs_evals, err);
      EXPECT_GE(st.rejected_steps, 5) << "at least one rejection per front (t = 1..5)";
      EXPECT_EQ(st.rejected_steps, rejected_seen);
      EXPECT_EQ(st.rhs_evals, 2 + 6 * (st.steps + st.rejected_steps));
      EXPECT_LT(err, 15 * tol);
    }
  }
}

// A deliberately huge first step is rejected, shrunk, and never re-grown on the step after a rejection.
TEST(Dopri5, TooLargeInitialStepIsRejectedAndShrunk) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  DormandPrince5 integ;
  IntegratorSettings s;
  s.dt = 5.0;
  s.rtol = s.atol = 1e-8;
  integ.initialize(sys, 0.0, sys.initial(), s);
  int rejections = 0;
  while (!integ.step(100.0)) {
    ++rejections;
    ASSERT_LT(rejections, 30);
  }
  EXPECT_GE(rejections, 1);
  const double h_taken = integ.time();
  EXPECT_LE(integ.current_step(), h_taken);  // no growth right after a rejection
  EXPECT_LE(integ.last_error(), 1.0);
  EXPECT_EQ(integ.statistics().rejected_steps, rejections);
}

TEST(Dopri5, NeverStepsPastTheLimit) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  DormandPrince5 integ;
  IntegratorSettings s;
  s.dt = 0.3;
  s.rtol = s.atol = 1e-3;
  integ.initialize(sys, 0.0, sys.initial(), s);
  for (double limit : {0.01, 0.0137, 0.5, 0.5000001, 2.0}) {
    while (integ.time() < limit) {
      integ.step(limit);
      ASSERT_LE(integ.time(), limit);
    }
    EXPECT_EQ(integ.time(), limit);
  }
}

// reset_state recomputes the FSAL derivative: after a jump in the state the next step integrates from the
// new state (a stale derivative would leave an O(h) error).
TEST(Dopri5, ResetStateRecomputesDerivative) {
  HopfOscillator sys(2.3, 0.7, 0.3);
  DormandPrince5 integ;
  IntegratorSettings s;
  s.dt = 0.05;
  s.fixed_step = true;
  integ.initialize(sys, 0.0, sys.initial(), s);
  ASSERT_TRUE(integ.step(1.0));
  HopfOscillator moved(2.3, 1.3, -0.9);  // a different trajectory through the new state at t = 0.05
  Vec y_new = moved.exact(0.05);
  integ.reset_state(y_new);
  ASSERT_TRUE(integ.step(1.0));
  EXPECT_LT((integ.state() - moved.exact(0.1)).lpNorm<Eigen::Infinity>(), 1e-7);
}

// No heap allocation per step (malloc and operator new are counted, Eigen included).
TEST(Integrators, NoHeapAllocationPerStep) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  for (const char* name : {"dopri5", "rk4", "euler", "dop853", "vern7", "vern9"}) {
    for (bool fixed : {false, true}) {
      auto integ = integrator_registry().get(name).make();
      IntegratorSettings s;
      s.dt = 1e-3;
      s.rtol = s.atol = 1e-10;
      s.fixed_step = fixed;
      integ->initialize(sys, 0.0, sys.initial(), s);
      Vec y(2), y_reset = sys.initial();
      long accepted = 0;
      clm::testing::AllocationScope scope;
      for (int i = 0; i < 100; ++i) {
        if (integ->step(1e3)) ++accepted;
        integ->interpolate(integ->time() - 0.5 * 1e-4, y);
      }
      integ->reset_state(y);
      const std::size_t allocations = scope.count();
      EXPECT_EQ(allocations, 0u) << name << (fixed ? " fixed" : " adaptive");
      EXPECT_GT(accepted, 50) << name;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The common interface (core/integrator.hpp): settings validated once in initialize, the error-estimate
// order, the shared weighted RMS norm, and the clipping of step() to t_limit.

TEST(IntegratorBase, SettingsAreValidatedAtInitialize) {
  HopfOscillator sys(2.3, 0.4, 0.3);
  const Vec y0 = sys.initial();
  auto refuses = [&](const char* name, auto tweak, const char* what) {
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    tweak(s);
    try {
      integ->initialize(sys, 0.0, y0, s);
      ADD_FAILURE() << name << ": accepted " << what;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind(std::string(name) + ": ", 0), 0u) << msg;
      std::printf("  %-17s %-28s -> %s\n", name, what, msg.c_str());
    }
  };
  for (const char* name : {"euler", "rk4", "implicit_midpoint"}) {
    refuses(name, [](IntegratorSettings& s) { s.dt = 0; }, "dt = 0");
    refuses(name, [](IntegratorSettings& s) { s.dt = -1e-3; }, "dt < 0");
    refuses(name, [](IntegratorSettings& s) { s.dt = std::nan(""); }, "dt = nan");
  }
  for (const char* name : {"dopri5", "radau5"})
    refuses(name, [](IntegratorSettings& s) { s.fixed_step = true; s.dt = 0; }, "fixed_step with dt = 0");
  refuses("dopri5", [](IntegratorSettings& s) { s.rtol = -1; }, "rtol < 0");
  refuses("dopri5", [](IntegratorSettings& s) { s.rtol = s.atol = 0; }, "rtol = atol = 0");
  refuses("radau5", [](IntegratorSettings& s) { s.rtol = 0; }, "rtol = 0");
  refuses("radau5", [](IntegratorSettings& s) { s.atol = -1; }, "atol < 0");
  refuses("implicit_midpoint", [](IntegratorSettings& s) { s.rtol = s.atol = 0; }, "rtol = atol = 0");
  refuses("radau5", [](IntegratorSettings& s) { s.jacobian = "numeric"; }, "jacobian = numeric");
  {
    auto integ = integrator_registry().get("rk4").make();
    EXPECT_THROW(integ->initialize(sys, 0.0, Vec::Zero(3), IntegratorSettings{}), InputError) << "wrong y0 size";
  }
  // What a method does not read is not checked: dopri5 with constant steps ignores the tolerances, and
  // an adaptive method's dt <= 0 asks for an automatic initial step.
  for (const char* name : {"dopri5", "radau5"}) {
    auto integ = integrator_registry().get(name).make();
    IntegratorSettings s;
    s.dt = 0;
    s.rtol = s.atol = 1e-6;
    EXPECT_NO_THROW(integ->initialize(sys, 0.0, y0, s)) << name;
    EXPECT_GT(integ->current_step(), 0) << name;
  }
  auto dp = integrator_registry().get("dopri5").make();
  IntegratorSettings s;
  s.fixed_step = true;
  s.rtol = -1;
  EXPECT_NO_THROW(dp->initialize(sys, 0.0, y0, s));
}

TEST(IntegratorBase, ErrorEstimateOrderAndStatistics) {
  const std::map<std::string, int> expected = {
      {"euler", 0}, {"rk4", 0}, {"implicit_midpoint", 0}, {"dopri5", 4}, {"radau5", 3}};
  HopfOscillator sys(2.3, 0.4, 0.3);
  for (const auto& [name, order] : expected) {
    auto integ = integrator_registry().get(name).make();
    EXPECT_EQ(integ->error_estimate_order(), order) << name;
    if (order > 0) EXPECT_LT(order, integ->order()) << name << ": the estimate is of the embedded lower-order method";
    // Statistics are per run: a second initialize starts from zero, with t and y rebound.
    IntegratorSettings s;
    s.dt = 0.01;
    s.rtol = s.atol = 1e-8;
    integ->initialize(sys, 0.0, sys.initial(), s);
    while (integ->time() < 0.5) integ->step(0.5);
    EXPECT_GT(integ->statistics().steps, 0) << name;
    integ->initialize(sys, 1.0, sys.exact(1.0), s);
    EXPECT_EQ(integ->time(), 1.0) << name;
    EXPECT_EQ(integ->state(), sys.exact(1.0)) << name;
    EXPECT_EQ(integ->statistics().steps, 0) << name;
    EXPECT_EQ(integ->statistics().rejected_steps, 0) << name;
    EXPECT_GE(integ->statistics().rhs_evals, 1) << name;  // f(t0, y0)
    EXPECT_EQ(integ->constant_steps(), name == "euler" || name == "rk4" || name == "implicit_midpoint") << name;
    // step() with nothing left before t_limit is a no-op.
    const auto before = integ->statistics();
    EXPECT_TRUE(integ->step(1.0));
    EXPECT_TRUE(integ->step(0.5));
    EXPECT_EQ(integ->time(), 1.0) << name;
    EXPECT_EQ(integ->statistics().steps, before.steps) << name;
    EXPECT_EQ(integ->statistics().rhs_evals, before.rhs_evals) << name;
  }
}

TEST(IntegratorBase, WeightedRmsNorm) {
  Vec err(3), y_old(3), y_new(3);
  err << 1e-6, -2e-6, 0;
  y_old << 1, -3, 0;
  y_new << 2, 1, 0;
  // sc = atol + rtol max(|y_old|, |y_new|) = (2e-3 + 1e-6, 3e-3 + 1e-6, 1e-6) with rtol 1e-3, atol 1e-6.
  const double r0 = 1e-6 / (2e-3 + 1e-6), r1 = 2e-6 / (3e-3 + 1e-6);
  EXPECT_DOUBLE_EQ(Integrator::weighted_rms_norm(err, y_old, y_new, 1e-3, 1e-6), std::sqrt((r0 * r0 + r1 * r1) / 3));
  Vec sc(3);
  sc << 2e-3 + 1e-6, 3e-3 + 1e-6, 1e-6;
  EXPECT_DOUBLE_EQ(Integrator::weighted_rms_norm(err, sc), std::sqrt((r0 * r0 + r1 * r1) / 3));
  // A zero weight (atol = 0, y = 0) with a zero error is no error, not 0/0.
  EXPECT_TRUE(std::isfinite(Integrator::weighted_rms_norm(err, y_old, y_new, 1e-3, 0.0)));
  EXPECT_EQ(Integrator::weighted_rms_norm(Vec::Zero(0), Vec::Zero(0), Vec::Zero(0), 1e-3, 1e-6), 0.0);
}
