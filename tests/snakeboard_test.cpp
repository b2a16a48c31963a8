// The snakeboard (problems/snakeboard.hpp): the autodiff terms against the reduced momentum equation derived
// from the energies (docs/findings.md "The snakeboard"), pointwise for arbitrary torques on psi and phi and
// along kkt runs against its unforced closed form; energy conservation; the null-space basis; no allocation per step; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "core/autodiff_model.hpp"
#include "core/loglog_fit.hpp"
#include "core/model.hpp"
#include "core/problem_registry.hpp"
#include "problems/snakeboard.hpp"
#include "allocation_counter.hpp"
#include "recorded_run.hpp"
#include "snakeboard_gait.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

const Snakeboard& problem_of(const std::shared_ptr<const Model>& model) {
  return static_cast<const AutoDiffModel<Snakeboard>&>(*model).problem();
}

// A consistent state: board rate s along xi, rotor and axle rates free.
void random_state(std::mt19937& rng, const Snakeboard& p, Vec& q, Vec& qd) {
  std::uniform_real_distribution<double> u(-1, 1);
  q.resize(5);
  qd.resize(5);
  q << u(rng), u(rng), 3 * u(rng), 3 * u(rng), 1.3 * u(rng);
  const double s = 2 * u(rng);
  qd << s * p.r * std::cos(q[4]) * std::cos(q[2]), s * p.r * std::cos(q[4]) * std::sin(q[2]), s * std::sin(q[4]),
      2 * u(rng), 2 * u(rng);
}

}  // namespace

// (1) of problems/snakeboard.hpp, d/dt(s sqrt(K_t)) = -J_r sin(phi) psidd / sqrt(K_t), with qdd from the
// autodiff M, c, A, Adot qd (the KKT system solved here) under random torques on psi and phi, which (1) says
// do not enter. Three parameter sets: the defaults (J_t = m r^2), J_t > m r^2, J_t < m r^2.
TEST(Snakeboard, ReducedMomentumEquationHoldsUnderArbitraryTorques) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::map<std::string, double> sets[] = {
      {}, {{"J", 0.6}, {"r", 0.4}}, {{"m", 2.5}, {"J", 0.02}, {"J_r", 0.11}, {"J_w", 0.03}, {"r", 0.7}}};
  double worst = 0;
  for (const auto& params : sets) {
    auto model = make_model("snakeboard", params);
    const Snakeboard& p = problem_of(model);
    auto ws = model->make_workspace();
    ModelTerms terms = model->make_terms();
    for (int k = 0; k < 50; ++k) {
      Vec q, qd;
      random_state(rng, p, q, qd);
      model->evaluate(0.0, q, qd, kAll, *ws, terms);
      ASSERT_LT((terms.A * qd).norm(), 1e-14);
      Vec F = Vec::Zero(5);
      F[3] = 3 * u(rng);
      F[4] = 3 * u(rng);
      Mat K = Mat::Zero(7, 7);
      Vec rhs(7);
      K.topLeftCorner(5, 5) = terms.M;
      K.topRightCorner(5, 2) = -terms.A.transpose();
      K.bottomLeftCorner(2, 5) = terms.A;
      rhs << F - terms.c, -terms.Adot_qd;
      const Vec qdd = K.partialPivLu().solve(rhs).head(5);
      const double th = q[2], phi = q[4], phid = qd[4];
      const double uu = qd[0] * std::cos(th) + qd[1] * std::sin(th);
      const double v = -qd[0] * std::sin(th) + qd[1] * std::cos(th);
      const double ud = qdd[0] * std::cos(th) + qdd[1] * std::sin(th) + qd[2] * v;
      const double s = p.board_rate(q, qd);
      const double sd = (ud * std::cos(phi) - uu * std::sin(phi) * phid) / p.r + qdd[2] * std::sin(phi) +
                        qd[2] * std::cos(phi) * phid;
      const double Kt = p.reduced_inertia_with_rotor(phi);
      const double dKt = 2 * (p.total_rotational_inertia() - p.m * p.r * p.r) * std::sin(phi) * std::cos(phi);
      const double lhs = sd * std::sqrt(Kt) + s * dKt * phid / (2 * std::sqrt(Kt));
      const double rhs1 = -p.J_r * std::sin(phi) * qdd[3] / std::sqrt(Kt);
      const double scale = std::abs(lhs) + std::abs(rhs1) + 1;
      EXPECT_LT(std::abs(lhs - rhs1) / scale, 1e-13) << "k = " << k;
      worst = std::max(worst, std::abs(lhs - rhs1) / scale);
      // The shape equations: the torques act on psi and phi alone.
      EXPECT_NEAR(2 * p.J_w * qdd[4], F[4], 1e-13);
      EXPECT_NEAR(p.J_r * (qdd[2] + qdd[3]), F[3], 1e-13);
    }
  }
  std::printf("snakeboard momentum equation (1): max relative residual %.2e\n", worst);
}

