// Integrators: convergence orders by step halving (closed-form ODE and a mechanism), the dopri5 error
// control, dense output and step statistics, and the absence of heap allocation per step.
#include <gtest/gtest.h>

#include "core/loglog_fit.hpp"

#include <cmath>
#include <cstdio>
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
};

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
  std::printf("  hopf %-7s n0 = %4d errors %.3e %.3e %.3e %.3e slope %.3f\n", c.method, c.n0, errs[0], errs[1],
              errs[2], errs[3], p);
  return p;
}

}  // namespace

TEST(IntegratorOrder, StepHalvingOnHopfOscillator) {
  for (const OrderCase& c : {OrderCase{"euler", 1, 400}, OrderCase{"rk4", 4, 40}, OrderCase{"dopri5", 5, 20}})
    EXPECT_NEAR(measured_order_hopf(c), c.nominal, 0.3) << c.method;
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
  for (const OrderCase& c : {OrderCase{"euler", 1, 600}, OrderCase{"rk4", 4, 60}, OrderCase{"dopri5", 5, 30}}) {
    std::vector<double> hs, errs;
    for (int k = 0; k < 4; ++k) {
      const int n = c.n0 << k;
      const Vec y = integrate_fixed(c.method, *f, y0, T, n);
      hs.push_back(T / n);
      errs.push_back((y - ref).lpNorm<Eigen::Infinity>());
    }
    const double p = fitted_slope(hs, errs);
    std::printf("  pendulum %-7s errors %.3e %.3e %.3e %.3e slope %.3f\n", c.method, errs[0], errs[1], errs[2],
                errs[3], p);
    EXPECT_NEAR(p, c.nominal, 0.3) << c.method;
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
  std::printf("  dense output local errors %.3e %.3e %.3e %.3e slope %.3f\n", errs[0], errs[1], errs[2], errs[3], p);
  EXPECT_NEAR(p, 5.0, 0.3);
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
  for (const char* name : {"dopri5", "rk4", "euler"}) {
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
