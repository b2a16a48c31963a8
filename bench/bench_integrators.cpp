// Per-step cost of the integrators on constrained systems (kkt; ida on the DAE), and of the stiff
// integrators on the stiff problem they exist for: the Chaplygin sleigh under
// the penalty formulation (anisotropic friction, Kozlov Theorem 1) at N = 1e6, rtol 1e-8. One benchmark
// iteration is one step() attempt (accepted or rejected), from a state on the way to T = 5; the
// integrator is re-initialized when it reaches T. dopri5 on the same system is timed for comparison: its
// steps are cheap but it needs ~3,000x more of them (tests/stiff_integrator_test.cpp). BM_MechanismStep: the
// per-step table of every integrator on the mechanisms of the long-time study.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "../tests/allocation_counter.hpp"
#include "../tests/test_odes.hpp"
#include "core/autodiff_ode.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "formulations/coordinate_projection.hpp"
#include "integrators/finite_difference_jacobian.hpp"

namespace {

using namespace clm;

// One attempt per benchmark iteration: step() runs `attempt` (a step() towards the run's end, and what the
// driver does after it), re-initializing `integrator` on `sys` from (0, y0) once its time reaches t_restart
// (untimed, and its allocations uncounted). Returns the heap allocations per attempt.
template <class Attempt>
double allocations_per_attempt(benchmark::State& state, Integrator& integrator, OdeSystem& sys, const Vec& y0,
                               const IntegratorSettings& s, double t_restart, Attempt attempt) {
  long attempts = 0;
  clm::testing::start_counting_allocations();
  std::size_t allocations = 0;
  for (auto _ : state) {
    if (integrator.time() >= t_restart) {
      state.PauseTiming();
      allocations += clm::testing::stop_counting_allocations();
      integrator.initialize(sys, 0.0, y0, s);
      clm::testing::start_counting_allocations();
      state.ResumeTiming();
    }
    attempt();
    ++attempts;
  }
  allocations += clm::testing::stop_counting_allocations();
  return double(allocations) / double(attempts);
}

void BM_PenaltySleighStep(benchmark::State& state, const std::string& integrator_name, bool fixed,
                          const std::string& jacobian) {
  auto model = make_model("chaplygin_sleigh");
  FormulationOptions options;
  options.N = 1e6;
  auto f = formulation_registry().get("penalty").make(model, options);
  auto integrator = integrator_registry().get(integrator_name).make();
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  IntegratorSettings s;
  s.rtol = 1e-8;
  s.atol = 1e-10;
  s.dt = fixed ? 1e-3 : 1e-4;
  s.fixed_step = fixed;
  s.jacobian = jacobian;
  const double t_end = 5;
  integrator->initialize(*f, 0.0, y0, s);
  const double allocs = allocations_per_attempt(state, *integrator, *f, y0, s, t_end, [&] { integrator->step(t_end); });
  const auto& st = integrator->statistics();
  state.counters["allocs_per_step"] = benchmark::Counter(allocs);
  state.counters["rhs_per_step"] = benchmark::Counter(double(st.rhs_evals) / double(st.steps + st.rejected_steps));
}

// The penalty sleigh with a generic-scalar rhs (tests/test_odes.hpp), so that radau5 can take its Jacobian
// by ceres::Jet (IntegratorSettings::jacobian = "autodiff") instead of finite differences. One iteration is
// a whole run to T = 5 at rtol = atol = 1e-8 (m 1.7, Ic 0.35, b 0.45, N = 1e6).
using clm::testing::PenaltySleighAutoDiff;

// One iteration: radau5 on `sys` from y0 to T = 5 at rtol = atol = 1e-8; the last run's statistics as counters.
void Radau5RunToT5(benchmark::State& state, OdeSystem& sys, const Vec& y0, const std::string& jacobian) {
  auto integrator = integrator_registry().get("radau5").make();
  IntegratorSettings s;
  s.rtol = s.atol = 1e-8;
  s.dt = 1e-6;
  s.jacobian = jacobian;
  for (auto _ : state) {
    integrator->initialize(sys, 0.0, y0, s);
    while (integrator->time() < 5.0) integrator->step(5.0);
  }
  const auto& st = integrator->statistics();
  state.counters["steps"] = benchmark::Counter(double(st.steps));
  state.counters["rejected"] = benchmark::Counter(double(st.rejected_steps));
  state.counters["rhs"] = benchmark::Counter(double(st.rhs_evals));
  state.counters["jac"] = benchmark::Counter(double(st.jacobian_evals));
}

void BM_Radau5PenaltySleighRun(benchmark::State& state, const std::string& jacobian) {
  PenaltySleighAutoDiff sys;
  Vec q0, qd0, y0(6);
  clm::testing::penalty_sleigh_initial(0.45, q0, qd0);
  y0 << q0, qd0;
  Radau5RunToT5(state, sys, y0, jacobian);
}

// radau5 through the penalty formulation (m 1.7, Ic 0.35, b 0.45, N = 1e6, rtol = atol = 1e-8, as in
// tests/stiff_integrator_test.cpp): one iteration is a whole run to T = 5.
void BM_Radau5PenaltyFormulationRun(benchmark::State& state, const std::string& jacobian) {
  auto model = make_model("chaplygin_sleigh", {{"m", 1.7}, {"Ic", 0.35}, {"b", 0.45}});
  FormulationOptions options;
  options.N = 1e6;
  auto f = formulation_registry().get("penalty").make(model, options);
  Vec q0, qd0, y0;
  clm::testing::penalty_sleigh_initial(0.45, q0, qd0);
  f->initial_state(q0, qd0, y0);
  Radau5RunToT5(state, *f, y0, jacobian);
}

// The per-step table of the README (issue 11): every integrator of the constrained system on the mechanisms of
// the long-time study, formulation kkt (rattle, dla, nh_rattle, ida integrate the constrained system that kkt
// names; the others kkt's ODE); verlet on the penalty chain. Fixed-step methods take dt = 1e-3, adaptive ones
// run at rtol 1e-8, atol 1e-10. One iteration is one step() attempt towards T = 10 (re-initialized there,
// untimed and uncounted). Counters: heap allocations per step (0 for the suite's own methods; SUNDIALS is a
// shared library whose allocations go through the same malloc and are counted: cvode makes 1-3 per run in
// CVODE's first step), rhs (model) evaluations and Newton iterations per step attempt.
void BM_MechanismStep(benchmark::State& state, const std::string& problem, double bars, const std::string& formulation,
                      const std::string& integrator_name) {
  std::map<std::string, double> params;
  if (bars > 0) params["n"] = bars;
  auto model = make_model(problem, params);
  FormulationOptions options;
  options.N = 1e3;
  options.al_alpha = 1e9;  // ALI3-P at dt = 1e-3: alpha dt^2/4 = 250 (the default 1e7 stalls on four_bar at t = 0.52)
  auto f = formulation_registry().get(formulation).make(model, options);
  auto integrator = integrator_registry().get(integrator_name).make();
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  IntegratorSettings s;
  s.dt = integrator->adaptive() ? 1e-4 : 1e-3;
  s.rtol = 1e-8;
  s.atol = 1e-10;
  const double t_end = 10;
  integrator->initialize(*f, 0.0, y0, s);
  const double allocs = allocations_per_attempt(state, *integrator, *f, y0, s, t_end, [&] { integrator->step(t_end); });
  const auto& st = integrator->statistics();
  const double steps = double(std::max(1L, st.steps + st.rejected_steps));
  state.counters["allocs_per_step"] = benchmark::Counter(allocs);
  state.counters["rhs_per_step"] = benchmark::Counter(double(st.rhs_evals) / steps);
  state.counters["newton_per_step"] = benchmark::Counter(double(st.newton_iterations) / steps);
}

// IFToMM A02 (n_four_bar) per step, sparse against dense linear algebra (docs/design.md "Sparse path"): ALI3-P
// (augmented_lagrangian + trapezoidal, dt 1e-3, al_alpha 1e11) and kkt + rk4 with coordinate projection of q and
// qd (dt 2e-3), from the square position towards t = 0.5 (before the first singular position; re-initialized
// there, untimed). One iteration is one step, with the projection after it as the driver does
// (core/simulate.cpp). Counter: heap allocations per step.
void BM_A02Step(benchmark::State& state, const std::string& method, const std::string& linear_algebra) {
  auto model = make_model("n_four_bar", {{"loops", double(state.range(0))}});
  FormulationOptions options;
  options.linear_algebra = linear_algebra;
  options.al_alpha = 1e11;
  const bool ali3p = method == "ali3p";
  auto f = formulation_registry().get(ali3p ? "augmented_lagrangian" : "kkt").make(model, options);
  auto integrator = integrator_registry().get(ali3p ? "trapezoidal" : "rk4").make();
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y0);
  std::optional<ProjectedSystem> projected;
  if (!ali3p) projected.emplace(*f, ProjectionMode::kBoth);
  if (ali3p) f->set_positions_projected(true);
  OdeSystem& sys = projected ? static_cast<OdeSystem&>(*projected) : static_cast<OdeSystem&>(*f);
  IntegratorSettings s;
  s.dt = ali3p ? 1e-3 : 2e-3;
  s.rtol = 1e-6;
  s.atol = 1e-8;
  const double t_end = 0.5;
  integrator->initialize(sys, 0.0, y0, s);
  Vec y;
  const double allocs = allocations_per_attempt(state, *integrator, sys, y0, s, t_end - 1e-12, [&] {
    if (integrator->step(t_end)) {
      y = integrator->state();
      if (sys.after_step(integrator->time(), y)) integrator->reset_state(y);
    }
  });
  state.counters["allocs_per_step"] = benchmark::Counter(allocs);
}

