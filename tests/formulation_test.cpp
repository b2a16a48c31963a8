// Formulations kkt, schur and nullspace [seed-000, eq. 2.6, 2.9, 2.17-2.18]: agreement with each other
// and with closed forms, multipliers, energy, Baumgarte stabilization, coordinate re-partitioning,
// refusal of redundant constraints, failure on a singular mass matrix, and no heap allocation per rhs().
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "recorded_run.hpp"
#include "core/autodiff_model.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/consistency.hpp"
#include "core/simulate.hpp"
#include "runs/problem_capabilities.hpp"
#include "formulations/nullspace_formulation.hpp"
#include "problems/chaplygin_sleigh.hpp"

using namespace clm;

namespace {

const std::array<const char*, 3> kFormulations = {"kkt", "schur", "nullspace"};

bool has_problem(const std::string& name) { return problem_registry().contains(name); }

// A whole run, sampled every `every` seconds.
using Trajectory = clm::testing::RecordedRun;

// dopri5 at tight tolerances (rk4 at dt_fallback when another integrator is named).
Trajectory simulate_run(std::shared_ptr<const Model> model, const std::string& formulation, const Vec& q0,
                        const Vec& qd0, double t_end, double rtol = 1e-12, double atol = 1e-14,
                        double dt_fallback = 1e-3, FormulationOptions options = {}, double every = 0.05,
                        const std::string& integrator = "") {
  clm::testing::RunSettings rs;
  rs.integrator = integrator.empty() ? "dopri5" : integrator;
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = rs.integrator == "dopri5" ? 1e-4 : dt_fallback;
  rs.rtol = rtol;
  rs.atol = atol;
  rs.options = options;
  return clm::testing::record_run(model, formulation, q0, qd0, rs);
}

double max_relative_energy_error(const Trajectory& tr) {
  const double e0 = tr.obs.front().energy;
  double worst = 0;
  for (const auto& o : tr.obs) worst = std::max(worst, std::abs(o.energy - e0) / std::max(1.0, std::abs(e0)));
  return worst;
}

// Largest |q_a - q_b|_inf and |qd_a - qd_b|_inf over the common samples.
std::pair<double, double> max_difference(const Trajectory& a, const Trajectory& b) {
  EXPECT_EQ(a.t.size(), b.t.size());
  double dq = 0, dqd = 0;
  for (size_t i = 0; i < std::min(a.t.size(), b.t.size()); ++i) {
    EXPECT_DOUBLE_EQ(a.t[i], b.t[i]);
    dq = std::max(dq, (a.obs[i].q - b.obs[i].q).lpNorm<Eigen::Infinity>());
    dqd = std::max(dqd, (a.obs[i].qd - b.obs[i].qd).lpNorm<Eigen::Infinity>());
  }
  return {dq, dqd};
}

// Checks kkt, schur and nullspace agree to `tol` in q and qd over [0, t_end]; returns the kkt run.
Trajectory expect_agreement(const std::shared_ptr<const Model>& model, const Vec& q0, const Vec& qd0, double t_end,
                            double tol, const std::string& label) {
  std::vector<Trajectory> runs;
  for (const char* f : kFormulations) {
    runs.push_back(simulate_run(model, f, q0, qd0, t_end));
    EXPECT_EQ(runs.back().result.status, "ok") << label << " " << f << ": " << runs.back().result.message;
    EXPECT_EQ(runs.back().t.size(), runs.front().t.size());
    if (!runs.back().obs.back().extras.empty())
      std::printf("[ agreement ] %s %s: %g re-partitions, %ld steps\n", label.c_str(), f,
                  runs.back().obs.back().extras[0], runs.back().result.stats.steps);
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    const auto [dq, dqd] = max_difference(runs[0], runs[i]);
    EXPECT_LT(dq, tol) << label << ": kkt vs " << kFormulations[i];
    EXPECT_LT(dqd, tol) << label << ": kkt vs " << kFormulations[i];
    std::printf("[ agreement ] %-40s kkt vs %-9s  max|dq| = %.2e  max|dqd| = %.2e\n", label.c_str(),
                kFormulations[i], dq, dqd);
  }
  return runs[0];
}

// ---- Test-only problems --------------------------------------------------------------------------------

// A Cartesian pendulum whose rod constraint is stated twice: A has 2 identical rows, rank 1.
struct RedundantPendulum {
  static constexpr const char* kName = "redundant_pendulum";
  static constexpr const char* kDescription = "pendulum with its rod constraint written twice (test only)";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  double m = 1, L = 1, g = 9.81;
  [[maybe_unused]] static constexpr std::array kParameters = {ParameterSpec<RedundantPendulum>{"m", &RedundantPendulum::m, "mass"}};
  int dof() const { return 2; }
  int constraints() const { return 2; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    M.setZero();
    M(0, 0) = T(m);
    M(1, 1) = T(m);
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return m * g * q[1];
  }
  template <class T>
  void constraint(const VecN<T, 2>& q, VecN<T, 2>& h) const {
    h[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - T(L * L));
    h[1] = h[0];
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.6, -0.8;
    qd0 << 0.8, 0.6;
  }
};

// The sleigh without its natural velocity basis: forces the nullspace formulation onto coordinate
// partitioning, whose best split changes as theta turns (A = (-sin theta, cos theta, -b)).
struct SleighWithoutBasis {
  static constexpr const char* kName = "chaplygin_sleigh";
  static constexpr const char* kDescription = "Chaplygin sleigh without velocity basis (test only)";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  double m = 1.0, Ic = 0.5, b = 0.3;
  [[maybe_unused]] static constexpr std::array kParameters = {ParameterSpec<SleighWithoutBasis>{"m", &SleighWithoutBasis::m, ""},
                                             ParameterSpec<SleighWithoutBasis>{"Ic", &SleighWithoutBasis::Ic, ""},
                                             ParameterSpec<SleighWithoutBasis>{"b", &SleighWithoutBasis::b, ""}};
  ChaplyginSleigh sleigh() const {
    ChaplyginSleigh s;
    s.m = m;
    s.Ic = Ic;
    s.b = b;
    return s;
  }
  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const { sleigh().validate(); }
  template <class T>
  void mass_matrix(const VecN<T, 3>& q, MatN<T, 3, 3>& M) const {
    sleigh().mass_matrix(q, M);
  }
  template <class T>
  T potential(const VecN<T, 3>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    sleigh().pfaffian(q, A);
  }
  void default_initial(Vec& q0, Vec& qd0) const { sleigh().default_initial(q0, qd0); }
};

// A point mass on a circle, but with zero mass in y: M is singular (not SPD) while the KKT matrix is not.
struct MasslessDirection {
  static constexpr const char* kName = "massless_direction";
  static constexpr const char* kDescription = "bead on a circle with no mass along y (test only)";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  double m = 1;
  [[maybe_unused]] static constexpr std::array kParameters = {ParameterSpec<MasslessDirection>{"m", &MasslessDirection::m, "mass"}};
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    M.setZero();
    M(0, 0) = T(m);
  }
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return T(0.0) * q[0];
  }
  template <class T>
  void constraint(const VecN<T, 2>& q, VecN<T, 1>& h) const {
    h[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - T(1.0));
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.6, 0.8;
    qd0 << -0.8, 0.6;
  }
};

