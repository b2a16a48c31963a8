// Coordinate projection ([formulation] projection, formulations/coordinate_projection.hpp): rk4 + both holds
// the constraints to round-off at every sample where plain rk4 drifts; the projected motion stays within
// rk4's O(dt^4) of the unprojected one; velocity projection on a nonholonomic problem; the statistics in
// the results file; refusals in one line; no heap allocation per projected step.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>

#include "allocation_counter.hpp"
#include "run_allocations.hpp"
#include "clmbench_process.hpp"
#include "core/problem_registry.hpp"
#include "recorded_run.hpp"

using namespace clm;
using clm::testing::record_run;
using clm::testing::RunSettings;

namespace {

RunSettings rk4(double dt, double t_end, const std::string& projection) {
  RunSettings rs;
  rs.integrator = "rk4";
  rs.dt = dt;
  rs.t_end = t_end;
  rs.output_every = 0.01;
  rs.options.projection = projection;
  return rs;
}

double max_drift(const clm::testing::RecordedRun& r, bool position) {
  double d = 0;
  for (const auto& o : r.obs) d = std::max(d, position ? o.drift_position : o.drift_velocity);
  return d;
}

}  // namespace

// The bar: drift_position and drift_velocity <= 1e-12 at every sample on four_bar and closed_chain
// under rk4 + both; without projection the same runs drift by orders of magnitude more.
TEST(Projection, BothHoldsTheConstraintsAtEverySample) {
  for (const char* problem : {"four_bar", "closed_chain"}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const auto plain = record_run(model, "kkt", q0, qd0, rk4(2e-3, 3.0, "none"));
    const auto projected = record_run(model, "kkt", q0, qd0, rk4(2e-3, 3.0, "both"));
    ASSERT_EQ(projected.result.status, "ok") << problem;
    EXPECT_LE(max_drift(projected, true), 1e-12) << problem;
    EXPECT_LE(max_drift(projected, false), 1e-12) << problem;
    EXPECT_GT(max_drift(plain, true), 1e3 * max_drift(projected, true)) << problem;
    std::printf("  %s rk4 dt 2e-3 T 3: drift h %.2e -> %.2e, A qd %.2e -> %.2e\n", problem, max_drift(plain, true),
                max_drift(projected, true), max_drift(plain, false), max_drift(projected, false));
  }
}

// Projection moves an O(dt^4)-accurate rk4 state by O(dt^5) per step onto the manifold, so the projected and
// unprojected motions differ by O(dt^4): measured order of |q_both(T) - q_none(T)| by step halving.
TEST(Projection, ProjectedMotionStaysWithinRk4sError) {
  auto model = make_model("four_bar");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  double previous = 0;
  for (double dt : {0.005, 0.0025, 0.00125}) {
    const auto a = record_run(model, "kkt", q0, qd0, rk4(dt, 1.0, "none"));
    const auto b = record_run(model, "kkt", q0, qd0, rk4(dt, 1.0, "both"));
    const double d = (a.obs.back().q - b.obs.back().q).lpNorm<Eigen::Infinity>();
    if (previous > 0) {
      const double order = std::log2(previous / d);
      std::printf("  four_bar dt %g: |q_both - q_none| = %.3e, order %.2f\n", dt, d, order);
      EXPECT_NEAR(order, 4.0, 0.25) << dt;
    }
    previous = d;
  }
}

// Nonholonomic problems project the velocity only: A qd = 0 to round-off at every sample, and the motion is
// still the sleigh's (rk4's error against the closed form unchanged in magnitude).
TEST(Projection, VelocityProjectionOnTheSleigh) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  // Samples on the step ends (output_every = dt): a sample interpolated inside a step lies between two
  // projected states and is not itself projected.
  RunSettings none = rk4(0.05, 5.0, "none"), velocity = rk4(0.05, 5.0, "velocity");
  none.output_every = velocity.output_every = 0.05;
  const auto plain = record_run(model, "kkt", q0, qd0, none);
  const auto projected = record_run(model, "kkt", q0, qd0, velocity);
  ASSERT_EQ(projected.result.status, "ok");
  EXPECT_LE(max_drift(projected, false), 1e-14);
  EXPECT_GT(max_drift(plain, false), 1e-10);
  double err_plain = 0, err_projected = 0;
  Vec q, qd;
  for (size_t k = 0; k < plain.t.size(); ++k) {
    ASSERT_TRUE(model->closed_form(plain.t[k], q0, qd0, q, qd));
    err_plain = std::max(err_plain, (plain.obs[k].q - q).lpNorm<Eigen::Infinity>());
    err_projected = std::max(err_projected, (projected.obs[k].q - q).lpNorm<Eigen::Infinity>());
  }
  std::printf("  sleigh rk4 dt 0.05: error vs closed form %.3e (none), %.3e (velocity)\n", err_plain, err_projected);
  // Measured 5.4e-8 unprojected, 2.1e-8 projected: projecting onto A qd = 0 does not cost accuracy.
  EXPECT_LT(err_projected, err_plain);
  EXPECT_LT(err_projected, 4e-8);
}

