// The augmented_lagrangian formulation (formulations/augmented_lagrangian.hpp, [BGS-1988]) and the trapezoidal
// integrator's index-3 scheme with projections ALI3-P (integrators/trapezoidal.hpp, [CCB-1997]) (issue 12 item 4):
// agreement with kkt (state, multipliers, minimum-norm multipliers on Bricard's redundant set), the measured
// order of ALI3-P, energy on Bricard, refusals and option checks in one line, no heap allocation per step.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"
#include "core/autodiff_model.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "runs/problem_capabilities.hpp"
#include "formulations/augmented_lagrangian.hpp"
#include "integrators/constraint_hessian.hpp"

using namespace clm;

namespace {

clm::testing::RecordedRun run(const std::string& problem, const std::string& formulation,
                              const std::string& integrator, double t_end, double every, double dt, double rtol,
                              double atol, FormulationOptions options = {}) {
  auto model = make_model(problem);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = integrator;
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = dt;
  rs.rtol = rtol;
  rs.atol = atol;
  rs.options = options;
  return clm::testing::record_run(model, formulation, q0, qd0, rs);
}

// max over samples of |x_a - x_b|_inf for the q entries [first, first + count) (count < 0: all).
double max_difference(const clm::testing::RecordedRun& a, const clm::testing::RecordedRun& b, int first = 0,
                      int count = -1) {
  EXPECT_EQ(a.obs.size(), b.obs.size());
  double d = 0;
  for (size_t k = 0; k < std::min(a.obs.size(), b.obs.size()); ++k) {
    const int c = count < 0 ? int(a.obs[k].q.size()) : count;
    d = std::max(d, (a.obs[k].q.segment(first, c) - b.obs[k].q.segment(first, c)).lpNorm<Eigen::Infinity>());
  }
  return d;
}

double max_lambda_difference(const clm::testing::RecordedRun& a, const clm::testing::RecordedRun& b) {
  double d = 0;
  for (size_t k = 0; k < std::min(a.obs.size(), b.obs.size()); ++k)
    d = std::max(d, (a.obs[k].lambda - b.obs[k].lambda).lpNorm<Eigen::Infinity>());
  return d;
}

double max_relative_energy_error(const clm::testing::RecordedRun& tr) {
  const double e0 = tr.obs.front().energy;
  double worst = 0;
  for (const auto& o : tr.obs) worst = std::max(worst, std::abs(o.energy - e0) / std::max(1.0, std::abs(e0)));
  return worst;
}

// One evaluation of a formulation at the problem's default state: qdd and lambda.
struct Evaluation {
  Vec qdd, lambda;
  int iterations = 0;
};
Evaluation evaluate(const std::string& problem, const std::string& formulation, FormulationOptions options = {}) {
  auto model = make_model(problem);
  Vec q0, qd0, y;
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get(formulation).make(model, options);
  f->initial_state(q0, qd0, y);
  Vec dy(f->dimension());
  f->rhs(0, y, dy);
  Observation o;
  f->observe(0, y, o);
  Evaluation e{dy.tail(model->n()), o.lambda, 0};
  if (auto* al = dynamic_cast<AugmentedLagrangianFormulation*>(f.get())) e.iterations = al->last_iterations();
  return e;
}

// A run of the trapezoidal integrator stepped by hand to t_end (constant steps dt), with its own multipliers.
struct Ali3pRun {
  Vec y, lambda;
  StepStatistics stats;
};
Ali3pRun ali3p(const std::string& problem, double t_end, double dt, FormulationOptions options = {},
               double rtol = 1e-12, double atol = 1e-14) {
  auto model = make_model(problem);
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  auto f = formulation_registry().get("augmented_lagrangian").make(model, options);
  f->initial_state(q0, qd0, y0);
  auto integ = integrator_registry().get("trapezoidal").make();
  IntegratorSettings s;
  s.dt = dt;
  s.rtol = rtol;
  s.atol = atol;
  integ->initialize(*f, 0, y0, s);
  while (integ->time() < t_end - 1e-12) EXPECT_TRUE(integ->step(t_end));
  return {integ->state(), *integ->step_multipliers(), integ->statistics()};
}

}  // namespace


