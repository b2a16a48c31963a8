// dla and nh_rattle (integrators/dla.hpp, integrators/nh_rattle.hpp): measured orders by step halving
// against closed forms (the Chaplygin sleigh, the rolling disk) and against kkt + dopri5 on a problem with
// q-dependent M (slider_crank, holonomic constraints run as Pfaffian ones); the discrete constraint of dla
// and the velocity constraint of nh_rattle at every step; the rolling disk's invariants to round-off under
// dla; refusals in one line; no heap allocation per step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "runs/runner.hpp"
#include "integrators/midpoint_discrete_mechanics.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

struct StepRun {
  Vec q, qd;
  double max_discrete = 0, max_velocity = 0;
  StepStatistics stats;
};

// Constant steps T / steps of `method` on kkt's system from (q0, qd0); `each` sees every accepted state.
StepRun run_steps(const std::shared_ptr<const Model>& model, const std::string& method, const Vec& q0,
                  const Vec& qd0, double T, int steps,
                  const std::function<void(double, const Vec&)>& each = nullptr) {
  auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
  auto integ = integrator_registry().get(method).make();
  Vec y0;
  f->initial_state(q0, qd0, y0);
  IntegratorSettings s;
  s.dt = T / steps;
  integ->initialize(*f, 0.0, y0, s);
  while (integ->time() < T) {
    EXPECT_TRUE(integ->step(T)) << method << " rejected a step at t = " << integ->time();
    if (each) each(integ->time(), integ->state());
  }
  const int n = model->n();
  StepRun r;
  r.q = integ->state().head(n);
  r.qd = integ->state().tail(n);
  const auto& mech = dynamic_cast<const MidpointDiscreteMechanics&>(*integ);
  r.max_discrete = mech.max_discrete_residual();
  r.max_velocity = mech.max_velocity_residual();
  r.stats = integ->statistics();
  EXPECT_EQ(r.stats.steps, steps);
  EXPECT_EQ(r.stats.rejected_steps, 0);
  return r;
}

double error_of(const StepRun& r, const Vec& q, const Vec& qd) {
  return std::max((r.q - q).lpNorm<Eigen::Infinity>(), (r.qd - qd).lpNorm<Eigen::Infinity>());
}

// Errors at T of four runs with n0, 2 n0, 4 n0, 8 n0 steps against (q_ref, qd_ref); prints them.
std::vector<double> halving_errors(const std::shared_ptr<const Model>& model, const std::string& method, double T,
                                   int n0, const Vec& q_ref, const Vec& qd_ref, std::vector<double>& hs) {
  const std::string problem = model->name();
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  std::vector<double> errs;
  hs.clear();
  for (int k = 0; k < 4; ++k) {
    const int n = n0 << k;
    errs.push_back(error_of(run_steps(model, method, q0, qd0, T, n), q_ref, qd_ref));
    hs.push_back(T / n);
  }
  std::printf("  %-16s %-9s errors %.3e %.3e %.3e %.3e  slope %.4f\n", problem.c_str(), method.c_str(), errs[0],
              errs[1], errs[2], errs[3], fit_loglog(hs, errs).slope);
  return errs;
}

void closed_form_at(const std::string& problem, double T, Vec& q, Vec& qd) {
  auto model = make_model(problem);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  q.resize(model->n());
  qd.resize(model->n());
  ASSERT_TRUE(model->closed_form(T, q0, qd0, q, qd));
}

}  // namespace

// Order 2 against the closed forms of the sleigh (T = 3, 20 to 160 steps) and the rolling disk (T = 2).
TEST(Dla, OrderTwoAgainstClosedForms) {
  struct Case {
    const char* problem;
    const char* method;
    double T;
    int n0;
  };
  for (const Case c : {Case{"chaplygin_sleigh", "dla", 3.0, 20}, Case{"chaplygin_sleigh", "nh_rattle", 3.0, 20},
                       Case{"rolling_disk", "dla", 2.0, 20}, Case{"rolling_disk", "nh_rattle", 2.0, 20}}) {
    Vec q, qd;
    closed_form_at(c.problem, c.T, q, qd);
    std::vector<double> hs;
    const auto errs = halving_errors(make_model(c.problem), c.method, c.T, c.n0, q, qd, hs);
    // Measured slopes 2.000 and 1.998 (sleigh: dla, nh_rattle), 2.000 and 2.000 (disk).
    const double p = fit_loglog(hs, errs).slope;
    EXPECT_NEAR(p, 2.0, 0.02) << c.problem << " " << c.method;
  }
}