// Unforced, the closed form of problems/snakeboard.hpp (s^2 K(phi) conserved, theta by quadrature in closed
// form, psid = const - thetad) against kkt + dopri5, with K's coefficient d = m r^2 - J - 2 J_w of both signs
// and zero; energy conserved, constraints kept.
TEST(Snakeboard, UnforcedMotionMatchesReducedClosedForm) {
  const std::map<std::string, double> sets[] = {{}, {{"J", 0.6}}, {{"J", 0.24}}};  // d = 0.05, -0.36, 0
  double worst = 0, worst_e = 0, worst_drift = 0;
  for (const auto& params : sets) {
    auto model = make_model("snakeboard", params);
    const Snakeboard& p = problem_of(model);
    Vec q0(5), qd0(5);
    model->default_initial(q0, qd0);
    qd0[3] = 0.7;  // the rotor spinning too
    clm::testing::RunSettings rs;
    rs.t_end = 10;  // phi from 0.3 to 1.3
    rs.output_every = 0.25;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    double err = 0, e = 0, drift = 0;
    for (size_t k = 0; k < run.t.size(); ++k) {
      const auto& o = run.obs[k];
      const auto ref = p.unforced_reduced_motion(run.t[k], q0, qd0);
      err = std::max({err, std::abs(o.q[2] - ref.theta), std::abs(o.qd[2] - ref.thetad), std::abs(o.qd[3] - ref.psid),
                      std::abs(o.q[4] - ref.phi), std::abs(o.qd[4] - ref.phid), std::abs(p.board_rate(o.q, o.qd) - ref.s)});
      e = std::max(e, std::abs(o.energy / run.obs[0].energy - 1));
      drift = std::max(drift, o.drift_velocity);
    }
    // The motion is not trivial: the board's rate changes by a fifth or more.
    const auto end = p.unforced_reduced_motion(rs.t_end, q0, qd0);
    if (params.empty()) {
      EXPECT_GT(std::abs(end.s / p.board_rate(q0, qd0) - 1), 0.05);
    }
    EXPECT_LT(err, 1e-10);  // observed at most 4.1e-11 (dopri5, rtol 1e-12, 10 s)
    EXPECT_LT(e, 3e-11);  // observed at most 1.1e-11
    EXPECT_LT(drift, 5e-12);  // observed at most 1.4e-12
    worst = std::max(worst, err);
    worst_e = std::max(worst_e, e);
    worst_drift = std::max(worst_drift, drift);
  }
  std::printf("snakeboard unforced closed form vs kkt: %.2e, energy %.2e, velocity drift %.2e\n", worst, worst_e,
              worst_drift);
}

// The problem's null-space basis (A S = 0, full rank) through the nullspace formulation: the same motion as kkt.
TEST(Snakeboard, NullspaceFormulationAgreesWithKkt) {
  auto model = make_model("snakeboard", {});
  Vec q0(5), qd0(5);
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 5;
  rs.output_every = 0.25;
  const auto a = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  const auto b = clm::testing::record_run(model, "nullspace", q0, qd0, rs);
  ASSERT_EQ(a.result.status, "ok");
  ASSERT_EQ(b.result.status, "ok");
  const double d = clm::testing::max_q_difference(a, b);
  EXPECT_LT(d, 3e-11);  // observed 1.1e-11 (both at rtol 1e-12)
  std::printf("snakeboard nullspace vs kkt: %.2e\n", d);
}

