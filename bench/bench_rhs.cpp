// One right-hand-side evaluation per formulation x zoo problem (Rhs/<problem>/<formulation>; pairs a
// formulation refuses are skipped with the reason; added_mass_multiplier is added_mass with
// added_mass_form = multiplier) against the problem's model-terms floor (ModelTerms/<problem>, and
// ModelTermsCurvature/<problem> for the formulations that also need C; README "Performance" has the
// table), and the closed_chain size scaling
// (n = 4 ... 64) against RBDL 3.3.1's constrained solvers (numbers in the README). The model part
// (autodiff or analytic M, c, A, Adot qd) and the linear-algebra part are also timed separately:
// BM_ModelTerms is the model alone; BM_Floor* are bare dense Eigen factorizations of the same matrices,
// the floor the formulation's own linear algebra is measured against. Every benchmark reports
// heap allocations per call (malloc is interposed by tests/allocation_counter.cpp): it must be 0.
// n_four_bar (IFToMM A02) against its loops on the sparse and dense paths (Rhs/n_four_bar/<f>/<path>), the
// sparse path's fitted cost exponent (RhsScaling, counter "exponent"), and the singular-position check
// (SingularPosition: the inertia screen, sparse and dense, against the SVD it replaced).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../tests/allocation_counter.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/loglog_fit.hpp"
#include "core/singular_position.hpp"
#include "runs/mechanism/file_model.hpp"
#include "runs/thread_cpu_time.hpp"
#include "core/problem_registry.hpp"

