// Time-dependent constraints (core/problem.hpp: rheonomic h(q, t), affine A(q) qd + b(q, t) = 0, V(q, t)):
// the autodiff terms against hand derivations, kkt and schur runs against independent minimal-coordinate
// integrations, projection at the step's time, and the one-line refusals of everything not extended to them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>

#include "core/autodiff_model.hpp"
#include "core/consistency.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "problems/driven_pendulum.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

// Classical RK4 on a small state, a fixed step: the independent integration of the minimal-coordinate
// equations (no code of the suite on its path).
template <std::size_t K>
std::array<double, K> rk4(std::function<std::array<double, K>(double, const std::array<double, K>&)> f,
                          std::array<double, K> y, double t0, double t1, int steps) {
  const double h = (t1 - t0) / steps;
  auto axpy = [](const std::array<double, K>& a, double s, const std::array<double, K>& b) {
    std::array<double, K> r;
    for (std::size_t i = 0; i < K; ++i) r[i] = a[i] + s * b[i];
    return r;
  };
  for (int k = 0; k < steps; ++k) {
    const double t = t0 + k * h;
    const auto k1 = f(t, y), k2 = f(t + h / 2, axpy(y, h / 2, k1)), k3 = f(t + h / 2, axpy(y, h / 2, k2)),
               k4 = f(t + h, axpy(y, h, k3));
    for (std::size_t i = 0; i < K; ++i) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return y;
}

DrivenPendulum driven(double a, double b, double w) {
  DrivenPendulum p;
  p.m = 1.3;
  p.L = 0.8;
  p.g = 9.81;
  p.a = a;
  p.b = b;
  p.w = w;
  return p;
}

// theta'' = -(g sin th + Xdd cos th + Ydd sin th)/L, derived by hand from
// L = m/2 |Pd + L thd (cos th, sin th)|^2 - m g (Y - L cos th).
std::array<double, 2> theta_rhs(const DrivenPendulum& p, double t, const std::array<double, 2>& y) {
  double P[2], Pd[2], Pdd[2];
  p.pivot(t, P, Pd, Pdd);
  const double th = y[0];
  return {y[1], -(p.g * std::sin(th) + Pdd[0] * std::cos(th) + Pdd[1] * std::sin(th)) / p.L};
}

}  // namespace

// The autodiff terms of h(q, t) = (|q - P(t)|^2 - L^2)/2 against the hand derivation: A = (q - P)^T,
// b = dh/dt = -(q - P) . Pd, bias = |qd - Pd|^2 - (q - P) . Pdd, off the constraint as well as on it.
TEST(TimeDependent, RheonomicTermsMatchTheHandDerivation) {
  const DrivenPendulum p = driven(0.3, 0.2, 2.5);
  auto model = make_model("driven_pendulum", {{"m", 1.3}, {"L", 0.8}, {"a", 0.3}, {"b", 0.2}, {"w", 2.5}});
  ASSERT_TRUE(model->time_dependent());
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  ASSERT_EQ(terms.b.size(), 1);
  for (double t : {0.0, 0.37, 1.9}) {
    Vec q(2), qd(2);
    q << 0.4 + t, -0.7;
    qd << 0.3, -1.1 * t;
    model->evaluate(t, q, qd, kAll, *ws, terms);
    double P[2], Pd[2], Pdd[2];
    p.pivot(t, P, Pd, Pdd);
    const double dx = q[0] - P[0], dy = q[1] - P[1];
    EXPECT_NEAR(terms.h[0], 0.5 * (dx * dx + dy * dy - p.L * p.L), 1e-15);
    EXPECT_NEAR(terms.A(0, 0), dx, 1e-15);
    EXPECT_NEAR(terms.A(0, 1), dy, 1e-15);
    EXPECT_NEAR(terms.b[0], -(dx * Pd[0] + dy * Pd[1]), 1e-15);
    const double ux = qd[0] - Pd[0], uy = qd[1] - Pd[1];
    EXPECT_NEAR(terms.Adot_qd[0], ux * ux + uy * uy - (dx * Pdd[0] + dy * Pdd[1]), 2e-15);
    EXPECT_NEAR(terms.potential, 1.3 * 9.81 * q[1], 1e-15);
  }
  // Only the rate asked for: b alone.
  Vec q(2), qd = Vec::Zero(2);
  q << 0.1, -0.5;
  terms.b.setConstant(NAN);
  model->evaluate(0.8, q, qd, kConstraintRate, *ws, terms);
  double P[2], Pd[2], Pdd[2];
  p.pivot(0.8, P, Pd, Pdd);
  EXPECT_NEAR(terms.b[0], -((q[0] - P[0]) * Pd[0] + (q[1] - P[1]) * Pd[1]), 1e-15);
}

