// The sparse path for mechanisms built from bodies and joints (docs/design.md "Sparse path"; n_four_bar, IFToMM
// A02): the joint-local sparse terms against the whole-vector autodiff of the dense model, sparse kkt and schur
// against their dense paths (accelerations, multipliers, a short run), no heap allocation per rhs, and the
// singular-position test's inertia screen against the SVD.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "allocation_counter.hpp"
#include "core/autodiff_model.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "core/singular_position.hpp"
#include "formulations/acceleration_formulation.hpp"
#include "formulations/coordinate_projection.hpp"
#include "integrators/constraint_hessian.hpp"
#include "problems/n_four_bar.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

using namespace clm;

Vec parallelogram(int N, double phi, double L = 1);  // tests/n_four_bar_test.cpp

namespace {

std::shared_ptr<const Model> n_four_bar(int loops) { return make_model("n_four_bar", {{"loops", double(loops)}}); }

// A state off the parallelogram and off the constraints: every term nonzero and generic.
void generic_state(int n, Vec& q, Vec& qd) {
  q.resize(n);
  qd.resize(n);
  for (int i = 0; i < n; ++i) {
    q[i] = 0.3 + 0.7 * std::sin(1.3 * i + 0.2);
    qd[i] = 0.5 * std::cos(0.9 * i - 0.4);
  }
}

// A consistent state: the parallelogram at crank angle phi, turning at phid (B_i = A_i + L (sin phi, cos phi)).
void parallelogram_state(int N, double phi, double phid, Vec& q, Vec& qd) {
  const double h = 1e-6;  // qd by the exact derivative of the closed-form positions
  q = parallelogram(N, phi);
  qd = (parallelogram(N, phi + h) - parallelogram(N, phi - h)) / (2 * h) * phid;
  // Exact: the positions are trigonometric in phi; differentiate analytically instead of trusting h.
  for (int i = 0; i <= N; ++i) {
    qd.segment<3>(6 * i) << 0.5 * std::cos(phi) * phid, -0.5 * std::sin(phi) * phid, -phid;
    if (i >= 1) qd.segment<3>(6 * i - 3) << std::cos(phi) * phid, -std::sin(phi) * phid, 0;
  }
}

double relative(const Vec& a, const Vec& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
}

std::unique_ptr<Formulation> make(const std::shared_ptr<const Model>& model, const std::string& formulation,
                                  const std::string& linear_algebra) {
  FormulationOptions options;
  options.linear_algebra = linear_algebra;
  return formulation_registry().get(formulation).make(model, options);
}

// One evaluation of `formulation` with `linear_algebra` at (q, qd): the rate dy, the multipliers, and whether it
// took the sparse path.
struct Evaluation {
  Vec dy, lambda;
  bool sparse = false;
};
Evaluation evaluate_at(const std::shared_ptr<const Model>& model, const std::string& formulation,
                       const std::string& linear_algebra, const Vec& q, const Vec& qd) {
  auto f = make(model, formulation, linear_algebra);
  Vec y;
  f->initial_state(q, qd, y);
  Evaluation e;
  e.dy.resize(y.size());
  f->rhs(0, y, e.dy);
  Observation o;
  f->observe(0, y, o);
  e.lambda = o.lambda;
  e.sparse = dynamic_cast<const AccelerationFormulation&>(*f).uses_sparse_path();
  return e;
}

}  // namespace

