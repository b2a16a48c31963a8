// Kozlov's limit formulations ([seed-004]; issue 3): penalty (Theorem 1, anisotropic friction -> nonholonomic),
// added_mass in its direct and multiplier forms (Theorem 2, added masses -> vakonomic), vakonomic, and the
// model term they rest on, the constraint curvature C = [Phi] of Phi = A(q) qd.
#include <gtest/gtest.h>

#include "core/loglog_fit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "allocation_counter.hpp"
#include "recorded_run.hpp"
#include "core/consistency.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"

using namespace clm;

namespace {

using LimitRun = clm::testing::RecordedRun;

LimitRun run(std::shared_ptr<const Model> model, const std::string& formulation, const FormulationOptions& options,
        const Vec& q0, const Vec& qd0, double t_end, double rtol, double atol, double every = 0.01) {
  clm::testing::RunSettings rs;
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = 1e-5;
  rs.rtol = rtol;
  rs.atol = atol;
  rs.options = options;
  LimitRun out = clm::testing::record_run(model, formulation, q0, qd0, rs);
  EXPECT_EQ(out.result.status, "ok") << formulation << ": " << out.result.message;
  return out;
}

// max over the common samples of |q_a - q_b| (2-norm).
double max_q_error(const LimitRun& a, const LimitRun& b) {
  EXPECT_EQ(a.t.size(), b.t.size());
  double e = 0;
  for (size_t i = 0; i < std::min(a.t.size(), b.t.size()); ++i) e = std::max(e, (a.obs[i].q - b.obs[i].q).norm());
  return e;
}

// Least-squares slope and intercept of log10(y) against log10(x) (core/loglog_fit.hpp).
std::pair<double, double> loglog_fit(const std::vector<double>& x, const std::vector<double>& y) {
  const clm::LogLogFit fit = clm::fit_loglog(x, y);
  return {fit.slope, fit.intercept};
}

// Sleigh with non-default parameters, started off the origin with forward speed u and turning rate w:
// qd = u (cos th, sin th, 0) + w (-b sin th, b cos th, 1) satisfies -sin th xd + cos th yd - b thd = 0.
struct Case {
  std::shared_ptr<const Model> model;
  Vec q0, qd0;
};

Case sleigh_case() {
  const double b = 0.25, th = 0.3, u = 1.0, w = 0.8;
  Case c{make_model("chaplygin_sleigh", {{"m", 1.3}, {"Ic", 0.4}, {"b", b}}), Vec(3), Vec(3)};
  c.q0 << 0.1, -0.2, th;
  c.qd0 << u * std::cos(th) - b * w * std::sin(th), u * std::sin(th) + b * w * std::cos(th), w;
  return c;
}

// Skate with non-default parameters, blade at phi0 = 0.3 sliding at v0 = 0.5 and turning at w = 1.5.
Case skate_case() {
  const double phi = 0.3, v = 0.5, w = 1.5;
  Case c{make_model("skate_incline", {{"m", 1.2}, {"J", 0.15}, {"g", 4.0}}), Vec(3), Vec(3)};
  c.q0 << 0.2, -0.1, phi;
  c.qd0 << v * std::cos(phi), v * std::sin(phi), w;
  return c;
}

Case disk_case() {
  const double R = 0.7, phi = 0.4, thd = 1.3;
  Case c{make_model("rolling_disk", {{"R", R}, {"M", 1.5}, {"I", 0.3}, {"J", 0.2}}), Vec(4), Vec(4)};
  c.q0 << 0.3, -0.5, 0.2, phi;
  c.qd0 << R * std::cos(phi) * thd, R * std::sin(phi) * thd, thd, 0.9;
  return c;
}

}  // namespace

// ---- Constraint curvature C = [Phi] -------------------------------------------------------------------

namespace {

// C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k by central differences of A(q) (step 1e-5: truncation ~1e-10).
Mat curvature_by_differences(const Model& model, const Vec& q, const Vec& qd) {
  const int n = model.n(), m = model.m();
  auto ws = model.make_workspace();
  ModelTerms t = model.make_terms();
  std::vector<Mat> dA(n);
  const double h = 1e-5;
  for (int k = 0; k < n; ++k) {
    Vec qp = q, qm = q;
    qp[k] += h;
    qm[k] -= h;
    model.evaluate(0, qp, qd, kConstraintJacobian, *ws, t);
    const Mat Ap = t.A;
    model.evaluate(0, qm, qd, kConstraintJacobian, *ws, t);
    dA[k] = (Ap - t.A) / (2 * h);
  }
  Mat C = Mat::Zero(m, n);
  for (int a = 0; a < m; ++a)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) C(a, j) += (dA[k](a, j) - dA[j](a, k)) * qd[k];
  return C;
}

}  // namespace

