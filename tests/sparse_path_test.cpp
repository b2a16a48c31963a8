// The sparse path for mechanisms built from bodies and joints (docs/design.md "Sparse path"; n_four_bar, IFToMM
// A02): the joint-local sparse terms against the whole-vector autodiff of the dense model, sparse kkt and schur
// against their dense paths (accelerations, multipliers, a short run), no heap allocation per rhs, and the
// singular-position test's inertia screen against the SVD.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "allocation_counter.hpp"
#include "core/autodiff_model.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "core/singular_position.hpp"
#include "formulations/acceleration_formulation.hpp"
#include "problems/n_four_bar.hpp"
#include "recorded_run.hpp"

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
      Vec reference_dy, reference_lambda;
      for (const char* formulation : {"kkt", "schur"}) {
        Vec y, dy_dense, dy_sparse;
        Observation dense_obs, sparse_obs;
        auto dense = make(model, formulation, "dense");
        dense->initial_state(q, qd, y);
        dy_dense.resize(y.size());
        dense->rhs(0, y, dy_dense);
        dense->observe(0, y, dense_obs);
        auto sparse = make(model, formulation, "sparse");
        sparse->initial_state(q, qd, y);
        ASSERT_TRUE(dynamic_cast<const AccelerationFormulation&>(*sparse).uses_sparse_path());
        ASSERT_FALSE(dynamic_cast<const AccelerationFormulation&>(*dense).uses_sparse_path());
        dy_sparse.resize(y.size());
        sparse->rhs(0, y, dy_sparse);
        sparse->observe(0, y, sparse_obs);
        EXPECT_LT(relative(dy_sparse, dy_dense), 1e-13) << formulation << " N = " << N << " state " << state;
        EXPECT_LT(relative(sparse_obs.lambda, dense_obs.lambda), 1e-13)
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