// Every sparse term equals the dense model's (whole-vector autodiff of constraint(); mass_matrix, potential by
// autodiff, and analytic_terms) to rounding, at a generic state off the constraints.
TEST(SparsePath, TermsEqualTheDenseModelsForNFourBar) {
  for (int N : {1, 3, 10}) {
    NFourBar p;
    p.loops = N;
    const AutoDiffModel<NFourBar> autodiff(p, /*use_analytic=*/false);
    auto model = n_four_bar(N);
    ASSERT_TRUE(model->has_sparse_terms());
    ASSERT_EQ(model->sparse_block_size(), 3);
    Vec q, qd;
    generic_state(model->n(), q, qd);
    auto ws = autodiff.make_workspace();
    ModelTerms dense = autodiff.make_terms();
    autodiff.evaluate(0, q, qd, kDynamics, *ws, dense);
    auto sws = model->make_workspace();
    SparseModelTerms sparse = model->make_sparse_terms();
    model->evaluate_sparse(0, q, qd, kDynamics, *sws, sparse);
    EXPECT_EQ(Mat(sparse.M), dense.M) << N;  // constant diagonal: exact
    EXPECT_LT(relative(sparse.c, dense.c), 1e-15) << N;
    EXPECT_LT((Mat(sparse.A) - dense.A).lpNorm<Eigen::Infinity>(), 1e-15) << N;
    EXPECT_LT(relative(sparse.Adot_qd, dense.Adot_qd), 1e-15) << N;
    EXPECT_LT(relative(sparse.h, dense.h), 1e-15) << N;
    EXPECT_EQ(sparse.F, dense.F);
    // The pattern: every row of a joint stores all of the joint's coordinates (3 for a ground pin, 6 for a
    // pin between two bars), structural zeros included.
    EXPECT_EQ(sparse.A.nonZeros(), 2 * 3 * (N + 1) + 2 * 6 * (2 * N)) << N;
  }
}

// Sparse kkt and schur against their dense paths: accelerations and multipliers at consistent states (the
// square start, and the parallelogram at 0.7 rad turning at 2 rad/s) to ~1e-13 relative.
TEST(SparsePath, KktAndSchurAgreeWithTheDensePath) {
  for (int N : {3, 10}) {
    auto model = n_four_bar(N);
    for (int state = 0; state < 2; ++state) {
      Vec q, qd;
      if (state == 0) model->default_initial(q, qd);
      else parallelogram_state(N, 0.7, 2.0, q, qd);
      for (const char* formulation : {"kkt", "schur"}) {
        const Evaluation dense = evaluate_at(model, formulation, "dense", q, qd);
        const Evaluation sparse = evaluate_at(model, formulation, "sparse", q, qd);
        ASSERT_TRUE(sparse.sparse);
        ASSERT_FALSE(dense.sparse);
        const Vec& dy_sparse = sparse.dy;
        EXPECT_LT(relative(sparse.dy, dense.dy), 1e-13) << formulation << " N = " << N << " state " << state;
        EXPECT_LT(relative(sparse.lambda, dense.lambda), 1e-13)
            << formulation << " N = " << N << " state " << state;
        // The reduced model's acceleration: J phidd = K sin phi, crank angular acceleration -phidd.
        const double phi = state == 0 ? 0.0 : 0.7;
        const double J = (N + 1) / 3.0 + N, K = 9.81 * ((N + 1) / 2.0 + N);
        EXPECT_NEAR(dy_sparse[q.size() + 2], -K / J * std::sin(phi), 1e-12 * K / J) << formulation;
      }
    }
  }
}

// A short dopri5 run (0.5 s, rtol 1e-9) on the sparse path equals the dense one to rounding-level differences:
// the same steps, positions within 1e-12 (measured 3.6e-13 for kkt).
TEST(SparsePath, ShortRunAgreesWithTheDensePath) {
  auto model = n_four_bar(3);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  for (const char* formulation : {"kkt", "schur"}) {
    clm::testing::RunSettings rs;
    rs.t_end = 0.5;
    rs.output_every = 0.1;
    rs.rtol = 1e-9;
    rs.atol = 1e-11;
    rs.options.linear_algebra = "dense";
    const auto dense = clm::testing::record_run(model, formulation, q0, qd0, rs);
    rs.options.linear_algebra = "sparse";
    const auto sparse = clm::testing::record_run(model, formulation, q0, qd0, rs);
    ASSERT_EQ(dense.result.status, "ok");
    ASSERT_EQ(sparse.result.status, "ok");
    EXPECT_EQ(dense.result.stats.steps, sparse.result.stats.steps) << formulation;
    const double difference = clm::testing::max_q_difference(dense, sparse);
    std::printf("%s: sparse and dense runs differ by %.2e in q\n", formulation, difference);
    EXPECT_LT(difference, 1e-12) << formulation;
  }
}