// Reduced sleigh motion [seed-000, after eq. 2.18]: u' = b w^2, w' = -beta u w conserve
// u^2 + (b / beta) w^2 = C^2, so u = C tanh(beta C t + tau0), w = sgn(w0) sqrt(beta / b) C sech(beta C t + tau0),
// theta = theta0 + sgn(w0) (gd(beta C t + tau0) - gd(tau0)) / sqrt(beta b), gd(x) = atan(sinh(x)).
// Independent of the problems helper's closed form: checks (u, w, theta) only.
struct SleighReduced {
  double m, Ic, b;
  double beta() const { return m * b / (m * b * b + Ic); }
  void at(double t, const Vec& q0, const Vec& qd0, double& u, double& w, double& theta) const {
    const double u0 = qd0[0] * std::cos(q0[2]) + qd0[1] * std::sin(q0[2]), w0 = qd0[2];
    const double be = beta();
    const double C = std::sqrt(u0 * u0 + b / be * w0 * w0);
    const double tau0 = std::atanh(u0 / C);
    const double x = be * C * t + tau0;
    const double sg = w0 >= 0 ? 1.0 : -1.0;
    u = C * std::tanh(x);
    w = sg * std::sqrt(be / b) * C / std::cosh(x);
    theta = q0[2] + sg * (std::atan(std::sinh(x)) - std::atan(std::sinh(tau0))) / std::sqrt(be * b);
  }
  // lambda = m Ic / (m b^2 + Ic) u w (from Ic thetadd = -b lambda and w' = -beta u w).
  double multiplier(double u, double w) const { return m * Ic / (m * b * b + Ic) * u * w; }
};

}  // namespace