namespace {

using namespace clm;

// The RBDL anchor's mechanism: n uniform rods of 1 kg and 1 m, root at the origin, tip pinned to a ground
// point (here at 0.7 n L on the horizontal), gravity 9.81.
std::map<std::string, double> chain_params(int n) {
  return {{"n", double(n)}, {"m", 1.0}, {"L", 1.0}, {"g", 9.81}, {"gx", 0.7 * n}, {"gy", 0.0}};
}

std::shared_ptr<const Model> model_for(const std::string& problem, int n) {
  // n_four_bar: n is the number of loops (IFToMM A02; n = 3 (2 loops + 1) coordinates, 6 loops + 2 rows).
  if (problem == "n_four_bar") return make_model(problem, {{"loops", double(n)}});
  return make_model(problem, problem == "closed_chain" ? chain_params(n) : std::map<std::string, double>{});
}

void report_allocations(benchmark::State& state, std::size_t allocations) {
  state.counters["allocs_per_call"] =
      benchmark::Counter(double(allocations), benchmark::Counter::kAvgIterations);
}

// formulation "added_mass_multiplier" is added_mass with added_mass_form = multiplier.
void BM_Rhs(benchmark::State& state, const std::string& problem, const std::string& formulation_arg,
            const std::string& linear_algebra) {
  const int n_arg = int(state.range(0));
  FormulationOptions options;
  options.linear_algebra = linear_algebra;
  std::string formulation = formulation_arg;
  if (formulation == "added_mass_multiplier") {
    formulation = "added_mass";
    options.added_mass_form = "multiplier";
  }
  if (!problem_registry().contains(problem) || !formulation_registry().contains(formulation)) {
    state.SkipWithError("not registered");
    return;
  }
  auto model = model_for(problem, n_arg);
  if (const std::string why = formulation_registry().get(formulation).refuses(*model); !why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  auto f = formulation_registry().get(formulation).make(model, options);
  Vec q0, qd0, y, dy;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y);
  dy.resize(y.size());
  f->rhs(0.0, y, dy);  // warm-up outside the counted region
  clm::testing::start_counting_allocations();
  for (auto _ : state) {
    f->rhs(0.0, y, dy);
    benchmark::DoNotOptimize(dy.data());
  }
  report_allocations(state, clm::testing::stop_counting_allocations());
}

// The rhs cost of n_four_bar on the sparse path against loops = 5 .. 160 (n = 3 (2 loops + 1) = 33 .. 963),
// timed inside one benchmark (thread CPU time, best of 5 batches per size: the machine is shared) so that the fitted exponent of cost ~ n^p
// (core/loglog_fit.hpp) is reported with it: the counter "exponent" (the target: <= 1.2).
void BM_RhsScaling(benchmark::State& state, const std::string& formulation, const std::string& linear_algebra,
                   int max_loops) {
  FormulationOptions options;
  options.linear_algebra = linear_algebra;
  std::vector<double> sizes, costs;
  for (auto _ : state) {
    sizes.clear();
    costs.clear();
    for (int loops = 5; loops <= max_loops; loops *= 2) {
      auto model = make_model("n_four_bar", {{"loops", double(loops)}});
      auto f = formulation_registry().get(formulation).make(model, options);
      Vec q0, qd0, y, dy;
      model->default_initial(q0, qd0);
      f->initial_state(q0, qd0, y);
      dy.resize(y.size());
      f->rhs(0.0, y, dy);
      const int calls = std::max(200, 200000 / loops);
      double best = INFINITY;
      for (int batch = 0; batch < 5; ++batch) {
        const double start = thread_cpu_seconds();
        for (int i = 0; i < calls; ++i) {
          f->rhs(0.0, y, dy);
          benchmark::DoNotOptimize(dy.data());
        }
        best = std::min(best, (thread_cpu_seconds() - start) / calls);
      }
      sizes.push_back(model->n());
      costs.push_back(best);
      state.counters["us_loops_" + std::to_string(loops)] = best * 1e6;
    }
  }
  state.counters["exponent"] = fit_loglog(sizes, costs).slope;
}

// The singular-position test after a step (core/singular_position.hpp) at the square position of n_four_bar,
// sparse and dense screens, against the SVD test it replaces (dense A by autodiff and Eigen's BDCSVD).
void BM_SingularPosition(benchmark::State& state, const std::string& path) {
  auto model = make_model("n_four_bar", {{"loops", double(state.range(0))}});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  if (path == "svd") {
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    for (auto _ : state) {
      model->evaluate(0.0, q0, Vec::Zero(model->n()), kConstraintJacobian, *ws, t);
      const Vec s = Eigen::BDCSVD<Mat>(t.A).singularValues();
      benchmark::DoNotOptimize(s.data());
    }
    return;
  }
  SingularPositionTest test(*model, path == "sparse");
  test.check(q0);
  clm::testing::start_counting_allocations();
  for (auto _ : state) benchmark::DoNotOptimize(test.check(q0).size());
  report_allocations(state, clm::testing::stop_counting_allocations());
}

// The model-terms floor of a formulation: what one rhs must spend in Model::evaluate (kDynamics; with
// the constraint curvature for vakonomic and added_mass).
void BM_ModelTerms(benchmark::State& state, const std::string& problem, unsigned what) {
  const int n_arg = int(state.range(0));
  if (!problem_registry().contains(problem)) {
    state.SkipWithError("not registered");
    return;
  }
  auto model = model_for(problem, n_arg);
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  if (what & kConstraintCurvature) terms.C = Mat::Zero(model->m(), model->n());
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::start_counting_allocations();
  for (auto _ : state) {
    model->evaluate(0.0, q0, qd0, what, *ws, terms);
    benchmark::DoNotOptimize(terms.c.data());
  }
  report_allocations(state, clm::testing::stop_counting_allocations());
}

// The closed_chain model with analytic terms switched off: what pure autodiff costs at size n.
void BM_ModelTermsAutodiff(benchmark::State& state) {
  auto model = make_model("closed_chain", chain_params(int(state.range(0))), /*use_analytic=*/false);
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  for (auto _ : state) {
    model->evaluate(0.0, q0, qd0, kDynamics, *ws, terms);
    benchmark::DoNotOptimize(terms.c.data());
  }
}

// closed_chain with n bars as a mechanism file (written by tools/make_closed_chain_mechanism.py into the
// benchmark's temporary directory, once per n): kkt's model terms with the file's reverse-mode M and c
// (TapeProblem::analytic_terms, from 8 coordinates on) or AutoDiffModel's Jet passes over the same tapes.
// --separable writes cos(theta_k - theta_l) = c_k c_l + s_k s_l: 2n trigonometric calls instead of n(n-1)/2.
std::string closed_chain_file(int n, bool separable) {
  const std::string path = "/tmp/clmbench_bench_closed_chain_" + std::to_string(n) + (separable ? "_sep" : "") + ".toml";
  const std::string command = "python3 " + std::string(CLMBENCH_SOURCE_DIR) + "/tools/make_closed_chain_mechanism.py --n " +
                              std::to_string(n) + (separable ? " --separable" : "") + " --out " + path;
  if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  return path;
}

// evaluation: "reverse" (the tape's reverse-mode M and c), "jets" (AutoDiffModel's Jet passes over the tapes) or
// "native" (the compiled code of runs/mechanism/native_model.hpp).
void BM_ModelTermsFile(benchmark::State& state, const std::string& evaluation, bool separable) {
  const std::string file = closed_chain_file(int(state.range(0)), separable);
  auto model = evaluation == "native" ? make_file_model(file, {}, "native").model
                                      : make_model(file, {}, /*use_analytic=*/evaluation == "reverse");
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  model->evaluate(0.0, q0, qd0, kDynamics, *ws, terms);
  clm::testing::start_counting_allocations();
  for (auto _ : state) {
    model->evaluate(0.0, q0, qd0, kDynamics, *ws, terms);
    benchmark::DoNotOptimize(terms.c.data());
  }
  report_allocations(state, clm::testing::stop_counting_allocations());
}

// Dense Eigen floors on the closed_chain matrices: KKT by partial-pivot LU, Schur complement by LLT.
struct ChainMatrices {
  explicit ChainMatrices(int n) {
    auto model = model_for("closed_chain", n);
    auto ws = model->make_workspace();
    terms = model->make_terms();
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    model->evaluate(0.0, q0, qd0, kDynamics, *ws, terms);
  }
  ModelTerms terms;
};

void BM_FloorKktLu(benchmark::State& state) {
  ChainMatrices cm(int(state.range(0)));
  const auto& t = cm.terms;
  const int n = int(t.M.rows()), m = int(t.A.rows());
  Mat K = Mat::Zero(n + m, n + m);
  Vec b = Vec::Ones(n + m), x(n + m);
  Eigen::PartialPivLU<Mat> lu(n + m);
  for (auto _ : state) {
    K.topLeftCorner(n, n) = t.M;
    K.topRightCorner(n, m) = -t.A.transpose();
    K.bottomLeftCorner(m, n) = t.A;
    lu.compute(K);
    x = lu.solve(b);
    benchmark::DoNotOptimize(x.data());
  }
}

void BM_FloorSchurLlt(benchmark::State& state) {
  ChainMatrices cm(int(state.range(0)));
  const auto& t = cm.terms;
  const int n = int(t.M.rows()), m = int(t.A.rows());
  Eigen::LLT<Mat> llt_m(n), llt_s(m);
  Mat Y(n, m), S(m, m);
  Vec r = Vec::Ones(n), lam(m), qdd(n), tmp(n);
  for (auto _ : state) {
    llt_m.compute(t.M);
    Y = t.A.transpose();
    llt_m.matrixL().solveInPlace(Y);
    S.noalias() = Y.transpose() * Y;
    llt_s.compute(S);
    tmp = llt_m.solve(r);
    lam.noalias() = t.A * tmp;
    llt_s.solveInPlace(lam);
    qdd = r;
    qdd.noalias() += t.A.transpose() * lam;
    llt_m.solveInPlace(qdd);
    benchmark::DoNotOptimize(qdd.data());
  }
}

const char* const kProblems[] = {"pendulum_polar", "pendulum_cartesian", "slider_crank",    "four_bar",
                                 "chaplygin_sleigh", "rolling_disk",      "skate_incline", "sphere_in_disguise",
                                 "suslov"};
const char* const kFormulations[] = {"kkt", "schur", "nullspace"};
// A mechanism file (tests/data/mechanisms/NAME.toml, the zoo problem NAME written as a file) against the compiled
// zoo problem, both on the autodiff path (no hand-written terms): kkt's rhs, the tapes against the templates.
// The zoo problem (its autodiff terms) or its file version tests/data/mechanisms/STEM.toml; bars > 0: closed_chain's n.
// evaluation: "zoo" (the compiled zoo problem), "file" (the file as a run evaluates it by default: native where a C
// compiler is found), "tape" (the file's interpreted tape, AutoDiffModel's Jet passes).
void BM_FileRhs(benchmark::State& state, const std::string& problem, const std::string& stem, int bars,
                const std::string& evaluation) {
  const std::string name = evaluation != "zoo" ? std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/" + stem + ".toml" : problem;
  std::map<std::string, double> params;
  if (bars > 0) params["n"] = bars;
  auto model = evaluation == "file" ? make_file_model(name, params, "auto").model
                                    : make_model(name, params, /*use_analytic=*/false);
  auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
  Vec q0, qd0, y, dy;
  model->default_initial(q0, qd0);
  f->initial_state(q0, qd0, y);
  dy.resize(y.size());
  f->rhs(0.0, y, dy);
  clm::testing::start_counting_allocations();
  for (auto _ : state) {
    f->rhs(0.0, y, dy);
    benchmark::DoNotOptimize(dy.data());
  }
  report_allocations(state, clm::testing::stop_counting_allocations());
}

// Per zoo problem, every formulation (refused pairs are skipped with the reason).
const char* const kAllFormulations[] = {"kkt",        "schur",       "nullspace",  "penalty",        "added_mass",
                                        "added_mass_multiplier", "vakonomic", "substituted", "fernandez_bloch",
                                        "servo"};

int register_all() {
  for (const char* p : kProblems) {
    for (const char* f : kAllFormulations)
      benchmark::RegisterBenchmark((std::string("Rhs/") + p + "/" + f).c_str(), BM_Rhs, std::string(p), std::string(f),
                                   std::string("auto"))
          ->Arg(0);
    benchmark::RegisterBenchmark((std::string("ModelTerms/") + p).c_str(), BM_ModelTerms, std::string(p),
                                 unsigned(kDynamics))
        ->Arg(0);
    benchmark::RegisterBenchmark((std::string("ModelTermsCurvature/") + p).c_str(), BM_ModelTerms, std::string(p),
                                 unsigned(kDynamics | kConstraintCurvature))
        ->Arg(0);
  }
  for (const char* f : kFormulations)
    benchmark::RegisterBenchmark((std::string("Rhs/closed_chain/") + f).c_str(), BM_Rhs, std::string("closed_chain"),
                                 std::string(f), std::string("auto"))
        ->RangeMultiplier(2)
        ->Range(4, 64);
  // The N-four-bar mechanism against its number of loops, sparse and dense paths (docs/guide/performance.md): the
  // crossover at small sizes, the scaling up to 160 loops (dense up to 40: 80 costs seconds per benchmark).
  for (const char* f : {"kkt", "schur"}) {
    auto* sparse = benchmark::RegisterBenchmark((std::string("Rhs/n_four_bar/") + f + "/sparse").c_str(), BM_Rhs,
                                                std::string("n_four_bar"), std::string(f), std::string("sparse"));
    auto* dense = benchmark::RegisterBenchmark((std::string("Rhs/n_four_bar/") + f + "/dense").c_str(), BM_Rhs,
                                               std::string("n_four_bar"), std::string(f), std::string("dense"));
    for (int loops : {1, 2, 3, 5, 10, 20, 40}) {
      sparse->Arg(loops);
      dense->Arg(loops);
    }
    sparse->Arg(80)->Arg(160)->Unit(benchmark::kMicrosecond);
    dense->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("RhsScaling/n_four_bar/") + f + "/sparse").c_str(), BM_RhsScaling,
                                 std::string(f), std::string("sparse"), 160)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("RhsScaling/n_four_bar/") + f + "/dense").c_str(), BM_RhsScaling,
                                 std::string(f), std::string("dense"), 40)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* path : {"sparse", "dense", "svd"})
    benchmark::RegisterBenchmark((std::string("SingularPosition/n_four_bar/") + path).c_str(), BM_SingularPosition,
                                 std::string(path))
        ->Arg(5)
        ->Arg(10)
        ->Arg(20)
        ->Arg(40)
        ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("ModelTerms/closed_chain", BM_ModelTerms, std::string("closed_chain"), unsigned(kDynamics))
      ->RangeMultiplier(2)
      ->Range(4, 64);
  struct FileCase {
    const char* problem;
    const char* stem;
    int bars;
  };
  for (const FileCase c : {FileCase{"chaplygin_sleigh", "chaplygin_sleigh", 0},
                           FileCase{"pendulum_cartesian", "pendulum_cartesian", 0},
                           FileCase{"pendulum_polar", "pendulum_polar", 0},
                           FileCase{"ball_on_turntable", "ball_on_turntable", 0}, FileCase{"four_bar", "four_bar", 0},
                           FileCase{"rolling_disk", "rolling_disk", 0}, FileCase{"slider_crank", "slider_crank", 0},
                           FileCase{"closed_chain", "closed_chain_16", 16}})
    for (const char* evaluation : {"zoo", "file", "tape"})
      benchmark::RegisterBenchmark((std::string("FileRhs/") + c.stem + "/" + evaluation).c_str(), BM_FileRhs,
                                   std::string(c.problem), std::string(c.stem), c.bars, std::string(evaluation));
  benchmark::RegisterBenchmark("ModelTermsAutodiff/closed_chain", BM_ModelTermsAutodiff)->RangeMultiplier(2)->Range(4, 64);
  // From 8 bars: the file's default anchor (gx, gy) = (1.4, 0) is out of reach of 4 bars of 0.25 m.
  for (const bool separable : {false, true})
    for (const char* evaluation : {"reverse", "jets", "native"})
      benchmark::RegisterBenchmark((std::string("ModelTermsFile/closed_chain") + (separable ? "_separable" : "") +
                                    "/" + evaluation).c_str(),
                                   BM_ModelTermsFile, std::string(evaluation), separable)
          ->RangeMultiplier(2)
          ->Range(8, 64);
  benchmark::RegisterBenchmark("Floor/KktLu/closed_chain", BM_FloorKktLu)->RangeMultiplier(2)->Range(4, 64);
  benchmark::RegisterBenchmark("Floor/SchurLlt/closed_chain", BM_FloorSchurLlt)->RangeMultiplier(2)->Range(4, 64);
  return 0;
}
const int registered = register_all();

}  // namespace