// kkt and schur (dopri5, rtol 1e-12) against the minimal-coordinate theta equation integrated by RK4
// (h = 2.5e-4: within 1.5e-11 of h / 2 even on a violently driven, rotating case) over 5 s, on librating motions
// (a pendulum driven round and round amplifies the run's local errors to 1e-9 within 5 s; not a test of the
// terms): positions, velocities and the multiplier
// lambda = m ((sin th Xdd - cos th Ydd - g cos th)/L - thd^2) at every sample.
TEST(TimeDependent, DrivenPendulumMatchesTheMinimalCoordinateEquation) {
  for (const auto& [a, b, w] : {std::array{0.1, 0.05, 3.0}, std::array{0.3, 0.2, 2.5}, std::array{0.0, 0.1, 6.0}}) {
    const DrivenPendulum p = driven(a, b, w);
    auto model = make_model("driven_pendulum", {{"m", p.m}, {"L", p.L}, {"a", a}, {"b", b}, {"w", w}});
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const double th0 = 0.5, thd0 = 0.3;  // default_initial's minimal coordinates
    for (const char* formulation : {"kkt", "schur"}) {
      clm::testing::RunSettings rs;
      rs.integrator = "dopri5";
      rs.t_end = 5;
      rs.output_every = 0.25;
      rs.rtol = 1e-12;
      rs.atol = 1e-14;
      const auto run = clm::testing::record_run(model, formulation, q0, qd0, rs);
      ASSERT_EQ(run.result.status, "ok") << run.result.message;
      double dq = 0, dqd = 0, dl = 0;
      std::array<double, 2> y{th0, thd0};
      double t_prev = 0;
      for (size_t k = 0; k < run.t.size(); ++k) {
        const double t = run.t[k];
        y = rk4<2>([&](double s, const std::array<double, 2>& z) { return theta_rhs(p, s, z); }, y, t_prev, t,
                   static_cast<int>(std::lround((t - t_prev) / 2.5e-4)));
        t_prev = t;
        double P[2], Pd[2], Pdd[2];
        p.pivot(t, P, Pd, Pdd);
        const double th = y[0], thd = y[1];
        const double x = P[0] + p.L * std::sin(th), yy = P[1] - p.L * std::cos(th);
        const double xd = Pd[0] + p.L * std::cos(th) * thd, yd = Pd[1] + p.L * std::sin(th) * thd;
        const double lambda =
            p.m * ((std::sin(th) * Pdd[0] - std::cos(th) * Pdd[1] - p.g * std::cos(th)) / p.L - thd * thd);
        const Observation& o = run.obs[k];
        dq = std::max({dq, std::abs(o.q[0] - x), std::abs(o.q[1] - yy)});
        dqd = std::max({dqd, std::abs(o.qd[0] - xd), std::abs(o.qd[1] - yd)});
        dl = std::max(dl, std::abs(o.lambda[0] - lambda));
      }
      // Measured at most 1.7e-12 (q), 6.9e-12 (qd), 2.8e-11 (lambda): dopri5's global error at rtol 1e-12.
      EXPECT_LT(dq, 5e-12) << formulation << " a=" << a;
      EXPECT_LT(dqd, 2e-11) << formulation << " a=" << a;
      EXPECT_LT(dl, 1e-10) << formulation << " a=" << a;
      std::printf("[measured] %s a=%g b=%g w=%g: |dq| %.2e |dqd| %.2e |dlambda| %.2e\n", formulation, a, b, w, dq,
                  dqd, dl);
    }
  }
}