// A Cartesian pendulum (mass 1, rod 1, g = 9.81) with its rod constraint written kCopies times (redundant rows).
template <int kCopies>
struct CopiedRodPendulum {
  static constexpr const char* kName = "copied_rod_pendulum";
  static constexpr const char* kDescription = "pendulum with its rod constraint written several times (test only)";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = kCopies;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  double g = 9.81;
  [[maybe_unused]] static constexpr std::array kParameters = {
      ParameterSpec<CopiedRodPendulum>{"g", &CopiedRodPendulum::g, "gravity"}};
  int dof() const { return 2; }
  int constraints() const { return kCopies; }
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
  void constraint(const VecN<T, 2>& q, VecN<T, kCopies>& h) const {
    for (int i = 0; i < kCopies; ++i) h[i] = 0.5 * (q[0] * q[0] + q[1] * q[1] - T(1));
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.6, -0.8;
    qd0 << 0.8, 0.6;
  }
};

// ---- the formulation ---------------------------------------------------------------------------------------

// At one state the iteration converges to kkt's qdd and lambda: the penalty's own error is ~1/(1 + alpha
// sigma) per update, what is left is rounding amplified by the condition of M + alpha A^T A (~alpha eps).
TEST(AugmentedLagrangian, OneEvaluationEqualsKkt) {
  for (const char* problem : {"four_bar", "slider_crank", "pendulum_cartesian", "closed_chain"}) {
    const Evaluation kkt = evaluate(problem, "kkt");
    const Evaluation al = evaluate(problem, "augmented_lagrangian");
    const double dqdd = (al.qdd - kkt.qdd).lpNorm<Eigen::Infinity>() / kkt.qdd.lpNorm<Eigen::Infinity>();
    const double dl = (al.lambda - kkt.lambda).lpNorm<Eigen::Infinity>() / kkt.lambda.lpNorm<Eigen::Infinity>();
    std::printf("[ al ] %-18s relative |dqdd| %.2e, |dlambda| %.2e, %d multiplier updates\n", problem, dqdd, dl,
                al.iterations);
    // Measured: qdd 3.1e-10 .. 4.4e-10 (1.9e-8 closed_chain(4)), lambda 2.2e-11 .. 1.1e-9, 3-6 updates (the last
    // one seeing the update stop shrinking).
    EXPECT_LT(dqdd, 3e-8) << problem;
    EXPECT_LT(dl, 2e-9) << problem;
    EXPECT_LE(al.iterations, 6) << problem;
  }
}

// One update only (al_iterations = 1) is the plain penalty method: its constraint error is O(1/alpha).
TEST(AugmentedLagrangian, OneUpdateIsThePenaltyMethod) {
  const Evaluation kkt = evaluate("four_bar", "kkt");
  FormulationOptions o;
  o.al_iterations = 1;
  std::vector<double> alphas = {1e3, 1e4, 1e5}, errs;
  for (double a : alphas) {
    o.al_alpha = a;
    const Evaluation al = evaluate("four_bar", "augmented_lagrangian", o);
    errs.push_back((al.qdd - kkt.qdd).lpNorm<Eigen::Infinity>());
  }
  const double slope = fit_loglog(alphas, errs).slope;
  std::printf("[ al ] one update: |dqdd| %.2e %.2e %.2e, slope %.4f\n", errs[0], errs[1], errs[2], slope);
  EXPECT_NEAR(slope, -1.0, 0.01);
}

// Trajectories with dopri5 (rtol 1e-10) on four_bar and slider_crank: the same motion and multipliers as kkt.
TEST(AugmentedLagrangian, AgreesWithKktUnderDopri5) {
  for (const char* problem : {"four_bar", "slider_crank"}) {
    const auto kkt = run(problem, "kkt", "dopri5", 2.0, 0.05, 1e-3, 1e-10, 1e-12);
    const auto al = run(problem, "augmented_lagrangian", "dopri5", 2.0, 0.05, 1e-3, 1e-10, 1e-12);
    ASSERT_EQ(al.result.status, "ok") << al.result.message;
    const double dq = max_difference(kkt, al), dl = max_lambda_difference(kkt, al);
    double drift = 0;
    for (const auto& o : al.obs) drift = std::max(drift, o.drift_position);
    std::printf("[ al ] %-12s dopri5 2 s: max|dq| %.2e, max|dlambda| %.2e, max|h| %.2e, %ld steps (kkt %ld)\n", problem,
                dq, dl, drift, al.result.stats.steps, kkt.result.stats.steps);
    // Measured: q 1.4e-8 (four_bar), 2.2e-9 (slider_crank); lambda 2.2e-6, 8.4e-8; |h| 3e-12, 1e-11. Larger than
    // the integrator's tolerance: qdd carries ~alpha eps relative rounding (OneEvaluationEqualsKkt).
    EXPECT_LT(dq, 3e-8) << problem;
    EXPECT_LT(dl, 4e-6) << problem;
    EXPECT_LT(drift, 2e-11) << problem;
  }
}