// Issue 20: the implicit integrators with the formulation's exact Jacobian (jacobian = autodiff: penalty through
// the model's dynamics derivatives, kkt / schur by implicit differentiation of the KKT system) against forward
// differences, CPU per whole run. radau5 at rtol 1e-8, atol 1e-10 (first step 1e-4), implicit_midpoint at
// dt = 1e-3; from the problem's default state to t_end. Counters: the last run's steps, rhs evaluations,
// Jacobians and Newton iterations.
// A formulation of a registered problem (closed_chain with `bars` bars when bars > 0; penalty at N = 1e6) at the
// problem's default state, for the two Jacobian benchmarks.
struct JacobianCase {
  std::unique_ptr<Formulation> f;
  Vec y0;
};
// A formulation "servo:FIELD" is servo with servo_direction = FIELD.
JacobianCase jacobian_case(const std::string& problem, double bars, const std::string& formulation_spec) {
  std::map<std::string, double> params;
  if (bars > 0) params["n"] = bars;
  auto model = make_model(problem, params);
  FormulationOptions options;
  options.N = 1e6;
  std::string formulation = formulation_spec;
  if (const auto colon = formulation.find(':'); colon != std::string::npos) {
    options.servo_direction = formulation.substr(colon + 1);
    formulation = formulation.substr(0, colon);
  }
  JacobianCase c{formulation_registry().get(formulation).make(model, options), {}};
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  c.f->initial_state(q0, qd0, c.y0);
  return c;
}