TEST(LimitFormulations, ConstraintCurvatureMatchesFiniteDifferences) {
  std::srand(7);
  for (const auto& make : {sleigh_case, skate_case, disk_case}) {
    const Case c = make();
    const int n = c.model->n();
    auto ws = c.model->make_workspace();
    ModelTerms t = c.model->make_terms();
    for (int trial = 0; trial < 5; ++trial) {
      const Vec q = c.q0 + Vec::Random(n);
      const Vec qd = 2.0 * Vec::Random(n);  // any velocity: C is defined off the constraint too
      c.model->evaluate(0.0, q, qd, kConstraintCurvature | kConstraintBias, *ws, t);
      const Mat fd = curvature_by_differences(*c.model, q, qd);
      EXPECT_GT(t.C.norm(), 0.1) << c.model->name();  // a genuinely nonholonomic constraint
      EXPECT_LT((t.C - fd).lpNorm<Eigen::Infinity>(), 1e-8) << c.model->name() << "\nC =\n" << t.C << "\nfd =\n" << fd;
      // C qd = Adot qd - d/dq(A qd) qd = 0: [Phi] is antisymmetric in (j, k).
      EXPECT_LT((t.C * qd).lpNorm<Eigen::Infinity>(), 1e-13) << c.model->name();
    }
  }
}

TEST(LimitFormulations, ConstraintCurvatureVanishesForHolonomicProblems) {
  std::srand(11);
  for (const std::string name : {"pendulum_polar", "pendulum_cartesian", "slider_crank", "four_bar", "closed_chain"}) {
    auto model = make_model(name);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    const Vec q = q0 + 0.3 * Vec::Random(model->n());
    const Vec qd = Vec::Random(model->n());
    model->evaluate(0.0, q, qd, kConstraintCurvature, *ws, t);
    ASSERT_EQ(t.C.rows(), model->m());
    ASSERT_EQ(t.C.cols(), model->n());
    EXPECT_EQ(t.C.lpNorm<Eigen::Infinity>(), 0.0) << name;
    // The claim behind the zero: second derivatives of h commute, so differences of A vanish too.
    const Mat fd = curvature_by_differences(*model, q, qd);
    EXPECT_LT(fd.lpNorm<Eigen::Infinity>(), 1e-8 * std::max(1.0, qd.norm())) << name;
  }
}

// ---- vakonomic -------------------------------------------------------------------------------------------

namespace {

// vakonomic and kkt agree to 1e-8 in q and qd; for holonomic constraints C = 0 and lambda0 is irrelevant.
void expect_vakonomic_equals_kkt(const std::shared_ptr<const Model>& model, Vec q0, Vec qd0, double t_end,
                                 std::vector<double> lambda0, const std::string& label) {
  project_onto_constraints(*model, q0, qd0);
  FormulationOptions vo;
  vo.lambda0 = std::move(lambda0);
  const LimitRun kkt = run(model, "kkt", {}, q0, qd0, t_end, 1e-12, 1e-14, 0.05);
  const LimitRun vak = run(model, "vakonomic", vo, q0, qd0, t_end, 1e-12, 1e-14, 0.05);
  double dq = 0, dqd = 0;
  for (size_t i = 0; i < kkt.t.size(); ++i) {
    dq = std::max(dq, (kkt.obs[i].q - vak.obs[i].q).lpNorm<Eigen::Infinity>());
    dqd = std::max(dqd, (kkt.obs[i].qd - vak.obs[i].qd).lpNorm<Eigen::Infinity>());
  }
  std::printf("[ vakonomic ] %-28s vs kkt: max|dq| = %.2e  max|dqd| = %.2e\n", label.c_str(), dq, dqd);
  EXPECT_LT(dq, 1e-8) << label;
  EXPECT_LT(dqd, 1e-8) << label;
  // The motion moves at all (a test that cannot fail is a defect).
  double travel = 0;
  for (const auto& o : kkt.obs) travel = std::max(travel, (o.q - kkt.obs.front().q).norm());
  EXPECT_GT(travel, 0.5) << label;
}

}  // namespace

