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

#include "allocation_counter.hpp"

// The allocation counter itself must see Eigen's heap use, or the hot-path tests prove nothing.
TEST(AllocationCounter, SeesEigenAndNew) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  clm::testing::AllocationScope scope;
  Vec v(100);
  v.setZero();
  static int* volatile sink = nullptr;  // volatile: the compiler may not elide the new/delete pair
  sink = new int(3);
  delete sink;
  EXPECT_GE(scope.count(), 2u);
}

TEST(Smoke, ModelEvaluateDoesNotAllocate) {
  for (const char* name : {"chaplygin_sleigh", "pendulum_polar"}) {
    auto model = make_model(name);
    auto ws = model->make_workspace();
    ModelTerms terms = model->make_terms();
    Vec q0(model->n()), qd0(model->n());
    model->default_initial(q0, qd0);
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 10; ++i) model->evaluate(0.0, q0, qd0, kAll, *ws, terms);
    EXPECT_EQ(scope.count(), 0u) << name;
  }
}
