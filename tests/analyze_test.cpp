// Constraint analysis (analysis/constraint_analysis.hpp, `clmbench analyze`): rank and DOF bookkeeping, the
// Frobenius verdict (nonholonomic sleigh, disk, skate vs the integrable sphere in disguise), accessibility by
// iterated brackets, the coordinate-partition basis, the sphere's closed form against kkt, and the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "clmbench_process.hpp"
#include "app/problem_analysis.hpp"
#include "core/problem_registry.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/simulate.hpp"
#include "problems/chaplygin_sleigh.hpp"
#include "problems/rolling_disk.hpp"
#include "problems/skate_incline.hpp"
#include "problems/sphere_in_disguise.hpp"

using namespace clm;

namespace {

ConstraintAnalysis analyze(const std::string& problem, const std::map<std::string, double>& params = {},
                           const std::optional<Vec>& q = std::nullopt) {
  return analyze_problem(problem, params, q);
}

Vec random_q(std::mt19937& rng, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  Vec q(n);
  for (int i = 0; i < n; ++i) q[i] = u(rng);
  return q;
}

// A Pfaffian problem with its velocity_basis hidden, so the analysis falls back to the coordinate partition.
template <class Base>
struct WithoutBasis {
  static constexpr const char* kName = Base::kName;
  static constexpr const char* kDescription = Base::kDescription;
  static constexpr int kDof = Base::kDof;
  static constexpr int kConstraints = Base::kConstraints;
  static constexpr ConstraintKind kConstraintKind = Base::kConstraintKind;
  static constexpr std::array<ParameterSpec<WithoutBasis>, 0> kParameters{};
  Base base;
  int dof() const { return base.dof(); }
  int constraints() const { return base.constraints(); }
  void validate() const { base.validate(); }
  template <class T>
  void mass_matrix(const VecN<T, kDof>& q, MatN<T, kDof, kDof>& M) const {
    base.template mass_matrix<T>(q, M);
  }
  template <class T>
  T potential(const VecN<T, kDof>& q) const {
    return base.template potential<T>(q);
  }
  template <class T>
  void pfaffian(const VecN<T, kDof>& q, MatN<T, kConstraints, kDof>& A) const {
    base.template pfaffian<T>(q, A);
  }
  void default_initial(Vec& q0, Vec& qd0) const { base.default_initial(q0, qd0); }
};

// Chained form in R^5 (xd3 = x2 xd1, xd4 = x3 xd1, xd5 = x4 xd1): D = span{d1 + x2 d3 + x3 d4 + x4 d5, d2}
// needs brackets of depth 3 ([X1, [X1, [X1, X2]]] = -d5 up to sign) to span R^5; exercises both layers of
// central differences and the m = 3 partition.
struct ChainedForm {
  static constexpr const char* kName = "chained_form";
  static constexpr const char* kDescription = "test fixture";
  static constexpr int kDof = 5;
  static constexpr int kConstraints = 3;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr std::array<ParameterSpec<ChainedForm>, 0> kParameters{};
  int dof() const { return 5; }
  int constraints() const { return 3; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 5>&, MatN<T, 5, 5>& M) const {
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) M(i, j) = T(i == j ? 1.0 : 0.0);
  }
  template <class T>
  T potential(const VecN<T, 5>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 5>& q, MatN<T, 3, 5>& A) const {
    for (int r = 0; r < 3; ++r) {
      A(r, 0) = -q[r + 1];
      for (int j = 1; j < 5; ++j) A(r, j) = T(j == r + 2 ? 1.0 : 0.0);
    }
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.3, -0.2, 0.5, 0.1, -0.4;
    qd0 << 1, 0, q0[1], q0[2], q0[3];
  }
};

}  // namespace

TEST(ConstraintAnalysis, ChainedFormNeedsDepthThree) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const std::optional<Vec> q = trial == 0 ? std::nullopt : std::optional<Vec>(random_q(rng, 5, -2, 2));
    const ConstraintAnalysis a = analyze_constraints(ChainedForm{}, q);
    SCOPED_TRACE(trial);
    EXPECT_EQ(a.rank, 3);
    EXPECT_FALSE(a.integrable);
    EXPECT_EQ(a.accessible_dimension, 5);
    EXPECT_EQ(a.accessible_depth, 3);
    EXPECT_EQ(a.span_by_depth, (std::vector<int>{2, 3, 4, 5}));
  }
  ConstraintAnalysisOptions shallow;
  shallow.max_depth = 2;
  EXPECT_EQ(analyze_constraints(ChainedForm{}, std::nullopt, shallow).accessible_dimension, 4);
}