TEST(LimitFormulations, VakonomicEqualsKktOnPendulumPolar) {
  auto model = make_model("pendulum_polar", {{"m", 0.7}, {"L", 1.3}, {"g", 9.0}, {"fx", 0.4}});
  Vec q0(2), qd0(2);
  q0 << 1.3, -0.6;
  qd0 << 0.0, 1.1;
  expect_vakonomic_equals_kkt(model, q0, qd0, 4.0, {}, "pendulum_polar lambda0 = 0");
  expect_vakonomic_equals_kkt(model, q0, qd0, 4.0, {2.5}, "pendulum_polar lambda0 = 2.5");
}

TEST(LimitFormulations, VakonomicEqualsKktOnSliderCrank) {
  auto model = make_model("slider_crank", {{"m2", 1.4}, {"tau", 0.3}});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  qd0 *= 1.7;
  expect_vakonomic_equals_kkt(model, q0, qd0, 3.0, {}, "slider_crank lambda0 = 0");
  expect_vakonomic_equals_kkt(model, q0, qd0, 3.0, std::vector<double>(model->m(), -0.8),
                              "slider_crank lambda0 = -0.8");
}

// [seed-004]: the vakonomic skate is a different motion. For the default data (from rest, phi0 = 0, w = 2) and
// for the non-default case the two differ by more than 1e-2 by t = 5.
TEST(LimitFormulations, VakonomicSkateDiffersFromNonholonomic) {
  std::vector<Case> cases = {skate_case()};
  Case d{make_model("skate_incline"), Vec(3), Vec(3)};
  d.model->default_initial(d.q0, d.qd0);
  cases.push_back(d);
  for (const Case& c : cases) {
    const LimitRun kkt = run(c.model, "kkt", {}, c.q0, c.qd0, 5.0, 1e-11, 1e-13, 0.05);
    const LimitRun vak = run(c.model, "vakonomic", {}, c.q0, c.qd0, 5.0, 1e-11, 1e-13, 0.05);
    const double diff = (kkt.obs.back().q - vak.obs.back().q).norm();
    std::printf("[ vakonomic ] skate |q_vak(5) - q_nh(5)| = %.3e\n", diff);
    EXPECT_GT(diff, 1e-2);
    // Both keep A qd = 0 to integration accuracy.
    EXPECT_LT(vak.obs.back().drift_velocity, 1e-8);
  }
}

// An independent reference for the vakonomic skate: L - lambda Phi has the cyclic coordinate y and x enters
// only through the potential, so p_y = m yd + lambda cos(phi) and p_x - m g t = m xd - lambda sin(phi) - m g t
// are constant; with F = 0 the energy T + V of L is conserved as well (Phi is linear in qd). This checks the
// sign of the C^T lambda term and of lambdadot (a wrong sign breaks the momenta at O(1)).
TEST(LimitFormulations, VakonomicSkateConservesMomenta) {
  const Case c = skate_case();
  const double m = 1.2, g = 4.0;
  for (double lambda0 : {0.0, 0.7}) {
    FormulationOptions o;
    o.lambda0 = {lambda0};
    const LimitRun vak = run(c.model, "vakonomic", o, c.q0, c.qd0, 5.0, 1e-12, 1e-14, 0.05);
    auto px = [&](size_t i) {
      const auto& s = vak.obs[i];
      return m * s.qd[0] - s.lambda[0] * std::sin(s.q[2]) - m * g * vak.t[i];
    };
    auto py = [&](size_t i) {
      const auto& s = vak.obs[i];
      return m * s.qd[1] + s.lambda[0] * std::cos(s.q[2]);
    };
    double dpx = 0, dpy = 0, de = 0, lmax = 0, tmax = 0;
    for (size_t i = 0; i < vak.t.size(); ++i) {
      dpx = std::max(dpx, std::abs(px(i) - px(0)));
      dpy = std::max(dpy, std::abs(py(i) - py(0)));
      de = std::max(de, std::abs(vak.obs[i].energy - vak.obs[0].energy));
      lmax = std::max(lmax, std::abs(vak.obs[i].lambda[0]));
      tmax = std::max(tmax, 0.5 * m * vak.obs[i].qd.head(2).squaredNorm());
    }
    std::printf("[ vakonomic ] skate lambda0 = %.1f: max|dp_x| = %.1e max|dp_y| = %.1e max|dE| = %.1e (max T = %.0f) "
                "max|lambda| = %.2f\n", lambda0, dpx, dpy, de, tmax, lmax);
    EXPECT_LT(dpx, 1e-9);
    EXPECT_LT(dpy, 1e-9);
    EXPECT_LT(de, 1e-10 * tmax);
    EXPECT_GT(lmax, 1.0);  // the multiplier is really exercised
  }
}

