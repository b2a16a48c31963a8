// The ball rolling on a turntable (problems/ball_on_turntable.hpp): affine Pfaffian constraints
// A(q) qd + b(q) = 0. The autodiff terms against a hand derivation, and kkt / schur runs against the closed
// form: the centre on a circle at the rate 2 W / 7.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/problem_registry.hpp"
#include "problems/ball_on_turntable.hpp"
#include "recorded_run.hpp"

using namespace clm;

// A, b and the acceleration bias d/dq(A qd) qd + db/dq qd (b has no explicit t) written out by hand.
TEST(BallOnTurntable, AffineTermsMatchTheHandDerivation) {
  const double a = 0.7, W = 1.9;
  auto model = make_model("ball_on_turntable", {{"a", a}, {"W", W}, {"m", 2.0}});
  ASSERT_TRUE(model->time_dependent());
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  Vec q(5), qd(5);
  q << 0.3, -0.4, 0.8, 1.2, -0.5;
  qd << 0.2, 0.1, -0.7, 0.4, 0.9;
  model->evaluate(0.6, q, qd, kAll, *ws, t);
  const double sp = std::sin(q[2]), cp = std::cos(q[2]), st = std::sin(q[3]), ct = std::cos(q[3]);
  Mat A(2, 5);
  A << 1, 0, 0, -a * sp, a * st * cp, 0, 1, 0, a * cp, a * st * sp;
  EXPECT_LT((t.A - A).lpNorm<Eigen::Infinity>(), 1e-16);
  EXPECT_NEAR(t.b[0], W * q[1], 1e-16);
  EXPECT_NEAR(t.b[1], -W * q[0], 1e-16);
  const double pd = qd[2], thd = qd[3], psd = qd[4];
  EXPECT_NEAR(t.Adot_qd[0], -a * cp * pd * thd + a * (ct * thd * cp - st * sp * pd) * psd + W * qd[1], 1e-15);
  EXPECT_NEAR(t.Adot_qd[1], -a * sp * pd * thd + a * (ct * thd * sp + st * cp * pd) * psd - W * qd[0], 1e-15);
  // T = m/2 |rd|^2 + I/2 |omega|^2 with omega from the Euler-angle rates (I = 2/5 m a^2).
  const double rates[3] = {qd[2], qd[3], qd[4]};
  double w[3];
  BallOnTurntable::angular_velocity(q[2], q[3], rates, w);
  const double I = 0.4 * 2.0 * a * a;
  EXPECT_NEAR(t.kinetic, 0.5 * 2.0 * (qd[0] * qd[0] + qd[1] * qd[1]) + 0.5 * I * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]),
              1e-15);
}

// The centre moves on a circle at 2 W / 7: kkt and schur (dopri5, rtol 1e-12) against the closed form over
// 10 s (Omega t = 2.9 rad), for the defaults, a smaller ball on a table turning the other way, and W = 0
// (a straight line); the Euler angles against the closed form's quadrature; theta stays off the chart's
// singularity.
TEST(BallOnTurntable, CentreMovesOnTheClosedFormCircle) {
  for (const auto& params : {std::map<std::string, double>{}, std::map<std::string, double>{{"a", 0.5}, {"W", -1.0}, {"m", 3.0}},
                             std::map<std::string, double>{{"W", 0.0}}}) {
    auto model = make_model("ball_on_turntable", params);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    if (params.count("W") && params.at("W") == 0.0) {
      qd0 << 0.05, 0.02, 0.1, -0.02, 0.05;  // a rolling ball on a still table: rd = -a z x omega_h
      const double rates[3] = {qd0[2], qd0[3], qd0[4]};
      double w[3];
      BallOnTurntable::angular_velocity(q0[2], q0[3], rates, w);
      qd0[0] = w[1];  // a = 1: rd = (a omega_y, -a omega_x)
      qd0[1] = -w[0];
    }
    for (const char* formulation : {"kkt", "schur"}) {
      clm::testing::RunSettings rs;
      rs.t_end = 10;
      rs.output_every = 0.5;
      const auto run = clm::testing::record_run(model, formulation, q0, qd0, rs);
      ASSERT_EQ(run.result.status, "ok") << run.result.message;
      double e_centre = 0, e_all = 0, min_sin = 1, drift = 0;
      Vec q, qd;
      for (size_t k = 0; k < run.t.size(); ++k) {
        ASSERT_TRUE(model->closed_form(run.t[k], q0, qd0, q, qd));
        const Observation& o = run.obs[k];
        e_centre = std::max({e_centre, (o.q.head(2) - q.head(2)).lpNorm<Eigen::Infinity>(),
                             (o.qd.head(2) - qd.head(2)).lpNorm<Eigen::Infinity>()});
        e_all = std::max({e_all, (o.q - q).lpNorm<Eigen::Infinity>(), (o.qd - qd).lpNorm<Eigen::Infinity>()});
        min_sin = std::min(min_sin, std::sin(o.q[3]));
        drift = std::max(drift, o.drift_velocity);
      }
      // Measured at most 2.3e-14 (centre) and 2.3e-13 (all of q, qd): dopri5 at rtol 1e-12 against the closed form.
      EXPECT_LT(e_centre, 1e-13) << formulation;
      EXPECT_LT(e_all, 1e-12) << formulation;
      EXPECT_GT(min_sin, 0.3);
      std::printf("[measured] ball_on_turntable %s W=%g: centre %.2e, all of (q, qd) %.2e, |A qd + b| %.2e, "
                  "min sin(theta) %.2f\n", formulation, params.count("W") ? params.at("W") : 1.0, e_centre, e_all,
                  drift, min_sin);
    }
  }
  // The circle itself, from the default data: centre r0 + z x rd0 / Omega, radius |rd0| / Omega, Omega = 2/7.
  auto model = make_model("ball_on_turntable");
  Vec q0, qd0, q, qd;
  model->default_initial(q0, qd0);
  const double Om = 2.0 / 7.0, cx = q0[0] - qd0[1] / Om, cy = q0[1] + qd0[0] / Om;
  for (double t : {1.0, 7.0, 7 * M_PI}) {
    model->closed_form(t, q0, qd0, q, qd);
    EXPECT_NEAR(std::hypot(q[0] - cx, q[1] - cy), qd0.head(2).norm() / Om, 1e-15);
    // The angle swept about the centre is Omega t.
    const double a0 = std::atan2(q0[1] - cy, q0[0] - cx), a1 = std::atan2(q[1] - cy, q[0] - cx);
    EXPECT_NEAR(std::remainder(a1 - a0 - Om * t, 2 * M_PI), 0.0, 1e-14) << t;
  }
}