// ---- Registry ------------------------------------------------------------------------------------------

TEST(Formulations, RegisteredWithDescriptions) {
  for (const char* f : kFormulations) {
    ASSERT_TRUE(formulation_registry().contains(f)) << f;
    const auto& e = formulation_registry().get(f);
    EXPECT_FALSE(e.description.empty());
    EXPECT_EQ(e.make(make_model("chaplygin_sleigh"), {})->name(), f);
  }
  auto sleigh = formulation_registry().get("nullspace").make(make_model("chaplygin_sleigh"), {});
  EXPECT_EQ(sleigh->dimension(), 2 * 3 - 1);
  EXPECT_EQ(sleigh->extra_names(), std::vector<std::string>{"repartitions"});
}

// A name registered twice is refused when the table is built (it used to leave the second entry unreachable).
TEST(Formulations, ANameRegisteredTwiceIsRefused) {
  Registry<FormulationEntry> r("formulation");
  FormulationEntry e;
  e.name = "kkt";
  r.add(e);
  try {
    r.add(e);
    FAIL() << "a duplicate was accepted";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(), "formulation 'kkt' is registered twice");
  }
  // The suite's own tables have no duplicate (building them would have thrown).
  EXPECT_FALSE(formulation_registry().all().empty());
  EXPECT_FALSE(integrator_registry().all().empty());
}

// ---- Polar pendulum: multipliers against the closed form -----------------------------------------------

TEST(Formulations, PolarPendulumMultiplierMatchesClosedForm) {
  struct Case {
    std::map<std::string, double> params;
    double theta0, thetad0;
  };
  const std::vector<Case> cases = {{{{"fx", 2.0}}, 1.0, 0.0},
                                   {{{"m", 2.5}, {"L", 1.7}, {"g", 3.7}, {"fx", -4.0}}, -2.2, 1.3}};
  for (const auto& c : cases) {
    auto model = make_model("pendulum_polar", c.params);
    const auto par = model->parameters();
    const double m = par[0].second, L = par[1].second, g = par[2].second;
    Vec q0(2), qd0(2);
    q0 << L, c.theta0;
    qd0 << 0, c.thetad0;
    for (const char* f : kFormulations) {
      const auto tr = simulate_run(model, f, q0, qd0, 4.0, 1e-12, 1e-14, 1e-3);
      ASSERT_EQ(tr.result.status, "ok") << f << ": " << tr.result.message;
      double worst = 0;
      Vec ref;
      for (const auto& o : tr.obs) {
        ASSERT_TRUE(model->closed_form_multiplier(o.q, o.qd, ref));
        worst = std::max(worst, std::abs(o.lambda[0] - ref[0]) / std::max(std::abs(ref[0]), m * g));
      }
      EXPECT_LT(worst, 1e-8) << f;
      std::printf("[ lambda    ] pendulum_polar %-9s max rel |lambda - closed form| = %.2e\n", f, worst);
    }
  }
}