TEST(ConstraintAnalysis, FourBarHasOneDof) {
  const ConstraintAnalysis a = analyze("four_bar");
  EXPECT_EQ(a.n, 9);
  EXPECT_EQ(a.m, 8);
  EXPECT_EQ(a.rank, 8);
  EXPECT_EQ(a.dof, 1);
  EXPECT_TRUE(a.holonomic);
  EXPECT_TRUE(a.integrable);
  EXPECT_EQ(a.accessible_dimension, 1);
  EXPECT_NE(a.verdict.find("holonomic by construction"), std::string::npos);
  // Other link lengths (still a Grashof linkage that assembles): still one DOF.
  const ConstraintAnalysis b = analyze("four_bar", {{"L0", 1.1}, {"L1", 0.35}, {"L2", 1.0}, {"L3", 0.9}});
  EXPECT_EQ(b.rank, 8);
  EXPECT_EQ(b.dof, 1);
}

TEST(ConstraintAnalysis, ClosedChainDofIsNMinusTwo) {
  const ConstraintAnalysis a = analyze("closed_chain");
  EXPECT_EQ(a.n, 8);
  EXPECT_EQ(a.m, 2);
  EXPECT_EQ(a.rank, 2);
  EXPECT_EQ(a.dof, 6);
  EXPECT_EQ(a.accessible_dimension, 6);
  const ConstraintAnalysis b = analyze("closed_chain", {{"n", 13}, {"L", 0.2}, {"gx", 1.2}, {"gy", -0.3}});
  EXPECT_EQ(b.n, 13);
  EXPECT_EQ(b.dof, 11);
  // A straight chain (all angles 0) has parallel constraint rows: rank 1 there.
  const ConstraintAnalysis c = analyze("closed_chain", {}, Vec::Zero(8));
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.dof, 7);
}

// Sleigh: [X1, X2] = (sin th, -cos th, 0) with A = (-sin th, cos th, -b): the residual (sine of the angle
// between the bracket and D) is exactly 1/sqrt(1 + b^2), at every q; skate: 1; disk: the bracket
// (R sin phi, -R cos phi, 0, 0) is orthogonal to D, residual 1, and only the depth-2 bracket
// [X2, [X1, X2]] = (R cos phi, R sin phi, 0, 0) completes the span.
TEST(ConstraintAnalysis, SleighDiskSkateAreNonIntegrableAndFullyAccessible) {
  std::mt19937 rng(4);
  struct Case {
    std::string name;
    std::map<std::string, double> params;
    double residual;
    int depth;
  };
  const std::vector<Case> cases = {
      {"chaplygin_sleigh", {}, 1 / std::sqrt(1 + 0.3 * 0.3), 1},
      {"chaplygin_sleigh", {{"b", -0.8}, {"m", 2}, {"Ic", 0.3}}, 1 / std::sqrt(1 + 0.64), 1},
      {"skate_incline", {}, 1.0, 1},
      {"skate_incline", {{"g", 3}, {"J", 0.4}}, 1.0, 1},
      {"rolling_disk", {}, 1.0, 2},
      {"rolling_disk", {{"R", 1.3}, {"M", 2}}, 1.0, 2},
  };
  for (const Case& c : cases) {
    for (int trial = 0; trial < 6; ++trial) {
      const int n = problem_registry().get(c.name).make(c.params, true)->n();
      const std::optional<Vec> q = trial == 0 ? std::nullopt : std::optional<Vec>(random_q(rng, n, -4, 4));
      const ConstraintAnalysis a = analyze(c.name, c.params, q);
      SCOPED_TRACE(c.name + " trial " + std::to_string(trial));
      EXPECT_EQ(a.rank, a.m);
      EXPECT_EQ(a.dof, n - a.m);
      EXPECT_TRUE(a.analysed);
      EXPECT_FALSE(a.integrable);
      EXPECT_NEAR(a.max_bracket_residual, c.residual, 1e-12);
      EXPECT_EQ(a.accessible_dimension, n);
      EXPECT_EQ(a.accessible_depth, c.depth);
      EXPECT_NE(a.verdict.find("not integrable"), std::string::npos);
    }
  }
}

TEST(ConstraintAnalysis, DepthLimitStopsTheDiskShortOfFullAccessibility) {
  ConstraintAnalysisOptions opt;
  opt.max_depth = 1;
  const ConstraintAnalysis a = analyze_constraints(RollingDisk{}, std::nullopt, opt);
  EXPECT_EQ(a.accessible_dimension, 3);
  EXPECT_EQ(a.span_by_depth, (std::vector<int>{2, 3}));
  EXPECT_NE(a.verdict.find("3-dimensional subspace only"), std::string::npos);
}