// Bricard (m = n = 24, rank 23) as it is: no rank test, no SVD. P3 against kkt's minimum-norm path over the
// IFToMM 10 s (issue 12: to 1e-6), energy, and the minimum-norm multipliers (the iteration starts at lambda* = 0
// and stays in the range of A). (3 s until kkt's redundant path took the symmetric eigen-decomposition of K
// instead of its JacobiSVD: 10 s at rtol 1e-10 went from 5.3 s to 0.7 s CPU.)
TEST(AugmentedLagrangian, BricardRedundantAgreesWithKktMinimumNorm) {
  const auto kkt = run("bricard", "kkt", "dopri5", 10.0, 0.1, 1e-4, 1e-10, 1e-12);
  const auto al = run("bricard", "augmented_lagrangian", "dopri5", 10.0, 0.1, 1e-4, 1e-10, 1e-12);
  ASSERT_EQ(al.result.status, "ok") << al.result.message;
  const double dp = max_difference(kkt, al, 3, 3), dl = max_lambda_difference(kkt, al);
  const double de = max_relative_energy_error(al);
  double lmax = 0;
  for (const auto& o : kkt.obs) lmax = std::max(lmax, o.lambda.lpNorm<Eigen::Infinity>());
  std::printf("[ al ] bricard dopri5 10 s: max|dP3| %.2e, max|dlambda| %.2e (|lambda| <= %.1f), energy %.2e, %ld "
              "steps\n", dp, dl, lmax, de, al.result.stats.steps);
  // Measured: P3 5.0e-9 (the issue asks 1e-6), lambda 1.2e-5 (minimum-norm on both sides), energy 1.2e-9.
  EXPECT_LT(dp, 1e-8);
  EXPECT_LT(dl, 2e-5);
  EXPECT_LT(de, 2e-9);
}


// Redundant rows need no special treatment: the pendulum with its constraint three times under augmented_lagrangian
// (dopri5 and ALI3-P) moves as the single one under kkt, and each copy carries a third of kkt's multiplier (the
// minimum-norm split: the iteration starts at lambda* = 0 and stays in the range of A).
TEST(AugmentedLagrangian, TripledConstraintIsTheSingleOne) {
  // With their capabilities: ALI3-P's full tangent reads the constraint Hessian (integrators/constraint_hessian.hpp).
  auto single = make_model_with_capabilities(CopiedRodPendulum<1>{});
  auto triple = make_model_with_capabilities(CopiedRodPendulum<3>{});
  Vec q0, qd0;
  single->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 2;
  rs.output_every = 0.1;
  rs.rtol = 1e-10;
  rs.atol = 1e-12;
  const auto kkt = clm::testing::record_run(single, "kkt", q0, qd0, rs);
  const auto al = clm::testing::record_run(triple, "augmented_lagrangian", q0, qd0, rs);
  ASSERT_EQ(al.result.status, "ok") << al.result.message;
  double dq = max_difference(kkt, al), dsplit = 0;
  for (size_t k = 0; k < al.obs.size(); ++k)
    for (int i = 0; i < 3; ++i) dsplit = std::max(dsplit, std::abs(al.obs[k].lambda[i] - kkt.obs[k].lambda[0] / 3));
  rs.integrator = "trapezoidal";
  rs.dt = 1e-3;
  rs.options.al_alpha = 1e9;
  const auto ali3p_single = clm::testing::record_run(single, "augmented_lagrangian", q0, qd0, rs);
  const auto ali3p_triple = clm::testing::record_run(triple, "augmented_lagrangian", q0, qd0, rs);
  ASSERT_EQ(ali3p_triple.result.status, "ok") << ali3p_triple.result.message;
  const double dali = max_difference(ali3p_single, ali3p_triple);
  std::printf("[ al ] tripled rod: dopri5 max|dq| vs kkt %.2e, max|lambda_i - lambda/3| %.2e; ALI3-P single vs "
              "triple max|dq| %.2e\n", dq, dsplit, dali);
  // Measured: 1.0e-10, 9.4e-9 (lambda ~ 10: alpha eps rounding), 6.1e-9 (ALI3-P's Newton tolerance).
  EXPECT_LT(dq, 3e-10);
  EXPECT_LT(dsplit, 2e-8);
  EXPECT_LT(dali, 1e-8);
}

