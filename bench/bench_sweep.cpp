// clmbench sweep's throughput and overhead (issue 10):
//   BM_Sweep/jobs:K/steps:S/runs:R  a grid of R runs (Chaplygin sleigh, kkt + rk4, S steps, 11 samples
//                       each, integrated once: run.timing_budget = 0; S = 1e4 is about 7 ms a run, 1e5 about 70 ms) through the whole machinery: K
//                       worker threads, part files, the merge; counter runs_per_s. The speed-up is
//                       runs_per_s(K = 2) / runs_per_s(K = 1). R = 64 short runs (a sweep of about 0.5 s:
//                       parts are committed while runs go on, as in any sweep longer than a few commit
//                       intervals) and R = 16 (0.1 s: the fixed cost of writing OUT weighs most).
//   BM_RunsAlone/steps:S/runs:R the same runs with execute_run and no file at all: the runs themselves.
// Overhead per run of the sweep machinery = (time of BM_Sweep/jobs:1 - time of BM_RunsAlone) / R; the
// sweep also reports its own split as counters, each per run: run_ms (prepare + integrate), commit_ms (part
// files: create, writing the run, commit with fsync + rename; a part holds the runs a job finished in
// about 0.2 s) and merge_ms, in wall time, and the same in thread CPU time (*_cpu_ms), which load from
// other processes does not inflate: overhead_pct = (commit_cpu_ms + merge_cpu_ms) / run_cpu_ms is the
// machinery's cost against the run itself, comparable on a busy machine; parts = part files per sweep.
// The grid's files live under $TMPDIR (TMPDIR=/dev/shm takes the disk's fsync out of the figures).
//
//   BM_ScaleGrid/grid:G/jobs:K  issue 25's two grids, bench/scale_long.ini (G = 0: 48 runs of the closed chain
//                       of 16 bars, kkt / schur / nullspace, dopri5 at rtol 1e-10 over 6 s, 16 reference runs)
//                       and bench/scale_short.ini (G = 1: 480 sleigh runs, rk4 over 10 s), as `clmbench sweep
//                       --jobs K` runs them (timing repeats included: run.timing_budget at its default);
//                       G = 2: the short grid with run.timing_budget = 0, each run integrated once (about
//                       20 ms of work a run instead of the 50 ms budget: the per-run costs weigh more).
//                       Counters, from the sweep's own accounting (studies/sweep_runner.hpp), figures of K = 1:
//                         serialized_pct  time nothing else can go on: the serial planning before the workers
//                                         start, the merge's tail after the last run, any wait for the HDF5
//                                         lock, over the wall time: Amdahl's serial fraction s
//                         writer_pct      the merger thread's time writing OUT while the jobs compute, over the
//                                         wall time, w: the one writer is a pipeline stage beside the jobs,
//                                         which bounds the speed-up at 1 / w
//                         waiting_pct     time the workers waited (for a reference another job computes, or for
//                                         the HDF5 lock) over K x wall: what K jobs lost to each other
//                         overhead_ms     per run: CPU time that is not the runs' computing (the planning, the
//                                         part files: recording, compressing, committing, also the chunks a
//                                         long run writes while it integrates; the writer's replay)
//                         compress_ms     of overhead_ms, shuffling and deflating the samples' chunks (in the
//                                         jobs, side by side; it grows with a run's samples, not with the runs)
//                         predicted_16, predicted_64  the speed-up s and w predict at N jobs: Amdahl's law with
//                                         the writer as a stage of its own, 1 / (s + max((1 - s) / N, w))
//                         scheduled_16, scheduled_64  the speed-up of this grid's own tasks at N jobs: the
//                                         sweep's schedule played forward with the time each task took here
//                                         (simulated_wall_seconds), plus the serial part, the writer beside; what
//                                         Amdahl's law leaves out is in it: the grid's tail (48 runs on 16 jobs
//                                         end with jobs idle) and the runs waiting for their references
//                       The speed-up on this machine is wall(K = 1) / wall(K = 2).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <memory>
#include <sstream>

#include "io/hdf5_run_target.hpp"
#include "io/part_file.hpp"
#include "runs/results_writer.hpp"
#include "studies/process_group.hpp"
#include "runs/run_config.hpp"
#include "runs/runner.hpp"
#include "studies/sweep_plan.hpp"
#include "studies/sweep_runner.hpp"
#include "studies/sweep_schedule.hpp"