TEST(Formulations, PolarPendulumAgreementAndEnergy) {
  auto model = make_model("pendulum_polar", {{"m", 0.7}, {"L", 2.0}, {"g", 9.81}});
  Vec q0(2), qd0(2);
  q0 << 2.0, 2.9;  // nearly inverted, so it goes over the top
  qd0 << 0, 2.5;
  const auto kkt = expect_agreement(model, q0, qd0, 5.0, 1e-8, "pendulum_polar");
  const double de = max_relative_energy_error(kkt);
  EXPECT_LT(de, 1e-8);
  std::printf("[ energy    ] pendulum_polar kkt max relative energy error = %.2e\n", de);
}

// ---- Chaplygin sleigh: closed form, multiplier, energy -------------------------------------------------

namespace {

void check_sleigh(const std::shared_ptr<const Model>& model, const SleighReduced& reduced, const Vec& q0,
                  const Vec& qd0, double t_end, const std::string& label) {
  for (const char* f : kFormulations) {
    const auto tr = simulate_run(model, f, q0, qd0, t_end, 1e-10, 1e-12, 1e-3);
    ASSERT_EQ(tr.result.status, "ok") << label << " " << f << ": " << tr.result.message;
    double err_reduced = 0, err_full = 0, err_lambda = 0, err_lambda_model = 0, drift = 0;
    bool have_closed_form = true, have_model_multiplier = true;
    Vec q_ref, qd_ref, lambda_ref;
    for (size_t i = 0; i < tr.t.size(); ++i) {
      const auto& o = tr.obs[i];
      double u, w, th;
      reduced.at(tr.t[i], q0, qd0, u, w, th);
      const double u_num = o.qd[0] * std::cos(o.q[2]) + o.qd[1] * std::sin(o.q[2]);
      err_reduced = std::max({err_reduced, std::abs(u_num - u), std::abs(o.qd[2] - w), std::abs(o.q[2] - th)});
      const double lam = reduced.multiplier(u, w);
      err_lambda = std::max(err_lambda, std::abs(o.lambda[0] - lam) / std::max(std::abs(lam), 1e-3));
      drift = std::max(drift, o.drift_velocity);
      if (have_closed_form && model->closed_form(tr.t[i], q0, qd0, q_ref, qd_ref)) {  // NOLINT
        err_full = std::max({err_full, (o.q - q_ref).lpNorm<Eigen::Infinity>(),
                             (o.qd - qd_ref).lpNorm<Eigen::Infinity>()});
      } else {
        have_closed_form = false;
      }
      if (have_model_multiplier && model->closed_form_multiplier(o.q, o.qd, lambda_ref)) {
        err_lambda_model = std::max(err_lambda_model,
                                    std::abs(o.lambda[0] - lambda_ref[0]) / std::max(std::abs(lambda_ref[0]), 1e-3));
      } else {
        have_model_multiplier = false;
      }
    }
    const double de = max_relative_energy_error(tr);
    EXPECT_LT(err_reduced, 1e-8) << label << " " << f;
    EXPECT_LT(err_lambda, 1e-8) << label << " " << f;
    EXPECT_LT(de, 1e-9) << label << " " << f;
    EXPECT_LT(drift, 1e-9) << label << " " << f;
    if (have_closed_form) {
      EXPECT_LT(err_full, 1e-8) << label << " " << f;
    }
    if (have_model_multiplier) {
      EXPECT_LT(err_lambda_model, 1e-8) << label << " " << f;
    }
    std::printf("[ sleigh    ] %-22s %-9s (u,w,theta) err %.2e  q,qd vs Model::closed_form %.2e (%s)  lambda rel "
                "%.2e, vs Model %.2e (%s)  energy %.2e  |A qd| %.2e\n",
                label.c_str(), f, err_reduced, err_full, have_closed_form ? "checked" : "n/a", err_lambda,
                err_lambda_model, have_model_multiplier ? "checked" : "n/a", de, drift);
  }
}

}  // namespace