// Baumgarte stabilization drives A qd + b (not A qd) and h(q, t) to zero: with alpha = beta = 10 the
// stabilized kkt motion is the exact one (a wrong velocity term would pull it O(b) away).
TEST(TimeDependent, BaumgarteUsesTheVelocityTermB) {
  const DrivenPendulum p = driven(0.3, 0.2, 2.5);
  auto model = make_model("driven_pendulum", {{"m", p.m}, {"L", p.L}, {"a", 0.3}, {"b", 0.2}, {"w", 2.5}});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 2;
  rs.output_every = 0.5;
  rs.options.baumgarte_alpha = 10;
  rs.options.baumgarte_beta = 10;
  for (const char* formulation : {"kkt", "schur"}) {
    const auto run = clm::testing::record_run(model, formulation, q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok");
    const auto y = rk4<2>([&](double s, const std::array<double, 2>& z) { return theta_rhs(p, s, z); },
                          {0.5, 0.3}, 0.0, 2.0, 8000);
    double P[2], Pd[2], Pdd[2];
    p.pivot(2.0, P, Pd, Pdd);
    EXPECT_NEAR(run.obs.back().q[0], P[0] + p.L * std::sin(y[0]), 1e-10) << formulation;
    EXPECT_NEAR(run.obs.back().q[1], P[1] - p.L * std::cos(y[0]), 1e-10) << formulation;
    EXPECT_LT(run.obs.back().drift_velocity, 1e-12) << formulation;
  }
}

// Coordinate projection puts q on h(q, t) = 0 and qd on A qd + b(q, t) = 0 at the step's time: rk4 with a
// coarse step (0.05) keeps both at round-off, while the unprojected run drifts.
TEST(TimeDependent, ProjectionUsesTheStepTime) {
  auto model = make_model("driven_pendulum", {{"a", 0.3}, {"b", 0.2}, {"w", 2.5}});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.dt = 0.05;
  rs.t_end = 3;
  rs.output_every = 0.1;
  double drift_projected = 0, drift_free = 0;
  for (const char* projection : {"both", "none"}) {
    rs.options.projection = projection;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok");
    double d = 0;
    for (const auto& o : run.obs) d = std::max({d, o.drift_position, o.drift_velocity});
    (rs.options.projection == "both" ? drift_projected : drift_free) = d;
  }
  EXPECT_LT(drift_projected, 2e-14);
  EXPECT_GT(drift_free, 1e-8);
  std::printf("[measured] driven_pendulum rk4 dt 0.05: drift projected %.2e, unprojected %.2e\n", drift_projected,
              drift_free);
}

// Inconsistent initial data are projected onto h(q, t0) = 0 and A qd + b(q, t0) = 0 at the given t0.
TEST(TimeDependent, InitialProjectionAtT0) {
  auto model = make_model("driven_pendulum", {{"a", 0.3}, {"b", 0.2}, {"w", 2.5}});
  Vec q(2), qd(2);
  q << 0.5, -0.6;
  qd << 0.4, 0.1;
  project_onto_constraints(*model, q, qd, 1e-13, 50, 0.7);
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  model->evaluate(0.7, q, qd, kConstraintJacobian | kConstraintValue | kConstraintRate, *ws, terms);
  EXPECT_LT(std::abs(terms.h[0]), 1e-13);
  EXPECT_LT(std::abs(terms.A.row(0).dot(qd) + terms.b[0]), 1e-14);
  EXPECT_GT(std::abs(terms.b[0]), 0.1);  // the pivot moves: qd = 0 would not do
}

// augmented_lagrangian on moving constraints (its stabilization on A qd + b and h(q, t), Adot qd with the time
// derivatives): against kkt under dopri5 at rtol 1e-12 on the driven pendulum (h(q, t)) and the ball on the
// turntable (A qd + b(q, t) = 0), positions, velocities and multipliers. The augmented Lagrangian's own rounding
// is ~alpha eps relative in the accelerations (2.2e-9 at alpha = 1e7), so that is the scale of the agreement.
TEST(TimeDependent, AugmentedLagrangianFollowsTheMovingConstraints) {
  for (const char* problem : {"driven_pendulum", "ball_on_turntable"}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    clm::testing::RunSettings rs;
    rs.t_end = 5;
    rs.output_every = 0.25;
    rs.rtol = 1e-12;
    rs.atol = 1e-14;
    const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    const auto al = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, rs);
    ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
    ASSERT_EQ(al.result.status, "ok") << al.result.message;
    ASSERT_EQ(kkt.obs.size(), al.obs.size());
    double dq = 0, dqd = 0, dl = 0, scale_l = 0, drift = 0;
    for (size_t k = 0; k < kkt.obs.size(); ++k) {
      dq = std::max(dq, (kkt.obs[k].q - al.obs[k].q).lpNorm<Eigen::Infinity>());
      dqd = std::max(dqd, (kkt.obs[k].qd - al.obs[k].qd).lpNorm<Eigen::Infinity>());
      dl = std::max(dl, (kkt.obs[k].lambda - al.obs[k].lambda).lpNorm<Eigen::Infinity>());
      scale_l = std::max(scale_l, kkt.obs[k].lambda.lpNorm<Eigen::Infinity>());
      drift = std::max(drift, al.obs[k].drift_velocity);
    }
    std::printf("[measured] %s: augmented_lagrangian - kkt: q %.2e, qd %.2e, lambda %.2e (of %.2e); |A qd + b| %.2e\n",
                problem, dq, dqd, dl, scale_l, drift);
    // Measured: q 3.8e-12 / 1.3e-10, qd 1.8e-11 / 6.6e-11, lambda 3.3e-10 / 4.1e-9 relative, |A qd + b| 1.2e-13 /
    // 2.5e-14 (driven pendulum / turntable).
    EXPECT_LT(dq, 4e-10) << problem;
    EXPECT_LT(dqd, 2e-10) << problem;
    EXPECT_LT(dl, 1.5e-8 * scale_l) << problem;
    EXPECT_LT(drift, 5e-13) << problem;
    // Per problem, at ~3x the measurement (the common bounds above are the turntable's).
    const bool pendulum = std::string(problem) == "driven_pendulum";
    EXPECT_LT(dq, pendulum ? 1.2e-11 : 4e-10) << problem;
    EXPECT_LT(dqd, pendulum ? 6e-11 : 2e-10) << problem;
    EXPECT_LT(dl, (pendulum ? 1e-9 : 1.5e-8) * scale_l) << problem;
    EXPECT_LT(drift, pendulum ? 5e-13 : 1e-13) << problem;
  }
}