// q-dependent M, two constraints and a generalized force (crank torque tau = 0.5, slider force f = -1, as
// midpoint discrete forcing): slider_crank (holonomic, run as Pfaffian) against kkt + dopri5 at rtol 1e-13:
// order 2, and the ratio of successive errors near 4. The same for closed_chain (a dense q-dependent M).
TEST(Dla, OrderTwoOnHolonomicMechanismsAgainstKkt) {
  struct Case {
    std::shared_ptr<const Model> model;
    int n0;
    double slope_band, ratio_band;
  };
  // Measured slopes 2.005 (dla), 2.017 (nh_rattle), ratios 4.03 4.01 4.00 and 4.10 4.04 4.01 (slider_crank);
  // closed_chain (80 to 640 steps: at 40 the error is O(1)): slopes 1.998 and 1.999, ratios 3.96 4.01 4.01
  // (dla) and 3.97 4.02 4.01 (nh_rattle).
  for (const Case& c : {Case{make_model("slider_crank", {{"tau", 0.5}, {"f", -1.0}}), 40, 0.05, 0.25},
                        Case{make_model("closed_chain"), 80, 0.05, 0.25}}) {
    Vec q0, qd0;
    c.model->default_initial(q0, qd0);
    const double T = 1.0;
    clm::testing::RunSettings rs;
    rs.integrator = "dopri5";
    rs.t_end = T;
    rs.output_every = T;
    rs.rtol = 1e-13;
    rs.atol = 1e-15;
    const auto ref = clm::testing::record_run(c.model, "kkt", q0, qd0, rs);
    ASSERT_EQ(ref.result.status, "ok");
    const Vec q_ref = ref.obs.back().q, qd_ref = ref.obs.back().qd;
    for (const char* method : {"dla", "nh_rattle"}) {
      std::vector<double> hs;
      const auto errs = halving_errors(c.model, method, T, c.n0, q_ref, qd_ref, hs);
      EXPECT_NEAR(fit_loglog(hs, errs).slope, 2.0, c.slope_band) << c.model->name() << " " << method;
      for (int k = 1; k < 4; ++k) {
        std::printf("    halving %d: ratio %.3f\n", k, errs[k - 1] / errs[k]);
        EXPECT_NEAR(errs[k - 1] / errs[k], 4.0, c.ratio_band) << c.model->name() << " " << method << " halving " << k;
      }
    }
  }
}

// dla's discrete constraint A(q_{k+1/2}) (q_{k+1} - q_k) = 0 at every step; both methods keep A(q_k) qd_k = 0.
TEST(Dla, ConstraintsHoldAtEveryStep) {
  for (const char* problem : {"chaplygin_sleigh", "rolling_disk"}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    for (const char* method : {"dla", "nh_rattle"}) {
      const StepRun r = run_steps(model, method, q0, qd0, 20.0, 2000);
      std::printf("  %-16s %-9s max |A(q_k+1/2) dq| %.2e, max |A(q_k) qd_k| %.2e, %ld Newton its, %ld Jacobians\n",
                  problem, method, r.max_discrete, r.max_velocity, r.stats.newton_iterations,
                  r.stats.jacobian_evals);
      // Measured: dla's discrete residual 2.6e-18 (sleigh), 1.7e-18 (disk), where nh_rattle, which does not
      // impose it, has 2.1e-5 and 1.3e-7; |A qd| 1.8e-16 to 2.2e-16 for both. The bar is 1e-12.
      if (std::string(method) == "dla") {
        EXPECT_LE(r.max_discrete, 1e-12) << problem;
      }
      EXPECT_LE(r.max_velocity, 1e-12) << problem << " " << method;
    }
  }
}

// The vertical rolling disk under dla: energy and the two angular velocities (thetad, phid: q = (x, y,
// theta, phi), problems/rolling_disk.hpp) are those of the initial state to round-off at every step.
TEST(Dla, RollingDiskInvariantsToRoundOff) {
  auto model = make_model("rolling_disk");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  model->evaluate(0, q0, qd0, kEnergy, *ws, terms);
  const double e0 = terms.energy();
  double de = 0, dth = 0, dphi = 0;
  run_steps(model, "dla", q0, qd0, 50.0, 2000, [&](double t, const Vec& y) {
    const Vec q = y.head(4), qd = y.tail(4);
    model->evaluate(t, q, qd, kEnergy, *ws, terms);
    de = std::max(de, std::abs(terms.energy() - e0));
    dth = std::max(dth, std::abs(qd[2] - qd0[2]));
    dphi = std::max(dphi, std::abs(qd[3] - qd0[3]));
  });
  std::printf("  rolling_disk dla 2000 steps: max |dE| %.2e, |d thetad| %.2e, |d phid| %.2e\n", de, dth, dphi);
  // Measured 7.3e-14, 9.7e-14 and 0: the round-off of 2000 steps (Newton runs to ~8 eps |dq| per step, a
  // random walk of sqrt(2000) such steps); E ~ 0.78, thetad = 2. phid is exact (A has no phi column).
  EXPECT_LE(de, 2e-13);
  EXPECT_LE(dth, 2e-13);
  EXPECT_EQ(dphi, 0.0);
}