TEST(Formulations, SleighDefaultMatchesClosedForm) {
  auto model = make_model("chaplygin_sleigh");
  Vec q0(3), qd0(3);
  model->default_initial(q0, qd0);
  check_sleigh(model, {1.0, 0.5, 0.3}, q0, qd0, 8.0, "default");
}

TEST(Formulations, SleighReverseMotionMatchesClosedForm) {
  // Non-default parameters; reverse motion u0 < 0 (unstable: the sleigh turns around), started at an angle.
  const double m = 2.3, Ic = 0.35, b = 0.45;
  auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}});
  const double th0 = 0.7, u0 = -1.4, w0 = -0.6;
  Vec q0(3), qd0(3);
  q0 << 0.3, -1.1, th0;
  qd0 << u0 * std::cos(th0) - b * w0 * std::sin(th0), u0 * std::sin(th0) + b * w0 * std::cos(th0), w0;
  check_sleigh(model, {m, Ic, b}, q0, qd0, 6.0, "reverse m=2.3 Ic=.35 b=.45");
}

TEST(Formulations, SleighCoordinatePartitioningRepartitionsAndMatchesClosedForm) {
  // Without the natural basis the nullspace formulation partitions coordinates; as theta turns through
  // multiples of pi/2 the best dependent coordinate switches between x and y.
  SleighWithoutBasis p;
  p.m = 1.5;
  p.Ic = 0.4;
  p.b = 0.2;
  auto model = make_model_with_capabilities(p);
  ASSERT_FALSE(model->capability<VelocityBasis>());
  const double th0 = 0.2, u0 = 0.3, w0 = 3.0;  // turns through several quadrants before straightening out
  Vec q0(3), qd0(3);
  q0 << 0, 0, th0;
  qd0 << u0 * std::cos(th0) - p.b * w0 * std::sin(th0), u0 * std::sin(th0) + p.b * w0 * std::cos(th0), w0;
  const SleighReduced reduced{p.m, p.Ic, p.b};
  // The default threshold (1e6) lets A_D get nearly singular before the re-pick, and rounding and step
  // errors are amplified by up to that much; a small threshold keeps the partition well conditioned.
  for (const auto& [threshold, tol] : {std::pair{1e6, 1e-6}, std::pair{10.0, 1e-8}}) {
    FormulationOptions options;
    options.repartition_threshold = threshold;
    const auto ns = simulate_run(model, "nullspace", q0, qd0, 6.0, 1e-12, 1e-14, 1e-3, options);
    const auto kkt = simulate_run(model, "kkt", q0, qd0, 6.0, 1e-12, 1e-14, 1e-3, options);
    ASSERT_EQ(ns.result.status, "ok") << ns.result.message;
    const auto [dq, dqd] = max_difference(kkt, ns);
    double err = 0;
    for (size_t i = 0; i < ns.t.size(); ++i) {
      double u, w, th;
      reduced.at(ns.t[i], q0, qd0, u, w, th);
      const auto& o = ns.obs[i];
      err = std::max({err, std::abs(o.qd[0] * std::cos(o.q[2]) + o.qd[1] * std::sin(o.q[2]) - u),
                      std::abs(o.qd[2] - w), std::abs(o.q[2] - th)});
    }
    const double repartitions = ns.obs.back().extras.at(0);
    EXPECT_LT(dq, tol) << threshold;
    EXPECT_LT(dqd, tol) << threshold;
    EXPECT_LT(err, tol) << threshold;
    EXPECT_GE(repartitions, 2) << threshold;
    std::printf("[ partition ] sleigh threshold %.0e: %g re-partitions, kkt vs nullspace |dq| %.2e |dqd| %.2e, "
                "closed form %.2e\n",
                threshold, repartitions, dq, dqd, err);
  }
}