// No heap allocation per rhs on the sparse path after the first call, at the benchmark's size.
TEST(SparsePath, RhsAllocatesNothing) {
  auto model = n_four_bar(40);
  Vec q0, qd0, y, dy;
  model->default_initial(q0, qd0);
  for (const char* formulation : {"kkt", "schur"}) {
    auto f = make(model, formulation, "sparse");
    f->initial_state(q0, qd0, y);
    dy.resize(y.size());
    f->rhs(0, y, dy);
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 5; ++i) f->rhs(0, y, dy);
    EXPECT_EQ(scope.count(), 0u) << formulation;
  }
}

// The singular-position check after a step allocates nothing away from the singular positions, on the sparse
// path and on the dense one.
TEST(SparsePath, SingularPositionCheckAllocatesNothing) {
  auto model = n_four_bar(10);
  Vec q0, qd0, y;
  model->default_initial(q0, qd0);
  for (const char* linear_algebra : {"sparse", "dense"}) {
    auto f = make(model, "schur", linear_algebra);
    f->initial_state(q0, qd0, y);
    f->after_step(0, y);  // the first call makes the test's workspace
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 5; ++i) f->after_step(0, y);
    EXPECT_EQ(scope.count(), 0u) << linear_algebra;
  }
  for (bool allow_sparse : {true, false}) {
    SingularPositionTest test(*model, allow_sparse);
    test.check(q0);
    clm::testing::AllocationScope scope;
    EXPECT_EQ(test.check(q0), "");
    EXPECT_EQ(scope.count(), 0u) << allow_sparse;
  }
}

// The inertia screen never misses what the SVD finds (it is a bound), and it passes few configurations to the
// SVD: on the parallelogram swept towards the horizontal position (phi = pi/2, where A loses N ranks), the
// SVD flags the last 0.007 .. 0.013 rad (kSingularPositionRatio); the screen flags a window 1.31 times wider (the
// slack of |A|_1 |A|_inf over sigma_max^2): 0.0094 against 0.0071 rad (N = 3), 0.0165 against 0.0126 (N = 10).
TEST(SparsePath, SingularPositionScreenIsConservativeAndTight) {
  for (int N : {3, 10}) {
    auto model = n_four_bar(N);
    for (bool allow_sparse : {true, false}) {
      SingularPositionTest test(*model, allow_sparse);
      double first_flagged_screen = NAN, first_flagged_svd = NAN;
      for (int k = 0; k <= 2000; ++k) {
        const double phi = std::numbers::pi / 2 * k / 2000.0;
        const Vec q = parallelogram(N, phi);
        const bool screen = test.may_be_singular(q);
        const bool svd = !test.check(q).empty();
        if (svd) EXPECT_TRUE(screen) << "N = " << N << " phi = " << phi;
        if (screen && std::isnan(first_flagged_screen)) first_flagged_screen = phi;
        if (svd && std::isnan(first_flagged_svd)) first_flagged_svd = phi;
      }
      const double svd_window = std::numbers::pi / 2 - first_flagged_svd;
      const double screen_window = std::numbers::pi / 2 - first_flagged_screen;
      std::printf("N = %d %s: SVD flags the last %.4f rad, the screen the last %.4f rad\n", N,
                  allow_sparse ? "sparse" : "dense", svd_window, screen_window);
      EXPECT_GT(svd_window, 0.005);
      EXPECT_LT(svd_window, 0.05);
      EXPECT_GE(screen_window, svd_window);
      EXPECT_LT(screen_window, 1.5 * svd_window);  // measured 1.31 (N = 3, 10)
    }
  }
}

// Bad input: forcing the sparse path where there is none says why, in one line.
TEST(SparsePath, ForcedSparseWithoutTheStructureIsRefused) {
  auto chain = make_model("closed_chain", {});
  EXPECT_FALSE(chain->has_sparse_terms());
  Vec q0, qd0, y;
  chain->default_initial(q0, qd0);
  auto f = make(chain, "kkt", "sparse");
  try {
    f->initial_state(q0, qd0, y);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not built from bodies and joints"), std::string::npos) << e.what();
  }
  // auto on a problem without the structure is the dense path, silently.
  auto automatic = make(chain, "schur", "auto");
  automatic->initial_state(q0, qd0, y);
  EXPECT_FALSE(dynamic_cast<const AccelerationFormulation&>(*automatic).uses_sparse_path());
  // Only kkt and schur have a sparse path.
  auto nfb = n_four_bar(2);
  nfb->default_initial(q0, qd0);
  auto penalty = make(nfb, "penalty", "sparse");
  EXPECT_THROW(penalty->initial_state(q0, qd0, y), InputError);
}