// Refused before the run, in one line: another formulation, coordinate projection, Baumgarte gains.
TEST(Dla, RefusalsInOneLine) {
  auto refusal = [](const std::string& integrator, const std::string& formulation, const std::string& projection,
                    double alpha) {
    RunSpec spec;
    spec.run_id = "r";
    spec.problem = "chaplygin_sleigh";
    spec.formulation = formulation;
    spec.integrator = integrator;
    spec.t_end = 1;
    spec.options.projection = projection;
    spec.options.baumgarte_alpha = alpha;
    for (const auto& p : problem_registry().get(spec.problem).parameters) spec.params[p.name] = p.default_value;
    std::ostringstream log;
    try {
      prepare_run(spec, log);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const char* method : {"dla", "nh_rattle"}) {
    const std::string schur = refusal(method, "schur", "none", 0);
    EXPECT_NE(schur.find("runs with formulation kkt"), std::string::npos) << schur;
    const std::string projected = refusal(method, "kkt", "velocity", 0);
    EXPECT_NE(projected.find("projection = velocity does not apply"), std::string::npos) << projected;
    const std::string baumgarte = refusal(method, "kkt", "none", 5);
    EXPECT_NE(baumgarte.find("Baumgarte"), std::string::npos) << baumgarte;
    for (const auto& why : {schur, projected, baumgarte}) EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    EXPECT_EQ(refusal(method, "kkt", "none", 0), "");
  }
}

// Everything is sized in initialize: a ten times longer run allocates no more.
TEST(Dla, NoAllocationPerStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  for (const char* problem : {"chaplygin_sleigh", "slider_crank"}) {
    auto model = make_model(problem);
    Vec q0, qd0, y0;
    model->default_initial(q0, qd0);
    auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.dt = 1e-2;
    for (const char* method : {"dla", "nh_rattle"}) {
      const auto counts = clm::testing::allocations_of_runs(*f, method, y0, s, 0.05, 0.5, 5.0);
      EXPECT_EQ(counts[0], counts[1]) << problem << " " << method;
    }
  }
}

// The written multiplier (step_multipliers(), what the runner writes as lambda) converges at order 2 to
// the sleigh's closed-form lambda(q, qd): max error over the steps of [0, 3].
TEST(Dla, MultiplierConverges) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  for (const char* method : {"dla", "nh_rattle"}) {
    std::vector<double> hs, errs;
    for (int k = 0; k < 4; ++k) {
      const int steps = 20 << k;
      const double T = 3.0;
      auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
      auto integ = integrator_registry().get(method).make();
      Vec y0, q(3), qd(3), lam(1);
      f->initial_state(q0, qd0, y0);
      IntegratorSettings s;
      s.dt = T / steps;
      integ->initialize(*f, 0.0, y0, s);
      double err = 0;
      while (integ->time() < T) {
        ASSERT_TRUE(integ->step(T));
        ASSERT_TRUE(model->closed_form(integ->time(), q0, qd0, q, qd));
        model->closed_form_multiplier(q, qd, lam);
        err = std::max(err, std::abs((*integ->step_multipliers())[0] - lam[0]));
      }
      hs.push_back(T / steps);
      errs.push_back(err);
    }
    const double p = fit_loglog(hs, errs).slope;
    std::printf("  sleigh %-9s lambda errors %.3e %.3e %.3e %.3e slope %.4f\n", method, errs[0], errs[1], errs[2],
                errs[3], p);
    // Measured 1.946 (dla: the first step extrapolates from lambda(t0)), 1.992 (nh_rattle).
    EXPECT_NEAR(p, 2.0, 0.15) << method;
  }
}