// ---- Cartesian pendulum: coordinate partitioning through x = 0 and y = 0 -------------------------------

TEST(Formulations, CartesianPendulumRepartitionsAndAgreesWithKkt) {
  if (!has_problem("pendulum_cartesian")) GTEST_SKIP() << "pendulum_cartesian not registered yet";
  // A = (x, y): a fixed partition with x dependent is singular at x = 0 (the bottom of every swing) and
  // one with y dependent at y = 0. A full rotation (over the top) passes through both several times.
  auto model = make_model("pendulum_cartesian", {{"m", 1.3}, {"L", 0.8}, {"g", 9.81}});
  const double L = 0.8, th0 = 0.4, thd0 = 9.0;  // fast enough to loop: 1/2 L^2 thd^2 > 2 g L
  Vec q0(2), qd0(2);
  q0 << L * std::sin(th0), -L * std::cos(th0);
  qd0 << L * std::cos(th0) * thd0, L * std::sin(th0) * thd0;
  FormulationOptions options;
  options.repartition_threshold = 10;
  const auto kkt = simulate_run(model, "kkt", q0, qd0, 5.0, 1e-12, 1e-14, 2e-4, options);
  const auto ns = simulate_run(model, "nullspace", q0, qd0, 5.0, 1e-12, 1e-14, 2e-4, options);
  ASSERT_EQ(ns.result.status, "ok") << ns.result.message;
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  const auto [dq, dqd] = max_difference(kkt, ns);
  const double repartitions = ns.obs.back().extras.at(0);
  double lambda_err = 0;
  Vec ref;
  for (const auto& o : ns.obs) {
    ASSERT_TRUE(model->closed_form_multiplier(o.q, o.qd, ref));
    lambda_err = std::max(lambda_err, std::abs(o.lambda[0] - ref[0]) / std::max(std::abs(ref[0]), 1.3 * 9.81 / L));
  }
  EXPECT_LT(dq, 1e-8);
  EXPECT_LT(dqd, 1e-8);
  EXPECT_LT(lambda_err, 1e-8);
  EXPECT_GE(repartitions, 8);  // > 5 revolutions at ~9 rad/s, two switches per half turn
  EXPECT_LT(max_relative_energy_error(ns), 1e-8);
  std::printf("[ partition ] pendulum_cartesian: %g re-partitions, kkt vs nullspace |dq| %.2e |dqd| %.2e, lambda "
              "rel %.2e, energy %.2e\n",
              repartitions, dq, dqd, lambda_err, max_relative_energy_error(ns));
}

// ---- Baumgarte stabilization ---------------------------------------------------------------------------

TEST(Formulations, BaumgarteReducesPositionDrift) {
  // Long run at a coarse fixed step: without stabilization the rk4 errors accumulate in |h|; with
  // alpha, beta > 0 the constraint error obeys e'' + 2 alpha e' + beta^2 e = (step error) and stays small.
  const std::string problem = has_problem("slider_crank") ? "slider_crank" : "pendulum_polar";
  for (const std::string& problem_name : {std::string("pendulum_cartesian"), problem}) {
    if (!has_problem(problem_name)) continue;
    auto model = make_model(problem_name);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    if (problem_name == "slider_crank") qd0 *= 3.0;  // consistent: A qd = 0 is linear in qd
    for (const char* f : {"kkt", "schur"}) {
      double drift[2] = {0, 0};
      for (int stabilized = 0; stabilized < 2; ++stabilized) {
        FormulationOptions options;
        options.baumgarte_alpha = stabilized ? 5.0 : 0.0;
        options.baumgarte_beta = stabilized ? 5.0 : 0.0;
        const auto tr = simulate_run(model, f, q0, qd0, 40.0, 0, 0, 2e-2, options, 0.1, "rk4");
        ASSERT_EQ(tr.result.status, "ok") << tr.result.message;
        for (const auto& o : tr.obs) drift[stabilized] = std::max(drift[stabilized], o.drift_position);
      }
      EXPECT_GT(drift[0], 1e-8) << problem_name << " " << f << ": the unstabilized run must drift measurably";
      EXPECT_LT(drift[1], 0.05 * drift[0]) << problem_name << " " << f;
      std::printf("[ baumgarte ] %-18s %-6s rk4 dt 0.02, 40 s: max |h| %.2e unstabilized, %.2e with alpha = beta "
                  "= 5 (ratio %.1f)\n",
                  problem_name.c_str(), f, drift[0], drift[1], drift[0] / drift[1]);
    }
  }
}

