// Redundant (rank-deficient, consistent) constraints (issue 12, item 3): kkt and schur with minimum-norm
// multipliers (formulations/minimum_norm_multipliers.hpp), nullspace on the rank-r row space, the rank recorded
// by the runner, inconsistent constraints as one-line errors, no heap allocation per rhs on the redundant path,
// and Bricard's mechanism (problems/bricard.hpp, IFToMM A04).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "recorded_run.hpp"
#include "core/autodiff_model.hpp"
#include "core/consistency.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "app/problem_analysis.hpp"
#include "runs/runner.hpp"
#include "formulations/minimum_norm_multipliers.hpp"
#include "formulations/velocity_basis.hpp"

using namespace clm;

namespace {

const std::array<const char*, 3> kFormulations = {"kkt", "schur", "nullspace"};

// A Cartesian pendulum (mass 1, rod L = 1, g = 9.81) with its rod constraint written `copies` times; the last
// copy's length is L2 (L2 != L: no configuration satisfies all rows, an inconsistent set).
template <int kCopies>
struct CopiedPendulum {
  static constexpr const char* kName = kCopies == 1 ? "single_pendulum" : "copied_pendulum";
  static constexpr const char* kDescription = "pendulum with its rod constraint written several times (test only)";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = kCopies;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  double m = 1, L = 1, L2 = 1, g = 9.81;
  [[maybe_unused]] static constexpr std::array kParameters = {ParameterSpec<CopiedPendulum>{"m", &CopiedPendulum::m, "mass"}};
  int dof() const { return 2; }
  int constraints() const { return kCopies; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    M.setZero();
    M(0, 0) = T(m);
    M(1, 1) = T(m);
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return m * g * q[1];
  }
  template <class T>
  void constraint(const VecN<T, 2>& q, VecN<T, kCopies>& h) const {
    for (int i = 0; i < kCopies; ++i) {
      const double len = i == kCopies - 1 ? L2 : L;
      h[i] = 0.5 * (q[0] * q[0] + q[1] * q[1] - T(len * len));
    }
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.6, -0.8;
    qd0 << 0.8, 0.6;
  }
};

using SinglePendulum = CopiedPendulum<1>;
using DoubledPendulum = CopiedPendulum<2>;

clm::testing::RecordedRun run(std::shared_ptr<const Model> model, const std::string& formulation, double t_end,
                              double rtol, double atol, double every, FormulationOptions options = {}) {
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "dopri5";
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = 1e-4;
  rs.rtol = rtol;
  rs.atol = atol;
  rs.options = options;
  return clm::testing::record_run(model, formulation, q0, qd0, rs);
}

double max_relative_energy_error(const clm::testing::RecordedRun& tr) {
  const double e0 = tr.obs.front().energy;
  double worst = 0;
  for (const auto& o : tr.obs) worst = std::max(worst, std::abs(o.energy - e0) / std::max(1.0, std::abs(e0)));
  return worst;
}

}  // namespace

// The same pendulum with its constraint once and twice: the doubled one's kkt, schur and nullspace motion is the
// single one's, and the minimum-norm multipliers split the single multiplier equally.
TEST(RedundantConstraints, DoubledPendulumMatchesSingle) {
  auto single = std::make_shared<AutoDiffModel<SinglePendulum>>(SinglePendulum{});
  auto doubled = std::make_shared<AutoDiffModel<DoubledPendulum>>(DoubledPendulum{});
  const auto reference = run(single, "kkt", 3.0, 1e-12, 1e-14, 0.05);
  ASSERT_EQ(reference.result.status, "ok");
  for (const char* f : kFormulations) {
    const auto tr = run(doubled, f, 3.0, 1e-12, 1e-14, 0.05);
    ASSERT_EQ(tr.result.status, "ok") << f << ": " << tr.result.message;
    ASSERT_EQ(tr.obs.size(), reference.obs.size());
    double dq = 0, dlambda = 0;
    for (size_t k = 0; k < tr.obs.size(); ++k) {
      dq = std::max(dq, (tr.obs[k].q - reference.obs[k].q).lpNorm<Eigen::Infinity>());
      for (int i = 0; i < 2; ++i)
        dlambda = std::max(dlambda, std::abs(tr.obs[k].lambda[i] - 0.5 * reference.obs[k].lambda[0]));
    }
    std::printf("[ redundant ] doubled pendulum %-9s vs single kkt, 3 s dopri5 rtol 1e-12: max|dq| = %.2e, "
                "max|lambda_i - lambda/2| = %.2e\n",
                f, dq, dlambda);
    // Measured: kkt 1.4e-14 / 5.0e-14, schur 1.8e-14 / 9.2e-14 (the same steps as the single pendulum); nullspace
    // 8.5e-13 / 6.0e-12 (its own state (q, v), so its own steps).
    const bool same_steps = std::string(f) != "nullspace";
    EXPECT_LT(dq, same_steps ? 5e-14 : 2.5e-12) << f;
    EXPECT_LT(dlambda, same_steps ? 3e-13 : 2e-11) << f;
  }
}