// ---- The augmented Lagrangian methods and the coordinate projection on the sparse path ----------------------

// augmented_lagrangian's sparse iteration (M + alpha A^T A as a fixed-pattern L D L^T) against its dense one,
// both against the exact kkt solution: accelerations and multipliers at the square start and on the
// parallelogram. Each path carries the iteration's rounding, ~alpha eps relative (the condition of
// M + alpha A^T A: 2.2e-9 at the default alpha = 1e7), so the test asks the sparse path to be as accurate as the
// dense one (both within a few alpha eps of kkt), not equal to it.
TEST(SparsePath, AugmentedLagrangianIsAsAccurateAsTheDensePath) {
  const double kAlphaEps = FormulationOptions{}.al_alpha * std::numeric_limits<double>::epsilon();
  for (int N : {3, 10}) {
    auto model = n_four_bar(N);
    for (int state = 0; state < 2; ++state) {
      Vec q, qd;
      if (state == 0) model->default_initial(q, qd);
      else parallelogram_state(N, 0.7, 2.0, q, qd);
      const Evaluation kkt = evaluate_at(model, "kkt", "dense", q, qd);
      const Evaluation dense = evaluate_at(model, "augmented_lagrangian", "dense", q, qd);
      const Evaluation sparse = evaluate_at(model, "augmented_lagrangian", "sparse", q, qd);
      EXPECT_TRUE(sparse.sparse);
      const Vec &dy_kkt = kkt.dy, &l_kkt = kkt.lambda, &dy_dense = dense.dy, &l_dense = dense.lambda;
      const Vec &dy_sparse = sparse.dy, &l_sparse = sparse.lambda;
      const double e_dense = relative(dy_dense, dy_kkt), e_sparse = relative(dy_sparse, dy_kkt);
      const double el_dense = relative(l_dense, l_kkt), el_sparse = relative(l_sparse, l_kkt);
      std::printf("N = %d state %d: augmented_lagrangian - kkt, dense: qdd %.1e lambda %.1e; sparse: qdd %.1e "
                  "lambda %.1e\n", N, state, e_dense, el_dense, e_sparse, el_sparse);
      // Measured (both paths, N = 3 and 10): qdd <= 2.1e-9, lambda <= 6.4e-9 relative.
      EXPECT_LT(e_sparse, 3 * kAlphaEps) << N << " " << state;
      EXPECT_LT(el_sparse, 5 * kAlphaEps) << N << " " << state;
      EXPECT_LT(e_dense, 3 * kAlphaEps) << N << " " << state;
      EXPECT_LT(el_dense, 5 * kAlphaEps) << N << " " << state;
    }
  }
}

// The geometric stiffness on the sparse path (entries and slots) equals the dense Hessian to rounding: every
// structural entry, each once, in the upper triangle.
TEST(SparsePath, ConstraintHessianEntriesEqualTheDenseHessian) {
  auto model = n_four_bar(5);
  const auto* hess = model->capability<ConstraintHessian>();
  ASSERT_NE(hess, nullptr);
  Vec q, qd;
  generic_state(model->n(), q, qd);
  Vec mu(model->m());
  for (int i = 0; i < mu.size(); ++i) mu[i] = std::cos(0.37 * i + 1.1);
  auto ws = hess->make_workspace(0, q);
  const int n = model->n();
  Mat dense = Mat::Zero(n, n);
  hess->add_weighted(0, q, mu, 0.5, *ws, dense);
  std::vector<int> slot(ws->entries.size());
  for (size_t e = 0; e < slot.size(); ++e) slot[e] = int(e);
  Vec values = Vec::Zero(slot.size());
  hess->add_weighted_entries(0, q, mu, 0.5, *ws, slot, values.data());
  Mat from_entries = Mat::Zero(n, n);
  for (size_t e = 0; e < slot.size(); ++e) {
    auto [j, l] = ws->entries[e];
    ASSERT_LE(j, l);
    from_entries(j, l) += values[e];
    if (j != l) from_entries(l, j) += values[e];
  }
  EXPECT_LT((from_entries - dense).lpNorm<Eigen::Infinity>(), 1e-15 * dense.lpNorm<Eigen::Infinity>());
  EXPECT_GT(dense.lpNorm<Eigen::Infinity>(), 0.1);
  // O(n) entries: a joint's pairs of coordinates (pins couple two bars' x, y and theta).
  std::printf("n_four_bar(5): %zu geometric-stiffness entries for n = %d\n", ws->entries.size(), n);
  EXPECT_LT(ws->entries.size(), 30u * n);
}

