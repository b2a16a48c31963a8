// Mixed constraints (core/problem.hpp, kMixed; docs/design.md section 1, "Mixed constraints"): position rows h(q) = 0
// held as positions beside velocity rows A(q) qd = 0. The cart towing a bob on a rod (tests/data/mechanisms/
// cart_pendulum.toml: the rod a position row, the blade a velocity row) against its twin in reduced coordinates
// (cart_pendulum_reduced.toml: the rod eliminated, a Pfaffian mechanism): one motion under kkt, schur, nullspace and
// radau5; the terms against their closed forms; the initial positions projected onto h = 0 (or refused under
// strict_initial, naming the row); drift_position recorded and held by projection; Baumgarte and the penalty spring
// on the position rows; the commands' and formulations' words for the kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include "clmbench_process.hpp"
#include "input_error_of.hpp"
#include "recorded_run.hpp"
#include "core/consistency.hpp"
#include "core/problem_registry.hpp"
#include "runs/runner.hpp"

using namespace clm;

namespace {

const std::string kData = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/";
const std::string kMixed = kData + "cart_pendulum.toml";
const std::string kReduced = kData + "cart_pendulum_reduced.toml";
constexpr double kL = 0.8, kB = 0.25;  // the files' rod length and blade offset

// The reduced state (x, y, theta, phi) and its velocities mapped to the mixed coordinates (x, y, theta, xp, yp).
void to_mixed(const Vec& qr, const Vec& qdr, Vec& q, Vec& qd) {
  q.resize(5);
  qd.resize(5);
  q << qr[0], qr[1], qr[2], qr[0] + kL * std::cos(qr[3]), qr[1] + kL * std::sin(qr[3]);
  qd << qdr[0], qdr[1], qdr[2], qdr[0] - kL * std::sin(qr[3]) * qdr[3], qdr[1] + kL * std::cos(qr[3]) * qdr[3];
}

TEST(MixedConstraints, TheFileIsMixedWithNamedRowsAndExactTerms) {
  auto model = make_model(kMixed, {});
  EXPECT_EQ(model->n(), 5);
  EXPECT_EQ(model->m(), 2);
  EXPECT_EQ(model->position_rows(), 1);
  EXPECT_EQ(model->velocity_rows(), 1);
  EXPECT_TRUE(model->mixed());
  EXPECT_FALSE(model->holonomic());
  EXPECT_EQ(model->constraint_names(), (std::vector<std::string>{"rod", "blade"}));
  // At an arbitrary state: h, A = [dh/dq; blade], the bias [qd^T h_qq qd; d/dt(A) qd].
  Vec q(5), qd(5);
  q << 0.3, -0.7, 1.1, 0.9, 0.2;
  qd << 0.4, -1.3, 0.6, 2.1, -0.5;
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  model->evaluate(0.0, q, qd, kConstraintJacobian | kConstraintBias | kConstraintValue, *ws, t);
  ASSERT_EQ(t.h.size(), 1);
  const double dx = q[3] - q[0], dy = q[4] - q[1], s = std::sin(q[2]), c = std::cos(q[2]);
  EXPECT_NEAR(t.h[0], (dx * dx + dy * dy - kL * kL) / 2, 1e-15);
  Mat A(2, 5);
  A << -dx, -dy, 0, dx, dy, -s, c, -kB, 0, 0;
  EXPECT_LT((t.A - A).norm(), 1e-15) << t.A;
  const double dvx = qd[3] - qd[0], dvy = qd[4] - qd[1];
  EXPECT_NEAR(t.Adot_qd[0], dvx * dvx + dvy * dvy, 1e-14);
  EXPECT_NEAR(t.Adot_qd[1], -c * qd[2] * qd[0] - s * qd[2] * qd[1], 1e-14);
}

// The reduced mechanism's run, mapped to the mixed coordinates, is the reference of every mixed run.
struct Twin {
  clm::testing::RecordedRun reduced;
  Vec q0, qd0;  // the mixed file's start, equal to the reduced start mapped
};

const Twin& twin() {
  static const Twin t = [] {
    Twin out;
    auto reduced = make_model(kReduced, {});
    Vec qr, qdr;
    reduced->default_initial(qr, qdr);
    clm::testing::RunSettings rs;
    rs.t_end = 5;
    rs.output_every = 0.05;
    out.reduced = clm::testing::record_run(reduced, "kkt", qr, qdr, rs);
    to_mixed(qr, qdr, out.q0, out.qd0);
    return out;
  }();
  return t;
}

// max over the samples of |q - q_ref|_inf (q_ref the reduced run mapped) and of |lambda_blade - lambda_ref|.
std::pair<double, double> distance_from_twin(const clm::testing::RecordedRun& run) {
  const auto& ref = twin().reduced;
  EXPECT_EQ(run.t.size(), ref.t.size());
  double dq = 0, dl = 0;
  for (size_t k = 0; k < std::min(run.t.size(), ref.t.size()); ++k) {
    Vec q, qd;
    to_mixed(ref.obs[k].q, ref.obs[k].qd, q, qd);
    dq = std::max(dq, Vec(run.obs[k].q - q).lpNorm<Eigen::Infinity>());
    dl = std::max(dl, std::abs(run.obs[k].lambda[1] - ref.obs[k].lambda[0]));
  }
  return {dq, dl};
}

TEST(MixedConstraints, OneMotionWithItsTwinInReducedCoordinates) {
  auto model = make_model(kMixed, {});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  EXPECT_LT((q0 - twin().q0).norm(), 1e-15);  // the two files start in one state
  EXPECT_LT((qd0 - twin().qd0).norm(), 1e-15);
  struct Case {
    const char* formulation;
    const char* integrator;
    double q_tol, lambda_tol;
  };
  // dopri5 and radau5 at rtol 1e-12 on both sides: the differences are the two runs' own errors. Measured (q,
  // lambda): kkt and schur 2.1e-12, 1.8e-11; nullspace 4.6e-12, 3.7e-11; kkt + radau5 5.0e-11, 9.7e-10.
  for (const Case& c : {Case{"kkt", "dopri5", 1e-11, 1e-10}, Case{"schur", "dopri5", 1e-11, 1e-10},
                        Case{"nullspace", "dopri5", 2e-11, 2e-10}, Case{"kkt", "radau5", 2e-10, 3e-9}}) {
    clm::testing::RunSettings rs;
    rs.t_end = 5;
    rs.output_every = 0.05;
    rs.integrator = c.integrator;
    const auto run = clm::testing::record_run(model, c.formulation, q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << c.formulation << " " << c.integrator;
    const auto [dq, dl] = distance_from_twin(run);
    std::printf("%s + %s: |q - q_twin| %.2e, |lambda_blade - lambda_twin| %.2e\n", c.formulation, c.integrator, dq, dl);
    EXPECT_LT(dq, c.q_tol) << c.formulation << " " << c.integrator;
    EXPECT_LT(dl, c.lambda_tol) << c.formulation << " " << c.integrator;
  }
}

TEST(MixedConstraints, InitialPositionsAreProjectedOntoThePositionRows) {
  auto model = make_model(kMixed, {});
  Vec q, qd;
  model->default_initial(q, qd);
  q[3] += 0.24;  // the bob 0.24 m off its rod
  const ProjectionReport r = project_onto_constraints(*model, q, qd);
  EXPECT_GT(r.position_distance, 0.04);  // measured 0.047: the minimum-norm step moves cart and bob
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  model->evaluate(0.0, q, qd, kConstraintJacobian | kConstraintValue, *ws, t);
  EXPECT_LT(std::abs(t.h[0]), 1e-13);
  EXPECT_LT((t.A * qd).norm(), 1e-13);

  // A run started there projects it, or refuses under strict_initial naming the row and its residual.
  RunSpec spec;
  spec.run_id = "off";
  spec.problem = kMixed;
  spec.formulation = "kkt";
  spec.integrator = "dopri5";
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  q0[3] += 0.24;
  spec.q0 = std::vector<double>(q0.data(), q0.data() + q0.size());
  std::ostringstream log;
  const PreparedRun prepared = prepare_run(spec, log);
  EXPECT_GT(prepared.projection.position_distance, 0.04);
  spec.strict_initial = true;
  const std::string error = clm::testing::error_of([&] { prepare_run(spec, log); });
  EXPECT_NE(error.find("position row 1 (rod) h = "), std::string::npos) << error;
  EXPECT_NE(error.find("strict_initial"), std::string::npos) << error;
}

// rk4 at dt with steps landing on the output grid: every sample is a step end, so a projected run's samples are
// projected states (an adaptive method's samples inside a step are its interpolant's, off the manifold by the
// interpolation error).
clm::testing::RunSettings rk4_on_grid(double dt, double t_end) {
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.dt = dt;
  rs.t_end = t_end;
  rs.output_every = 0.5;
  return rs;
}

// max over the samples of |h| (drift_position) and of |A qd| (drift_velocity).
std::pair<double, double> max_drift(const clm::testing::RecordedRun& run) {
  double p = 0, v = 0;
  for (const auto& o : run.obs) {
    p = std::max(p, o.drift_position);
    v = std::max(v, o.drift_velocity);
  }
  return {p, v};
}

TEST(MixedConstraints, PositionDriftIsRecordedAndHeldByProjection) {
  auto model = make_model(kMixed, {});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs = rk4_on_grid(1e-2, 200);
  const auto free = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(free.result.status, "ok");
  const auto [free_p, free_v] = max_drift(free);
  rs.options.projection = "both";
  const auto held = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(held.result.status, "ok");
  const auto [held_p, held_v] = max_drift(held);
  std::printf("kkt + rk4 dt 1e-2, 200 s: max |h| %.2e free, %.2e projected; max |A qd| %.2e, %.2e\n", free_p,
              held_p, free_v, held_v);
  // h drifts without projection (the index-1 form holds h only through its second derivative): measured 6.4e-3.
  EXPECT_GT(free_p, 1e-3);
  EXPECT_LT(held_p, 1e-12);
  EXPECT_LT(held_v, 1e-12);
  // projection = position alone holds h too (it was refused as "nonholonomic" when the rod was a velocity row).
  rs.options.projection = "position";
  const auto position = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  EXPECT_LT(max_drift(position).first, 1e-12);
}

TEST(MixedConstraints, BaumgarteAndThePenaltySpringActOnThePositionRows) {
  auto model = make_model(kMixed, {});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs = rk4_on_grid(2e-2, 50);
  const double free = max_drift(clm::testing::record_run(model, "kkt", q0, qd0, rs)).first;
  rs.options.baumgarte_alpha = 5;
  rs.options.baumgarte_beta = 5;
  const double stabilized = max_drift(clm::testing::record_run(model, "kkt", q0, qd0, rs)).first;
  std::printf("max |h| over 50 s: %.2e free, %.2e with Baumgarte alpha = beta = 5\n", free, stabilized);
  EXPECT_LT(stabilized, 1e-5);  // measured 2.6e-6 (free: 3.3e-3)
  EXPECT_GT(free, 1e-3);
  // penalty's k: the spring k/2 |h|^2 on the rod (refused as "Pfaffian" before). The spring carries the rod's
  // tension with the friction N A_h qd, so a stiffer spring stretches less (measured 2.8e-3 at k = 1e3, 5.6e-4 at
  // k = 1e4); and the rod's multiplier is -N A_h qd - k h.
  rs.options = FormulationOptions{};
  rs.options.N = 1e3;
  rs.integrator = "radau5";  // stiff: N A^T A / M ~ 1e3 / s
  rs.rtol = 1e-8;
  rs.atol = 1e-10;
  rs.t_end = 2;
  rs.output_every = 0.05;
  double h_of_k[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    rs.options.k = i == 0 ? 1e3 : 1e4;
    const auto spring = clm::testing::record_run(model, "penalty", q0, qd0, rs);
    ASSERT_EQ(spring.result.status, "ok");
    h_of_k[i] = max_drift(spring).first;
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    double worst = 0;
    for (const auto& o : spring.obs) {
      model->evaluate(0.0, o.q, o.qd, kConstraintJacobian | kConstraintValue, *ws, t);
      const double rod = -rs.options.N * t.A.row(0).dot(o.qd) - rs.options.k * t.h[0];
      worst = std::max(worst, std::abs(o.lambda[0] - rod) / std::max(1.0, std::abs(rod)));
    }
    EXPECT_LT(worst, 1e-12) << "k = " << rs.options.k;
  }
  std::printf("penalty N = 1e3 over 2 s: max |h| %.2e with k = 1e3, %.2e with k = 1e4\n", h_of_k[0], h_of_k[1]);
  EXPECT_LT(h_of_k[1], 0.3 * h_of_k[0]);  // measured 0.198
}

// ida holds the rod at position level (its GGL form with mu and h = 0 for the position rows) and the blade at
// velocity level, and follows the twin's motion.
TEST(MixedConstraints, IdaHoldsThePositionRowsAtPositionLevel) {
  auto model = make_model(kMixed, {});
  clm::testing::RunSettings rs;
  rs.integrator = "ida";
  rs.t_end = 5;
  rs.output_every = 0.05;
  rs.rtol = 1e-10;
  rs.atol = 1e-12;
  const auto run = clm::testing::record_run(model, "kkt", twin().q0, twin().qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  const auto [dq, dl] = distance_from_twin(run);
  const auto [h, v] = max_drift(run);
  std::printf("kkt + ida rtol 1e-10: |q - q_twin| %.2e, |lambda_blade - lambda_twin| %.2e, max |h| %.2e, "
              "max |A qd| %.2e\n", dq, dl, h, v);
  // Measured: 2.5e-9, 2.7e-8 (IDA at rtol 1e-10 against dopri5 at 1e-12), |h| 3.1e-12 at the samples (IDA's
  // interpolant between steps whose ends hold h to the Newton tolerance).
  EXPECT_LT(dq, 1e-8);
  EXPECT_LT(dl, 1e-7);
  EXPECT_LT(h, 1e-11);
}

// A fixed-step run from the twin's start over its grid (5 s, samples every 0.05): its distance from the twin and
// its drifts, printed; expects the run to end "ok".
struct FixedStepRun {
  double dq, dl, h, v;
};
FixedStepRun fixed_step_against_twin(const std::shared_ptr<const Model>& model, const std::string& formulation,
                                     const std::string& integrator, double dt, const FormulationOptions& options) {
  clm::testing::RunSettings rs;
  rs.integrator = integrator;
  rs.dt = dt;
  rs.t_end = 5;
  rs.output_every = 0.05;
  rs.rtol = 1e-12;
  rs.atol = 1e-14;
  rs.options = options;
  const auto run = clm::testing::record_run(model, formulation, twin().q0, twin().qd0, rs);
  EXPECT_EQ(run.result.status, "ok") << run.result.message;
  const auto [dq, dl] = distance_from_twin(run);
  const auto [h, v] = max_drift(run);
  std::printf("%s + %s dt %.4g: |q - q_twin| %.3e, |lambda_blade - lambda_twin| %.2e, max |h| %.2e, max |A qd| "
              "%.2e\n", formulation.c_str(), integrator.c_str(), dt, dq, dl, h, v);
  return {dq, dl, h, v};
}

// rattle: the rod held at position level (h(q1) = 0 by its Newton iteration), the blade by the midpoint discrete
// constraint; second order against the twin.
TEST(MixedConstraints, RattleHoldsThePositionRowsAtPositionLevel) {
  auto model = make_model(kMixed, {});
  double previous = 0;
  for (double dt : {1e-2, 5e-3, 2.5e-3}) {
    const FixedStepRun r = fixed_step_against_twin(model, "kkt", "rattle", dt, {});
    // Measured 1.7e-16 .. 2.8e-16 and 4.5e-16 .. 4.9e-16 (h by Newton at rtol 1e-12, A qd by the end-point solve).
    EXPECT_LT(r.h, 2e-15);
    EXPECT_LT(r.v, 2e-15);
    // Measured 4.48e-4, 1.12e-4, 2.80e-5: orders 2.000, 2.001.
    if (previous > 0) EXPECT_NEAR(std::log2(previous / r.dq), 2.0, 0.02) << "dt " << dt;
    previous = r.dq;
  }
}

TEST(MixedConstraints, MethodsSayWhatTheyDoWithAMixedModel) {
  auto model = make_model(kMixed, {});
  auto formulation = formulation_registry().get("kkt").make(model, FormulationOptions{});
  // rattle and ALI3-P run it (RattleHoldsThePositionRowsAtPositionLevel, Ali3pHoldsTheRodAndTheBlade).
  EXPECT_EQ(integrator_registry().get("rattle").make()->refuses_formulation(*formulation), "");
  auto al = formulation_registry().get("augmented_lagrangian").make(model, FormulationOptions{});
  EXPECT_EQ(integrator_registry().get("trapezoidal").make()->refuses_formulation(*al), "");
  const auto& fb = formulation_registry().get("fernandez_bloch");
  ASSERT_TRUE(fb.refuses);
  EXPECT_NE(fb.refuses(*model).find("is mixed"), std::string::npos) << fb.refuses(*model);
  EXPECT_EQ(projection_refusal(*formulation, ProjectionMode::kPosition), "");
}

// The unit-quaternion pattern (mechanisms/heavy_top_quaternion.toml: the norm a position row, a regularizing term
// in T) against its twin in ZXZ Euler angles (mechanisms/heavy_top_euler.toml): e(t) = q_z(phi) q_x(theta) q_z(psi).
TEST(UnitQuaternion, TheHeavyTopMovesAsItsEulerAngleTwin) {
  const std::string dir = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/";
  auto quaternion = make_model(dir + "heavy_top_quaternion.toml", {});
  auto euler = make_model(dir + "heavy_top_euler.toml", {});
  EXPECT_EQ(quaternion->position_rows(), 1);
  EXPECT_TRUE(quaternion->holonomic());
  Vec e0, ed0, a0, ad0;
  quaternion->default_initial(e0, ed0);
  euler->default_initial(a0, ad0);
  clm::testing::RunSettings rs;
  rs.t_end = 5;
  rs.output_every = 0.05;
  const auto qrun = clm::testing::record_run(quaternion, "kkt", e0, ed0, rs);
  const auto erun = clm::testing::record_run(euler, "kkt", a0, ad0, rs);
  ASSERT_EQ(qrun.result.status, "ok");
  ASSERT_EQ(erun.result.status, "ok");
  ASSERT_EQ(qrun.t.size(), erun.t.size());
  auto product = [](const Eigen::Vector4d& a, const Eigen::Vector4d& b) {
    Eigen::Vector4d c;
    c[0] = a[0] * b[0] - a.tail<3>().dot(b.tail<3>());
    c.tail<3>() = a[0] * b.tail<3>() + b[0] * a.tail<3>() + a.tail<3>().cross(b.tail<3>());
    return c;
  };
  double worst = 0, min_theta = 10, max_theta = 0;
  for (size_t k = 0; k < qrun.t.size(); ++k) {
    const Vec& a = erun.obs[k].q;
    const Eigen::Vector4d qz1(std::cos(a[0] / 2), 0, 0, std::sin(a[0] / 2)), qx(std::cos(a[1] / 2), std::sin(a[1] / 2), 0, 0),
        qz2(std::cos(a[2] / 2), 0, 0, std::sin(a[2] / 2));
    const Eigen::Vector4d e = product(product(qz1, qx), qz2);
    worst = std::max(worst, (qrun.obs[k].q - Vec(e)).lpNorm<Eigen::Infinity>());
    min_theta = std::min(min_theta, a[1]);
    max_theta = std::max(max_theta, a[1]);
  }
  std::printf("heavy top, 5 s: |e - e(euler)| %.2e; theta in [%.3f, %.3f]\n", worst, min_theta, max_theta);
  EXPECT_GT(min_theta, 0.1);  // away from the Euler chart's singularity
  EXPECT_LT(worst, 2e-11);  // measured 3.7e-12
  // The energy is the Euler twin's (the regularizing term is zero on the motion).
  EXPECT_NEAR(qrun.obs.back().energy, erun.obs.back().energy, 1e-9);
}

// The zoo's rolling_disk with the row it eliminates stated (tests/data/mechanisms/rolling_disk_height.toml: the
// centre's height z a coordinate, z - R = 0 a position row, gravity on it): the zoo's motion, h = 0 to round-off,
// and the contact row's multiplier the weight M g.
TEST(MixedConstraints, TheRollingDiskWithItsHeightAsARowIsTheZoos) {
  auto mixed = make_model(kData + "rolling_disk_height.toml", {});
  auto zoo = make_model("rolling_disk", {{"M", 1.0}, {"R", 0.5}, {"I", 0.125}, {"J", 0.0625}});
  EXPECT_EQ(mixed->position_rows(), 1);
  EXPECT_EQ(mixed->constraint_names(), (std::vector<std::string>{"contact", "roll_x", "roll_y"}));
  Vec q0, qd0;
  mixed->default_initial(q0, qd0);
  Vec zq0(4), zqd0(4);
  zq0 << q0[0], q0[1], q0[3], q0[4];
  zqd0 << qd0[0], qd0[1], qd0[3], qd0[4];
  clm::testing::RunSettings rs;
  rs.t_end = 5;
  rs.output_every = 0.05;
  for (const char* formulation : {"kkt", "schur", "nullspace"}) {
    const auto run = clm::testing::record_run(mixed, formulation, q0, qd0, rs);
    const auto ref = clm::testing::record_run(zoo, formulation, zq0, zqd0, rs);
    ASSERT_EQ(run.result.status, "ok") << formulation;
    ASSERT_EQ(run.t.size(), ref.t.size());
    double dq = 0, dz = 0, dl = 0, weight = 0;
    for (size_t k = 0; k < run.t.size(); ++k) {
      const Vec& q = run.obs[k].q;
      Vec reduced(4);
      reduced << q[0], q[1], q[3], q[4];
      dq = std::max(dq, (reduced - ref.obs[k].q).lpNorm<Eigen::Infinity>());
      dz = std::max(dz, std::abs(q[2] - 0.5));
      dl = std::max(dl, (run.obs[k].lambda.tail(2) - ref.obs[k].lambda).lpNorm<Eigen::Infinity>());
      weight = std::max(weight, std::abs(run.obs[k].lambda[0] - 9.81));
    }
    std::printf("rolling disk with its height, %s: |q - q_zoo| %.2e, |z - R| %.2e, |lambda - lambda_zoo| %.2e, "
                "|lambda_contact - M g| %.2e\n", formulation, dq, dz, dl, weight);
    // Measured: |q - q_zoo| 2.1e-12 (kkt, schur), 1.5e-11 (nullspace); z, lambda and M g to round-off (<= 2e-15).
    EXPECT_LT(dq, 5e-11) << formulation;
    EXPECT_LT(dz, 1e-14) << formulation;
    EXPECT_LT(dl, 1e-13) << formulation;
    EXPECT_LT(weight, 1e-13) << formulation;
  }
}


// The zoo's mixed mechanism (problems/cart_pendulum.hpp, written by hand) against the mechanism file (tapes from T,
// V and the rows): the same terms at random states and the twin's motion.
TEST(MixedConstraints, TheZoosCartPendulumIsTheFileAndFollowsTheTwin) {
  auto zoo = make_model("cart_pendulum", {});
  auto file = make_model(kMixed, {});
  EXPECT_TRUE(zoo->mixed());
  EXPECT_EQ(zoo->position_rows(), 1);
  EXPECT_EQ(zoo->constraint_names(), file->constraint_names());
  Vec zq0, zqd0;
  zoo->default_initial(zq0, zqd0);
  EXPECT_LT((zq0 - twin().q0).norm(), 1e-15);
  EXPECT_LT((zqd0 - twin().qd0).norm(), 1e-15);
  auto zws = zoo->make_workspace(), fws = file->make_workspace();
  ModelTerms zt = zoo->make_terms(), ft = file->make_terms();
  std::srand(7);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Vec q = Vec::Random(5), qd = Vec::Random(5);
    zoo->evaluate(0.0, q, qd, kDynamics, *zws, zt);
    file->evaluate(0.0, q, qd, kDynamics, *fws, ft);
    for (const auto& [a, b] : {std::pair<Mat, Mat>{zt.M, ft.M}, {zt.A, ft.A}, {zt.c, ft.c}, {zt.F, ft.F},
                               {zt.h, ft.h}, {zt.Adot_qd, ft.Adot_qd}})
      worst = std::max(worst, (a - b).lpNorm<Eigen::Infinity>());
  }
  std::printf("zoo cart_pendulum against its file: terms %.2e\n", worst);
  EXPECT_LT(worst, 1e-15);  // measured 0: the same operations in the same order
  clm::testing::RunSettings rs;
  rs.t_end = 5;
  rs.output_every = 0.05;
  const auto run = clm::testing::record_run(zoo, "kkt", zq0, zqd0, rs);
  ASSERT_EQ(run.result.status, "ok");
  const auto [dq, dl] = distance_from_twin(run);
  std::printf("zoo cart_pendulum, kkt + dopri5: |q - q_twin| %.2e, |lambda_blade - lambda_twin| %.2e\n", dq, dl);
  EXPECT_LT(dq, 1e-11);  // as the file's run (2.1e-12, 1.8e-11)
  EXPECT_LT(dl, 1e-10);
}


// The commands on a start off the rod: `mechanism check` names the row and exits 4, `clmbench check` fails its
// initial-state rows (exit 4), a file on the rod passes both.
TEST(MixedConstraints, ChecksFailAStartOffThePositionRows) {
  clm::testing::ScratchDir dir("mixed_checks");
  std::string text = clm::testing::read_text(kMixed);
  const std::string on = "\"0.1 + L*cos(phi0)\"";
  const auto at = text.find(on);
  ASSERT_NE(at, std::string::npos);
  clm::testing::write_text(dir / "on.toml", text);
  text.replace(at, on.size(), "\"0.34 + L*cos(phi0)\"");  // the bob 0.24 m off its rod
  clm::testing::write_text(dir / "off.toml", text);
  const auto mech_off = dir.run("mechanism check off.toml");
  EXPECT_EQ(mech_off.exit_code, 4) << mech_off.out << mech_off.err;
  EXPECT_NE(mech_off.out.find("q0 is off position row 1 (rod): h = -0.0511"), std::string::npos) << mech_off.out;
  const auto check_off = dir.run("check --problem off.toml");
  EXPECT_EQ(check_off.exit_code, 4) << check_off.out;
  EXPECT_NE(check_off.out.find("|h(q0)| = 5.1e-02"), std::string::npos) << check_off.out;
  EXPECT_EQ(dir.run("mechanism check on.toml").exit_code, 0);
  const auto check_on = dir.run("check --problem on.toml");
  EXPECT_EQ(check_on.exit_code, 0) << check_on.out;
}

// trapezoidal (ALI3-P) with augmented_lagrangian: the rod by its index-3 penalty and multiplier iteration, the blade
// by the velocity-level penalty; second order against the twin, with either tangent.
TEST(MixedConstraints, Ali3pHoldsTheRodAndTheBlade) {
  auto model = make_model(kMixed, {});
  for (const char* tangent : {"full", "penalty"}) {
    FormulationOptions options;
    options.al_tangent = tangent;
    options.al_alpha = 1e9;
    double previous = 0;
    for (double dt : {5e-3, 2.5e-3, 1.25e-3}) {
      const FixedStepRun r = fixed_step_against_twin(model, "augmented_lagrangian", "trapezoidal", dt, options);
      // |h| by the multiplier iteration: measured <= 4.4e-16. |A qd| is the penalty projection's remainder,
      // (1 + (h^2/4) alpha A M^-1 A^T)^-1 A qd*, O(1/alpha) whatever h (as for holonomic problems): measured 2.4e-8
      // at alpha = 1e9 (2.4e-6 at the default 1e7, where that floor bends the measured order to 1.89 by dt 1.25e-3).
      EXPECT_LT(r.h, 2e-15) << tangent << " dt " << dt;
      EXPECT_LT(r.v, 5e-8) << tangent << " dt " << dt;
      // Measured orders 1.995, 1.995 (both tangents: the same iterates, G changes only the iteration count).
      if (previous > 0) EXPECT_NEAR(std::log2(previous / r.dq), 2.0, 0.02) << tangent << " dt " << dt;
      previous = r.dq;
    }
  }
}

}  // namespace