// At one state: the minimum-norm split to rounding.
TEST(RedundantConstraints, MinimumNormSplitAtOneState) {
  auto single = std::make_shared<AutoDiffModel<SinglePendulum>>(SinglePendulum{});
  auto doubled = std::make_shared<AutoDiffModel<DoubledPendulum>>(DoubledPendulum{});
  Vec q0, qd0;
  single->default_initial(q0, qd0);
  Observation one;
  auto fs = formulation_registry().get("kkt").make(single, {});
  Vec y;
  fs->initial_state(q0, qd0, y);
  fs->observe(0, y, one);
  for (const char* f : kFormulations) {
    auto fd = formulation_registry().get(f).make(doubled, {});
    Vec yd;
    fd->initial_state(q0, qd0, yd);
    EXPECT_EQ(fd->dimension(), yd.size()) << f;
    Observation two;
    fd->observe(0, yd, two);
    ASSERT_EQ(two.lambda.size(), 2);
    // Measured: 1.8e-15 (kkt, schur), 0 (nullspace), |lambda| = 15.7.
    EXPECT_NEAR(two.lambda[0], 0.5 * one.lambda[0], 1e-14) << f;
    EXPECT_NEAR(two.lambda[1], 0.5 * one.lambda[0], 1e-14) << f;
  }
}

// Baumgarte terms keep working on the redundant path: with alpha = beta = 5 the doubled pendulum's drift under
// rk4 at a coarse step stays at the single one's (same stabilized constraint, counted twice).
TEST(RedundantConstraints, BaumgarteOnRedundantPath) {
  auto single = std::make_shared<AutoDiffModel<SinglePendulum>>(SinglePendulum{});
  auto doubled = std::make_shared<AutoDiffModel<DoubledPendulum>>(DoubledPendulum{});
  FormulationOptions o;
  o.baumgarte_alpha = 5;
  o.baumgarte_beta = 5;
  Vec q0, qd0;
  single->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.t_end = 20;
  rs.dt = 2e-2;
  rs.output_every = 0.1;
  rs.options = o;
  for (const char* f : {"kkt", "schur"}) {
    const auto a = clm::testing::record_run(single, f, q0, qd0, rs);
    const auto b = clm::testing::record_run(doubled, f, q0, qd0, rs);
    ASSERT_EQ(b.result.status, "ok") << b.result.message;
    double da = 0, db = 0, dq = 0;
    for (size_t k = 0; k < a.obs.size(); ++k) {
      da = std::max(da, a.obs[k].drift_position);
      db = std::max(db, b.obs[k].drift_position / std::sqrt(2.0));  // |h| of two equal rows = sqrt 2 |h1|
      dq = std::max(dq, (a.obs[k].q - b.obs[k].q).lpNorm<Eigen::Infinity>());
    }
    std::printf("[ redundant ] baumgarte %s rk4 dt 0.02, 20 s: max|h| single %.2e doubled %.2e, max|dq| %.2e\n", f, da,
                db, dq);
    // Measured: the same drift, 4.14e-7, and |dq| 1.1e-15 (kkt) / 7.5e-15 (schur).
    EXPECT_NEAR(db, da, 1e-6 * da) << f;
    EXPECT_LT(dq, 2e-14) << f;
  }
}