// ALI3-P (trapezoidal) and kkt + coordinate projection on the sparse path against their dense paths: the same
// steps, positions equal to rounding amplified by the iterations (1 s of loops = 3 through the first singular
// position; measured below).
TEST(SparsePath, Ali3pAndProjectionAgreeWithTheDensePath) {
  auto model = n_four_bar(3);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  struct Case {
    const char* formulation;
    const char* integrator;
    double bound;
  };
  // Measured 6.6e-10 (ALI3-P: the iteration's alpha eps rounding, alpha 1e11) and 7.5e-14 (kkt + projection).
  for (const Case& c : {Case{"augmented_lagrangian", "trapezoidal", 2e-9}, Case{"kkt", "rk4", 3e-13}}) {
    clm::testing::RunSettings rs;
    rs.integrator = c.integrator;
    rs.t_end = 1;
    rs.output_every = 0.05;
    rs.dt = 1e-3;
    rs.rtol = 1e-8;
    rs.atol = 1e-10;
    rs.options.al_alpha = 1e11;
    if (std::string(c.formulation) == "kkt") rs.options.projection = "both";
    rs.options.linear_algebra = "dense";
    const auto dense = clm::testing::record_run(model, c.formulation, q0, qd0, rs);
    rs.options.linear_algebra = "sparse";
    const auto sparse = clm::testing::record_run(model, c.formulation, q0, qd0, rs);
    ASSERT_EQ(dense.result.status, "ok") << dense.result.message;
    ASSERT_EQ(sparse.result.status, "ok") << sparse.result.message;
    EXPECT_EQ(dense.result.stats.steps, sparse.result.stats.steps) << c.formulation;
    const double difference = clm::testing::max_q_difference(dense, sparse);
    std::printf("%s + %s: sparse and dense runs differ by %.2e in q\n", c.formulation, c.integrator, difference);
    EXPECT_LT(difference, c.bound) << c.formulation;
  }
}

// No heap allocation per evaluation or step on the sparse path: augmented_lagrangian's rhs, ALI3-P's steps,
// and kkt + rk4 with coordinate projection (a ten times longer run allocates no more).
TEST(SparsePath, AugmentedLagrangianAli3pAndProjectionAllocateNothing) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  auto model = n_four_bar(10);
  Vec q0, qd0, y, dy;
  model->default_initial(q0, qd0);
  FormulationOptions o;
  o.linear_algebra = "sparse";
  o.al_alpha = 1e11;
  auto al = formulation_registry().get("augmented_lagrangian").make(model, o);
  al->initial_state(q0, qd0, y);
  dy.resize(y.size());
  al->rhs(0, y, dy);
  {
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 5; ++i) al->rhs(0, y, dy);
    EXPECT_EQ(scope.count(), 0u);
  }
  IntegratorSettings s;
  s.dt = 1e-3;
  s.rtol = 1e-6;
  s.atol = 1e-8;
  al->set_positions_projected(true);  // as the runner does for an integrator that keeps h = 0 itself
  auto counts = clm::testing::allocations_of_runs(*al, "trapezoidal", y, s, 0.01, 0.05, 0.5);
  EXPECT_EQ(counts[0], counts[1]) << "a ten times longer sparse ALI3-P run allocates more";
  o.projection = "both";
  auto kkt = formulation_registry().get("kkt").make(model, o);
  kkt->initial_state(q0, qd0, y);
  ProjectedSystem projected(*kkt, ProjectionMode::kBoth);
  ASSERT_TRUE(projected.uses_sparse_path());
  counts = clm::testing::allocations_of_runs(projected, "rk4", y, s, 0.01, 0.05, 0.5);
  // (<=: the first run also makes the singular-position test's workspace, once, at its first step.)
  EXPECT_LE(counts[1], counts[0]) << "a ten times longer sparse kkt + projection run allocates more";
}