// ---- the trapezoidal integrator: ALI3-P ---------------------------------------------------------------------

// Order 2: four_bar to t = 1 at dt = 1/200 .. 1/1600 against kkt + dopri5 (rtol 1e-13); alpha = 1e9.
TEST(Trapezoidal, Ali3pOrderTwo) {
  auto ref = run("four_bar", "kkt", "dopri5", 1.0, 1.0, 1e-4, 1e-13, 1e-15);
  ASSERT_EQ(ref.result.status, "ok");
  const Vec& q_ref = ref.obs.back().q;
  std::vector<double> hs, errs;
  for (double dt : {1.0 / 200, 1.0 / 400, 1.0 / 800, 1.0 / 1600}) {
    FormulationOptions o;
    o.al_alpha = 1e9;
    const Ali3pRun r = ali3p("four_bar", 1.0, dt, o, 1e-10, 1e-12);
    hs.push_back(dt);
    errs.push_back((r.y.head(q_ref.size()) - q_ref).lpNorm<Eigen::Infinity>());
    std::printf("[ ali3p ] four_bar dt %.5f: |q - q_ref| %.3e, %.2f iterations a step\n", dt, errs.back(),
                double(r.stats.newton_iterations) / r.stats.steps);
  }
  const double p = fit_loglog(hs, errs).slope;
  std::printf("[ ali3p ] measured order %.4f\n", p);
  EXPECT_NEAR(p, 2.0, 0.05);
}

// Its multipliers (-lambda* + alpha h at the step end) against kkt's at the same state: O(h) (measured 0.99;
// the index-3 trapezoidal rule's multipliers are first order), 1.7e-2 relative at dt = 1/400.
TEST(Trapezoidal, Ali3pMultipliersApproachKkt) {
  auto model = make_model("four_bar");
  auto kkt = formulation_registry().get("kkt").make(model, {});
  std::vector<double> hs, errs;
  for (double dt : {1.0 / 100, 1.0 / 200, 1.0 / 400}) {
    FormulationOptions o;
    o.al_alpha = 1e9;
    const Ali3pRun r = ali3p("four_bar", 1.0, dt, o, 1e-10, 1e-12);
    Observation obs;
    kkt->observe(1.0, r.y, obs);
    hs.push_back(dt);
    errs.push_back((r.lambda - obs.lambda).lpNorm<Eigen::Infinity>() / obs.lambda.lpNorm<Eigen::Infinity>());
    std::printf("[ ali3p ] four_bar dt %.5f: relative |lambda - lambda_kkt| %.3e\n", dt, errs.back());
  }
  const double p = fit_loglog(hs, errs).slope;
  std::printf("[ ali3p ] multipliers: order %.4f\n", p);
  EXPECT_NEAR(p, 1.0, 0.03);
  EXPECT_LT(errs.back(), 2e-2);
}