TEST(ConstraintAnalysis, SphereInDisguiseIsIntegrable) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 8; ++trial) {
    const std::map<std::string, double> params = {{"R", 0.5 + trial * 0.3}};
    const std::optional<Vec> q = trial == 0 ? std::nullopt : std::optional<Vec>(random_q(rng, 3, -3, 3));
    const ConstraintAnalysis a = analyze("sphere_in_disguise", params, q);
    SCOPED_TRACE(trial);
    EXPECT_EQ(a.n, 3);
    EXPECT_EQ(a.m, 1);
    EXPECT_EQ(a.rank, 1);
    EXPECT_EQ(a.dof, 2);
    EXPECT_TRUE(a.analysed);
    EXPECT_TRUE(a.integrable);
    // Brackets in D to round-off: the partition brackets cancel to |B| ~ 1e-17 s, below the 1e-6 s floor of
    // the residual's denominator, so r <= 1e-16 / 1e-6 = 1e-10 (measured up to 2.2e-11); the sleigh's is 0.96.
    EXPECT_LT(a.max_bracket_residual, 1e-10);
    EXPECT_EQ(a.accessible_dimension, 2);
    EXPECT_EQ(a.accessible_depth, 0);
    EXPECT_NE(a.basis.find("coordinate partition"), std::string::npos);
    EXPECT_NE(a.verdict.find("holonomic in disguise"), std::string::npos);
  }
  // At the origin A = 0: rank 0, no bracket analysis.
  const ConstraintAnalysis z = analyze("sphere_in_disguise", {}, Vec::Zero(3));
  EXPECT_EQ(z.rank, 0);
  EXPECT_FALSE(z.analysed);
}

// The coordinate-partition basis (velocity_basis hidden) gives the same verdicts, with m = 2 (disk) going
// through the pivoted elimination of A_D.
TEST(ConstraintAnalysis, CoordinatePartitionAgreesOnNonholonomicProblems) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 5; ++trial) {
    const Vec q3 = random_q(rng, 3, -3, 3), q4 = random_q(rng, 4, -3, 3);
    const ConstraintAnalysis s = analyze_constraints(WithoutBasis<ChaplyginSleigh>{}, q3);
    const ConstraintAnalysis k = analyze_constraints(WithoutBasis<SkateIncline>{}, q3);
    const ConstraintAnalysis d = analyze_constraints(WithoutBasis<RollingDisk>{}, q4);
    for (const ConstraintAnalysis* a : {&s, &k, &d}) {
      SCOPED_TRACE(a->problem + " trial " + std::to_string(trial));
      EXPECT_NE(a->basis.find("coordinate partition"), std::string::npos);
      EXPECT_FALSE(a->integrable);
      EXPECT_GT(a->max_bracket_residual, 0.05);
      EXPECT_EQ(a->accessible_dimension, a->n);
    }
  }
}

// Uniform motion on the great circle (closed form) against the kkt formulation, off the defaults.
TEST(SphereInDisguise, ClosedFormMatchesKkt) {
  auto model = make_model("sphere_in_disguise", {{"m", 2.5}, {"R", 1.7}});
  Vec q0(3), qd0(3);
  q0 << 0.4, -1.1, 1.3;
  const Eigen::Vector3d p = q0, t1 = Eigen::Vector3d::UnitX() - p * p.x() / p.squaredNorm();
  qd0 = 0.9 * t1 + 0.3 * p.cross(t1) / p.norm();  // tangential: q0 . qd0 = 0
  ASSERT_LT(std::abs(q0.dot(qd0)), 1e-15);
  auto f = formulation_registry().get("kkt").make(model, {});
  auto integ = integrator_registry().get("rk4").make();
  Vec y0;
  f->initial_state(q0, qd0, y0);
  SimulationSettings sim;
  sim.t_end = 10;
  sim.output_every = 0.5;
  IntegratorSettings s;
  s.dt = 1e-3;
  Observation obs;
  Vec q(3), qd(3), lam(1);
  double err_q = 0, err_qd = 0, err_lambda = 0;
  int samples = 0;
  auto r = simulate(*f, *integ, y0, sim, s, [&](double t, const Vec& y) {
    f->observe(t, y, obs);
    ASSERT_TRUE(model->closed_form(t, q0, qd0, q, qd));
    err_q = std::max(err_q, (obs.q - q).norm());
    err_qd = std::max(err_qd, (obs.qd - qd).norm());
    ASSERT_TRUE(model->closed_form_multiplier(obs.q, obs.qd, lam));
    if (obs.lambda.size() == 1) err_lambda = std::max(err_lambda, std::abs(obs.lambda[0] - lam[0]) / std::abs(lam[0]));
    ++samples;
  });
  EXPECT_EQ(r.status, "ok") << r.message;
  EXPECT_GE(samples, 20);
  EXPECT_LT(err_q, 1e-9);
  EXPECT_LT(err_qd, 1e-9);
  EXPECT_LT(err_lambda, 1e-9);
  // The motion stays on the sphere |q| = |q0| (the integral manifold the analysis predicts).
  EXPECT_NEAR(obs.q.norm(), q0.norm(), 1e-10);
  // After one revolution, 2 pi / w, the closed form is back at q0.
  const double w = qd0.norm() / q0.norm();
  model->closed_form(2 * M_PI / w, q0, qd0, q, qd);
  EXPECT_LT((q - q0).norm(), 1e-12);
  EXPECT_LT((qd - qd0).norm(), 1e-12);
}