// The run's attributes: every accepted step projected, Gauss-Newton iterations and the corrections recorded;
// without projection all zero.
TEST(Projection, StatisticsAreRecorded) {
  clm::testing::ScratchDir dir("projection");
  const std::string base = "run --problem slider_crank --formulation kkt --integrator rk4 --dt 1e-2 --t-end 1 ";
  auto r = dir.run(base + "--projection both --out p.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  H5::H5File file(dir / "p.h5", H5F_ACC_RDONLY);
  H5::Group g = file.openGroup("/runs/slider_crank_kkt_rk4");
  auto number = [&](const char* name) {
    double v = NAN;
    g.openAttribute(name).read(H5::PredType::NATIVE_DOUBLE, &v);
    return v;
  };
  EXPECT_EQ(number("projection_steps"), number("steps"));
  EXPECT_EQ(number("projection_steps"), 100);
  // One Gauss-Newton step per accepted step (measured 100): the iteration converges quadratically from
  // rk4's O(dt^5) local error.
  EXPECT_GE(number("projection_iterations"), 100);
  EXPECT_LE(number("projection_iterations"), 110);
  // rk4's local error at dt = 1e-2: measured 1.3e-7 in q, 3.1e-6 in qd.
  EXPECT_GT(number("projection_max_position_correction"), 0);
  EXPECT_LT(number("projection_max_position_correction"), 3e-7);
  EXPECT_GT(number("projection_max_velocity_correction"), 0);
  EXPECT_LT(number("projection_max_velocity_correction"), 6e-6);

  r = dir.run(base + "--out n.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  H5::H5File plain(dir / "n.h5", H5F_ACC_RDONLY);
  double steps = -1;
  plain.openGroup("/runs/slider_crank_kkt_rk4").openAttribute("projection_steps").read(H5::PredType::NATIVE_DOUBLE, &steps);
  EXPECT_EQ(steps, 0);
}

TEST(Projection, RefusalsAreOneLine) {
  clm::testing::ScratchDir dir("projection_refusal");
  auto r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --projection position --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"projection = position", "nonholonomic", "velocity"});
  r = dir.run("run --problem four_bar --formulation nullspace --integrator rk4 --projection both --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"projection", "nullspace"});
  r = dir.run("run --problem four_bar --formulation kkt --integrator rk4 --projection sometimes --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"sometimes", "projection"});
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));
}

// The projection's buffers are allocated with the system: a longer run allocates nothing more.
TEST(Projection, NoAllocationPerProjectedStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  auto model = make_model("closed_chain");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get("kkt").make(model, {});
  Vec y0;
  f->initial_state(q0, qd0, y0);
  ProjectedSystem sys(*f, ProjectionMode::kBoth);
  IntegratorSettings s;
  s.dt = 1e-3;
  const auto counts = clm::testing::allocations_of_runs(sys, "rk4", y0, s, 0.01, 0.05, 0.5);
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_GT(sys.statistics().projections, 500);
  // A mixed model (a mechanism file: the rod a position row, the blade a velocity row): the position rows' own
  // factors (S_h = A_h M^-1 A_h^T) are sized with the system too.
  auto mixed = make_model(std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/cart_pendulum.toml");
  ASSERT_TRUE(mixed->mixed());
  mixed->default_initial(q0, qd0);
  auto fm = formulation_registry().get("kkt").make(mixed, {});
  fm->initial_state(q0, qd0, y0);
  ProjectedSystem msys(*fm, ProjectionMode::kBoth);
  // Once to warm the tapes' per-thread scratch (grown to the largest tape on first use), then measured.
  clm::testing::allocations_of_runs(msys, "rk4", y0, s, 0.01, 0.05, 0.05);
  const auto mixed_counts = clm::testing::allocations_of_runs(msys, "rk4", y0, s, 0.01, 0.05, 0.5);
  EXPECT_EQ(mixed_counts[0], mixed_counts[1]);
  EXPECT_GT(msys.statistics().projections, 500);
  EXPECT_GT(msys.statistics().iterations, 0);  // the position step ran
}