// Bricard's redundant set over the IFToMM 10 s at dt = 1e-3 with the published alpha = 1e7 (alpha dt^2/4 = 2.5):
// energy, constraints and P3 against nullspace + dopri5 (rtol 1e-12; nullspace = kkt to 1.6e-9 on this problem,
// tests/redundant_constraints_test.cpp). With alpha = 1 (alpha dt^2/4 = 2.5e-7) the multiplier iteration cannot
// converge and the run ends "failed", saying so.
TEST(Trapezoidal, Ali3pBricard) {
  const auto ref = run("bricard", "nullspace", "dopri5", 10.0, 0.1, 1e-4, 1e-12, 1e-14);
  ASSERT_EQ(ref.result.status, "ok") << ref.result.message;
  const auto tr = run("bricard", "augmented_lagrangian", "trapezoidal", 10.0, 0.1, 1e-3, 1e-10, 1e-12);
  ASSERT_EQ(tr.result.status, "ok") << tr.result.message;
  const double dp = max_difference(ref, tr, 3, 3), de = max_relative_energy_error(tr);
  double dh = 0, dv = 0;
  for (const auto& ob : tr.obs) {
    dh = std::max(dh, ob.drift_position);
    dv = std::max(dv, ob.drift_velocity);
  }
  std::printf("[ ali3p ] bricard dt 1e-3 10 s: max|dP3| %.2e, energy %.2e, max|h| %.2e, max|A qd| %.2e, %.2f "
              "iterations a step\n", dp, de, dh, dv, double(tr.result.stats.newton_iterations) / tr.result.stats.steps);
  // Measured: P3 5.7e-6, energy 2.2e-7, |h| 8.3e-12, |A qd| 3.8e-7, 12.4 iterations a step (3 at alpha = 1e9).
  EXPECT_LT(dp, 1e-5);
  EXPECT_LT(de, 3e-7);
  EXPECT_LT(dh, 1e-11);
  FormulationOptions weak;
  weak.al_alpha = 1;
  const auto stalled = run("bricard", "augmented_lagrangian", "trapezoidal", 10.0, 0.1, 1e-3, 1e-10, 1e-12, weak);
  EXPECT_EQ(stalled.result.status, "failed");
  EXPECT_NE(stalled.result.message.find("a larger al_alpha or dt"), std::string::npos) << stalled.result.message;
}

// The geometric stiffness sum_i mu_i d2h_i/dq2 of the full ALI3-P tangent (integrators/constraint_hessian.hpp,
// coloured hyper-dual passes) against the dense second derivatives of h from Model::dynamics_derivatives
// (dA/dq_l, unit hyper-dual seeds), contracted with the same mu, at a state off the constraints.
TEST(Trapezoidal, ConstraintHessianEqualsDenseSecondDerivatives) {
  for (const char* problem : {"four_bar", "bricard", "n_four_bar"}) {
    auto model = make_model(problem, std::string(problem) == "n_four_bar" ? std::map<std::string, double>{{"loops", 3}}
                                                                          : std::map<std::string, double>{});
    const auto* hess = model->capability<ConstraintHessian>();
    ASSERT_NE(hess, nullptr) << problem;
    const int n = model->n(), m = model->m();
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    Vec q = q0, mu(m);
    for (int i = 0; i < n; ++i) q[i] += 0.05 * std::sin(2.3 * i + 0.7);
    for (int i = 0; i < m; ++i) mu[i] = std::cos(1.1 * i) * (1 + i);
    auto hws = hess->make_workspace(0, q0);
    Mat K = Mat::Zero(n, n);
    hess->add_weighted(0, q, mu, 1.0, *hws, K);
    auto ws = model->make_workspace();
    auto d = model->make_derivatives();
    model->dynamics_derivatives(q, qd0, *ws, d);
    Mat K_ref(n, n);
    for (int l = 0; l < n; ++l) K_ref.col(l) = d.dA[l].transpose() * mu;
    const double err = (K - K_ref).lpNorm<Eigen::Infinity>() / K_ref.lpNorm<Eigen::Infinity>();
    std::printf("[ ali3p ] %-12s n %3d: %d colours (%d passes; dense %d), relative |K - K_dense| %.1e\n", problem, n,
                hws->colors, hws->colors * (hws->colors + 1) / 2, n * (n + 1) / 2, err);
    EXPECT_LT(err, 1e-14) << problem;
    EXPECT_LT(hws->colors, n) << problem;
  }
}