// ---- Refusals and failures -----------------------------------------------------------------------------

// Redundant constraints: kkt, schur and nullspace accept them (minimum-norm multipliers, rank-r row space;
// tests/redundant_constraints_test.cpp), vakonomic still refuses, naming the rank.
TEST(Formulations, RedundantConstraintsAcceptedByKktSchurNullspaceOnly) {
  auto model = std::make_shared<AutoDiffModel<RedundantPendulum>>(RedundantPendulum{});
  Vec q0(2), qd0(2);
  model->default_initial(q0, qd0);
  for (const char* f : kFormulations) {
    auto form = formulation_registry().get(f).make(model, {});
    Vec y;
    form->initial_state(q0, qd0, y);
    Vec dy(form->dimension());
    form->rhs(0, y, dy);
    EXPECT_TRUE(dy.allFinite()) << f;
  }
  auto form = formulation_registry().get("vakonomic").make(model, {});
  Vec y;
  try {
    form->initial_state(q0, qd0, y);
    ADD_FAILURE() << "vakonomic accepted a rank-deficient constraint Jacobian";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("redundant_pendulum"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
  }
}

TEST(Formulations, SchurFailsOnSingularMassMatrixWhereKktDoesNot) {
  auto model = std::make_shared<AutoDiffModel<MasslessDirection>>(MasslessDirection{});
  Vec q0(2), qd0(2), y, dy(4);
  model->default_initial(q0, qd0);
  auto schur = formulation_registry().get("schur").make(model, {});
  schur->initial_state(q0, qd0, y);
  try {
    schur->rhs(0, y, dy);
    ADD_FAILURE() << "schur accepted a singular mass matrix";
  } catch (const NumericalFailure& e) {
    EXPECT_NE(std::string(e.what()).find("mass matrix"), std::string::npos) << e.what();
  }
  // The KKT matrix [M -A^T; A 0] is regular (A covers M's null direction): the bead moves on the circle.
  auto kkt = formulation_registry().get("kkt").make(model, {});
  kkt->initial_state(q0, qd0, y);
  kkt->rhs(0, y, dy);
  EXPECT_TRUE(dy.allFinite());
  // Acceleration-level constraint: x xdd + y ydd + |qd|^2 = 0.
  EXPECT_NEAR(q0[0] * dy[2] + q0[1] * dy[3] + qd0.squaredNorm(), 0.0, 1e-14);
}

// ---- Multibody agreement: slider_crank, four_bar, closed_chain -----------------------------------------

namespace {

// Default initial data, or (perturb != 0) the defaults moved off the manifold and projected back, so the
// run starts from a configuration and velocity the problem author did not pick.
void initial_data(const Model& model, double perturb, double speed, Vec& q0, Vec& qd0) {
  model.default_initial(q0, qd0);
  if (perturb != 0) {
    for (int i = 0; i < q0.size(); ++i) {
      q0[i] += perturb * std::sin(1.7 * i + 0.3);
      qd0[i] += perturb * std::cos(2.3 * i + 0.1);
    }
    project_onto_constraints(model, q0, qd0);
  }
  qd0 *= speed;
}

void expect_multibody_agreement(const std::string& problem, const std::map<std::string, double>& params,
                                double perturb, double speed, bool conservative) {
  if (!has_problem(problem)) GTEST_SKIP() << problem << " not registered yet";
  auto model = make_model(problem, params);
  Vec q0, qd0;
  initial_data(*model, perturb, speed, q0, qd0);
  std::string label = problem;
  for (const auto& [k, v] : params) label += " " + k + "=" + std::to_string(v).substr(0, 5);
  if (perturb != 0) label += " (perturbed q0)";
  const auto kkt = expect_agreement(model, q0, qd0, 5.0, 1e-8, label);
  double drift = 0;
  for (const auto& o : kkt.obs) drift = std::max(drift, o.drift_position);
  EXPECT_LT(drift, 1e-8) << label;
  if (conservative) {
    const double de = max_relative_energy_error(kkt);
    EXPECT_LT(de, 1e-8) << label;
    std::printf("[ energy    ] %-40s kkt max relative energy error %.2e, max |h| %.2e\n", label.c_str(), de, drift);
  }
}

}  // namespace

TEST(Formulations, SliderCrankAgreementDefault) { expect_multibody_agreement("slider_crank", {}, 0, 1.0, true); }

TEST(Formulations, SliderCrankAgreementNonDefault) {
  expect_multibody_agreement("slider_crank", {{"m1", 2.0}, {"m3", 1.2}, {"L1", 0.3}, {"L2", 0.7}, {"g", 4.0}}, 0.2,
                             2.0, true);
}

TEST(Formulations, SliderCrankAgreementDriven) {
  expect_multibody_agreement("slider_crank", {{"tau", 1.5}, {"f", -2.0}}, 0.1, 1.0, false);
}

TEST(Formulations, FourBarAgreement) { expect_multibody_agreement("four_bar", {}, 0, 1.0, true); }

TEST(Formulations, FourBarAgreementNonDefault) {
  expect_multibody_agreement("four_bar", {{"m2", 1.7}, {"g", 3.0}}, 0.05, 1.5, true);
}

TEST(Formulations, ClosedChainAgreement) { expect_multibody_agreement("closed_chain", {{"n", 8}}, 0, 1.0, true); }

// A taut chain (anchor near full reach): regular motion. With a slack chain (e.g. gx = 0.3) the motion is
// chaotic and even kkt at rtol 1e-12 vs 1e-13 differs by ~1e-6 after 5 s, so no 1e-8 agreement exists.
TEST(Formulations, ClosedChainAgreementNonDefault) {
  expect_multibody_agreement("closed_chain", {{"n", 8}, {"gx", 1.2}, {"gy", -0.3}, {"m", 2.0}}, 0.02, 1.0, true);
}

// ---- No heap allocation per rhs() ----------------------------------------------------------------------

TEST(Formulations, RhsDoesNotAllocate) {
  if (!clm::testing::allocation_counting_available())
    GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc)";
  int checked = 0;
  for (const char* problem : {"chaplygin_sleigh", "pendulum_polar", "pendulum_cartesian", "slider_crank", "four_bar",
                              "closed_chain", "rolling_disk", "skate_incline"}) {
    if (!has_problem(problem)) continue;
    auto model = make_model(problem);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    for (const char* f : kFormulations) {
      auto form = formulation_registry().get(f).make(model, {});
      Vec y, dy(form->dimension());
      form->initial_state(q0, qd0, y);
      form->rhs(0, y, dy);
      Vec y_step = y + 1e-3 * dy;
      std::size_t count;
      {
        clm::testing::AllocationScope scope;
        for (int i = 0; i < 5; ++i) form->rhs(0.1 * i, y, dy);
        form->after_step(0.1, y_step);
        count = scope.count();
      }
      EXPECT_EQ(count, 0u) << problem << " / " << f;
      // Control: observe() (off the hot path) does allocate, so the counter sees this code at all.
      Observation obs;
      std::size_t observe_count;
      {
        clm::testing::AllocationScope scope;
        form->observe(0, y, obs);
        observe_count = scope.count();
      }
      EXPECT_GT(observe_count, 0u) << problem << " / " << f;
      ++checked;
    }
  }
  EXPECT_GE(checked, 24);
}