// ---- Kozlov's theorems: error against N on a log-log fit -------------------------------------------------

namespace {

struct Study {
  std::vector<double> N, error, seconds;
  long steps_at_largest_N = 0;
  double slope = 0, intercept = 0;
};

// Runs `formulation` for each N against `reference` (same samples) and fits log10(error) = slope log10(N) + b.
Study limit_study(const Case& c, const std::string& formulation, FormulationOptions options, const LimitRun& reference,
                  double t_end, const std::vector<double>& Ns, const std::string& label) {
  Study s;
  for (double N : Ns) {
    options.N = N;
    const auto start = std::chrono::steady_clock::now();
    const LimitRun r = run(c.model, formulation, options, c.q0, c.qd0, t_end, 1e-10, 1e-12);
    s.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    s.N.push_back(N);
    s.error.push_back(max_q_error(r, reference));
    s.steps_at_largest_N = r.result.stats.steps;
  }
  std::tie(s.slope, s.intercept) = loglog_fit(s.N, s.error);
  std::printf("[ kozlov    ] %-44s", label.c_str());
  for (size_t i = 0; i < s.N.size(); ++i) std::printf(" N=%.0e: %.2e (%.2fs)", s.N[i], s.error[i], s.seconds[i]);
  std::printf("  slope %.3f, steps at N=%.0e: %ld\n", s.slope, s.N.back(), s.steps_at_largest_N);
  return s;
}

const std::vector<double> kTheoremN = {1e2, 1e3, 1e4, 1e5};
// Both theorems give error O(1/N), slope -1. Measured over N = 1e2..1e5 (every decade gains a decade there):
// penalty -1.000 / -1.001 / -0.997 (sleigh, skate, disk), added_mass -0.999 / -0.998 / -0.999 in both
// forms. The band is about three times the largest deviation.
constexpr double kSlopeBand = 0.01;

}  // namespace

// Theorem 1 [seed-004]: viscous anisotropic friction N/2 (a, qd)^2, started on the constraint, converges to
// the nonholonomic motion (kkt at tight tolerance) with error O(1/N).
TEST(LimitFormulations, Theorem1PenaltyConvergesToNonholonomic) {
  for (const auto& [c, t_end, label] : {std::tuple{sleigh_case(), 5.0, "sleigh"}, std::tuple{skate_case(), 5.0, "skate"},
                                         std::tuple{disk_case(), 5.0, "rolling_disk"}}) {
    const LimitRun ref = run(c.model, "kkt", {}, c.q0, c.qd0, t_end, 1e-12, 1e-14);
    const Study s = limit_study(c, "penalty", {}, ref, t_end, kTheoremN, std::string("penalty -> kkt, ") + label);
    EXPECT_NEAR(s.slope, -1.0, kSlopeBand) << label;
  }
}

// Theorem 2 [seed-004]: added masses N/2 (a, qd)^2, started on the constraint, converge to the vakonomic
// motion with lambda(0) = 0, in both forms of added_mass.
TEST(LimitFormulations, Theorem2AddedMassConvergesToVakonomic) {
  for (const auto& [c, t_end, label] : {std::tuple{sleigh_case(), 5.0, "sleigh"}, std::tuple{skate_case(), 5.0, "skate"},
                                         std::tuple{disk_case(), 5.0, "rolling_disk"}}) {
    const LimitRun ref = run(c.model, "vakonomic", {}, c.q0, c.qd0, t_end, 1e-12, 1e-14);
    for (const std::string form : {"direct", "multiplier"}) {
      FormulationOptions o;
      o.added_mass_form = form;
      const Study s =
          limit_study(c, "added_mass", o, ref, t_end, kTheoremN, "added_mass (" + form + ") -> vakonomic, " + label);
      EXPECT_NEAR(s.slope, -1.0, kSlopeBand) << label << " " << form;
    }
  }
}