TEST(AnalyzeCli, PrintsTheVerdicts) {
  clm::testing::ScratchDir dir("analyze");
  const auto sleigh = dir.run("analyze --problem chaplygin_sleigh --param b=0.5");
  EXPECT_EQ(sleigh.exit_code, 0) << sleigh.err;
  EXPECT_NE(sleigh.out.find("DOF                2"), std::string::npos) << sleigh.out;
  EXPECT_NE(sleigh.out.find("integrable         no"), std::string::npos) << sleigh.out;
  EXPECT_NE(sleigh.out.find("accessible dim     3 of n = 3, reached at bracket depth 1"), std::string::npos)
      << sleigh.out;
  EXPECT_NE(sleigh.out.find("0.894"), std::string::npos) << sleigh.out;  // 1/sqrt(1 + 0.25)

  const auto sphere = dir.run("analyze --problem sphere_in_disguise --q0 -1,2,2");
  EXPECT_EQ(sphere.exit_code, 0) << sphere.err;
  EXPECT_NE(sphere.out.find("integrable         yes"), std::string::npos) << sphere.out;
  EXPECT_NE(sphere.out.find("accessible dim     2 of n = 3"), std::string::npos) << sphere.out;
  EXPECT_NE(sphere.out.find("-1, 2, 2"), std::string::npos) << sphere.out;

  const auto bar = dir.run("analyze --problem four_bar");
  EXPECT_EQ(bar.exit_code, 0) << bar.err;
  EXPECT_NE(bar.out.find("rank A(q)          8"), std::string::npos) << bar.out;
  EXPECT_NE(bar.out.find("DOF                1"), std::string::npos) << bar.out;

  // The first line says what the constraints are: time-dependent ones (analysed at t = 0) and none at all
  // included, not "holonomic h(q) = 0" for a particle without constraints.
  const std::pair<std::string, std::string> kinds[] = {
      {"chaplygin_sleigh", "(Pfaffian A(q) qd = 0)"},
      {"pendulum_cartesian", "(holonomic h(q) = 0)"},
      {"ball_on_turntable", "(Pfaffian A(q) qd + b = 0: the brackets are of ker A, analysed at t = 0)"},
      {std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/bead_on_rotating_hoop.toml",
       "(holonomic h(q, t) = 0, analysed at t = 0)"},
      {"charged_particle", "(no constraints)"}};
  for (const auto& [problem, kind] : kinds) {
    const auto a = dir.run("analyze --problem " + problem);
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out.substr(0, a.out.find('\n')).substr(a.out.find(" (")), " " + kind) << a.out;
  }
  const auto free = dir.run("analyze --problem charged_particle");
  EXPECT_NE(free.out.find("verdict            no constraints: every velocity is admissible, accessible dimension = n"),
            std::string::npos) << free.out;

  const auto help = dir.run("analyze --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--q0"), std::string::npos);
}

TEST(AnalyzeCli, RefusesBadInputWithOneLine) {
  clm::testing::ScratchDir dir("analyze_bad");
  for (const std::string& args :
       {std::string("analyze --problem no_such_problem"), std::string("analyze --problem rolling_disk --q0 1,2"),
        std::string("analyze --problem rolling_disk --param R=abc"), std::string("analyze"),
        std::string("analyze --problem rolling_disk --param nope=1")}) {
    const auto r = dir.run(args);
    SCOPED_TRACE(args);
    clm::testing::expect_one_line_error(r, 1, {});
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_NE(dir.run("analyze --problem no_such_problem").err.find("unknown problem 'no_such_problem'"),
            std::string::npos);
}
