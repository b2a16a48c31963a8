// The snakeboard driven by a prescribed shape (issue 13 item 1; problems/snakeboard.hpp, docs/findings.md
// "The snakeboard"): the gait psi = a sin(w t), phi = b cos(w t) from rest moves the board by
// Delta x = pi J_r a b / (2 m r) (1 - (11 + 21 delta) b^2 / 48 + O(b^4)) per cycle (the averaging estimate and
// its first correction, derived in docs/findings.md); prescribed_shape runs measure the errors of both and
// their orders (4 and 6 in the amplitude eps = a = b), and the same motion as kkt held on the gait by the
// computed torques of tests/snakeboard_gait.hpp (tests/snakeboard_test.cpp measures that one's displacement).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "core/autodiff_model.hpp"
#include "recorded_run.hpp"
#include "snakeboard_gait.hpp"
#include "core/shape_schedule.hpp"
#include "forced_model.hpp"

using namespace clm;

namespace {

// One cycle (w = 1, period 2 pi) of the gait from rest under prescribed_shape; every sample is compared with
// kkt held on the gait by computed torques (max |q difference| into *agreement); returns the board's
// (x, y, theta) at the end.
Eigen::Vector3d one_cycle(const std::shared_ptr<const Model>& model, double a, double b, double* agreement) {
  clm::testing::RunSettings rs;
  rs.t_end = 2 * M_PI;
  rs.output_every = M_PI / 16;
  Vec q0 = Vec::Zero(5), qd0 = Vec::Zero(5);
  q0[4] = b;
  qd0[3] = a;
  clm::testing::GaitDrivenSnakeboard driven;
  driven.a = a;
  driven.b = b;
  const auto reference = clm::testing::record_run(std::make_shared<AutoDiffModel<clm::testing::GaitDrivenSnakeboard>>(driven),
                                                  "kkt", q0, qd0, rs);
  rs.options.shape.coordinates = {3, 4};
  rs.options.shape.functions = {ShapeFunction::parse(std::to_string(a) + "*sin(1*t)"),
                                ShapeFunction::parse(std::to_string(b) + "*cos(1*t)")};
  // The runner's rule: the actuated entries of q0, qd0 are the schedule's value and rate at t = 0 (as set).
  const auto run = clm::testing::record_run(model, "prescribed_shape", q0, qd0, rs);
  EXPECT_EQ(run.result.status, "ok") << run.result.message;
  *agreement = std::max(*agreement, clm::testing::max_q_difference(run, reference));
  const auto& o = run.obs.back();
  EXPECT_NEAR(o.q[3], 0.0, 1e-12);  // the shape came back
  EXPECT_NEAR(o.q[4], b, 1e-12);
  return {o.q[0], o.q[1], o.q[2]};
}

}  // namespace

TEST(SnakeboardShape, DisplacementPerCycleAgainstTheAveragingEstimate) {
  auto model = make_model("snakeboard", {});
  const double m = 1, J_r = 0.05, r = 0.5, delta = 0;  // defaults: J + J_r + 2 J_w = m r^2
  std::vector<double> eps = {0.05, 0.1, 0.2, 0.4}, err0, err1;
  double agreement = 0;
  for (double e : eps) {
    const Eigen::Vector3d d = one_cycle(model, e, e, &agreement);
    const double leading = M_PI * J_r * e * e / (2 * m * r);
    const double corrected = leading * (1 - (11 + 21 * delta) * e * e / 48);
    err0.push_back(std::abs(d[0] - leading));
    err1.push_back(std::abs(d[0] - corrected));
    // theta returns and y stays 0 (the half-cycle symmetry of docs/findings.md).
    EXPECT_LT(std::abs(d[1]), 1e-12);
    EXPECT_LT(std::abs(d[2]), 1e-11);
    std::printf("snakeboard gait eps = %.2f: Delta x = %.10e, averaging %.10e (error %.3e), corrected error %.3e\n",
                e, d[0], leading, err0.back(), err1.back());
  }
  // The leading error is -(11/48) pi J_r a b^3 / (2 m r) = -0.0360 eps^4 (RK4 of the reduced equations:
  // -0.0360 .. -0.0354 over these eps), the corrected one 0.0039 eps^6.
  const LogLogFit f0 = fit_loglog(eps, err0);
  EXPECT_NEAR(f0.slope, 4.0, 0.03);  // 3.99 by RK4 (the eps^6 term bends it at 0.4)
  EXPECT_NEAR(err0[0] / std::pow(eps[0], 4), 11.0 / 48 * M_PI * J_r / (2 * m * r), 5e-5);  // 0.035984 by RK4
  const std::vector<double> eps1(eps.begin() + 1, eps.end()), e1(err1.begin() + 1, err1.end());
  const LogLogFit f1 = fit_loglog(eps1, e1);
  EXPECT_NEAR(f1.slope, 6.0, 0.03);  // 5.992 by RK4
  EXPECT_LT(agreement, 1e-10);  // both at rtol 1e-12
  std::printf("snakeboard prescribed_shape: vs computed-torque kkt %.2e; averaging error order %.3f (predicted 4), "
              "corrected %.3f (predicted 6)\n", agreement, f0.slope, f1.slope);
}

