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
Vec rattle_final(const std::shared_ptr<const Model>& model, const Vec& y0, double T, int n, StepStatistics* st = nullptr) {
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

TEST(Rattle, Explore) {
  for (const char* problem : {"pendulum_cartesian", "slider_crank", "closed_chain", "four_bar"}) {
    auto model = make_model(problem);
    const Vec y0 = initial_state(model);
    const double T = 1.0;
    const Vec ref = reference(model, y0, T, T).back();
    std::vector<double> hs, errs;
    for (int k = 0; k < 4; ++k) {
      const int n = 50 << k;
      StepStatistics st;
      const Vec y = rattle_final(model, y0, T, n, &st);
      hs.push_back(T / n);
      errs.push_back((y - ref).lpNorm<Eigen::Infinity>());
      std::printf("  %s n %d err %.3e newton/step %.2f rhs/step %.2f jac %ld\n", problem, n, errs.back(),
                  double(st.newton_iterations) / n, double(st.rhs_evals) / n, st.jacobian_evals);
    }
    std::printf("  %s slope %.4f\n", problem, fit_loglog(hs, errs).slope);
  }
}

TEST(Rattle, ExploreLambda) {
  auto model = make_model("pendulum_cartesian");
  const Vec y0 = initial_state(model);
  const double T = 2.0;
  for (int k = 0; k < 4; ++k) {
    const int n = 100 << k;
    const double h = T / n;
    const auto ref = reference(model, y0, T, h / 2);
    auto f = formulation_registry().get("kkt").make(model, {});
    auto integ = integrator_registry().get("rattle").make();
    IntegratorSettings s;
    s.dt = h;
    integ->initialize(*f, 0.0, y0, s);
    double e_end = 0, e_mid = 0;
    Vec lam(1);
    int i = 0;
    while (integ->time() < T) {
      integ->step(T);
      ++i;
      const Vec& yr = ref[2 * i];
      model->closed_form_multiplier(yr.head(2), yr.tail(2), lam);
      e_end = std::max(e_end, std::abs((*integ->step_multipliers())[0] - lam[0]));
      const Vec& ym = ref[2 * i - 1];
      model->closed_form_multiplier(ym.head(2), ym.tail(2), lam);
      e_mid = std::max(e_mid, std::abs((*integ->step_multipliers())[0] - lam[0]));
    }
    std::printf("  h %.3e lambda err vs t_end %.3e vs t_mid %.3e\n", h, e_end, e_mid);
  }
}