// Rank changes along a run, decided in minimum_norm_multipliers.hpp: a rank below r at a state is taken (the
// minimum-norm solution of the rank found); a rank above r with a right-hand side outside the kept range is
// inconsistent, one line.
TEST(RedundantConstraints, RankChangesAtOneEvaluation) {
  ModelTerms t;
  t.M = Mat::Identity(3, 3);
  t.A = Mat::Zero(2, 3);
  Vec f = Vec::Zero(3), gamma(2), qdd(3), lambda(2);
  // Rank dropped to 1 (two parallel rows) while the run's rank is 2: the minimum-norm solution of rank 1.
  t.A << 1, 0, 0, 2, 0, 0;
  gamma << 1, 2;
  MinimumNormMultipliers dropped(3, 2, 2);
  dropped.solve(t, f, gamma, "kkt", qdd, lambda);
  EXPECT_EQ(dropped.last_rank(), 1);
  EXPECT_NEAR((t.A * qdd - gamma).norm(), 0, 1e-15);
  EXPECT_NEAR(lambda[0], 0.2, 1e-15);  // lambda = (1, 2)/5: the least-norm pair with lambda1 + 2 lambda2 = 1
  EXPECT_NEAR(lambda[1], 0.4, 1e-15);
  // Rank 2 where the run found 1: gamma outside the kept range is inconsistent.
  t.A << 1, 0, 0, 0, 1, 0;
  MinimumNormMultipliers rose(3, 2, 1);
  try {
    rose.solve(t, f, gamma, "schur", qdd, lambda);
    ADD_FAILURE() << "an inconsistent system was solved";
  } catch (const NumericalFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("schur: inconsistent constraints"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// Inconsistent constraints: no configuration satisfies both copies (L = 1, L2 = 1.2). The initial projection
// refuses in one line; started where the first copy holds, the Baumgarte term asks A qdd for two different
// values along the same row: the run fails naming it.
TEST(RedundantConstraints, InconsistentConstraintsOneLine) {
  DoubledPendulum p;
  p.L2 = 1.2;
  auto model = std::make_shared<AutoDiffModel<DoubledPendulum>>(p);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  {
    Vec q = q0, qd = qd0;
    try {
      project_onto_constraints(*model, q, qd);
      ADD_FAILURE() << "inconsistent constraints were projected onto";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("cannot be projected onto h(q) = 0"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  FormulationOptions o;
  o.baumgarte_beta = 5;
  for (const char* f : {"kkt", "schur"}) {
    const auto tr = run(model, f, 1.0, 1e-10, 1e-12, 0.1, o);
    EXPECT_EQ(tr.result.status, "failed") << f;
    EXPECT_NE(tr.result.message.find("inconsistent constraints"), std::string::npos) << tr.result.message;
    EXPECT_EQ(tr.result.message.find('\n'), std::string::npos) << tr.result.message;
  }
}

TEST(RedundantConstraints, VakonomicStillRefusesNamingWhoAccepts) {
  auto model = std::make_shared<AutoDiffModel<DoubledPendulum>>(DoubledPendulum{});
  Vec q0, qd0, y;
  model->default_initial(q0, qd0);
  auto form = formulation_registry().get("vakonomic").make(model, {});
  try {
    form->initial_state(q0, qd0, y);
    ADD_FAILURE() << "vakonomic accepted redundant constraints";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1 < 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("supported by kkt, schur, nullspace and augmented_lagrangian"), std::string::npos) << msg;
  }
}

// Non-square B = L^-1 A^T (JacobiSVD's QR-preconditioned path): n = 3 > m = 2 (a spherical pendulum with its
// constraint twice) and n = 2 < m = 3 (the planar one three times).
namespace {
struct DoubledSphericalPendulum {
  static constexpr const char* kName = "doubled_spherical_pendulum";
  static constexpr const char* kDescription = "spherical pendulum with its rod constraint twice (test only)";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  double g = 9.81;
  [[maybe_unused]] static constexpr std::array kParameters = {
      ParameterSpec<DoubledSphericalPendulum>{"g", &DoubledSphericalPendulum::g, "gravity"}};
  int dof() const { return 3; }
  int constraints() const { return 2; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    M.setIdentity();
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    return g * q[2];
  }
  template <class T>
  void constraint(const VecN<T, 3>& q, VecN<T, 2>& h) const {
    h[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - T(1));
    h[1] = h[0];
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.6, 0, -0.8;
    qd0 << 0, 1, 0;
  }
};
}  // namespace

TEST(RedundantConstraints, RhsDoesNotAllocate) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  std::vector<std::shared_ptr<const Model>> models = {
      std::make_shared<AutoDiffModel<DoubledPendulum>>(DoubledPendulum{}),
      std::make_shared<AutoDiffModel<CopiedPendulum<3>>>(CopiedPendulum<3>{}),
      std::make_shared<AutoDiffModel<DoubledSphericalPendulum>>(DoubledSphericalPendulum{}), make_model("bricard")};
  for (const auto& model : models) {
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    for (const char* f : kFormulations) {
      auto form = formulation_registry().get(f).make(model, {});
      Vec y;
      form->initial_state(q0, qd0, y);
      Vec dy(form->dimension());
      form->rhs(0, y, dy);
      Vec y_step = y + 1e-3 * dy;
      std::size_t count;
      {
        clm::testing::AllocationScope scope;
        for (int i = 0; i < 5; ++i) form->rhs(0.1 * i, y, dy);
        form->after_step(0.1, y_step);
        count = scope.count();
      }
      EXPECT_EQ(count, 0u) << model->name() << " / " << f;
      EXPECT_TRUE(dy.allFinite()) << model->name() << " / " << f;
    }
  }
}

// ---- Bricard's mechanism ---------------------------------------------------------------------------------

TEST(Bricard, GrublerZeroMobilityOne) {
  auto model = make_model("bricard");
  EXPECT_EQ(model->n(), 24);
  EXPECT_EQ(model->m(), 24);  // Grubler: n - m = 0
  const ConstraintAnalysis a = analyze_problem("bricard", {}, std::nullopt);
  EXPECT_EQ(a.m, 24);
  EXPECT_EQ(a.rank, 23);
  EXPECT_EQ(a.dof, 1);
  const std::string text = format_constraint_analysis(a);
  EXPECT_NE(text.find("redundant rows     1"), std::string::npos) << text;
  EXPECT_NE(text.find("the mobility is n - rank = 1"), std::string::npos) << text;
}

// 10 s (the benchmark's duration) under kkt, schur and nullspace, dopri5 rtol 1e-10: status ok, energy
// conserved, and the reference point P3 = (x3, y3, z3) the same under all three.
TEST(Bricard, TenSecondsAgreeAcrossFormulations) {
  auto model = make_model("bricard");
  std::vector<clm::testing::RecordedRun> runs;
  for (const char* f : kFormulations) {
    runs.push_back(run(model, f, 10.0, 1e-10, 1e-12, 0.1));
    const auto& tr = runs.back();
    ASSERT_EQ(tr.result.status, "ok") << f << ": " << tr.result.message;
    double drift = 0;
    for (const auto& o : tr.obs) drift = std::max(drift, o.drift_position);
    const double de = max_relative_energy_error(tr);
    std::printf("[ bricard ] %-9s 10 s dopri5 rtol 1e-10: %ld steps, max rel energy error %.2e, max |h| %.2e, "
                "P3(10) = (%.9f, %.9f, %.9f)\n",
                f, tr.result.stats.steps, de, drift, tr.obs.back().q[3], tr.obs.back().q[4], tr.obs.back().q[5]);
    // Measured: energy 5.2e-10 (kkt), 6.1e-10 (schur), 3.2e-11 (nullspace); |h| 2.9e-9 (kkt), 3.35e-9
    // (schur), 2.0e-10 (nullspace).
    EXPECT_LT(de, 2e-9) << f;
    EXPECT_LT(drift, 1e-8) << f;
  }
  // The loop really moves: P3 leaves its start (1, -1, 0).
  double travel = 0;
  for (const auto& o : runs[0].obs) travel = std::max(travel, std::abs(o.q[4] + 1.0));
  EXPECT_GT(travel, 0.1);
  // nullspace's multipliers (read back by a minimum-norm least-squares solve) against kkt's.
  double dlambda = 0, lambda_max = 0;
  for (size_t k = 0; k < runs[0].obs.size(); ++k) {
    dlambda = std::max(dlambda, (runs[2].obs[k].lambda - runs[0].obs[k].lambda).lpNorm<Eigen::Infinity>());
    lambda_max = std::max(lambda_max, runs[0].obs[k].lambda.lpNorm<Eigen::Infinity>());
  }
  std::printf("[ bricard ] multipliers kkt vs nullspace: max|dlambda| = %.2e (|lambda| up to %.1f)\n", dlambda,
              lambda_max);
  // Measured: 2.4e-8 (|lambda| up to 24; the two trajectories differ by 1.6e-9 in P3).
  EXPECT_LT(dlambda, 7e-8);
  for (size_t i = 1; i < runs.size(); ++i) {
    double dp = 0;
    for (size_t k = 0; k < runs[0].obs.size(); ++k)
      dp = std::max(dp, (runs[i].obs[k].q.segment(3, 3) - runs[0].obs[k].q.segment(3, 3)).lpNorm<Eigen::Infinity>());
    std::printf("[ bricard ] P3 trajectory kkt vs %-9s: max|dP3| = %.2e\n", kFormulations[i], dp);
    // Measured: schur 2.8e-10, nullspace 1.6e-9 (three independent paths: eigen-decomposition of K, SVD of
    // L^-1 A^T, the rank-r row space).
    EXPECT_LT(dp, 5e-9) << kFormulations[i];
  }
}

// Along the kkt run's samples: the two minimum-norm solvers (kkt's eigen-decomposition of K, schur's SVD of
// L^-1 A^T) give the same qdd and multipliers, and the part of the right-hand side outside the range kept (the consistency
// residual) stays far below kConsistencyTolerance.
TEST(Bricard, MinimumNormSolversAgreeAlongTheRun) {
  auto model = make_model("bricard");
  const auto tr = run(model, "kkt", 10.0, 1e-10, 1e-12, 0.5);
  ASSERT_EQ(tr.result.status, "ok") << tr.result.message;
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  MinimumNormSaddlePoint kkt(24, 24, 23);
  MinimumNormMultipliers schur(24, 24, 23);
  Vec f(24), gamma(24), qdd_k(24), qdd_s(24), lambda_k(24), lambda_s(24);
  double dqdd = 0, dlambda = 0, lambda_max = 0, residual = 0;
  for (const auto& o : tr.obs) {
    model->evaluate(0, o.q, o.qd, kDynamics, *ws, t);
    f = t.F - t.c;
    gamma = -t.Adot_qd;
    kkt.solve(t, f, gamma, "kkt", qdd_k, lambda_k);
    schur.solve(t, f, gamma, "schur", qdd_s, lambda_s);
    EXPECT_EQ(kkt.last_rank(), 24 + 23);
    EXPECT_EQ(schur.last_rank(), 23);
    dqdd = std::max(dqdd, (qdd_k - qdd_s).lpNorm<Eigen::Infinity>());
    dlambda = std::max(dlambda, (lambda_k - lambda_s).lpNorm<Eigen::Infinity>());
    lambda_max = std::max(lambda_max, lambda_k.lpNorm<Eigen::Infinity>());
    residual = std::max({residual, kkt.last_residual(), schur.last_residual()});
  }
  std::printf("[ bricard ] kkt (eigen-decomposition of K) vs schur (SVD of L^-1 A^T) at %zu samples: max|dqdd| = %.2e, "
              "max|dlambda| = %.2e (|lambda| up to %.1f), largest consistency residual %.2e\n",
              tr.obs.size(), dqdd, dlambda, lambda_max, residual);
  // Measured: |dqdd| 1.2e-11, |dlambda| 1.5e-9 (6e-11 of |lambda|), residual 2.9e-11.
  EXPECT_LT(dqdd, 4e-11);
  EXPECT_LT(dlambda, 5e-9);
  EXPECT_LT(residual, 1e-10);
}

// The runner records the rank at q0 (HDF5 attribute constraint_rank).
TEST(Bricard, RunRecordsConstraintRank) {
  RunSpec spec;
  spec.run_id = "bricard_kkt_dopri5";
  spec.problem = "bricard";
  spec.formulation = "kkt";
  spec.integrator = "dopri5";
  spec.t_end = 0.5;
  spec.output_every = 0.1;
  std::ostringstream log;
  PreparedRun prepared = prepare_run(spec, log);
  EXPECT_EQ(prepared.constraint_rank, 23);
  const RunRecord r = execute_run(prepared);
  EXPECT_EQ(r.status, "ok") << r.message;
  EXPECT_EQ(r.constraint_rank, 23);
  EXPECT_EQ(r.m, 24);
}

// Coordinate projection (A M^-1 A^T) cannot take redundant constraints: refused before the run, one line.
TEST(Bricard, CoordinateProjectionRefusedInOneLine) {
  RunSpec spec;
  spec.run_id = "b";
  spec.problem = "bricard";
  spec.formulation = "kkt";
  spec.integrator = "dopri5";
  spec.options.projection = "position";
  std::ostringstream log;
  try {
    prepare_run(spec, log);
    ADD_FAILURE() << "projection accepted redundant constraints";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 23 < 24"), std::string::npos) << msg;
    EXPECT_NE(msg.find("projection = none"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// The results file records the rank (`constraint_rank`, printed by `clmbench info --run`), and `clmbench
// analyze` prints m, the rank and the mobility.
TEST(Bricard, CliRecordsRankAndAnalyzeReportsMobility) {
  clm::testing::ScratchDir dir("bricard");
  const auto run = dir.run("run --problem bricard --formulation nullspace --integrator dopri5 --t-end 0.2 --out b.h5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto info = dir.run("info b.h5 --run bricard_nullspace_dopri5");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("constraint_rank = 23\n"), std::string::npos) << info.out;
  const auto bar = dir.run("run --problem four_bar --formulation kkt --integrator rk4 --t-end 0.1 --out f.h5");
  ASSERT_EQ(bar.exit_code, 0) << bar.err;
  EXPECT_NE(dir.run("info f.h5 --run four_bar_kkt_rk4").out.find("constraint_rank = 8\n"), std::string::npos);
  const auto analyze = dir.run("analyze --problem bricard");
  ASSERT_EQ(analyze.exit_code, 0) << analyze.err;
  EXPECT_NE(analyze.out.find("m                  24"), std::string::npos) << analyze.out;
  EXPECT_NE(analyze.out.find("rank A(q)          23"), std::string::npos) << analyze.out;
  EXPECT_NE(analyze.out.find("DOF                1 = n - rank"), std::string::npos) << analyze.out;
  EXPECT_NE(analyze.out.find("Grubler's count n - m = 0; the mobility is n - rank = 1"), std::string::npos)
      << analyze.out;
}

// nullspace with a natural velocity basis (n - m columns) cannot span the n - r admissible velocities: refused.
namespace {
struct DoubledPendulumWithBasis : DoubledPendulum {
  template <class T>
  void velocity_basis(const VecN<T, 2>& q, MatN<T, 2, Eigen::Dynamic>& S) const {
    S.resize(2, 0);  // n - m = 0 columns: the tangent direction (-y, x) is missing
    (void)q;
  }
};
}  // namespace

TEST(RedundantConstraints, NullspaceRefusesANaturalBasisInOneLine) {
  auto model = std::make_shared<AutoDiffModel<DoubledPendulumWithBasis>>(DoubledPendulumWithBasis{});
  add_velocity_basis(*model, DoubledPendulumWithBasis{});
  Vec q0(2), qd0(2), y;
  model->default_initial(q0, qd0);
  auto form = formulation_registry().get("nullspace").make(model, {});
  try {
    form->initial_state(q0, qd0, y);
    ADD_FAILURE() << "nullspace accepted a natural basis for redundant constraints";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1 < 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("natural velocity basis"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}