void BM_JacobianRun(benchmark::State& state, const std::string& problem, double bars, const std::string& formulation,
                    const std::string& integrator_name, const std::string& jacobian, double t_end) {
  JacobianCase c = jacobian_case(problem, bars, formulation);
  Formulation* f = c.f.get();
  const Vec& y0 = c.y0;
  auto integrator = integrator_registry().get(integrator_name).make();
  IntegratorSettings s;
  s.rtol = 1e-8;
  s.atol = 1e-10;
  s.dt = integrator->adaptive() ? 1e-4 : 1e-3;
  s.jacobian = jacobian;
  for (auto _ : state) {
    integrator->initialize(*f, 0.0, y0, s);
    while (integrator->time() < t_end) integrator->step(t_end);
  }
  const auto& st = integrator->statistics();
  state.counters["steps"] = benchmark::Counter(double(st.steps));
  state.counters["rejected"] = benchmark::Counter(double(st.rejected_steps));
  state.counters["rhs"] = benchmark::Counter(double(st.rhs_evals));
  state.counters["jac"] = benchmark::Counter(double(st.jacobian_evals));
  state.counters["newton"] = benchmark::Counter(double(st.newton_iterations));
}

// One Jacobian at the default state: the formulation's own (autodiff) or n forward differences, plus the rhs
// evaluation both start from. The per-Jacobian price behind the per-run numbers above.
void BM_JacobianCall(benchmark::State& state, const std::string& problem, double bars, const std::string& formulation,
                     const std::string& jacobian) {
  JacobianCase c = jacobian_case(problem, bars, formulation);
  Formulation* f = c.f.get();
  Vec y = c.y0;
  const int dim = f->dimension();
  Mat J(dim, dim);
  Vec fy(dim), y_work(dim), f_work(dim);
  const bool own = jacobian == "autodiff";
  for (auto _ : state) {
    if (own) {
      f->jacobian(0.0, y, J);
    } else {
      f->rhs(0.0, y, fy);
      finite_difference_jacobian(*f, 0.0, y, fy, y_work, f_work, J);
    }
    benchmark::DoNotOptimize(J.data());
  }
}

