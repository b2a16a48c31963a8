// The run summary's cost per sample against the run length (issue 9, defect 1): the closed-form reference
// is carried from sample to sample, so the cost per sample must not grow with t_end.
#include <benchmark/benchmark.h>

#include "core/problem_registry.hpp"
#include "runs/run_summary.hpp"

namespace {

using namespace clm;

void BM_SleighSummaryPerSample(benchmark::State& state) {
  const auto model = make_model("chaplygin_sleigh");
  Vec q0(3), qd0(3);
  model->default_initial(q0, qd0);
  const double t_end = double(state.range(0)), dt = 0.01;
  const long K = long(t_end / dt);
  // One trajectory, computed once: the benchmark times the summary alone.
  std::vector<Observation> samples(K + 1);
  for (long k = 0; k <= K; ++k) {
    samples[k].lambda = Vec::Zero(1);
    if (k == 0) model->closed_form(0.0, q0, qd0, samples[k].q, samples[k].qd);
    else model->closed_form_from((k - 1) * dt, samples[k - 1].q, k * dt, q0, qd0, samples[k].q, samples[k].qd);
  }
  for (auto _ : state) {
    RunSummaryAccumulator summary(*model, q0, qd0, false);
    for (long k = 0; k <= K; ++k) summary.add(k * dt, samples[k]);
    benchmark::DoNotOptimize(summary.finish());
  }
  state.counters["ns_per_sample"] =
      benchmark::Counter(double(K + 1), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SleighSummaryPerSample)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
