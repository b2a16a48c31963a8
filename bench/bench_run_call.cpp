// The C++ side of one `clmbench.run` call (docs/python.md, issue 23): the configuration resolved from keys by
// section (as the Python package passes its keywords), the run prepared and executed with its samples kept.
// BM_RunCall/timing_budget_0/steps:S: the chaplygin sleigh, kkt + rk4, S steps of 1e-3 s, 11 samples. The Python package's fixed
// overhead is the time of clmbench.run on the same run (tools/bench_python_overhead.py prints it) minus this.
#include <benchmark/benchmark.h>

#include <iostream>
#include <sstream>
#include <string>

#include "runs/run_config.hpp"
#include "runs/runner.hpp"

namespace {

using namespace clm;

// budget: run.timing_budget ("default": the option's default; "0": timed once, what the Python overhead is measured
// against). The default repeats a short run until 0.05 s of CPU are spent: that is what a short call costs beyond it.
void BM_RunCall(benchmark::State& state, const std::string& budget) {
  const long steps = state.range(0);
  ConfigLayer flags;
  auto set = [&](const char* key, std::string value) { flags["run"][key] = {std::move(value), "bench"}; };
  set("problem", "chaplygin_sleigh");
  set("formulation", "kkt");
  set("integrator", "rk4");
  set("dt", "0.001");
  set("t_end", std::to_string(steps * 1e-3));
  set("output_every", std::to_string(steps * 1e-4));
  if (budget != "default") set("timing_budget", budget);
  std::ostringstream log;
  for (auto _ : state) {
    const RunConfig config = load_run_config(std::nullopt, {}, flags, std::string("bench.h5"));
    PreparedRun run = prepare_run(config.runs.front(), log);
    const RunRecord record = execute_run(run, nullptr, /*keep_samples=*/true);
    benchmark::DoNotOptimize(record.q.data());
  }
}
BENCHMARK_CAPTURE(BM_RunCall, timing_budget_0, std::string("0"))->ArgName("steps")->Arg(1)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RunCall, default_timing_budget, std::string("default"))
    ->ArgName("steps")
    ->Arg(1)
    ->Arg(100)
    ->Unit(benchmark::kMillisecond);

}  // namespace
