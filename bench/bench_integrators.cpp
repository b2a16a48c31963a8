// Per-step cost of the stiff integrators on the stiff problem they exist for: the Chaplygin sleigh under
// the penalty formulation (anisotropic friction, Kozlov Theorem 1) at N = 1e6, rtol 1e-8. One benchmark
// iteration is one step() attempt (accepted or rejected), from a state on the way to T = 5; the
// integrator is re-initialized when it reaches T. dopri5 on the same system is timed for comparison: its
// steps are cheap but it needs ~3,000x more of them (tests/stiff_integrator_test.cpp).
#include <benchmark/benchmark.h>

#include "../tests/allocation_counter.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"

namespace {

using namespace clm;

void BM_PenaltySleighStep(benchmark::State& state, const std::string& integrator_name, bool fixed) {
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
  const double t_end = 5;
  integrator->initialize(*f, 0.0, y0, s);
  long attempts = 0;
  clm::testing::start_counting_allocations();
  std::size_t allocations = 0;
  for (auto _ : state) {
    if (integrator->time() >= t_end) {
      state.PauseTiming();
      allocations += clm::testing::stop_counting_allocations();
      integrator->initialize(*f, 0.0, y0, s);
      clm::testing::start_counting_allocations();
      state.ResumeTiming();
    }
    integrator->step(t_end);
    ++attempts;
  }
  allocations += clm::testing::stop_counting_allocations();
  const auto& st = integrator->statistics();
  state.counters["allocs_per_step"] = benchmark::Counter(double(allocations) / double(attempts));
  state.counters["rhs_per_step"] = benchmark::Counter(double(st.rhs_evals) / double(st.steps + st.rejected_steps));
}

const int registered = [] {
  for (const char* name : {"radau5", "implicit_midpoint", "dopri5"}) {
    if (!integrator_registry().contains(name)) continue;
    const bool fixed = std::string(name) == "implicit_midpoint";
    benchmark::RegisterBenchmark((std::string("PenaltySleighN1e6/") + name).c_str(), BM_PenaltySleighStep,
                                 std::string(name), fixed);
  }
  return 0;
}();

}  // namespace
