// Time-dependent problems beyond kkt and schur (issue 13 item 0): the energy balance E(t) - E(0) - W(t) of
// core/energy_balance.hpp (at the integrator's error level, its convergence order, no allocation per step,
// absent for time-independent problems), nullspace against kkt, and penalty's O(1/N) limit on a moving
// constraint.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "core/energy_balance.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "runs/runner.hpp"
#include "recorded_run.hpp"

using namespace clm;

namespace {

RunSpec spec_for(const std::string& problem, const std::string& formulation, const std::string& integrator,
                 double t_end) {
  RunSpec s;
  s.run_id = problem + "_" + formulation + "_" + integrator;
  s.problem = problem;
  s.formulation = formulation;
  s.integrator = integrator;
  s.t_end = t_end;
  s.rtol = 1e-11;
  s.atol = 1e-13;
  s.output_every = 0.05;
  for (const auto& p : problem_registry().get(problem).parameters) s.params[p.name] = p.default_value;
  return s;
}

RunRecord run_spec(const RunSpec& spec) {
  std::ostringstream log;
  PreparedRun run = prepare_run(spec, log);
  return execute_run(run, nullptr, /*keep_samples=*/true);
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

// kkt + dopri5 at rtol 1e-11: the balance closes to the integrator's error level on every time-dependent problem
// of the zoo, each doing real work: ball_on_turntable (affine constraint: the table's work, V = 0),
// driven_pendulum (rheonomic h(q, t): the pivot's work) and car_axis (rheonomic h and springs to the moving road
// point, V(q, t): both terms). "Error level": |E - E0 - W| is compared with the error of E itself, against the
// same run at rtol 1e-13. Measured: max|E - E0 - W| / max|E - E_ref| = 1.08, 2.12, 0.65 (bound 4); relative
// max_energy_balance_residual 4.6e-12, 7.5e-12, 3.3e-10 (bounds 2e-11, 3e-11, 1e-9); exchanged max|W| / max|E| =
// 7.7e-2, 2.2e-1, 6.4e-1. A wrong
// sign or a first-order quadrature leaves an O(|W|) or O(output_every |dW/dt|) residual, orders above these.
TEST(EnergyBalance, ClosesAtTheIntegratorErrorLevel) {
  struct Case {
    const char* problem;
    double t_end;
    bool explicit_time;  // V(q, t)
    double relative_bound;
  };
  for (const Case c : {Case{"ball_on_turntable", 10.0, false, 2e-11}, Case{"driven_pendulum", 10.0, false, 3e-11},
                       Case{"car_axis", 3.0, true, 1e-9}}) {
    const RunSpec spec = spec_for(c.problem, "kkt", "dopri5", c.t_end);
    const RunRecord r = run_spec(spec);
    RunSpec tight = spec;
    tight.rtol = 1e-13;
    tight.atol = 1e-15;
    const RunRecord ref = run_spec(tight);
    ASSERT_EQ(r.status, "ok") << c.problem << ": " << r.message;
    ASSERT_EQ(ref.status, "ok") << c.problem << ": " << ref.message;
    ASSERT_TRUE(r.energy_balance) << c.problem;
    ASSERT_EQ(r.energy_balance_residual.size(), r.samples()) << c.problem;
    ASSERT_EQ(ref.energy.size(), r.energy.size()) << c.problem;
    double e_max = 0, e_error = 0;
    for (size_t k = 0; k < r.energy.size(); ++k) {
      e_max = std::max(e_max, std::abs(r.energy[k]));
      e_error = std::max(e_error, std::abs(r.energy[k] - ref.energy[k]));
    }
    const double residual = max_abs(r.energy_balance_residual);
    std::printf("[ balance  ] %-18s max|W_c| %.3e max|W_t| %.3e max|W_f| %.3e max|E| %.3e max|E - E0 - W| %.3e "
                "(E's own error %.3e, ratio %.2f) relative %.3e\n",
                c.problem, max_abs(r.work_constraints), max_abs(r.work_explicit_time), max_abs(r.work_forces), e_max,
                residual, e_error, residual / e_error, r.summary.max_energy_balance_residual);
    EXPECT_GT(max_abs(r.work_constraints), 0.05 * e_max) << c.problem;  // the constraint moves and works
    if (c.explicit_time) EXPECT_GT(max_abs(r.work_explicit_time), 0.05 * e_max) << c.problem;
    else EXPECT_EQ(max_abs(r.work_explicit_time), 0.0) << c.problem;
    EXPECT_EQ(max_abs(r.work_forces), 0.0) << c.problem;  // none of them has a generalized force
    EXPECT_EQ(r.energy_balance_residual.front(), 0.0);
    EXPECT_LT(residual, 4 * e_error) << c.problem;
    EXPECT_LT(r.summary.max_energy_balance_residual, c.relative_bound) << c.problem;
    // The balance is not 0 = 0: E changes by the work done.
    double e_change = 0;
    for (double e : r.energy) e_change = std::max(e_change, std::abs(e - r.energy.front()));
    EXPECT_GT(e_change, 0.05 * e_max) << c.problem;
  }
}

// The work is a quadrature on the integrator's interpolant, so the residual converges at the method's order:
// rk4 with constant steps h, h/2, h/4 on driven_pendulum (kkt, t_end = 2). Measured |E - E0 - W| at t_end:
// 2.38e-8, 1.54e-9, 9.79e-11, orders 3.95 and 3.98. Band 0.1 on the order.
TEST(EnergyBalance, ConvergesAtTheMethodsOrderWithRk4) {
  std::vector<double> hs, residual;
  for (double dt : {0.01, 0.005, 0.0025}) {
    RunSpec s = spec_for("driven_pendulum", "kkt", "rk4", 2.0);
    s.dt = dt;
    s.output_every = 0.1;
    const RunRecord r = run_spec(s);
    ASSERT_EQ(r.status, "ok") << r.message;
    hs.push_back(dt);
    residual.push_back(std::abs(r.energy_balance_residual.back()));
  }
  std::printf("[ balance  ] rk4 driven_pendulum |E - E0 - W|(2 s): h=0.01 %.3e h=0.005 %.3e h=0.0025 %.3e\n",
              residual[0], residual[1], residual[2]);
  for (size_t i = 0; i + 1 < hs.size(); ++i) {
    const double order = std::log2(residual[i] / residual[i + 1]);
    EXPECT_NEAR(order, 4.0, 0.1) << "h = " << hs[i];
  }
}

// A problem without explicit time dependence records no balance: no datasets, NaN ("-") in the summary.
TEST(EnergyBalance, AbsentForTimeIndependentProblems) {
  const RunRecord r = run_spec(spec_for("pendulum_cartesian", "kkt", "dopri5", 1.0));
  ASSERT_EQ(r.status, "ok") << r.message;
  EXPECT_FALSE(r.energy_balance);
  EXPECT_TRUE(r.work_constraints.empty());
  EXPECT_TRUE(r.energy_balance_residual.empty());
  EXPECT_TRUE(std::isnan(r.summary.max_energy_balance_residual));
}

// The balance's quadrature (four observations per step) allocates nothing per step: a ten times longer run,
// the same count, for kkt, schur, nullspace and penalty on both kinds of moving constraint.
TEST(EnergyBalance, QuadratureDoesNotAllocate) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  for (const char* problem : {"driven_pendulum", "ball_on_turntable"}) {
    auto model = make_model(problem);
    Vec q0, qd0, y0;
    model->default_initial(q0, qd0);
    for (const char* formulation : {"kkt", "schur", "nullspace", "penalty"}) {
      IntegratorSettings s;
      s.rtol = 1e-8;
      s.atol = 1e-10;
      std::size_t counts[2];
      for (int i = 0; i < 2; ++i) {
        // A fresh formulation each time: its buffers sized on the first observation count in both runs alike.
        auto f = formulation_registry().get(formulation).make(model, {});
        f->initial_state(q0, qd0, y0);
        auto integ = integrator_registry().get("dopri5").make();
        SimulationSettings sim;
        sim.t_end = i == 0 ? 0.5 : 5.0;
        sim.output_every = 0.05;
        EnergyBalance balance(*f, *integ);
        double sink = 0;
        clm::testing::AllocationScope scope;
        const SimulationResult r = simulate(
            *f, *integ, y0, sim, s,
            [&](double t, const Vec& y) {
              if (t == 0) balance.start(t, y);
              sink += balance.at(t).total();
            },
            {}, [&](double t0, double t1) { balance.step(t0, t1); });
        counts[i] = scope.count();
        EXPECT_EQ(r.status, "ok") << problem << " " << formulation << ": " << r.message;
      }
      EXPECT_EQ(counts[0], counts[1]) << problem << " " << formulation;
    }
  }
}

// nullspace on moving constraints: qd = S v + u with the partition's particular velocity u (A u = -b); the
// same motion as kkt. Measured max |q_nullspace - q_kkt|_inf over 10 s at rtol 1e-12: driven_pendulum 1.7e-12,
// ball_on_turntable 8.7e-14, car_axis (3 s) 1.4e-12; lambda 1.9e-11, 1.4e-14, 7.4e-14; the velocity constraint
// |A qd + b| at most 1.1e-16 (it holds by construction).
TEST(TimeDependentNullspace, MatchesKkt) {
  for (const auto& [problem, t_end] : {std::pair{"driven_pendulum", 10.0}, std::pair{"ball_on_turntable", 10.0},
                                       std::pair{"car_axis", 3.0}}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    clm::testing::RunSettings rs;
    rs.t_end = t_end;
    rs.output_every = 0.1;
    const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    const auto ns = clm::testing::record_run(model, "nullspace", q0, qd0, rs);
    ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
    ASSERT_EQ(ns.result.status, "ok") << ns.result.message;
    const double dq = clm::testing::max_q_difference(kkt, ns);
    double dv = 0, dlambda = 0;
    for (size_t k = 0; k < ns.obs.size(); ++k) {
      dv = std::max(dv, ns.obs[k].drift_velocity);
      dlambda = std::max(dlambda, Vec(ns.obs[k].lambda - kkt.obs[k].lambda).lpNorm<Eigen::Infinity>());
    }
    std::printf("[ nullspace] %-18s max|dq| %.2e max|dlambda| %.2e max|A qd + b| %.2e\n", problem, dq, dlambda, dv);
    EXPECT_LT(dq, 1e-11) << problem;
    EXPECT_LT(dlambda, 1e-10) << problem;
    EXPECT_LT(dv, 1e-14) << problem;
  }
}

// Penalty on a moving constraint (R_N = N/2 |A qd + b|^2) tends to the constrained motion with error O(1/N), as
// Kozlov's Theorem 1 for fixed ones: ball_on_turntable, 5 s, N = 1e2 .. 1e5, against kkt at rtol 1e-12.
// Measured errors 4.58e-4, 4.59e-5, 4.59e-6, 4.58e-7, slope -1.0000; the band is the Kozlov tests'
// (tests/limit_formulation_test.cpp).
TEST(TimeDependentPenalty, ConvergesToKktLikeOneOverN) {
  auto model = make_model("ball_on_turntable");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 5.0;
  rs.output_every = 0.1;
  const auto ref = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(ref.result.status, "ok") << ref.result.message;
  std::vector<double> Ns, errors;
  rs.rtol = 1e-10;
  rs.atol = 1e-12;
  rs.integrator = "radau5";  // stiff: an eigenvalue near -N A M^-1 A^T
  for (double N : {1e2, 1e3, 1e4, 1e5}) {
    rs.options.N = N;
    const auto r = clm::testing::record_run(model, "penalty", q0, qd0, rs);
    ASSERT_EQ(r.result.status, "ok") << r.result.message;
    double e = 0;
    for (size_t k = 0; k < r.obs.size(); ++k) e = std::max(e, (r.obs[k].q - ref.obs[k].q).norm());
    Ns.push_back(N);
    errors.push_back(e);
  }
  const LogLogFit fit = fit_loglog(Ns, errors);
  std::printf("[ penalty  ] ball_on_turntable max|q_N - q_kkt|: N=1e2 %.2e N=1e3 %.2e N=1e4 %.2e N=1e5 %.2e slope %.4f\n",
              errors[0], errors[1], errors[2], errors[3], fit.slope);
  EXPECT_NEAR(fit.slope, -1.0, 0.01);
}
