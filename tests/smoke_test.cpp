#include <gtest/gtest.h>

#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "formulations/kkt_formulation.hpp"

using namespace clm;

TEST(Smoke, SleighKktRk4) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0(3), qd0(3);
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("rk4").make();
  Vec y0;
  f->initial_state(q0, qd0, y0);
  SimulationSettings sim;
  sim.t_end = 2;
  IntegratorSettings s;
  s.dt = 1e-3;
  Observation obs;
  double e0 = 0, e1 = 0;
  auto r = simulate(*f, *integ, y0, sim, s, [&](double t, const Vec& y) {
    f->observe(t, y, obs);
    if (t == 0) e0 = obs.energy;
    e1 = obs.energy;
  });
  EXPECT_EQ(r.status, "ok");
  EXPECT_NEAR(e1, e0, 1e-10);
  EXPECT_LT(obs.drift_velocity, 1e-10);
}