// ---- The two forms of added_mass: conditioning, cost, accuracy -------------------------------------------

namespace {

// Jacobian of rhs at y by central differences.
Mat rhs_jacobian(Formulation& f, const Vec& y) {
  const int d = f.dimension();
  Mat J(d, d);
  Vec yp = y, ym = y, fp(d), fm(d);
  for (int i = 0; i < d; ++i) {
    const double h = 1e-6 * std::max(1.0, std::abs(y[i]));
    yp[i] = y[i] + h;
    ym[i] = y[i] - h;
    f.rhs(0, yp, fp);
    f.rhs(0, ym, fm);
    J.col(i) = (fp - fm) / (2 * h);
    yp[i] = ym[i] = y[i];
  }
  return J;
}

double spectral_radius(const Mat& J) { return Eigen::EigenSolver<Mat>(J, false).eigenvalues().cwiseAbs().maxCoeff(); }

}  // namespace

// Issue 3: the direct form's Jacobian has a real eigenvalue pair growing like sqrt(N) (the O(N) force
// -C^T N A qd acting on O(1) masses against the O(1/N)-scaled response of A qd), so explicit steps shrink like
// 1/sqrt(N); the multiplier form's Jacobian is bounded in N (its N -> inf limit is the vakonomic system).
// Measured at the state the added-mass motion reaches at t = 1 on the skate.
TEST(LimitFormulations, AddedMassFormsConditioning) {
  const Case c = skate_case();
  std::vector<double> Ns = {1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}, rho_direct, rho_multiplier;
  for (double N : Ns) {
    FormulationOptions o;
    o.N = N;
    o.added_mass_form = "multiplier";
    const LimitRun r = run(c.model, "added_mass", o, c.q0, c.qd0, 1.0, 1e-11, 1e-13, 1.0);
    const Observation& s = r.obs.back();
    auto multiplier = formulation_registry().get("added_mass").make(c.model, o);
    o.added_mass_form = "direct";
    auto direct = formulation_registry().get("added_mass").make(c.model, o);
    Vec ym(multiplier->dimension()), yd(direct->dimension());
    ym << s.q, s.qd, s.lambda;
    yd << s.q, s.qd;
    const Mat Jd = rhs_jacobian(*direct, yd), Jm = rhs_jacobian(*multiplier, ym);
    const Eigen::VectorXcd ev = Eigen::EigenSolver<Mat>(Jd, false).eigenvalues();
    double largest_real = 0;
    for (int i = 0; i < ev.size(); ++i)
      if (std::abs(ev[i].imag()) < 1e-6 * std::abs(ev[i])) largest_real = std::max(largest_real, std::abs(ev[i].real()));
    rho_direct.push_back(spectral_radius(Jd));
    rho_multiplier.push_back(spectral_radius(Jm));
    std::printf("[ added_mass] N = %.0e: spectral radius of the rhs Jacobian: direct %.3e (largest real |eig| %.3e), "
                "multiplier %.3e\n", N, rho_direct.back(), largest_real, rho_multiplier.back());
    EXPECT_NEAR(largest_real, rho_direct.back(), 1e-6 * rho_direct.back()) << "the dominant pair is real, N = " << N;
  }
  // sqrt(N) is the asymptote: the fit over the last two decades (1e6 - 1e8).
  const std::vector<double> top_N(Ns.end() - 3, Ns.end()), top_rho(rho_direct.end() - 3, rho_direct.end());
  const double slope_direct = loglog_fit(top_N, top_rho).first;
  const double slope_multiplier = loglog_fit(Ns, rho_multiplier).first;
  std::printf("[ added_mass] log-log slope of the spectral radius over N: direct %.3f (N >= 1e6), multiplier %.3f\n",
              slope_direct, slope_multiplier);
  EXPECT_NEAR(slope_direct, 0.5, 0.03);
  EXPECT_LT(std::abs(slope_multiplier), 0.03);
  const auto [lo, hi] = std::minmax_element(rho_multiplier.begin(), rho_multiplier.end());
  EXPECT_LT(*hi / *lo, 1.05);                              // bounded in N
  EXPECT_GT(rho_direct.back(), 1000 * rho_multiplier.back());  // 1.0e4 vs 8.9 at N = 1e8
}