// The gait psi = a sin(t), phi = b cos(t) from rest, held by the computed torques of GaitDrivenSnakeboard, under
// kkt + dopri5: psi and phi follow the gait (so (1) is the autodiff dynamics' momentum equation under a
// prescribed shape), theta and y return after a cycle, and the displacement per cycle approaches the averaging
// estimate pi J_r a b / (2 m r) with error order 4 in eps = a = b, order 6 with the b^2 correction of
// docs/findings.md (2).
TEST(Snakeboard, GaitDisplacementPerCycleAgainstTheAveragingEstimate) {
  const double m = 1, J_r = 0.05, r = 0.5, delta = 0;  // defaults: J + J_r + 2 J_w = m r^2
  std::vector<double> eps = {0.05, 0.1, 0.2, 0.4}, err0, err1;
  double track = 0, closure = 0;
  for (double e : eps) {
    clm::testing::GaitDrivenSnakeboard p;
    p.a = p.b = e;
    auto model = std::make_shared<AutoDiffModel<clm::testing::GaitDrivenSnakeboard>>(p);
    Vec q0 = Vec::Zero(5), qd0 = Vec::Zero(5);
    q0[4] = e;
    qd0[3] = e;
    clm::testing::RunSettings rs;
    rs.t_end = 2 * M_PI;
    rs.output_every = M_PI / 16;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    for (size_t k = 0; k < run.t.size(); ++k)
      track = std::max({track, std::abs(run.obs[k].q[3] - e * std::sin(run.t[k])),
                        std::abs(run.obs[k].q[4] - e * std::cos(run.t[k]))});
    const Vec& q = run.obs.back().q;
    closure = std::max({closure, std::abs(q[1]), std::abs(q[2])});
    const double leading = M_PI * J_r * e * e / (2 * m * r);
    err0.push_back(std::abs(q[0] - leading));
    err1.push_back(std::abs(q[0] - leading * (1 - (11 + 21 * delta) * e * e / 48)));
    std::printf("snakeboard gait eps = %.2f: Delta x = %.12e, averaging %.12e, error %.4e, corrected %.4e\n", e,
                q[0], leading, err0.back(), err1.back());
  }
  EXPECT_LT(track, 1e-12);    // observed 8.0e-14
  EXPECT_LT(closure, 5e-14);  // observed 3.3e-15
  // RK4 of the reduced equations: error -0.035984 eps^4 at eps = 0.05, orders 3.99 and 5.99 over these eps.
  const LogLogFit f0 = fit_loglog(eps, err0);
  EXPECT_NEAR(f0.slope, 4.0, 0.03);
  EXPECT_NEAR(err0[0] / std::pow(eps[0], 4), 11.0 / 48 * M_PI * J_r / (2 * m * r), 5e-5);
  const std::vector<double> eps1(eps.begin() + 1, eps.end()), e1(err1.begin() + 1, err1.end());
  const LogLogFit f1 = fit_loglog(eps1, e1);
  EXPECT_NEAR(f1.slope, 6.0, 0.03);
  std::printf("snakeboard gait: tracking %.2e, closure %.2e, error order %.3f (4), corrected %.3f (6)\n", track,
              closure, f0.slope, f1.slope);
}

// The hot path allocates nothing: a run ten times longer allocates no more (kkt and nullspace, dopri5).
TEST(Snakeboard, NoAllocationPerStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  auto model = make_model("snakeboard", {});
  Vec q0(5), qd0(5), y0;
  model->default_initial(q0, qd0);
  for (const char* formulation : {"kkt", "nullspace"}) {
    auto f = formulation_registry().get(formulation).make(model, FormulationOptions{});
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.rtol = 1e-8;
    s.atol = 1e-10;
    const auto counts = clm::testing::allocations_of_runs(*f, "dopri5", y0, s, 0.05, 0.5, 5.0);
    EXPECT_EQ(counts[0], counts[1]) << formulation;
  }
}

// The shape (issue 13): psi and phi are the actuated coordinates the [shape] section may name.
TEST(Snakeboard, ActuatedCoordinatesArePsiAndPhi) {
  auto model = make_model("snakeboard", {});
  EXPECT_EQ(model->actuated_coordinates(), (std::vector<int>{3, 4}));
  EXPECT_EQ(model->coordinate_names()[3], "psi");
  EXPECT_EQ(model->coordinate_names()[4], "phi");
}

TEST(Snakeboard, RefusesInadmissibleParameters) {
  for (const auto& [name, value, text] :
       {std::tuple{"m", 0.0, "m must be > 0"}, std::tuple{"J_r", 0.0, "J_r must be > 0"},
        std::tuple{"J_w", -1.0, "J_w must be > 0"}, std::tuple{"r", 0.0, "r must be > 0"},
        std::tuple{"J", -0.1, "J must be >= 0"}, std::tuple{"J", std::nan(""), "J must be finite"}}) {
    try {
      make_model("snakeboard", {{std::string(name), value}});
      ADD_FAILURE() << name;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  }
}