// The tangent's geometric stiffness is (dt^2/4) sum (lambda* + alpha h)_i d2h_i/dq2 next to M and
// (dt^2/4) alpha A^T A: with alpha dt^2/4 >> 1 and lambda* ~ the constraint forces it is a small correction,
// and the iteration's count per step is set by the multiplier update, not by it. Measured here: the same
// trajectories (to the Newton tolerance) and the iterations a step with and without it.
TEST(Trapezoidal, GeometricStiffnessTangent) {
  struct Case {
    const char* problem;
    double dt, alpha;
  };
  for (const Case& c : {Case{"four_bar", 1e-2, 1e7}, Case{"four_bar", 1e-3, 1e9}, Case{"bricard", 1e-2, 1e7},
                        Case{"bricard", 1e-3, 1e9}}) {
    FormulationOptions full, penalty;
    full.al_alpha = penalty.al_alpha = c.alpha;
    penalty.al_tangent = "penalty";
    const Ali3pRun a = ali3p(c.problem, 1.0, c.dt, full, 1e-10, 1e-12);
    const Ali3pRun b = ali3p(c.problem, 1.0, c.dt, penalty, 1e-10, 1e-12);
    const double ia = double(a.stats.newton_iterations) / a.stats.steps;
    const double ib = double(b.stats.newton_iterations) / b.stats.steps;
    const double dq = (a.y - b.y).lpNorm<Eigen::Infinity>();
    std::printf("[ ali3p ] %-8s dt %.0e alpha dt^2/4 %.0f: iterations a step full %.3f, penalty %.3f; |dy| %.1e\n",
                c.problem, c.dt, 0.25 * c.alpha * c.dt * c.dt, ia, ib, dq);
    EXPECT_LE(ia, ib + 1e-12) << c.problem << " " << c.dt;
    EXPECT_LT(dq, 1e-8) << c.problem << " " << c.dt;
  }
  FormulationOptions bad;
  bad.al_tangent = "exact";
  EXPECT_THROW(ali3p("four_bar", 0.01, 1e-3, bad), InputError);
}

// ---- refusals, options, allocations ------------------------------------------------------------------------

TEST(Trapezoidal, RefusesOtherFormulationsAndPfaffianProblemsInOneLine) {
  auto integ = integrator_registry().get("trapezoidal").make();
  auto kkt = formulation_registry().get("kkt").make(make_model("four_bar"), {});
  std::string why = integ->refuses_formulation(*kkt);
  EXPECT_NE(why.find("runs with formulation augmented_lagrangian"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
  auto sleigh = formulation_registry().get("augmented_lagrangian").make(make_model("chaplygin_sleigh"), {});
  why = integ->refuses_formulation(*sleigh);
  EXPECT_NE(why.find("Pfaffian"), std::string::npos) << why;
  EXPECT_TRUE(integ->integrates_constrained_system());
}

TEST(AugmentedLagrangian, BadOptionsOneLine) {
  FormulationOptions o;
  o.al_alpha = 0;
  try {
    formulation_registry().get("augmented_lagrangian").make(make_model("four_bar"), o);
    FAIL() << "alpha = 0 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "augmented_lagrangian: option al_alpha must be a finite number > 0 (got 0)");
  }
  o = {};
  o.al_iterations = 0;
  EXPECT_THROW(formulation_registry().get("augmented_lagrangian").make(make_model("four_bar"), o), InputError);
  EXPECT_NE(formulation_registry().get("augmented_lagrangian").refuses(*make_model("charged_particle")), "");
}

TEST(AugmentedLagrangian, NoHeapAllocationPerRhsOrStep) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  for (const char* problem : {"four_bar", "bricard"}) {
    auto model = make_model(problem);
    Vec q0, qd0, y;
    model->default_initial(q0, qd0);
    FormulationOptions o;
    o.al_alpha = 1e9;  // alpha dt^2/4 = 250 at dt = 1e-3 for ALI3-P
    auto f = formulation_registry().get("augmented_lagrangian").make(model, o);
    f->initial_state(q0, qd0, y);
    Vec dy(f->dimension());
    f->rhs(0, y, dy);
    std::size_t count;
    {
      clm::testing::AllocationScope scope;
      for (int i = 0; i < 5; ++i) f->rhs(0.1 * i, y, dy);
      count = scope.count();
    }
    EXPECT_EQ(count, 0u) << problem;
    IntegratorSettings s;
    s.dt = 1e-3;
    const auto counts = clm::testing::allocations_of_runs(*f, "trapezoidal", y, s, 0.01, 0.05, 0.5);
    EXPECT_EQ(counts[0], counts[1]) << problem << ": a ten times longer ALI3-P run allocates more";
  }
}