const int registered = [] {
  {
    struct JacobianCase {
      const char* label;
      const char* problem;
      double bars;
      const char* formulation;
      double t_end;
    };
    for (const JacobianCase& c :
         {JacobianCase{"penalty/chaplygin_sleigh", "chaplygin_sleigh", 0, "penalty", 5},
          JacobianCase{"kkt/chaplygin_sleigh", "chaplygin_sleigh", 0, "kkt", 5},
          JacobianCase{"kkt/rolling_disk", "rolling_disk", 0, "kkt", 5},
          JacobianCase{"kkt/pendulum_cartesian", "pendulum_cartesian", 0, "kkt", 5},
          JacobianCase{"kkt/four_bar", "four_bar", 0, "kkt", 1},
          JacobianCase{"schur/four_bar", "four_bar", 0, "schur", 1},
          JacobianCase{"kkt/closed_chain8", "closed_chain", 8, "kkt", 1},
          JacobianCase{"schur/closed_chain8", "closed_chain", 8, "schur", 1},
          JacobianCase{"kkt/closed_chain16", "closed_chain", 16, "kkt", 1},
          JacobianCase{"schur/closed_chain16", "closed_chain", 16, "schur", 1},
          JacobianCase{"augmented_lagrangian/chaplygin_sleigh", "chaplygin_sleigh", 0, "augmented_lagrangian", 5},
          JacobianCase{"augmented_lagrangian/four_bar", "four_bar", 0, "augmented_lagrangian", 1},
          JacobianCase{"augmented_lagrangian/closed_chain8", "closed_chain", 8, "augmented_lagrangian", 1},
          JacobianCase{"added_mass/chaplygin_sleigh", "chaplygin_sleigh", 0, "added_mass", 5},
          JacobianCase{"added_mass/rolling_disk", "rolling_disk", 0, "added_mass", 5},
          JacobianCase{"added_mass/four_bar", "four_bar", 0, "added_mass", 1},
          JacobianCase{"servo/chaplygin_sleigh", "chaplygin_sleigh", 0, "servo:lateral_com", 5},
          JacobianCase{"servo/suslov", "suslov", 0, "servo:control_torque", 5},
          JacobianCase{"servo/four_bar", "four_bar", 0, "servo", 1},
          JacobianCase{"fernandez_bloch/chaplygin_sleigh", "chaplygin_sleigh", 0, "fernandez_bloch", 5},
          JacobianCase{"fernandez_bloch/rolling_disk", "rolling_disk", 0, "fernandez_bloch", 5},
          JacobianCase{"fernandez_bloch/skate_incline", "skate_incline", 0, "fernandez_bloch", 5}}) {
      for (const char* jacobian : {"finite_difference", "autodiff"}) {
        for (const char* name : {"radau5", "implicit_midpoint"})
          benchmark::RegisterBenchmark((std::string("JacobianRun/") + c.label + "/" + name + "/" + jacobian).c_str(),
                                       BM_JacobianRun, std::string(c.problem), c.bars, std::string(c.formulation),
                                       std::string(name), std::string(jacobian), c.t_end)
              ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((std::string("JacobianCall/") + c.label + "/" + jacobian).c_str(), BM_JacobianCall,
                                     std::string(c.problem), c.bars, std::string(c.formulation), std::string(jacobian))
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  for (const char* method : {"ali3p", "kkt_projected"})
    for (const char* linear_algebra : {"sparse", "dense"})
      for (int loops : {5, 10, 20, 40})
        benchmark::RegisterBenchmark((std::string("A02Step/") + method + "/" + linear_algebra).c_str(), BM_A02Step,
                                     std::string(method), std::string(linear_algebra))
            ->Arg(loops)
            ->Unit(benchmark::kMicrosecond);
  struct Mechanism {
    const char* label;
    const char* problem;
    double bars;
  };
  for (const Mechanism& m : {Mechanism{"pendulum_cartesian", "pendulum_cartesian", 0}, Mechanism{"four_bar", "four_bar", 0},
                             Mechanism{"closed_chain16", "closed_chain", 16},
                             Mechanism{"chaplygin_sleigh", "chaplygin_sleigh", 0}}) {
    const bool holonomic = std::string(m.problem) != "chaplygin_sleigh";
    for (const char* name : {"dopri5", "radau5", "implicit_midpoint", "rattle", "dla", "nh_rattle", "cvode", "ida"}) {
      if (!holonomic && std::string(name) == "rattle") continue;  // refused: holonomic problems only
      benchmark::RegisterBenchmark((std::string("MechanismStep/") + m.label + "/kkt/" + name).c_str(), BM_MechanismStep,
                                   std::string(m.problem), m.bars, std::string("kkt"), std::string(name));
    }
  }
  // ALI3-P: trapezoidal with the augmented_lagrangian formulation (holonomic mechanisms; bricard's redundant set),
  // and augmented_lagrangian's ODE under dopri5 beside kkt's.
  for (const char* problem : {"pendulum_cartesian", "four_bar", "bricard"}) {
    for (const char* name : {"trapezoidal", "dopri5"})
      benchmark::RegisterBenchmark((std::string("MechanismStep/") + problem + "/augmented_lagrangian/" + name).c_str(),
                                   BM_MechanismStep, std::string(problem), 0.0, std::string("augmented_lagrangian"),
                                   std::string(name));
  }
  benchmark::RegisterBenchmark("MechanismStep/closed_chain16/augmented_lagrangian/trapezoidal", BM_MechanismStep,
                               std::string("closed_chain"), 16.0, std::string("augmented_lagrangian"),
                               std::string("trapezoidal"));
  benchmark::RegisterBenchmark("MechanismStep/bricard/kkt/dopri5", BM_MechanismStep, std::string("bricard"), 0.0,
                               std::string("kkt"), std::string("dopri5"));
  benchmark::RegisterBenchmark("MechanismStep/closed_chain16/penalty_N1e3/verlet", BM_MechanismStep,
                               std::string("closed_chain"), 16.0, std::string("penalty"), std::string("verlet"));
  for (const char* jacobian : {"finite_difference", "autodiff"})
    benchmark::RegisterBenchmark((std::string("Radau5PenaltySleighRunToT5/") + jacobian).c_str(),
                                 BM_Radau5PenaltySleighRun, std::string(jacobian))
        ->Unit(benchmark::kMicrosecond);
  for (const char* name : {"radau5", "cvode", "implicit_midpoint", "dopri5"}) {
    if (!integrator_registry().contains(name)) continue;
    const bool fixed = std::string(name) == "implicit_midpoint";
    benchmark::RegisterBenchmark((std::string("PenaltySleighN1e6/") + name).c_str(), BM_PenaltySleighStep,
                                 std::string(name), fixed, std::string("finite_difference"));
  }
  // The implicit methods with the Jacobian by automatic differentiation through the model.
  for (const char* name : {"radau5", "implicit_midpoint"}) {
    const bool fixed = std::string(name) == "implicit_midpoint";
    benchmark::RegisterBenchmark((std::string("PenaltySleighN1e6/") + name + "_autodiff").c_str(),
                                 BM_PenaltySleighStep, std::string(name), fixed, std::string("autodiff"));
  }
  for (const char* jacobian : {"finite_difference", "autodiff"})
    benchmark::RegisterBenchmark((std::string("Radau5PenaltyFormulationSleighRunToT5/") + jacobian).c_str(),
                                 BM_Radau5PenaltyFormulationRun, std::string(jacobian))
        ->Unit(benchmark::kMicrosecond);
  return 0;
}();

}  // namespace