// ALI3-P (augmented_lagrangian + trapezoidal) on a moving holonomic constraint: h(q, t_{n+1}) in the Newton
// equations, the velocity projection onto A qd + b = 0, the time derivatives in the acceleration projection's
// bias. Against kkt + dopri5 (rtol 1e-12) over 5 s of the driven pendulum: second order in dt for q, h(q, t) at
// round-off, A qd + b at ALI3-P's O(dt^2).
TEST(TimeDependent, Ali3pFollowsTheDrivenPendulum) {
  auto model = make_model("driven_pendulum");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 5;
  rs.output_every = 0.05;
  const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(kkt.result.status, "ok");
  std::vector<double> errors;
  for (double dt : {4e-3, 2e-3, 1e-3}) {
    clm::testing::RunSettings ts;
    ts.integrator = "trapezoidal";
    ts.t_end = 5;
    ts.output_every = 0.05;
    ts.dt = dt;
    ts.rtol = 1e-10;
    ts.atol = 1e-12;
    ts.options.al_alpha = 1000 / (dt * dt);  // alpha dt^2/4 = 250
    const auto al = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, ts);
    ASSERT_EQ(al.result.status, "ok") << al.result.message;
    double drift_h = 0, drift_v = 0;
    for (const auto& o : al.obs) {
      drift_h = std::max(drift_h, o.drift_position);
      drift_v = std::max(drift_v, o.drift_velocity);
    }
    errors.push_back(clm::testing::max_q_difference(kkt, al));
    std::printf("[measured] driven_pendulum ALI3-P dt %g: q - kkt %.3e, |h(q, t)| %.1e, |A qd + b| %.1e\n", dt,
                errors.back(), drift_h, drift_v);
    EXPECT_LT(drift_h, 1e-13) << dt;  // measured <= 7.3e-15: the Newton iteration keeps h(q, t) = 0
    EXPECT_LT(drift_h, 3e-14) << dt;
    // ALI3-P's velocity projection is a penalty projection: A qd + b is left at O(dt^2) (measured 6.5e-3 dt^2 at
    // every dt, as on the scleronomic pendulum_cartesian: 2.7e-8 at dt 1e-3).
    EXPECT_LT(drift_v, 1e-2 * dt * dt) << dt;
  }
  // Measured 3.73e-5, 1.01e-5, 2.52e-6: orders 1.89, 2.00.
  for (size_t k = 1; k < errors.size(); ++k) {
    const double order = std::log2(errors[k - 1] / errors[k]);
    EXPECT_NEAR(order, 2.0, 0.15) << "dt step " << k;
  }
}