// Work and accuracy of both forms against the vakonomic limit on the skate to T = 2 (dopri5, rtol 1e-10):
// the multiplier form keeps the O(1/N) model error (N * error constant) with a step count independent of N;
// the direct form needs steps ~ N^0.4 and at N = 1e8 its error is no longer the model error.
TEST(LimitFormulations, AddedMassFormsCostAndAccuracy) {
  const Case c = skate_case();
  const double t_end = 2.0;
  const LimitRun ref = run(c.model, "vakonomic", {}, c.q0, c.qd0, t_end, 1e-12, 1e-14);
  std::map<std::string, std::vector<double>> scaled_error, steps;
  for (const std::string form : {"direct", "multiplier"}) {
    FormulationOptions o;
    o.added_mass_form = form;
    o.N = 1e4;
    auto f = formulation_registry().get("added_mass").make(c.model, o);
    Vec y, dy(f->dimension());
    f->initial_state(c.q0, c.qd0, y);
    const int reps = 100000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f->rhs(0, y, dy);
    const double ns = 1e9 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
    std::printf("[ added_mass] %-10s %.0f ns per rhs\n", form.c_str(), ns);
    for (double N : {1e4, 1e6, 1e8}) {
      o.N = N;
      const auto t0 = std::chrono::steady_clock::now();
      const LimitRun r = run(c.model, "added_mass", o, c.q0, c.qd0, t_end, 1e-10, 1e-12);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double err = max_q_error(r, ref);
      double residual = 0;
      for (const auto& s : r.obs) residual = std::max(residual, s.extras.size() > 1 ? s.extras[1] : 0.0);
      std::printf("[ added_mass] %-10s N = %.0e: steps %7ld rhs %8ld  %.3fs  error vs vakonomic %.2e  N*error %.3f  "
                  "invariant residual %.1e\n", form.c_str(), N, r.result.stats.steps, r.result.stats.rhs_evals, secs,
                  err, N * err, residual);
      scaled_error[form].push_back(N * err);
      steps[form].push_back(static_cast<double>(r.result.stats.steps));
    }
  }
  const auto& m = scaled_error["multiplier"];
  for (double e : m) EXPECT_NEAR(e, m[0], 1e-3 * m[0]) << "multiplier: N * error stays constant";
  EXPECT_LE(steps["multiplier"].back(), 1.05 * steps["multiplier"].front());
  EXPECT_GT(steps["direct"].back(), 20 * steps["direct"].front());
  // The two forms are the same system: at moderate N they agree on the model error to 1e-3 relative.
  EXPECT_NEAR(scaled_error["direct"][0], m[0], 1e-3 * m[0]);
}

// ---- Multiplier estimates and diagnostics --------------------------------------------------------------

namespace {

// max over samples with t >= t_from of |lambda_a - lambda_b|.
double max_lambda_error(const LimitRun& a, const LimitRun& b, double t_from) {
  double e = 0;
  for (size_t i = 0; i < std::min(a.t.size(), b.t.size()); ++i)
    if (a.t[i] >= t_from) e = std::max(e, (a.obs[i].lambda - b.obs[i].lambda).norm());
  return e;
}

}  // namespace

// The sign conventions: penalty's -N A qd tends to kkt's lambda (after the initial layer of width ~1/N, the
// run starts with A qd = 0), added_mass's -N A qd (direct) and state lambda (multiplier) tend to the
// vakonomic lambda from lambda(0) = 0; errors O(1/N). A flipped sign would leave an O(1) error.
TEST(LimitFormulations, MultiplierEstimatesConverge) {
  const Case c = sleigh_case();
  const double t_end = 3.0;
  const std::vector<double> Ns = {1e3, 1e4, 1e5};
  const LimitRun kkt = run(c.model, "kkt", {}, c.q0, c.qd0, t_end, 1e-12, 1e-14);
  const LimitRun vak = run(c.model, "vakonomic", {}, c.q0, c.qd0, t_end, 1e-12, 1e-14);
  double lambda_scale = 0;
  for (const auto& o : kkt.obs) lambda_scale = std::max(lambda_scale, o.lambda.norm());
  EXPECT_GT(lambda_scale, 0.1);
  for (const std::string which : {"penalty", "direct", "multiplier"}) {
    std::vector<double> err;
    for (double N : Ns) {
      FormulationOptions o;
      o.N = N;
      if (which != "penalty") o.added_mass_form = which;
      const LimitRun r = run(c.model, which == "penalty" ? "penalty" : "added_mass", o, c.q0, c.qd0, t_end, 1e-11, 1e-13);
      err.push_back(which == "penalty" ? max_lambda_error(r, kkt, 0.2) : max_lambda_error(r, vak, 0.0));
    }
    const double slope = loglog_fit(Ns, err).first;
    std::printf("[ lambda    ] %-10s max|lambda_N - lambda_ref| (max |lambda| %.2f): %.2e %.2e %.2e, slope %.3f\n",
                which.c_str(), lambda_scale, err[0], err[1], err[2], slope);
    EXPECT_LT(err.back(), 1e-3 * lambda_scale) << which;
    EXPECT_GE(slope, -1.15) << which;
    EXPECT_LE(slope, -0.85) << which;
  }
}