namespace {

using namespace clm;
namespace fs = std::filesystem;

// A scratch directory with the grid's config; the plan resolved once.
struct Grid {
  fs::path dir;
  SweepPlan plan;
  std::vector<size_t> all;
  Grid(long steps, long runs) {
    dir = fs::temp_directory_path() /
          ("clmbench_bench_sweep_" + std::to_string(::getpid()) + "_" + std::to_string(steps) + "_" + std::to_string(runs));
    fs::create_directories(dir);
    const fs::path ini = dir / "grid.ini";
    std::ofstream(ini) << "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\nt_end = 1\n"
                          "dt = " << 1.0 / double(steps) << "\noutput_every = 0.1\ntiming_budget = 0\nout = "
                       << (dir / "grid.h5").string()
                       << "\n[sweep]\nparam.b = 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8\nparam.Ic = 0.5 1\n"
                       << (runs == 64 ? "param.m = 1 1.1 1.2 1.3\n" : "");
    plan = plan_sweep(ini.string(), read_config_file(ini.string()), std::nullopt);
    for (size_t k = 0; k < plan.runs.size(); ++k) all.push_back(k);
  }
  ~Grid() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Grid& grid(long steps, long runs) {
  static std::map<std::pair<long, long>, std::unique_ptr<Grid>> grids;
  auto& g = grids[{steps, runs}];
  if (!g) g = std::make_unique<Grid>(steps, runs);
  return *g;
}

void BM_Sweep(benchmark::State& state) {
  Grid& g = grid(state.range(1), state.range(2));
  const auto group = make_process_group();
  SweepOptions options;
  options.jobs = static_cast<int>(state.range(0));
  options.print_runs = false;
  double run_s = 0, commit_s = 0, merge_s = 0, run_cpu = 0, commit_cpu = 0, merge_cpu = 0, parts = 0;
  long runs = 0, sweeps = 0;
  for (auto _ : state) {
    std::ostringstream out, err;
    const SweepReport r = run_sweep(g.plan, g.all, options, *group, out, err);
    run_s += r.run_seconds;
    commit_s += r.commit_seconds;
    merge_s += r.merge_seconds;
    run_cpu += r.run_cpu_seconds;
    commit_cpu += r.commit_cpu_seconds;
    merge_cpu += r.merge_cpu_seconds;
    parts += static_cast<double>(r.parts);
    runs += static_cast<long>(r.computed);
    ++sweeps;
    state.PauseTiming();
    fs::remove(g.plan.out);
    state.ResumeTiming();
  }
  state.counters["runs_per_s"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate);
  state.counters["run_ms"] = 1e3 * run_s / double(runs);
  state.counters["commit_ms"] = 1e3 * commit_s / double(runs);
  state.counters["merge_ms"] = 1e3 * merge_s / double(runs);
  state.counters["run_cpu_ms"] = 1e3 * run_cpu / double(runs);
  state.counters["commit_cpu_ms"] = 1e3 * commit_cpu / double(runs);
  state.counters["merge_cpu_ms"] = 1e3 * merge_cpu / double(runs);
  state.counters["overhead_pct"] = 100 * (commit_cpu + merge_cpu) / run_cpu;
  state.counters["parts"] = parts / double(sweeps);
}
BENCHMARK(BM_Sweep)
    ->ArgNames({"jobs", "steps", "runs"})
    ->Args({1, 10'000, 64})
    ->Args({2, 10'000, 64})
    ->Args({1, 10'000, 16})
    ->Args({2, 10'000, 16})
    ->Args({1, 100'000, 16})
    ->Args({2, 100'000, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

void BM_RunsAlone(benchmark::State& state) {
  Grid& g = grid(state.range(0), state.range(1));
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
BENCHMARK(BM_RunsAlone)
    ->ArgNames({"steps", "runs"})
    ->Args({10'000, 64})
    ->Args({100'000, 16})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// Issue 25's grids, planned once from bench/ (CLMBENCH_SOURCE_DIR) with the output under $TMPDIR.
struct ScaleGrid {
  SweepPlan plan;
  std::vector<size_t> all;
  ScaleGrid(const char* name, bool timed_once) {
    const std::string ini = std::string(CLMBENCH_SOURCE_DIR) + "/bench/" + name + ".ini";
    const fs::path out = fs::temp_directory_path() / ("clmbench_bench_" + std::string(name) + "_" + std::to_string(::getpid()) + ".h5");
    ConfigLayer layer = read_config_file(ini);
    if (timed_once) apply_set(layer, "run.timing_budget=0");  // each run integrated once: the runs themselves
    plan = plan_sweep(ini, layer, out.string());
    for (size_t k = 0; k < plan.runs.size(); ++k) all.push_back(k);
  }
};

void BM_ScaleGrid(benchmark::State& state) {
  static ScaleGrid grids[] = {ScaleGrid("scale_long", false), ScaleGrid("scale_short", false),
                               ScaleGrid("scale_short", true)};
  ScaleGrid& g = grids[state.range(0)];
  const auto group = make_process_group();
  SweepOptions options;
  options.jobs = static_cast<int>(state.range(1));
  options.print_runs = false;
  double wall = 0, computing = 0, serial = 0, writer = 0, waiting = 0, overhead_cpu = 0, commit = 0, merge = 0;
  double planning = 0, merge_cpu = 0, tail = 0, compress = 0;
  double scheduled_16 = 0, scheduled_64 = 0;
  long runs = 0;
  for (auto _ : state) {
    std::ostringstream out, err;
    const SweepReport r = run_sweep(g.plan, g.all, options, *group, out, err);
    wall += r.wall_seconds;
    computing += r.run_seconds + r.reference_seconds;
    // Nothing else can go on: the planning before the jobs start, the merge's remainder after the last run,
    // and any wait for the HDF5 lock (the jobs take none since their part files have no HDF5 in them).
    serial += r.planning_seconds + r.merge_tail_seconds + r.lock_wait_seconds;
    writer += r.merge_seconds - r.merge_tail_seconds;  // the merger's work while the jobs computed
    waiting += r.wait_seconds + r.lock_wait_seconds;
    overhead_cpu += r.planning_seconds + r.commit_cpu_seconds + r.merge_cpu_seconds;
    commit += r.commit_seconds;
    merge += r.merge_seconds;
    planning += r.planning_seconds;
    merge_cpu += r.merge_cpu_seconds;
    compress += r.compress_cpu_seconds;
    tail += r.merge_tail_seconds;
    runs += static_cast<long>(r.computed);
    // This grid's own tasks at N jobs: the schedule played forward with the task times measured here (a grid's
    // tail and the waits for references included), the serial part before and after, the writer beside.
    const double serial_part = r.planning_seconds + r.merge_tail_seconds + r.lock_wait_seconds;
    const double writer_part = r.merge_seconds - r.merge_tail_seconds;
    auto at = [&](int n) {
      return serial_part + std::max(simulated_wall_seconds(r.task_cost, r.task_reference, r.task_run_seconds,
                                                           r.task_reference_seconds, n),
                                    writer_part);
    };
    const double one_job = at(1);
    scheduled_16 += one_job / at(16);
    scheduled_64 += one_job / at(64);
    state.PauseTiming();
    fs::remove(g.plan.out);
    state.ResumeTiming();
  }
  const double s = serial / wall, w = writer / wall, jobs = static_cast<double>(state.range(1));
  // Amdahl's law with the writer as a pipeline stage: N jobs take (1 - s) / N of the one-job time, unless
  // the one writer (OUT's HDF5, a thread of its own beside the jobs) takes longer, w.
  auto predicted = [&](double n) { return 1 / (s + std::max((1 - s) / n, w)); };
  state.counters["runs_per_s"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate);
  state.counters["serialized_pct"] = 100 * s;
  state.counters["writer_pct"] = 100 * w;
  state.counters["waiting_pct"] = 100 * waiting / (jobs * wall);
  state.counters["overhead_ms"] = 1e3 * overhead_cpu / double(runs);
  state.counters["commit_ms"] = 1e3 * commit / double(runs);  // part files: record, commit (per run)
  state.counters["merge_ms"] = 1e3 * merge / double(runs);    // OUT from the parts (per run)
  state.counters["run_ms"] = 1e3 * computing / double(runs);
  state.counters["planning_ms"] = 1e3 * planning / double(runs);   // per run
  state.counters["merge_cpu_ms"] = 1e3 * merge_cpu / double(runs);
  state.counters["compress_ms"] = 1e3 * compress / double(runs);  // of overhead_ms: deflating the samples
  state.counters["tail_ms"] = 1e3 * tail / double(state.iterations());  // the merge after the last run, per sweep
  state.counters["predicted_16"] = predicted(16);
  state.counters["predicted_64"] = predicted(64);
  state.counters["scheduled_16"] = scheduled_16 / double(state.iterations());
  state.counters["scheduled_64"] = scheduled_64 / double(state.iterations());
}
BENCHMARK(BM_ScaleGrid)
    ->ArgNames({"grid", "jobs"})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Args({2, 1})
    ->Args({2, 2})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

// The merge's share of a run (issue 25): one part file of a grid's runs replayed run by run into a results
// file (BM_ReplayRun/grid:G/hdf5:1/runs:R, what the merger does per run: the part read and the HDF5 writes;
// counter s_per_run) or into a target that does nothing (hdf5:0: reading the part alone). G = 1: the short
// grid's 480 runs (sleigh, rk4, 101 samples: the per-object costs); G = 0: the first 8 runs of the long grid
// (closed chain of 16 bars, 601 samples, about 300 KB of compressed chunks a run: the per-byte costs).
struct NullTarget : RunTarget {
  Object n = 0;
  void begin_run(const std::string&, long) override { n = 0; }
  void end_run() override {}
  Object group(Object, const std::string&) override { return ++n; }
  Object chunked_dataset(Object, const std::string&, hsize_t, bool, hsize_t) override { return ++n; }
  void write_chunk(Object, hsize_t, hsize_t, hsize_t, bool, const unsigned char*, size_t) override {}
  void write_rows(Object, hsize_t, hsize_t, hsize_t, bool, const double*) override {}
  Object whole_dataset(Object, const std::string&, hsize_t, hsize_t, bool, const double*) override { return ++n; }
  void attribute(Object, const std::string&, const AttrValue&) override {}
  void close(Object) override {}
  void guarded(const std::string&, const std::function<void()>& body) override { body(); }
};

// A grid's first `runs` runs (each integrated once) in one part under $TMPDIR, removed at exit.
struct GridPart {
  fs::path path;
  size_t runs = 0;
  GridPart(const std::string& grid, size_t max_runs) {
    const std::string ini = std::string(CLMBENCH_SOURCE_DIR) + "/bench/" + grid + ".ini";
    ConfigLayer layer = read_config_file(ini);
    apply_set(layer, "run.timing_budget=0");
    const SweepPlan plan = plan_sweep(ini, layer, (fs::temp_directory_path() / "clmbench_bench_replay.h5").string());
    path = fs::temp_directory_path() / ("clmbench_bench_replay_" + grid + "_" + std::to_string(::getpid()) + ".part");
    PartWriter writer(path.string());
    std::vector<std::string> configs;
    runs = std::min(max_runs, plan.runs.size());
    for (size_t k = 0; k < runs; ++k) {
      std::ostringstream log;
      PreparedRun prepared = prepare_run(plan.runs[k].spec, log, false);
      execute_run(prepared, &writer.run_observer(), false, nullptr);
      configs.push_back(part_config(plan, plan.runs[k].spec));
    }
    writer.commit({"bench", plan.sweep_config, plan.sweep_config}, configs);
  }
  ~GridPart() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// Each grid's part made on first use: a filter that selects one grid does not compute the other.
const GridPart& long_grid_part() {
  static const GridPart part("scale_long", 8);
  return part;
}
const GridPart& short_grid_part() {
  static const GridPart part("scale_short", 480);
  return part;
}

void BM_ReplayRun(benchmark::State& state) {
  const GridPart& grid = state.range(0) == 0 ? long_grid_part() : short_grid_part();
  const fs::path& part = grid.path;
  const auto contents = read_part(part.string());
  const fs::path out = fs::temp_directory_path() / ("clmbench_bench_replay_" + std::to_string(::getpid()) + ".h5");
  const size_t per_iteration = std::min(static_cast<size_t>(state.range(2)), grid.runs);
  long runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto file = std::make_unique<ResultsFile>(out.string(), std::vector<std::string>{}, WriterOptions{false, false, true, false});
    file->guarded("runs", [&] { file->runs_group(); });
    Hdf5RunTarget hdf5(*file);
    NullTarget null;
    RunTarget& target = state.range(1) ? static_cast<RunTarget&>(hdf5) : null;
    state.ResumeTiming();
    for (size_t r = 0; r < per_iteration; ++r) {
      target.guarded("run", [&] {
        target.begin_run(contents->run_ids[r], static_cast<long>(r));
        replay_run(part.string(), *contents, r, target);
        target.end_run();
      });
      ++runs;
    }
    state.PauseTiming();
    file.reset();
    state.ResumeTiming();
  }
  state.counters["s_per_run"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ReplayRun)
    ->ArgNames({"grid", "hdf5", "runs"})
    ->Args({1, 0, 480})
    ->Args({1, 1, 48})
    ->Args({1, 1, 480})
    ->Args({0, 0, 8})
    ->Args({0, 1, 8})
    ->Unit(benchmark::kMillisecond);

}  // namespace
