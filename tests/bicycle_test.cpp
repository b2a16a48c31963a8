// The Whipple bicycle [Meijaard-2007]: the nonlinear model (problems/bicycle.hpp) and its linearization about
// steady straight running (analysis/steady_motion.hpp) against the benchmark's published numbers.
// Published values (docs/references.md, [Meijaard-2007]): the coefficient matrices M, C1, K0, K2 of its
// section 5 and the eigenvalues of its Table 2, as carried by the benchmark's public reimplementations
// (BicycleParameters / dtk benchmark_matrices, Peterson's Whipple gtest of Table 2), checked against each other.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "core/autodiff_model.hpp"
#include "core/problem_registry.hpp"
#include "analysis/speed_analysis.hpp"
#include "analysis/steady_motion.hpp"
#include "problems/bicycle.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

namespace clm {
namespace {

// [Meijaard-2007], section 5 (equation 5.3's coefficients at the benchmark parameters), 14 decimals.
Eigen::Matrix4d published_state_matrix(double v) {
  Eigen::Matrix2d M, C1, K0, K2;
  M << 80.81722, 2.31941332208709, 2.31941332208709, 0.29784188199686;
  C1 << 0, 33.86641391492494, -0.85035641456978, 1.68540397397560;
  K0 << -80.95, -2.59951685249872, -2.59951685249872, -0.80329488458618;
  K2 << 0, 76.59734589573222, 0, 2.65431523794604;
  const double g = 9.81;
  Eigen::Matrix4d J = Eigen::Matrix4d::Zero();
  J.block<2, 2>(0, 2).setIdentity();
  J.block<2, 2>(2, 0) = -M.inverse() * (g * K0 + v * v * K2);
  J.block<2, 2>(2, 2) = -v * M.inverse() * C1;
  return J;
}

// Ascending real part, then imaginary part (the analysis' own order is descending).
std::vector<std::complex<double>> ascending_eigenvalues(const Mat& J) {
  auto ev = sorted_eigenvalues(J);
  std::reverse(ev.begin(), ev.end());
  return ev;
}

const SteadyMotionLinearizer& linearizer() {
  static const ProblemSteadyMotion<Bicycle> lin{Bicycle{}};
  return lin;
}

TEST(Bicycle, PitchSolvesTheFrontContactAndIsZeroUpright) {
  const Bicycle b;
  EXPECT_EQ(b.pitch(0.0, 0.0), 0.0);
  EXPECT_NEAR(b.front_contact_height(0.0, 0.0, 0.0), 0.0, 1e-16);
  for (double phi : {-0.4, 0.1, 0.3})
    for (double delta : {-0.8, 0.2, 1.0}) {
      const double th = b.pitch(phi, delta);
      EXPECT_NEAR(b.front_contact_height(phi, th, delta), 0.0, 1e-15) << phi << " " << delta;
    }
  // Lateral symmetry: the pitch is even in (phi, delta) -> (-phi, -delta).
  EXPECT_NEAR(b.pitch(0.3, 0.5), b.pitch(-0.3, -0.5), 1e-15);
}

TEST(Bicycle, FrontContactStaysOnTheGroundForEveryVelocity) {
  // With the pitch solved from h = 0, the vertical velocity of the front wheel's material contact point
  // vanishes identically (it is dh/dt); this checks the implicit derivatives of the pitch and the contact.
  const Bicycle b;
  VecN<double, 7> q;
  q << 0.3, -0.2, 0.7, 0.25, -0.6, 1.0, 2.0;
  const auto bodies = b.bodies(q);
  const auto J = rigid::point_jacobian(bodies.front_wheel, b.front_contact<double>(bodies.f), 7);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(J[i][2], 0.0, 1e-15) << "column " << i;
  // And the rear contact's vertical velocity likewise (it is on the ground by construction).
  const auto JR = rigid::point_jacobian(bodies.rear_wheel, rigid::Vec3<double>{q[0], q[1], 0.0}, 7);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(JR[i][2], 0.0, 1e-15) << "column " << i;
}

TEST(Bicycle, SteadyStraightRunningIsASolution) {
  const Bicycle b;
  for (double v : {0.0, 1.0, 4.6, 10.0}) {
    Vec q, qd;
    b.steady_motion(v, q, qd);
    MatN<double, 4, 7> A;
    b.pfaffian<double>(q, A);
    EXPECT_LT((A * qd).norm(), 1e-14 * (1 + v));
    const Vec qdd = linearizer().steady_acceleration(v);
    EXPECT_LT(qdd.cwiseAbs().maxCoeff(), 1e-12 * (1 + v * v)) << "v = " << v << ": " << qdd.transpose();
  }
}

TEST(Bicycle, LinearizationMatchesThePublishedCoefficientMatrices) {
  // The Jacobian from automatic differentiation of the nonlinear model against [[0, I], [-M^-1 (g K0 + v^2
  // K2), -v M^-1 C1]] built from the benchmark's published M, C1, K0, K2 (14 decimals).
  double worst = 0;
  for (double v = 0; v <= 10; v += 1) {
    const Mat J = linearizer().jacobian(v);
    const Eigen::Matrix4d P = published_state_matrix(v);
    worst = std::max(worst, (J - Mat(P)).cwiseAbs().maxCoeff() / P.cwiseAbs().maxCoeff());
  }
  std::printf("largest relative difference to the published coefficients: %.3g\n", worst);
  EXPECT_LT(worst, 2e-13);  // observed 2.5e-14: the published 14 decimals
}

// [Meijaard-2007] Table 2: eigenvalues at v = 0, 1, ..., 10 m/s, 14 decimals (the last digit of 0.8077402751993
// at 1 m/s is not printed there). Rows as (re, im); conjugates implied.
struct TableRow {
  double v;
  std::vector<std::complex<double>> ev;
};
std::vector<TableRow> published_table() {
  using C = std::complex<double>;
  const double weave[11][2] = {{0, 0},
                               {3.52696170990070, 0.8077402751993},
                               {2.68234517512745, 1.68066296590675},
                               {1.70675605663975, 2.31582447384325},
                               {0.41325331521125, 3.07910818603206},
                               {-0.77534188219585, 4.46486771378823},
                               {-1.52644486584142, 5.87673060598709},
                               {-2.13875644258362, 7.19525913329805},
                               {-2.69348683581097, 8.46037971396931},
                               {-3.21675402252485, 9.69377351531791},
                               {-3.72016840437287, 10.90681139476287}};
  const double capsize[11] = {0, -3.13423125066578, -3.07158645641514, -2.63366137253667, -1.42944427361326,
                              -0.32286642900409, -0.00406690076970, 0.10268170574766, 0.14327879765713,
                              0.15790184030917, 0.16105338653172};
  const double castor[11] = {0, -7.11008014637442, -8.67387984831735, -10.35101467245920, -12.15861426576450,
                             -14.07838969279820, -16.08537123098030, -18.15788466125262, -20.27940894394569,
                             -22.43788559040858, -24.62459635017404};
  std::vector<TableRow> rows;
  rows.push_back({0.0, {C(5.53094371765393, 0), C(3.13164324790656, 0), C(-3.13164324790656, 0), C(-5.53094371765393, 0)}});
  for (int v = 1; v <= 10; ++v)
    rows.push_back({double(v), {C(weave[v][0], weave[v][1]), C(weave[v][0], -weave[v][1]), C(capsize[v], 0), C(castor[v], 0)}});
  return rows;
}

TEST(Bicycle, EigenvaluesMatchThePublishedTable) {
  // To the digits printed (14 decimals: 5e-15 rounding) plus the round-off of the eigensolver on a matrix of
  // norm ~100 (observed below; the 1 m/s weave frequency is printed there with 13 decimals).
  double worst = 0;
  for (const auto& row : published_table()) {
    auto ours = ascending_eigenvalues(linearizer().jacobian(row.v));
    auto want = row.ev;
    auto key = [](std::complex<double> a, std::complex<double> b) {
      return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag();
    };
    std::sort(want.begin(), want.end(), key);
    ASSERT_EQ(ours.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      // The table's last printed digit (5e-15) is below the round-off of an eigenvalue of size 20 in double
      // (observed: 6.2e-13 on the castor eigenvalue -18.16 at 7 m/s, 3.4e-14 relative).
      const double tol = std::max(1e-13, 5e-14 * std::abs(want[i]));
      EXPECT_NEAR(ours[i].real(), want[i].real(), tol) << "v = " << row.v << ", eigenvalue " << i;
      EXPECT_NEAR(ours[i].imag(), want[i].imag(), tol) << "v = " << row.v << ", eigenvalue " << i;
      worst = std::max(worst, std::abs(ours[i] - want[i]));
    }
  }
  RecordProperty("worst_abs", std::to_string(worst));
  std::printf("largest eigenvalue difference to Table 2: %.3g\n", worst);
}

TEST(Bicycle, WeaveAndCapsizeSpeedsMatchThePublishedOnes) {
  std::vector<double> speeds;
  for (int i = 0; i <= 20; ++i) speeds.push_back(0.5 * i);
  const SpeedAnalysis a = analyze_speeds("bicycle", linearizer(), speeds);
  ASSERT_EQ(a.changes.size(), 2u);
  EXPECT_EQ(a.changes[0].name, "weave");
  EXPECT_TRUE(a.changes[0].stable_above);
  EXPECT_EQ(a.changes[1].name, "capsize");
  EXPECT_FALSE(a.changes[1].stable_above);
  // [Meijaard-2007]: vw = 4.29238253634111, vc = 6.02426201538837 m/s.
  const double vw = 4.29238253634111, vc = 6.02426201538837;
  EXPECT_NEAR(a.changes[0].speed, vw, 1e-6 * vw);
  EXPECT_NEAR(a.changes[1].speed, vc, 1e-6 * vc);
  std::printf("weave %.14f (rel %.2g), capsize %.14f (rel %.2g)\n", a.changes[0].speed,
              std::abs(a.changes[0].speed / vw - 1), a.changes[1].speed, std::abs(a.changes[1].speed / vc - 1));
  // Tighter: the bisection's 1e-12 and the model's round-off.
  EXPECT_NEAR(a.changes[0].speed, vw, 1e-11 * vw);
  EXPECT_NEAR(a.changes[1].speed, vc, 1e-11 * vc);
  // The published weave frequency at vw: +-3.43503384866144 i.
  const auto ev = sorted_eigenvalues(linearizer().jacobian(vw));
  EXPECT_NEAR(ev[0].imag(), 3.43503384866144, 1e-11);
}

TEST(Bicycle, ReductionNeglectsNothingToFirstOrder) {
  // The lean/steer accelerations do not depend, to first order, on the cyclic coordinates nor on the held
  // rear wheel rate at steady straight running.
  for (double v : {1.0, 5.0}) {
    const double c = linearizer().neglected_coupling(v).cwiseAbs().maxCoeff();
    std::printf("v = %g: largest neglected first-order coupling %.3g\n", v, c);
    EXPECT_LT(c, 1e-12);
  }
}

// A nonlinear run from the benchmark's example initial state (upright at 4.6 m/s, lean rate 0.5 rad/s):
// energy is conserved (ideal rolling constraints do no work), the rolling constraints hold, and three
// formulations agree.
TEST(Bicycle, NonlinearRunConservesEnergyAndFormulationsAgree) {
  const auto model = make_model("bicycle");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  testing::RunSettings rs;
  rs.t_end = 2;
  rs.output_every = 0.1;
  rs.rtol = 1e-10;
  rs.atol = 1e-12;
  const auto kkt = testing::record_run(model, "kkt", q0, qd0, rs);
  const auto nullspace = testing::record_run(model, "nullspace", q0, qd0, rs);
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  ASSERT_EQ(nullspace.result.status, "ok") << nullspace.result.message;
  const double e0 = kkt.obs.front().energy;
  double energy = 0, drift = 0, diff = 0;
  for (size_t k = 0; k < kkt.obs.size(); ++k) {
    energy = std::max(energy, std::abs(kkt.obs[k].energy - e0) / std::abs(e0));
    drift = std::max(drift, kkt.obs[k].drift_velocity);
    diff = std::max(diff, (kkt.obs[k].q - nullspace.obs[k].q).norm());
  }
  std::printf("energy %.3g, |A qd| %.3g, |q_kkt - q_nullspace| %.3g, lean at 2 s %.6f\n", energy, drift, diff,
              kkt.obs.back().q[3]);
  // Observed: 1.2e-12, 7.3e-12, 1.1e-11.
  EXPECT_LT(energy, 1e-11);
  EXPECT_LT(drift, 1e-10);
  EXPECT_LT(diff, 1e-10);
  // The lean oscillates and decays (inside the self-stable range): smaller at 2 s than its first peak.
  double peak = 0;
  for (const auto& o : kkt.obs) peak = std::max(peak, std::abs(o.q[3]));
  EXPECT_GT(peak, 0.05);
}

// The nonlinear model against its own linearization: from a small lean rate eps the lean and steer of the
// nonlinear run follow z(t) = exp(J t) z0 up to terms of relative size eps^2 (the lean/steer equations are
// odd in (phi, delta) by lateral symmetry, so there are no quadratic terms).
TEST(Bicycle, SmallPerturbationsFollowTheLinearization) {
  const auto model = make_model("bicycle");
  const Bicycle b;
  const double v = 5, eps = 1e-3;
  Vec q0, qd0;
  b.steady_motion(v, q0, qd0);
  qd0[3] = eps;
  testing::RunSettings rs;
  rs.t_end = 3;
  rs.output_every = 0.25;
  rs.rtol = 1e-11;
  rs.atol = 1e-14;
  const auto run = testing::record_run(model, "kkt", q0, qd0, rs);  // the projection completes x, y, yaw, front rates
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  const Mat J = linearizer().jacobian(v);
  Eigen::EigenSolver<Mat> es(J);
  const Eigen::VectorXcd z0 = Eigen::Vector4cd(0, 0, eps, 0);
  const Eigen::VectorXcd c = es.eigenvectors().partialPivLu().solve(z0);
  double worst = 0, scale = 0;
  for (size_t k = 0; k < run.obs.size(); ++k) {
    const double t = run.t[k];
    Eigen::VectorXcd e(4);
    for (int i = 0; i < 4; ++i) e[i] = std::exp(es.eigenvalues()[i] * t) * c[i];
    const Eigen::VectorXcd z = es.eigenvectors() * e;
    worst = std::max({worst, std::abs(run.obs[k].q[3] - z[0].real()), std::abs(run.obs[k].q[4] - z[1].real())});
    scale = std::max({scale, std::abs(z[0].real()), std::abs(z[1].real())});
  }
  std::printf("nonlinear vs linear: %.3g of %.3g\n", worst, scale);
  EXPECT_LT(worst, 2e-6 * scale);  // observed 3.5e-7 relative: eps^2 = 1e-6 times O(1)
}

// The hot path (rhs of kkt and nullspace, dopri5 steps) does no heap allocation: a ten times longer run
// allocates no more.
TEST(Bicycle, NoAllocationPerStep) {
  if (!testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  const auto model = make_model("bicycle");
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  for (const char* formulation : {"kkt", "nullspace"}) {
    auto f = formulation_registry().get(formulation).make(model, FormulationOptions{});
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.rtol = 1e-6;
    s.atol = 1e-8;
    const auto counts = testing::allocations_of_runs(*f, "dopri5", y0, s, 0.05, 0.1, 1.0);
    EXPECT_EQ(counts[0], counts[1]) << formulation;
  }
}

}  // namespace
}  // namespace clm
