// clmbench sweep's throughput and overhead (issue 10):
//   BM_Sweep/jobs:K/steps:S  a grid of 16 runs (Chaplygin sleigh, kkt + rk4, S steps, 11 samples each;
//                       S = 1e4 is about 7 ms a run, 1e5 about 70 ms) through the whole machinery: K worker
//                       threads, a part file per run, the merge; counter runs_per_s. The speed-up is
//                       runs_per_s(K = 2) / runs_per_s(K = 1).
//   BM_RunsAlone/steps:S the same 16 runs with execute_run and no file at all: the runs themselves.
// Overhead per run of the sweep machinery = (time of BM_Sweep/jobs:1 - time of BM_RunsAlone) / 16; the
// sweep also reports its own split as counters: run_ms (prepare + integrate + streaming to the part),
// commit_ms (part file create + commit with fsync + rename) and merge_ms, each per run.
// The grid's files live under $TMPDIR (TMPDIR=/dev/shm takes the disk's fsync out of the figures).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/process_group.hpp"
#include "experiments/run_config.hpp"
#include "experiments/runner.hpp"
#include "experiments/sweep_plan.hpp"
#include "experiments/sweep_runner.hpp"

namespace {

using namespace clm;
namespace fs = std::filesystem;

constexpr int kRuns = 16;

// A scratch directory with the grid's config; the plan resolved once.
struct Grid {
  fs::path dir;
  SweepPlan plan;
  std::vector<size_t> all;
  explicit Grid(long steps) {
    dir = fs::temp_directory_path() / ("clmbench_bench_sweep_" + std::to_string(::getpid()) + "_" + std::to_string(steps));
    fs::create_directories(dir);
    const fs::path ini = dir / "grid.ini";
    std::ofstream(ini) << "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\nt_end = 1\n"
                          "dt = " << 1.0 / double(steps) << "\noutput_every = 0.1\nout = "
                       << (dir / "grid.h5").string()
                       << "\n[sweep]\nparam.b = 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8\nparam.Ic = 0.5 1\n";
    plan = plan_sweep(ini.string(), read_config_file(ini.string()), std::nullopt);
    for (size_t k = 0; k < plan.runs.size(); ++k) all.push_back(k);
  }
  ~Grid() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Grid& grid(long steps) {
  static Grid short_runs(10'000), long_runs(100'000);
  return steps == 10'000 ? short_runs : long_runs;
}

void BM_Sweep(benchmark::State& state) {
  Grid& g = grid(state.range(1));
  const auto group = make_process_group();
  SweepOptions options;
  options.jobs = static_cast<int>(state.range(0));
  options.print_runs = false;
  double run_s = 0, commit_s = 0, merge_s = 0;
  long runs = 0;
  for (auto _ : state) {
    std::ostringstream out, err;
    const SweepReport r = run_sweep(g.plan, g.all, options, *group, out, err);
    run_s += r.run_seconds;
    commit_s += r.commit_seconds;
    merge_s += r.merge_seconds;
    runs += static_cast<long>(r.computed);
    state.PauseTiming();
    fs::remove(g.plan.out);
    state.ResumeTiming();
  }
  state.counters["runs_per_s"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate);
  state.counters["run_ms"] = 1e3 * run_s / double(runs);
  state.counters["commit_ms"] = 1e3 * commit_s / double(runs);
  state.counters["merge_ms"] = 1e3 * merge_s / double(runs);
}
BENCHMARK(BM_Sweep)
    ->ArgNames({"jobs", "steps"})
    ->Args({1, 10'000})
    ->Args({2, 10'000})
    ->Args({1, 100'000})
    ->Args({2, 100'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

void BM_RunsAlone(benchmark::State& state) {
  Grid& g = grid(state.range(0));
  long runs = 0;
  for (auto _ : state) {
    for (const PlannedRun& run : g.plan.runs) {
      std::ostringstream log;
      PreparedRun prepared = prepare_run(run.spec, log, false);
      benchmark::DoNotOptimize(execute_run(prepared, nullptr, /*keep_samples=*/false, nullptr));
      ++runs;
    }
  }
  state.counters["runs_per_s"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RunsAlone)->ArgName("steps")->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace
