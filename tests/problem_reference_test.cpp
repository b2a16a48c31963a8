// Closed-form references against integration: each problem's exact motion (closed_form) against the kkt
// formulation integrated by rk4 at a step small enough that the integrator error is far below the
// tolerance, with parameters and initial data other than the defaults; and the kkt multiplier against
// closed_form_multiplier along those runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "recorded_run.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"

using namespace clm;

namespace {

struct Sample {
  double t;
  Observation obs;
};

// kkt + rk4 from (q0, qd0) to t_end, sampled every `every`.
std::vector<Sample> integrate_kkt(const std::shared_ptr<const Model>& model, const Vec& q0, const Vec& qd0,
                                  double t_end, double dt, double every) {
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = dt;
  const clm::testing::RecordedRun r = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  EXPECT_EQ(r.result.status, "ok") << r.result.message;
  std::vector<Sample> out;
  for (size_t k = 0; k < r.t.size(); ++k) out.push_back({r.t[k], r.obs[k]});
  EXPECT_NEAR(out.back().t, t_end, 1e-12);
  return out;
}

struct Errors {
  double q = 0, qd = 0, lambda = 0;
};

// Max errors of q, qd against closed_form, and relative error of lambda against closed_form_multiplier
// (relative to the largest |lambda| along the run).
Errors compare_with_closed_form(const Model& model, const Vec& q0, const Vec& qd0, const std::vector<Sample>& run,
                                bool check_lambda) {
  Errors e;
  Vec q(model.n()), qd(model.n()), lam(model.m());
  double lambda_scale = 0, lambda_err = 0;
  for (const auto& s : run) {
    if (!model.closed_form(s.t, q0, qd0, q, qd)) {
      ADD_FAILURE() << model.name() << ": no closed form at t = " << s.t;
      return e;
    }
    e.q = std::max(e.q, (q - s.obs.q).cwiseAbs().maxCoeff());
    e.qd = std::max(e.qd, (qd - s.obs.qd).cwiseAbs().maxCoeff());
    if (check_lambda) {
      EXPECT_TRUE(model.closed_form_multiplier(s.obs.q, s.obs.qd, lam));
      lambda_scale = std::max(lambda_scale, lam.cwiseAbs().maxCoeff());
      lambda_err = std::max(lambda_err, (lam - s.obs.lambda).cwiseAbs().maxCoeff());
    }
  }
  if (check_lambda) e.lambda = lambda_err / lambda_scale;
  return e;
}

void report(const char* what, const Errors& e) {
  std::printf("%-34s max|q err| %.2e  max|qd err| %.2e  rel lambda err %.2e\n", what, e.q, e.qd, e.lambda);
}

}  // namespace

TEST(ClosedForm, RollingDiskCircleMatchesKkt) {
  const double M = 2.3, R = 0.7, I = 0.4, J = 0.25;
  auto model = make_model("rolling_disk", {{"M", M}, {"R", R}, {"I", I}, {"J", J}});
  const double phi0 = 0.9, thd = 1.7, w = -0.6;
  Vec q0(4), qd0(4);
  q0 << 0.5, -1.0, 0.3, phi0;
  qd0 << R * std::cos(phi0) * thd, R * std::sin(phi0) * thd, thd, w;
  const auto run = integrate_kkt(model, q0, qd0, 8.0, 2e-3, 0.5);
  const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
  report("rolling_disk (circle)", e);
  EXPECT_LT(e.q, 1e-9);
  EXPECT_LT(e.qd, 1e-9);
  EXPECT_LT(e.lambda, 1e-8);
  // The contact point stays on the circle of radius R thetad / |w| about its centre.
  const double radius = R * thd / std::abs(w);
  const double cx = q0[0] - (R * thd / w) * std::sin(phi0), cy = q0[1] + (R * thd / w) * std::cos(phi0);
  for (const auto& s : run) EXPECT_NEAR(std::hypot(s.obs.q[0] - cx, s.obs.q[1] - cy), radius, 1e-9);
  // After one full turn (t = 2 pi/|w|) the closed form is back at the start point.
  Vec q(4), qd(4);
  model->closed_form(2 * M_PI / std::abs(w), q0, qd0, q, qd);
  EXPECT_NEAR(q[0], q0[0], 1e-12);
  EXPECT_NEAR(q[1], q0[1], 1e-12);
}

TEST(ClosedForm, RollingDiskSlowTurning) {
  auto model = make_model("rolling_disk", {{"R", 0.4}, {"I", 0.09}, {"J", 0.03}});
  Vec q0(4), qd0(4);
  q0 << 0.2, 0.1, -0.5, 1.3;
  qd0 << 0.4 * std::cos(1.3) * -3.0, 0.4 * std::sin(1.3) * -3.0, -3.0, 1e-4;
  const auto run = integrate_kkt(model, q0, qd0, 4.0, 2e-3, 0.5);
  const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
  EXPECT_LT(e.q, 1e-10);
  EXPECT_LT(e.qd, 1e-10);
  EXPECT_LT(e.lambda, 1e-8);
}

TEST(ClosedForm, RollingDiskStraightLine) {
  auto model = make_model("rolling_disk", {{"R", 0.3}});
  Vec q0(4), qd0(4);
  q0 << 0, 1, 0, -0.4;
  qd0 << 0.3 * std::cos(-0.4) * 2.5, 0.3 * std::sin(-0.4) * 2.5, 2.5, 0.0;
  const auto run = integrate_kkt(model, q0, qd0, 3.0, 5e-3, 0.5);
  const Errors e = compare_with_closed_form(*model, q0, qd0, run, false);
  EXPECT_LT(e.q, 1e-12);
  EXPECT_LT(e.qd, 1e-12);
  Vec q(4), qd(4);
  model->closed_form(3.0, q0, qd0, q, qd);
  EXPECT_NEAR(q[0], 0.3 * 2.5 * 3.0 * std::cos(-0.4), 1e-13);
}

// The special case of docs/design.md (from rest, phi0 = 0): x = g sin^2(w t)/(2 w^2), y = g (w t - sin(2 w t)/2)/(2 w^2).
TEST(ClosedForm, SkateFromRestMatchesDesignFormula) {
  const double g = 3.1, w = 1.7;
  auto model = make_model("skate_incline", {{"g", g}, {"m", 2.0}, {"J", 0.2}});
  Vec q0 = Vec::Zero(3), qd0(3), q(3), qd(3);
  qd0 << 0, 0, w;
  for (double t : {0.3, 1.0, 2.5, 7.0}) {
    model->closed_form(t, q0, qd0, q, qd);
    EXPECT_NEAR(q[0], g * std::pow(std::sin(w * t), 2) / (2 * w * w), 1e-13);
    EXPECT_NEAR(q[1], g * (w * t - std::sin(2 * w * t) / 2) / (2 * w * w), 1e-13);
    EXPECT_NEAR(q[2], w * t, 1e-15);
  }
}

TEST(ClosedForm, SkateGeneralInitialDataMatchesKkt) {
  const double m = 0.8, J = 0.3, g = 4.2;
  auto model = make_model("skate_incline", {{"m", m}, {"J", J}, {"g", g}});
  const double phi0 = 0.4, v0 = 0.7, w = 1.1;
  Vec q0(3), qd0(3);
  q0 << 1.0, -0.5, phi0;
  qd0 << v0 * std::cos(phi0), v0 * std::sin(phi0), w;
  const auto run = integrate_kkt(model, q0, qd0, 8.0, 2e-3, 0.5);
  const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
  report("skate_incline (general IC)", e);
  EXPECT_LT(e.q, 1e-9);
  EXPECT_LT(e.qd, 1e-9);
  EXPECT_LT(e.lambda, 1e-8);
  // Negative turning rate, backwards start.
  qd0 << -1.2 * std::cos(phi0), -1.2 * std::sin(phi0), -2.3;
  const auto run2 = integrate_kkt(model, q0, qd0, 5.0, 1e-3, 0.5);
  const Errors e2 = compare_with_closed_form(*model, q0, qd0, run2, true);
  report("skate_incline (w < 0, v0 < 0)", e2);
  EXPECT_LT(e2.q, 1e-9);
  EXPECT_LT(e2.qd, 1e-9);
  EXPECT_LT(e2.lambda, 1e-8);
}

TEST(ClosedForm, SkateWithoutTurningAcceleratesAlongTheBlade) {
  const double g = 2.0;
  auto model = make_model("skate_incline", {{"g", g}});
  const double phi0 = 2.2, v0 = 0.5;
  Vec q0(3), qd0(3);
  q0 << 0.1, 0.2, phi0;
  qd0 << v0 * std::cos(phi0), v0 * std::sin(phi0), 0.0;
  const auto run = integrate_kkt(model, q0, qd0, 3.0, 1e-2, 0.5);
  const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
  EXPECT_LT(e.q, 1e-12);
  EXPECT_LT(e.qd, 1e-12);
  EXPECT_LT(e.lambda, 1e-10);
}

// Slow turning: the closed form switches from quadrature (|w t| < 0.5) to the formula (|w t| >= 0.5) during the run;
// both branches against kkt.
TEST(ClosedForm, SkateSlowTurningBothBranches) {
  auto model = make_model("skate_incline", {{"g", 5.5}, {"m", 1.4}, {"J", 0.05}});
  for (double w : {0.15, -0.003}) {
    SCOPED_TRACE(w);
    const double phi0 = -1.1, v0 = 0.4;
    Vec q0(3), qd0(3);
    q0 << -0.3, 0.8, phi0;
    qd0 << v0 * std::cos(phi0), v0 * std::sin(phi0), w;
    const auto run = integrate_kkt(model, q0, qd0, 5.0, 2e-3, 0.25);
    const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
    report("skate_incline (slow turning)", e);
    EXPECT_LT(e.q, 1e-9);
    EXPECT_LT(e.qd, 1e-9);
    EXPECT_LT(e.lambda, 1e-8);
  }
}

TEST(ClosedForm, SleighMatchesKkt) {
  struct Case {
    const char* label;
    double m, Ic, b, u0, w0;
  };
  // Reverse start (u0 < 0, the unstable direction: the sleigh turns round), a negative b, and b = 0.
  const Case cases[] = {{"sleigh reverse start", 1.7, 0.35, 0.45, -0.8, 1.3},
                        {"sleigh b < 0, w0 < 0", 0.9, 0.6, -0.25, 0.6, -1.9},
                        {"sleigh b = 0 (circle)", 1.2, 0.4, 0.0, 0.9, 0.7}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    auto model = make_model("chaplygin_sleigh", {{"m", c.m}, {"Ic", c.Ic}, {"b", c.b}});
    Vec q0(3), qd0(3);
    const double th0 = 0.7;
    q0 << 0.3, -0.2, th0;
    // qd = u e1 + b w e2 ([seed-000]'s velocity basis).
    qd0 << c.u0 * std::cos(th0) - c.b * c.w0 * std::sin(th0), c.u0 * std::sin(th0) + c.b * c.w0 * std::cos(th0), c.w0;
    const auto run = integrate_kkt(model, q0, qd0, 8.0, 1e-3, 0.5);
    const Errors e = compare_with_closed_form(*model, q0, qd0, run, true);
    report(c.label, e);
    EXPECT_LT(e.q, 1e-9);
    EXPECT_LT(e.qd, 1e-9);
    EXPECT_LT(e.lambda, 1e-8);
  }
}

// The reduced dynamics u' = b w^2, w' = -beta u w [seed-000] and the energy hold along the closed form;
// w0 = 0 is uniform straight motion; forward motion settles to u -> c, w -> 0 (stable).
TEST(ClosedForm, SleighClosedFormProperties) {
  const double m = 1.3, Ic = 0.45, b = 0.35, K = m * b * b + Ic, beta = m * b / K;
  auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}});
  Vec q0(3), qd0(3), q(3), qd(3), qp(3), qdp(3), qm(3), qdm(3);
  q0 << 0, 0, -0.3;
  const double u0 = 0.4, w0 = 1.1;
  qd0 << u0 * std::cos(-0.3) - b * w0 * std::sin(-0.3), u0 * std::sin(-0.3) + b * w0 * std::cos(-0.3), w0;
  const double E = 0.5 * (m * u0 * u0 + K * w0 * w0);
  for (double t : {0.5, 2.0, 6.0}) {
    model->closed_form(t, q0, qd0, q, qd);
    const double u = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]), w = qd[2];
    EXPECT_NEAR(0.5 * (m * u * u + K * w * w), E, 1e-13);
    EXPECT_NEAR(-std::sin(q[2]) * qd[0] + std::cos(q[2]) * qd[1] - b * w, 0.0, 1e-14);  // on the constraint
    const double h = 1e-4;
    model->closed_form(t + h, q0, qd0, qp, qdp);
    model->closed_form(t - h, q0, qd0, qm, qdm);
    const double up = qdp[0] * std::cos(qp[2]) + qdp[1] * std::sin(qp[2]);
    const double um = qdm[0] * std::cos(qm[2]) + qdm[1] * std::sin(qm[2]);
    EXPECT_NEAR((up - um) / (2 * h), b * w * w, 1e-7);
    EXPECT_NEAR((qdp[2] - qdm[2]) / (2 * h), -beta * u * w, 1e-7);
    EXPECT_LT(((qp - qm) / (2 * h) - qd).cwiseAbs().maxCoeff(), 1e-7);  // x, y, theta integrate qd
  }
  model->closed_form(60.0, q0, qd0, q, qd);
  EXPECT_NEAR(qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]), std::sqrt(2 * E / m), 1e-9);
  EXPECT_LT(std::abs(qd[2]), 1e-9);
  qd0 << 0.8 * std::cos(-0.3), 0.8 * std::sin(-0.3), 0.0;
  model->closed_form(2.0, q0, qd0, q, qd);
  EXPECT_NEAR(q[0], 1.6 * std::cos(-0.3), 1e-14);
  EXPECT_NEAR(q[1], 1.6 * std::sin(-0.3), 1e-14);
  EXPECT_EQ(q[2], -0.3);
}

// Multipliers: kkt lambda against the closed-form multiplier along runs of the holonomic pendulums.
TEST(ClosedFormMultiplier, PendulumsMatchKkt) {
  {
    auto model = make_model("pendulum_polar", {{"m", 0.8}, {"L", 1.3}, {"g", 9.5}, {"fx", 0.7}});
    Vec q0(2), qd0(2);
    q0 << 1.3, -0.6;
    qd0 << 0, 1.4;
    const auto run = integrate_kkt(model, q0, qd0, 4.0, 1e-3, 0.25);
    Vec lam(1);
    double err = 0, scale = 0;
    for (const auto& s : run) {
      ASSERT_TRUE(model->closed_form_multiplier(s.obs.q, s.obs.qd, lam));
      err = std::max(err, std::abs(lam[0] - s.obs.lambda[0]));
      scale = std::max(scale, std::abs(lam[0]));
    }
    std::printf("pendulum_polar (fx != 0) rel lambda err %.2e\n", err / scale);
    EXPECT_LT(err / scale, 1e-8);
  }
  {
    auto model = make_model("pendulum_cartesian", {{"m", 1.6}, {"L", 0.7}, {"g", 8.9}});
    Vec q0(2), qd0(2);
    const double th = 2.4, thd = -2.1, L = 0.7;  // above the horizontal, swinging fast enough to loop
    q0 << L * std::sin(th), -L * std::cos(th);
    qd0 << L * std::cos(th) * thd, L * std::sin(th) * thd;
    const auto run = integrate_kkt(model, q0, qd0, 4.0, 1e-3, 0.25);
    Vec lam(1);
    double err = 0, scale = 0;
    for (const auto& s : run) {
      ASSERT_TRUE(model->closed_form_multiplier(s.obs.q, s.obs.qd, lam));
      err = std::max(err, std::abs(lam[0] - s.obs.lambda[0]));
      scale = std::max(scale, std::abs(lam[0]));
      EXPECT_LT(s.obs.drift_position, 1e-8);  // rk4 drift at dt = 1e-3 on a looping pendulum
    }
    std::printf("pendulum_cartesian rel lambda err %.2e\n", err / scale);
    EXPECT_LT(err / scale, 1e-8);
    // The two pendulums are the same physics: with h = (r^2 - L^2)/2 the multiplier is the polar one
    // (per unit length of the gradient) divided by L: lambda_cart = lambda_polar / L.
    auto polar = make_model("pendulum_polar", {{"m", 1.6}, {"L", 0.7}, {"g", 8.9}});
    Vec qp(2), qdp(2), lp(1), lc(1);
    qp << L, th;
    qdp << 0, thd;
    polar->closed_form_multiplier(qp, qdp, lp);
    model->closed_form_multiplier(q0, qd0, lc);
    EXPECT_NEAR(lc[0], lp[0] / L, 1e-12);
  }
}

// The holonomic mechanisms without a closed form: kkt + rk4 conserves the energy of the unforced system and
// keeps the constraints (a check that M, c, A and Adot qd of each are mutually consistent: a wrong bias
// term shows up as energy drift at O(1)).
TEST(HolonomicProblems, KktConservesEnergyAndConstraints) {
  const std::vector<std::pair<std::string, std::map<std::string, double>>> cases = {
      {"slider_crank", {{"m1", 0.7}, {"L1", 0.3}, {"L2", 0.7}, {"I2", 0.2}}},
      {"four_bar", {{"L2", 1.1}, {"m2", 0.9}, {"g", 7.0}}},
      {"closed_chain", {{"n", 9}, {"gx", 1.1}, {"gy", -0.3}}},
      {"pendulum_cartesian", {{"L", 0.6}}},
  };
  for (const auto& [name, params] : cases) {
    SCOPED_TRACE(name);
    auto model = make_model(name, params);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const auto run = integrate_kkt(model, q0, qd0, 1.0, 5e-4, 0.1);
    double energy_err = 0, drift_p = 0, drift_v = 0;
    const double e0 = run.front().obs.energy;
    for (const auto& s : run) {
      energy_err = std::max(energy_err, std::abs(s.obs.energy - e0));
      drift_p = std::max(drift_p, s.obs.drift_position);
      drift_v = std::max(drift_v, s.obs.drift_velocity);
    }
    std::printf("%-20s |dE| %.2e  |h| %.2e  |A qd| %.2e\n", name.c_str(), energy_err, drift_p, drift_v);
    EXPECT_LT(energy_err, 1e-8 * (1 + std::abs(e0)));
    EXPECT_LT(drift_p, 1e-8);
    EXPECT_LT(drift_v, 1e-8);
  }
}