// Every formulation and integrator not extended to time dependence refuses it in one line naming itself.
TEST(TimeDependent, OthersRefuseInOneLine) {
  auto model = make_model("driven_pendulum");
  for (const char* f : {"added_mass", "vakonomic", "substituted", "fernandez_bloch", "servo"}) {
    const std::string why = formulation_registry().get(f).refuses(*model);
    EXPECT_NE(why.find("time-dependent"), std::string::npos) << f << ": " << why;
    EXPECT_NE(why.find(f), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
  for (const char* f : {"kkt", "schur", "nullspace", "penalty", "augmented_lagrangian"})
    EXPECT_EQ(formulation_registry().get(f).refuses(*model), "") << f;
  // ALI3-P takes the moving holonomic constraint (Ali3pFollowsTheDrivenPendulum below).
  auto al = formulation_registry().get("augmented_lagrangian").make(model, {});
  EXPECT_EQ(integrator_registry().get("trapezoidal").make()->refuses_formulation(*al), "");
  auto kkt = formulation_registry().get("kkt").make(model, {});
  for (const char* i : {"rattle", "dla", "nh_rattle", "verlet", "ida"}) {
    const std::string why = integrator_registry().get(i).make()->refuses_formulation(*kkt);
    EXPECT_NE(why.find("time-dependent"), std::string::npos) << i << ": " << why;
    EXPECT_NE(why.find(i), std::string::npos) << why;
  }
}

// kkt's rhs on a time-dependent problem allocates nothing per step (a ten times longer run, same count).
TEST(TimeDependent, KktRhsDoesNotAllocate) {
  auto model = make_model("driven_pendulum");
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  for (const char* formulation : {"kkt", "schur"}) {
    auto f = formulation_registry().get(formulation).make(model, {});
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.rtol = 1e-8;
    s.atol = 1e-10;
    const auto counts = clm::testing::allocations_of_runs(*f, "dopri5", y0, s, 0.05, 0.5, 5.0);
    EXPECT_EQ(counts[0], counts[1]) << formulation;
  }
}

namespace {

// A test-only affine Pfaffian problem: a unit point mass in the plane under gravity along -y with
// A(q) qd + b(q, t) = 0, A = (1, x), b = y - sin(t) (no mechanism in particular: every term of the
// acceleration bias d/dq(A qd) qd + db/dq qd + db/dt = xd yd + yd - cos(t) is non-zero).
struct AffineParticle {
  static constexpr const char* kName = "affine_particle";
  static constexpr const char* kDescription = "test problem: xd + x yd + y - sin(t) = 0";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  double g = 1.5;
  static constexpr std::array kParameters = {ParameterSpec<AffineParticle>{"g", &AffineParticle::g, "gravity"}};
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    M.setIdentity();
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return g * q[1];
  }
  template <class T>
  void pfaffian(const VecN<T, 2>& q, MatN<T, 1, 2>& A) const {
    A(0, 0) = T(1.0);
    A(0, 1) = q[0];
  }
  template <class T>
  void affine_term(const VecN<T, 2>& q, const T& t, VecN<T, 1>& b) const {
    using std::sin;
    b[0] = q[1] - sin(t);
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.5, 0.2;
    qd0 << -0.2 - 0.5 * 0.4, 0.4;  // xd = -x yd - y + sin(0)
  }
};

}  // namespace

TEST(TimeDependent, AffinePfaffianTermsMatchTheHandDerivation) {
  auto model = std::make_shared<AutoDiffModel<AffineParticle>>(AffineParticle{});
  ASSERT_TRUE(model->time_dependent());
  ASSERT_FALSE(model->holonomic());
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  for (double t : {0.0, 0.8, 2.3}) {
    Vec q(2), qd(2);
    q << 0.3 - t, 1.1;
    qd << 0.7, -0.4 + t;
    model->evaluate(t, q, qd, kAll, *ws, terms);
    EXPECT_EQ(terms.A(0, 0), 1.0);
    EXPECT_EQ(terms.A(0, 1), q[0]);
    EXPECT_NEAR(terms.b[0], q[1] - std::sin(t), 1e-16);
    EXPECT_NEAR(terms.Adot_qd[0], qd[0] * qd[1] + qd[1] - std::cos(t), 1e-15);
    terms.b.setConstant(NAN);
    model->evaluate(t, q, qd, kConstraintJacobian | kConstraintRate, *ws, terms);
    EXPECT_NEAR(terms.b[0], q[1] - std::sin(t), 1e-16);
  }
  // kkt and schur keep A qd + b = 0 along the run (to the integrator's accuracy, no drift correction) and agree.
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 4;
  rs.output_every = 0.5;
  const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  const auto schur = clm::testing::record_run(model, "schur", q0, qd0, rs);
  ASSERT_EQ(kkt.result.status, "ok");
  ASSERT_EQ(schur.result.status, "ok");
  double drift = 0;
  for (const auto& o : kkt.obs) drift = std::max(drift, o.drift_velocity);
  EXPECT_LT(drift, 1e-11);
  EXPECT_LT(clm::testing::max_q_difference(kkt, schur), 1e-11);
  // Velocity projection puts qd on A qd + b = 0 at the step's time.
  rs.integrator = "rk4";
  rs.dt = 0.02;
  rs.options.projection = "velocity";
  const auto projected = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  double pdrift = 0;
  for (const auto& o : projected.obs) pdrift = std::max(pdrift, o.drift_velocity);
  EXPECT_LT(pdrift, 1e-15);
  std::printf("[measured] affine particle: kkt drift %.2e, kkt - schur %.2e, rk4 + velocity projection %.2e\n",
              drift, clm::testing::max_q_difference(kkt, schur), pdrift);
}