// Penalty with the position spring k/2 |h|^2 on a holonomic problem: lambda = -N A qd - k h tracks kkt's
// multiplier, and the spring holds h bounded where friction alone lets it drift (|h| grows like t |lambda|/N).
TEST(LimitFormulations, PenaltySpringOnHolonomicProblem) {
  auto model = make_model("pendulum_polar", {{"m", 0.8}, {"L", 1.2}, {"g", 9.5}, {"fx", 0.3}});
  Vec q0(2), qd0(2);
  q0 << 1.2, 0.9;
  qd0 << 0.0, -0.7;
  const double t_end = 4.0;
  const LimitRun kkt = run(model, "kkt", {}, q0, qd0, t_end, 1e-12, 1e-14);
  double drift[2], lambda_err[2], q_err[2];
  int i = 0;
  for (double k : {0.0, 1e6}) {
    FormulationOptions o;
    o.N = 1e4;
    o.k = k;
    const LimitRun r = run(model, "penalty", o, q0, qd0, t_end, 1e-11, 1e-13);
    drift[i] = 0;
    for (const auto& s : r.obs) drift[i] = std::max(drift[i], s.drift_position);
    lambda_err[i] = max_lambda_error(r, kkt, 0.2);
    q_err[i] = max_q_error(r, kkt);
    std::printf("[ penalty   ] pendulum_polar N = 1e4, k = %.0e: max|h| %.2e  max|q - q_kkt| %.2e  "
                "max|lambda - lambda_kkt| (t >= 0.2) %.2e\n", k, drift[i], q_err[i], lambda_err[i]);
    ++i;
  }
  EXPECT_GT(drift[0], 100 * drift[1]);
  EXPECT_LT(drift[1], 2e-5);
  EXPECT_LT(q_err[1], q_err[0] / 10);
  EXPECT_LT(lambda_err[1], 2e-3);
}

// Diagnostics: penalty's dissipation_rate integrates to the lost energy (T + V decreases by int 2 R_N dt
// when F = 0); added_mass's modified_energy T + V + N/2 |A qd|^2 is conserved (both forms), the
// multiplier form's invariant residual |lambda + N A qd| stays at the integration error.
TEST(LimitFormulations, EnergyDiagnostics) {
  const Case c = skate_case();
  {
    FormulationOptions o;
    o.N = 1e2;  // a visible loss
    const LimitRun r = run(c.model, "penalty", o, c.q0, c.qd0, 2.0, 1e-12, 1e-14, 1e-3);
    double dissipated = 0;  // trapezoid rule on the 1e-3 grid
    for (size_t i = 1; i < r.t.size(); ++i)
      dissipated += 0.5 * (r.t[i] - r.t[i - 1]) * (r.obs[i].extras[0] + r.obs[i - 1].extras[0]);
    const double lost = r.obs.front().energy - r.obs.back().energy;
    std::printf("[ penalty   ] skate N = 1e2: energy lost %.6e, integrated dissipation %.6e\n", lost, dissipated);
    EXPECT_GT(lost, 1e-3);
    EXPECT_NEAR(dissipated, lost, 1e-6 * lost);
  }
  for (const std::string form : {"direct", "multiplier"}) {
    FormulationOptions o;
    o.N = 1e3;
    o.added_mass_form = form;
    const LimitRun r = run(c.model, "added_mass", o, c.q0, c.qd0, 3.0, 1e-12, 1e-14, 0.05);
    double de = 0, de_plain = 0, residual = 0;
    for (const auto& s : r.obs) {
      de = std::max(de, std::abs(s.extras[0] - r.obs[0].extras[0]));
      de_plain = std::max(de_plain, std::abs(s.energy - r.obs[0].energy));
      if (form == "multiplier") residual = std::max(residual, s.extras[1]);
    }
    std::printf("[ added_mass] skate %-10s N = 1e3: max|dE_N| %.1e (T + V alone varies by %.1e), invariant residual "
                "%.1e\n", form.c_str(), de, de_plain, residual);
    EXPECT_LT(de, 1e-9);
    EXPECT_GT(de_plain, 1e-4);
    EXPECT_LT(residual, 1e-8);
  }
}