// The round trip of issue 13: prescribed_shape's actuator forces F_a(t), fed to kkt as a generalized force on psi
// and phi, reproduce q, qd and lambda to 1e-9.
TEST(SnakeboardShape, ActuatorForcesRoundTripThroughKkt) {
  // prescribed_shape on the gait psi = a sin(w t), phi = b cos(w t) from rest records F_a = (F_psi, F_phi) at
  // the step points of rk4 (dt 2.5e-4, every 1e-3 s); kkt driven by the not-a-knot splines through them
  // (tests/forced_model.hpp) from the same start follows the same motion. Two cycles at w = pi: the board moves.
  auto model = make_model("snakeboard", {});
  const double a = 0.4, b = 0.3, w = M_PI, t_end = 2 * (2 * M_PI / w);  // two cycles of 2 s
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.dt = 2.5e-4;
  rs.t_end = t_end;
  rs.output_every = 1e-3;
  char psi[64], phi[64];
  std::snprintf(psi, sizeof psi, "%.17g*sin(%.17g*t)", a, w);
  std::snprintf(phi, sizeof phi, "%.17g*cos(%.17g*t)", b, w);
  rs.options.shape.coordinates = {3, 4};
  rs.options.shape.functions = {ShapeFunction::parse(psi), ShapeFunction::parse(phi)};
  Vec q0 = Vec::Zero(5), qd0 = Vec::Zero(5);
  q0[4] = b;
  qd0[3] = a * w;
  const auto shaped = clm::testing::record_run(model, "prescribed_shape", q0, qd0, rs);
  ASSERT_EQ(shaped.result.status, "ok") << shaped.result.message;
  const auto forces = clm::testing::recorded_actuator_forces(shaped, "clm_snakeboard_force");
  ASSERT_EQ(forces.size(), 2u);
  auto forced = std::make_shared<clm::testing::ForcedModel>(model, std::vector<int>{3, 4}, forces);
  clm::testing::RunSettings rk;
  rk.t_end = t_end;
  rk.output_every = 0.05;
  rk.rtol = 1e-13;
  rk.atol = 1e-15;
  const auto kkt = clm::testing::record_run(forced, "kkt", q0, qd0, rk);
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  double dq = 0, dqd = 0, dlambda = 0;
  for (size_t k = 0; k < kkt.t.size(); ++k) {
    const size_t j = static_cast<size_t>(std::lround(kkt.t[k] / 1e-3));
    ASSERT_NEAR(shaped.t[j], kkt.t[k], 1e-12);
    dq = std::max(dq, (kkt.obs[k].q - shaped.obs[j].q).lpNorm<Eigen::Infinity>());
    dqd = std::max(dqd, (kkt.obs[k].qd - shaped.obs[j].qd).lpNorm<Eigen::Infinity>());
    dlambda = std::max(dlambda, (kkt.obs[k].lambda - shaped.obs[j].lambda).lpNorm<Eigen::Infinity>());
  }
  EXPECT_GT(shaped.obs.back().q[0], 0.01);  // the board moved forward
  std::printf("snakeboard round trip: |dq| = %.2e, |dqd| = %.2e, |dlambda| = %.2e\n", dq, dqd, dlambda);
  // Measured 5.2e-13, 2.9e-13, 3.9e-15 (the issue asks for 1e-9): the spline's interpolation error.
  EXPECT_LT(dq, 5e-12);
  EXPECT_LT(dqd, 5e-12);
  EXPECT_LT(dlambda, 5e-14);
}