// nh_rattle is a two-step method in disguise (lambda_k is carried from one step to the next): its parasitic
// mode, lambda alternating in sign, follows the time-reversed flow. On the sleigh that flow is unstable at
// the rate beta c (u -> -c is the repelling end of u' = beta (c^2 - u^2)), so the mode grows like
// exp(beta c t): fitted from the second differences of the written lambda over t in [8, 16] at h = 0.1.
// dla, a one-step map of (q, qd), has no such mode: its second differences decay like the smooth lambda.
TEST(Dla, NhRattleParasiticModeFollowsTheReversedSleigh) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  const auto params = model->parameters();  // m, Ic, b
  const double m = params[0].second, Ic = params[1].second, b = params[2].second;
  const double K = m * b * b + Ic, beta = m * b / K;
  const double u0 = qd0[0];  // theta0 = 0
  const double c = std::sqrt(u0 * u0 + K * qd0[2] * qd0[2] / m);
  for (const char* method : {"nh_rattle", "dla"}) {
    auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
    auto integ = integrator_registry().get(method).make();
    Vec y0;
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.dt = 0.1;
    integ->initialize(*f, 0.0, y0, s);
    std::vector<double> t, lam;
    while (integ->time() < 16) {
      ASSERT_TRUE(integ->step(16));
      t.push_back(integ->time());
      lam.push_back((*integ->step_multipliers())[0]);
    }
    std::vector<double> ts, logd;
    for (size_t k = 1; k + 1 < lam.size(); ++k) {
      if (t[k] < 8) continue;
      ts.push_back(t[k]);
      logd.push_back(std::log(std::abs(lam[k + 1] - 2 * lam[k] + lam[k - 1])));
    }
    // Least-squares slope of log|second difference| against t.
    double st = 0, sl = 0, stt = 0, stl = 0;
    for (size_t i = 0; i < ts.size(); ++i) {
      st += ts[i];
      sl += logd[i];
      stt += ts[i] * ts[i];
      stl += ts[i] * logd[i];
    }
    const double N = double(ts.size());
    const double rate = (N * stl - st * sl) / (N * stt - st * st);
    std::printf("  sleigh h = 0.1 %-9s growth rate of lambda's second differences %.4f (beta c = %.4f)\n", method,
                rate, beta * c);
    // Measured 0.5964 (nh_rattle) and -0.5969 (dla: the smooth lambda ~ sech(beta c t + tau0) decays at
    // the forward rate) against beta c = 0.5968.
    const double expected = std::string(method) == "nh_rattle" ? beta * c : -beta * c;
    EXPECT_NEAR(rate, expected, 0.002 * beta * c) << method;
  }
}

// A run whose Newton fails even after 20 halvings of dt ends "failed" saying so (slider_crank, holonomic,
// at dt = 2 drifts off h(q) = 0 into a singular configuration).
TEST(Dla, NewtonFailureEndsTheRunWithAMessage) {
  auto model = make_model("slider_crank");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "dla";
  rs.dt = 2;
  rs.t_end = 40;
  rs.output_every = 2;
  const auto r = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  EXPECT_EQ(r.result.status, "failed");
  EXPECT_NE(r.result.message.find("dla: Newton on the discrete equations failed at h = "), std::string::npos)
      << r.result.message;
  for (const auto& o : r.obs) EXPECT_TRUE(o.q.allFinite() && o.qd.allFinite());
}

// The dense output inside a step (cubic Hermite from the end-point (qd, qdd)) is as accurate as the step
// ends: sleigh, dt = 0.05, interpolated at mid-step against the closed form over [0, 3].
TEST(Dla, InterpolationInsideAStep) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  for (const char* method : {"dla", "nh_rattle"}) {
    auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
    auto integ = integrator_registry().get(method).make();
    Vec y0, y(6), q(3), qd(3);
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.dt = 0.05;
    integ->initialize(*f, 0.0, y0, s);
    double err_end = 0, err_mid = 0;
    while (integ->time() < 3) {
      const double t0 = integ->time();
      ASSERT_TRUE(integ->step(3));
      const double t1 = integ->time();
      ASSERT_TRUE(model->closed_form(t1, q0, qd0, q, qd));
      err_end = std::max(err_end, std::max((integ->state().head(3) - q).lpNorm<Eigen::Infinity>(),
                                           (integ->state().tail(3) - qd).lpNorm<Eigen::Infinity>()));
      integ->interpolate(0.5 * (t0 + t1), y);
      ASSERT_TRUE(model->closed_form(0.5 * (t0 + t1), q0, qd0, q, qd));
      err_mid = std::max(err_mid, std::max((y.head(3) - q).lpNorm<Eigen::Infinity>(),
                                           (y.tail(3) - qd).lpNorm<Eigen::Infinity>()));
    }
    std::printf("  sleigh dt 0.05 %-9s max error at step ends %.3e, at mid-steps %.3e\n", method, err_end, err_mid);
    // Measured 2.358e-4 against 2.364e-4 (dla), 4.670e-4 against 4.713e-4 (nh_rattle).
    EXPECT_LE(err_mid, 1.1 * err_end) << method;
  }
}