// ---- No heap allocation per rhs(); refusals -----------------------------------------------------------

TEST(LimitFormulations, NoAllocationPerRhs) {
  struct Config {
    std::string formulation, form;
    double k;
  };
  const std::vector<Config> configs = {{"penalty", "", 0.0},          {"penalty", "", 1e3},
                                       {"added_mass", "direct", 0.0}, {"added_mass", "multiplier", 0.0},
                                       {"vakonomic", "", 0.0}};
  int checked = 0;
  for (const std::string problem : {"chaplygin_sleigh", "skate_incline", "rolling_disk", "pendulum_polar",
                                    "slider_crank", "four_bar", "closed_chain"}) {
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    for (const Config& cfg : configs) {
      if (cfg.k != 0 && !model->holonomic()) continue;
      FormulationOptions o;
      o.N = 1e3;
      o.k = cfg.k;
      if (!cfg.form.empty()) o.added_mass_form = cfg.form;
      if (cfg.formulation == "vakonomic") o.baumgarte_alpha = 2.0;  // the Baumgarte branch too
      auto f = formulation_registry().get(cfg.formulation).make(model, o);
      Vec y, dy(f->dimension());
      f->initial_state(q0, qd0, y);
      f->rhs(0, y, dy);  // warm-up
      std::size_t count;
      {
        clm::testing::AllocationScope scope;
        for (int i = 0; i < 5; ++i) f->rhs(0.1 * i, y, dy);
        count = scope.count();
      }
      EXPECT_EQ(count, 0u) << problem << " / " << cfg.formulation << " " << cfg.form << " k = " << cfg.k;
      EXPECT_TRUE(dy.allFinite()) << problem << " / " << cfg.formulation;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7 * 4 + 4);
}

TEST(LimitFormulations, RefusesNonsense) {
  auto sleigh = make_model("chaplygin_sleigh");
  auto pendulum = make_model("pendulum_polar");
  for (const std::string f : {"penalty", "added_mass", "vakonomic"}) {
    EXPECT_EQ(formulation_registry().get(f).refuses(*sleigh), "") << f;
    EXPECT_EQ(formulation_registry().get(f).refuses(*pendulum), "") << f;
  }
  auto make = [](const std::string& f, std::shared_ptr<const Model> m, FormulationOptions o) {
    return formulation_registry().get(f).make(std::move(m), o);
  };
  FormulationOptions spring;
  spring.k = 10;
  EXPECT_THROW(make("penalty", sleigh, spring), InputError);  // no h for a Pfaffian constraint
  EXPECT_NO_THROW(make("penalty", pendulum, spring));
  for (double N : {0.0, -1.0, std::nan("")}) {
    FormulationOptions o;
    o.N = N;
    EXPECT_THROW(make("penalty", sleigh, o), InputError) << N;
    EXPECT_THROW(make("added_mass", sleigh, o), InputError) << N;
    o.added_mass_form = "multiplier";
    EXPECT_THROW(make("added_mass", sleigh, o), InputError) << N;
  }
  FormulationOptions negative_k;
  negative_k.k = -1;
  EXPECT_THROW(make("penalty", pendulum, negative_k), InputError);
  FormulationOptions bad_form;
  bad_form.added_mass_form = "implicit";
  try {
    make("added_mass", sleigh, bad_form);
    ADD_FAILURE() << "added_mass_form = implicit accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("added_mass_form"), std::string::npos) << e.what();
  }
  FormulationOptions bad_lambda0;
  bad_lambda0.lambda0 = {1.0, 2.0};  // the sleigh has one constraint
  EXPECT_THROW(make("vakonomic", sleigh, bad_lambda0), InputError);
  bad_lambda0.lambda0 = {1.0};
  EXPECT_NO_THROW(make("vakonomic", sleigh, bad_lambda0));
}
