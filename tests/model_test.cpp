// The autodiff Model against hand-derived references (derived here from the energies, independently of the
// problem code), the closed-chain analytic terms against autodiff, consistency of every problem's default
// initial data, DOF bookkeeping and parameter validation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "allocation_counter.hpp"
#include "analysis/finite_difference_terms.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "formulations/velocity_basis.hpp"
#include "problems/closed_chain.hpp"
#include "runs/model_checks.hpp"

using namespace clm;

namespace {


ModelTerms evaluate_all(const Model& model, const Vec& q, const Vec& qd, double t = 0.0) {
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  model.evaluate(t, q, qd, kAll, *ws, terms);
  return terms;
}

double max_abs(const Mat& a) { return a.size() == 0 ? 0.0 : a.cwiseAbs().maxCoeff(); }

Vec random_vec(std::mt19937& rng, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  Vec v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

}  // namespace

// Slider-crank [seed-000], reference derived by hand from
//   T = 1/2 a thd^2 + 1/2 b phd^2 - k cos(th - ph) thd phd + 1/2 m3 xd^2,
//   a = I1 + m1 L1^2 + 4 m2 L1^2, b = I2 + m2 L2^2, k = 2 m2 L1 L2,
//   V = m1 g L1 sin th + m2 g (2 L1 sin th - L2 sin ph):
//   B = (-k sin(th - ph) phd^2, +k sin(th - ph) thd^2, 0)   (the seed prints cos in B_phi),
//   G = ((m1 + 2 m2) g L1 cos th, -m2 g L2 cos ph, 0)      (the seed drops g in G_phi).
TEST(ModelReference, SliderCrankMassBiasGravityForceEnergy) {
  const double m1 = 1.3, m2 = 0.7, m3 = 2.1, I1 = 0.05, I2 = 0.11, L1 = 0.3, L2 = 0.9, g = 9.7, tau = 0.4,
               f = -0.3;
  auto model = make_model("slider_crank", {{"m1", m1}, {"m2", m2}, {"m3", m3}, {"I1", I1}, {"I2", I2},
                                           {"L1", L1}, {"L2", L2}, {"g", g}, {"tau", tau}, {"f", f}});
  std::mt19937 rng(11);
  const double a = I1 + m1 * L1 * L1 + 4 * m2 * L1 * L1, b = I2 + m2 * L2 * L2, k = 2 * m2 * L1 * L2;
  for (int trial = 0; trial < 20; ++trial) {
    const Vec q = random_vec(rng, 3, -3, 3), qd = random_vec(rng, 3, -4, 4);
    const double th = q[0], ph = q[1], thd = qd[0], phd = qd[1];
    Mat M_ref(3, 3);
    M_ref << a, -k * std::cos(th - ph), 0, -k * std::cos(th - ph), b, 0, 0, 0, m3;
    Vec B_ref(3), G_ref(3), F_ref(3);
    B_ref << -k * std::sin(th - ph) * phd * phd, k * std::sin(th - ph) * thd * thd, 0;
    G_ref << (m1 + 2 * m2) * g * L1 * std::cos(th), -m2 * g * L2 * std::cos(ph), 0;
    F_ref << tau, 0, f;

    const ModelTerms full = evaluate_all(*model, q, qd);
    const ModelTerms rest = evaluate_all(*model, q, Vec::Zero(3));
    EXPECT_LT(max_abs(full.M - M_ref), 1e-14);
    EXPECT_LT(max_abs(rest.c - G_ref), 1e-13);               // c(q, 0) = G
    EXPECT_LT(max_abs((full.c - rest.c) - B_ref), 1e-12);    // B = c - G
    EXPECT_LT(max_abs(full.F - F_ref), 1e-15);

    // Energy from the body velocities (not from M): crank centre L1 e(th), rod centre 2 L1 e(th) - L2 e(ph).
    const double v1x = -L1 * std::sin(th) * thd, v1y = L1 * std::cos(th) * thd;
    const double v2x = -2 * L1 * std::sin(th) * thd + L2 * std::sin(ph) * phd;
    const double v2y = 2 * L1 * std::cos(th) * thd - L2 * std::cos(ph) * phd;
    const double T = 0.5 * m1 * (v1x * v1x + v1y * v1y) + 0.5 * I1 * thd * thd +
                     0.5 * m2 * (v2x * v2x + v2y * v2y) + 0.5 * I2 * phd * phd + 0.5 * m3 * qd[2] * qd[2];
    const double V = m1 * g * L1 * std::sin(th) + m2 * g * (2 * L1 * std::sin(th) - L2 * std::sin(ph));
    EXPECT_NEAR(full.energy(), T + V, 1e-12 * (1 + std::abs(T) + std::abs(V)));

    // Constraint Jacobian by hand: W = dh/dq [seed-000].
    Mat A_ref(2, 3);
    A_ref << -2 * L1 * std::sin(th), 2 * L2 * std::sin(ph), -1, 2 * L1 * std::cos(th), -2 * L2 * std::cos(ph), 0;
    EXPECT_LT(max_abs(full.A - A_ref), 1e-14);
    // Adot qd = Wdot qd with the seed's Wdot (that part of the seed is right).
    Vec Adot_ref(2);
    Adot_ref << -2 * L1 * std::cos(th) * thd * thd + 2 * L2 * std::cos(ph) * phd * phd,
        -2 * L1 * std::sin(th) * thd * thd + 2 * L2 * std::sin(ph) * phd * phd;
    EXPECT_LT(max_abs(full.Adot_qd - Adot_ref), 1e-12);
  }
}

// Polar pendulum: T = m/2 (rd^2 + r^2 thd^2), V = -m g r cos th:
//   c_r = -m r thd^2 - m g cos th,  c_th = 2 m r rd thd + m g r sin th,  F = (fx sin th, fx r cos th).
TEST(ModelReference, PendulumPolarMassAndBias) {
  const double m = 0.8, L = 1.3, g = 9.5, fx = 0.6;
  auto model = make_model("pendulum_polar", {{"m", m}, {"L", L}, {"g", g}, {"fx", fx}});
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    Vec q = random_vec(rng, 2, -3, 3), qd = random_vec(rng, 2, -3, 3);
    q[0] = std::abs(q[0]) + 0.1;
    const double r = q[0], th = q[1], rd = qd[0], thd = qd[1];
    const ModelTerms t = evaluate_all(*model, q, qd);
    Mat M_ref(2, 2);
    M_ref << m, 0, 0, m * r * r;
    Vec c_ref(2), F_ref(2);
    c_ref << -m * r * thd * thd - m * g * std::cos(th), 2 * m * r * rd * thd + m * g * r * std::sin(th);
    F_ref << fx * std::sin(th), fx * r * std::cos(th);
    EXPECT_LT(max_abs(t.M - M_ref), 1e-14);
    EXPECT_LT(max_abs(t.c - c_ref), 1e-12);
    EXPECT_LT(max_abs(t.F - F_ref), 1e-14);
    EXPECT_NEAR(t.energy(), 0.5 * m * (rd * rd + r * r * thd * thd) - m * g * r * std::cos(th), 1e-12);
    EXPECT_NEAR(t.h[0], r - L, 1e-15);
    EXPECT_NEAR(t.Adot_qd[0], 0.0, 1e-15);  // h is linear in r
  }
}

// Sleigh: A = (-sin th, cos th, -b), Adot qd = d/dt(A) qd = -thd (cos th xd + sin th yd).
TEST(ModelReference, SleighConstraintJacobianAndBias) {
  const double m = 1.7, Ic = 0.35, b = 0.45;
  auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}});
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const Vec q = random_vec(rng, 3, -3, 3), qd = random_vec(rng, 3, -3, 3);
    const ModelTerms t = evaluate_all(*model, q, qd);
    Mat A_ref(1, 3);
    A_ref << -std::sin(q[2]), std::cos(q[2]), -b;
    EXPECT_LT(max_abs(t.A - A_ref), 1e-15);
    EXPECT_NEAR(t.Adot_qd[0], -qd[2] * (std::cos(q[2]) * qd[0] + std::sin(q[2]) * qd[1]), 1e-14);
    EXPECT_LT(max_abs(t.c), 1e-15);  // V = 0, constant M
    EXPECT_NEAR(t.energy(), 0.5 * m * (qd[0] * qd[0] + qd[1] * qd[1]) + 0.5 * Ic * qd[2] * qd[2], 1e-13);
  }
}

// Holonomic Adot qd (Taylor2, d^2/ds^2 h(q + s qd)) against a Richardson-extrapolated central difference of
// A(q + s qd) qd in s, and A against central differences of h (analysis/finite_difference_terms.hpp, the
// references `clmbench check` uses).
TEST(ModelReference, HolonomicConstraintBiasMatchesFiniteDifferences) {
  const std::vector<std::pair<std::string, std::map<std::string, double>>> cases = {
      {"pendulum_cartesian", {{"L", 1.4}}},
      {"slider_crank", {{"L1", 0.35}, {"L2", 0.8}}},
      {"four_bar", {{"L1", 0.45}}},
      {"closed_chain", {{"n", 7}, {"L", 0.3}, {"gx", 1.0}, {"gy", -0.4}}},
  };
  std::mt19937 rng(17);
  for (const auto& [name, params] : cases) {
    SCOPED_TRACE(name);
    auto model = make_model(name, params);
    const int n = model->n();
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    FiniteDifferenceTerms fd(*model);
    for (int trial = 0; trial < 5; ++trial) {
      const Vec q = random_vec(rng, n, -2, 2), qd = random_vec(rng, n, -2, 2);
      model->evaluate(0, q, qd, kAll, *ws, t);
      EXPECT_LT(max_abs(t.Adot_qd - fd.constraint_bias(0, q, qd)), 1e-9 * (1 + max_abs(t.Adot_qd)));
      EXPECT_LT(max_abs(t.A - fd.constraint_jacobian(0, q)), 1e-9);
    }
  }
}

// Closed chain: the energy from explicitly summed centre velocities (independent of the M formula) and
// the potential from the centre heights.
TEST(ModelReference, ClosedChainEnergyFromBarCentres) {
  const double m = 0.6, L = 0.4, g = 9.2;
  const int n = 9;
  auto model = make_model("closed_chain", {{"n", n}, {"m", m}, {"L", L}, {"g", g}, {"gx", 1.5}, {"gy", 0.3}});
  std::mt19937 rng(23);
  for (int trial = 0; trial < 5; ++trial) {
    const Vec q = random_vec(rng, n, -3, 3), qd = random_vec(rng, n, -2, 2);
    double T = 0, V = 0, px = 0, py = 0, vx = 0, vy = 0;  // joint position / velocity at the bar's tail
    for (int j = 0; j < n; ++j) {
      const double cx = px + 0.5 * L * std::cos(q[j]), cy = py + 0.5 * L * std::sin(q[j]);
      const double cvx = vx - 0.5 * L * std::sin(q[j]) * qd[j], cvy = vy + 0.5 * L * std::cos(q[j]) * qd[j];
      T += 0.5 * m * (cvx * cvx + cvy * cvy) + 0.5 * (m * L * L / 12) * qd[j] * qd[j];
      V += m * g * cy;
      (void)cx;
      px += L * std::cos(q[j]);
      py += L * std::sin(q[j]);
      vx -= L * std::sin(q[j]) * qd[j];
      vy += L * std::cos(q[j]) * qd[j];
    }
    const ModelTerms t = evaluate_all(*model, q, qd);
    EXPECT_NEAR(t.kinetic, T, 1e-12 * (1 + T));
    EXPECT_NEAR(t.potential, V, 1e-12 * (1 + std::abs(V)));
    EXPECT_NEAR(t.h[0], px - 1.5, 1e-14);
    EXPECT_NEAR(t.h[1], py - 0.3, 1e-14);
  }
}

// analytic_terms (O(n^2), 2n trig calls, no allocation) against the autodiff path at random states.
TEST(ClosedChainAnalytic, MatchesAutodiffAtRandomStates) {
  std::mt19937 rng(29);
  double worst = 0;
  for (int n : {2, 5, 8, 64}) {
    SCOPED_TRACE(n);
    ClosedChain p;
    p.n = n;
    p.m = 0.7;
    p.L = 0.3;
    p.g = 9.1;
    p.gx = 0.5 * n * p.L;
    p.gy = -0.1 * n * p.L;
    AutoDiffModel<ClosedChain> autodiff(p, /*use_analytic=*/false);
    auto ws = autodiff.make_workspace();
    ModelTerms t = autodiff.make_terms();
    Mat M(n, n);
    Vec c(n);
    for (int trial = 0; trial < 10; ++trial) {
      const Vec q = random_vec(rng, n, -M_PI, M_PI), qd = random_vec(rng, n, -3, 3);
      autodiff.evaluate(0, q, qd, kMassMatrix | kBias, *ws, t);
      {
        clm::testing::AllocationScope scope;
        p.analytic_terms(q, qd, M, c);
        EXPECT_EQ(scope.count(), 0u);
      }
      const double eM = max_abs(M - t.M) / max_abs(t.M), ec = max_abs(c - t.c) / max_abs(t.c);
      worst = std::max({worst, eM, ec});
      EXPECT_LT(eM, 1e-13);
      EXPECT_LT(ec, 1e-12);
      EXPECT_LT(max_abs(M - M.transpose()), 1e-15 * max_abs(M));
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("closed_chain analytic vs autodiff: worst relative error %.3e\n", worst);
}

// The registered model uses the analytic path by default; it must agree with the forced-autodiff model.
TEST(ClosedChainAnalytic, RegisteredModelUsesAgreeingTerms) {
  const std::map<std::string, double> params = {{"n", 12}, {"gx", 1.2}, {"gy", -0.5}};
  auto fast = make_model("closed_chain", params, true), slow = make_model("closed_chain", params, false);
  std::mt19937 rng(31);
  const Vec q = random_vec(rng, 12, -3, 3), qd = random_vec(rng, 12, -3, 3);
  const ModelTerms a = evaluate_all(*fast, q, qd), b = evaluate_all(*slow, q, qd);
  EXPECT_LT(max_abs(a.M - b.M), 1e-13 * max_abs(b.M));
  EXPECT_LT(max_abs(a.c - b.c), 1e-12 * max_abs(b.c));
  EXPECT_NEAR(a.energy(), b.energy(), 1e-12 * std::abs(b.energy()));
  // analytic_constraint_terms against autodiff (A by Jet chunks, Adot qd by Taylor2).
  EXPECT_LT(max_abs(a.A - b.A), 1e-14 * max_abs(b.A));
  EXPECT_LT(max_abs(a.Adot_qd - b.Adot_qd), 1e-13 * max_abs(b.Adot_qd));
  EXPECT_LT(max_abs(a.h - b.h), 1e-14 * (1 + max_abs(b.h)));
  for (int n : {2, 64}) {
    const std::map<std::string, double> big = {{"n", double(n)}, {"L", 0.3}, {"gx", 0.5 * 0.3 * n}, {"gy", -0.2}};
    auto f = make_model("closed_chain", big, true), s = make_model("closed_chain", big, false);
    const Vec qn = random_vec(rng, n, -3, 3), qdn = random_vec(rng, n, -3, 3);
    const ModelTerms x = evaluate_all(*f, qn, qdn), y = evaluate_all(*s, qn, qdn);
    EXPECT_LT(max_abs(x.A - y.A), 1e-14 * max_abs(y.A)) << n;
    EXPECT_LT(max_abs(x.Adot_qd - y.Adot_qd), 1e-12 * max_abs(y.Adot_qd)) << n;
    EXPECT_LT(max_abs(x.h - y.h), 1e-13 * (1 + max_abs(y.h))) << n;
  }
}

namespace {

// Checks |h(q0)| and |A(q0) qd0| and that qd0 is not zero.
void expect_consistent_default(const Model& model, const std::string& label) {
  SCOPED_TRACE(label);
  Vec q0, qd0;
  model.default_initial(q0, qd0);
  ASSERT_EQ(q0.size(), model.n());
  ASSERT_EQ(qd0.size(), model.n());
  const ModelTerms t = evaluate_all(model, q0, qd0);
  // |h(q0)| and |A qd0 + b| (b: dh/dt or the affine term of a time-dependent problem), as `clmbench check` and the
  // runner measure them (runs/model_checks.hpp).
  const ConstraintResidual r = constraint_residual(model, 0.0, q0, qd0);
  EXPECT_LT(r.position, kInitialStateTolerance);
  EXPECT_LT(r.velocity, kInitialStateTolerance);
  // Every problem starts moving, except Andrews' squeezer, Bricard's mechanism and the IFToMM pendulum, which
  // start at rest like the published benchmarks they reproduce.
  if (model.name() != "andrews_squeezer" && model.name() != "bricard" && model.name() != "iftomm_pendulum") {
    EXPECT_GT(qd0.norm(), 1e-3);
  }
  EXPECT_TRUE(q0.allFinite() && qd0.allFinite());
  // Full row rank at the start (every formulation needs it), except where the constraints are redundant by
  // design: Bricard's 24 rows have rank 23 (Grubler 0, mobility 1), clearly separated from the rest; nothing
  // to check without constraints (charged_particle).
  if (model.m() == 0) return;
  Eigen::JacobiSVD<Mat> svd(t.A);
  const Vec& s = svd.singularValues();
  if (model.name() == "bricard") {
    EXPECT_EQ(numerical_rank(t.A), model.m() - 1);
    EXPECT_GT(s[s.size() - 2], 1e-6 * s[0]);
  } else {
    EXPECT_GT(s.minCoeff(), 1e-6 * s[0]);
  }
}

}  // namespace

TEST(DefaultInitial, ConsistentForDefaultAndPerturbedParameters) {
  std::mt19937 rng(37);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> bars(3, 24);
  for (const ProblemEntry* entry : problem_registry().all()) {
    expect_consistent_default(*entry->make({}, true), entry->name + " (defaults)");
    for (int trial = 0; trial < 8; ++trial) {
      std::map<std::string, double> params;
      for (const auto& info : entry->parameters) {
        const double d = info.default_value;
        // Andrews' squeezer is a precision mechanism: its three loops close only within a few percent of its
        // design dimensions (15% changes of all 30 lengths leave no assembly).
        const double spread = entry->name == "andrews_squeezer" ? 0.02 : 0.15;
        params[info.name] = d != 0 ? d * (1 + spread * u(rng)) : 0.5 * u(rng);
      }
      if (entry->name == "closed_chain") {
        const double n = bars(rng), L = params["L"];
        params["n"] = n;
        params["gx"] = n * L * (0.45 + 0.4 * u(rng));
        params["gy"] = n * L * 0.2 * u(rng);
      }
      if (entry->name == "n_four_bar") params["loops"] = bars(rng);  // an integer number of loops
      std::string label = entry->name;
      for (const auto& [k, v] : params) label += " " + k + "=" + std::to_string(v);
      expect_consistent_default(*entry->make(params, true), label);
    }
  }
}

TEST(DefaultInitial, ClosedChainLargeSizes) {
  for (int n : {64, 200, 1000}) {
    auto model = make_model("closed_chain", {{"n", n}, {"L", 0.1}, {"gx", 0.7 * n * 0.1}, {"gy", -0.05 * n * 0.1}});
    expect_consistent_default(*model, "closed_chain n=" + std::to_string(n));
  }
  // A slack chain whose anchor is near the root, and an anchor straight above or to the left.
  expect_consistent_default(*make_model("closed_chain", {{"n", 16}, {"gx", 0.1}, {"gy", 0.05}}), "slack");
  expect_consistent_default(*make_model("closed_chain", {{"n", 10}, {"gx", 0.0}, {"gy", 1.5}}), "above");
  expect_consistent_default(*make_model("closed_chain", {{"n", 10}, {"gx", -1.9}, {"gy", -0.3}}), "left");
  // Extremes of the admissible range: anchor at the root (a closed polygon) and a nearly straight chain.
  expect_consistent_default(*make_model("closed_chain", {{"n", 6}, {"gx", 0.0}, {"gy", 0.0}}), "closed loop");
  expect_consistent_default(*make_model("closed_chain", {{"n", 10}, {"gx", 2.49}, {"gy", 0.0}}), "nearly straight");
  expect_consistent_default(*make_model("closed_chain", {{"n", 3}, {"gx", 0.3}, {"gy", -0.2}}), "three bars");
}

TEST(ProblemRegistry, ListsEveryDesignProblemWithDofBookkeeping) {
  std::set<std::string> names;
  for (const ProblemEntry* e : problem_registry().all()) names.insert(e->name);
  const std::set<std::string> design = {"pendulum_polar", "pendulum_cartesian", "slider_crank", "four_bar",
                                        "closed_chain",   "chaplygin_sleigh",   "rolling_disk", "skate_incline"};
  for (const auto& n : design) EXPECT_TRUE(names.count(n)) << n;

  const std::map<std::string, std::tuple<int, int, bool>> sizes = {
      {"pendulum_polar", {2, 1, true}}, {"pendulum_cartesian", {2, 1, true}}, {"slider_crank", {3, 2, true}},
      {"four_bar", {9, 8, true}},       {"closed_chain", {8, 2, true}},       {"chaplygin_sleigh", {3, 1, false}},
      {"rolling_disk", {4, 2, false}},  {"skate_incline", {3, 1, false}},
      {"contact_oscillator", {3, 1, false}}, {"contact_oscillator_nr", {3, 1, false}},
      {"charged_particle", {2, 0, true}}, {"bricard", {24, 24, true}}, {"iftomm_pendulum", {2, 1, true}},
      {"andrews_squeezer", {7, 6, true}}};
  for (const auto& [name, nm] : sizes) {
    auto model = make_model(name);
    EXPECT_EQ(model->n(), std::get<0>(nm)) << name;
    EXPECT_EQ(model->m(), std::get<1>(nm)) << name;
    EXPECT_EQ(model->holonomic(), std::get<2>(nm)) << name;
  }
  auto chain64 = make_model("closed_chain", {{"n", 64}, {"gx", 10}});
  EXPECT_EQ(chain64->n(), 64);
  EXPECT_EQ(chain64->m(), 2);
  auto chain1000 = make_model("closed_chain", {{"n", 1000}, {"L", 0.01}, {"gx", 7}});
  EXPECT_EQ(chain1000->n(), 1000);
  // Parameter listing order is the docs/design.md order.
  const auto& sc = problem_registry().get("slider_crank").parameters;
  std::vector<std::string> order;
  for (const auto& p : sc) order.push_back(p.name);
  EXPECT_EQ(order, (std::vector<std::string>{"m1", "m2", "m3", "I1", "I2", "L1", "L2", "g", "tau", "f"}));
  std::vector<std::string> fb;
  for (const auto& p : problem_registry().get("four_bar").parameters) fb.push_back(p.name);
  EXPECT_EQ(fb, (std::vector<std::string>{"L0", "L1", "L2", "L3", "m1", "m2", "m3", "g"}));
  std::vector<std::string> cc;
  for (const auto& p : problem_registry().get("closed_chain").parameters) cc.push_back(p.name);
  EXPECT_EQ(cc, (std::vector<std::string>{"n", "m", "L", "g", "gx", "gy"}));
}

namespace {

void expect_input_error(const std::string& problem, const std::map<std::string, double>& params,
                        const std::string& parameter) {
  SCOPED_TRACE(problem + " " + parameter);
  try {
    make_model(problem, params);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(problem), std::string::npos) << msg;
    EXPECT_NE(msg.find(parameter), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace

TEST(ProblemValidation, InvalidParametersNameProblemAndParameter) {
  expect_input_error("pendulum_polar", {{"m", -1}}, "m");
  expect_input_error("pendulum_cartesian", {{"L", 0}}, "L");
  expect_input_error("slider_crank", {{"m2", -0.5}}, "m2");
  expect_input_error("slider_crank", {{"I1", -0.1}}, "I1");
  expect_input_error("slider_crank", {{"L2", 0}}, "L2");
  expect_input_error("four_bar", {{"m3", -1}}, "m3");
  expect_input_error("four_bar", {{"L1", 3.0}}, "L1");  // crank longer than the loop can close around
  expect_input_error("closed_chain", {{"m", -1}}, "m");
  expect_input_error("closed_chain", {{"n", 7.5}}, "n");
  expect_input_error("closed_chain", {{"n", 1}}, "n");
  expect_input_error("closed_chain", {{"n", 4}, {"L", 0.25}, {"gx", 1.0}}, "gx");  // |anchor| = n L
  expect_input_error("closed_chain", {{"gx", 3}, {"gy", 3}}, "gy");
  expect_input_error("chaplygin_sleigh", {{"Ic", -0.2}}, "Ic");
  expect_input_error("rolling_disk", {{"M", -2}}, "M");
  expect_input_error("rolling_disk", {{"R", 0}}, "R");
  expect_input_error("skate_incline", {{"J", 0}}, "J");
  expect_input_error("skate_incline", {{"g", NAN}}, "g");
  expect_input_error("contact_oscillator", {{"eps", -2}}, "eps");
  expect_input_error("contact_oscillator_nr", {{"k", INFINITY}}, "k");
  expect_input_error("charged_particle", {{"m", 0}}, "m");
  expect_input_error("charged_particle", {{"B", NAN}}, "B");
  for (const ProblemEntry* e : problem_registry().all()) expect_input_error(e->name, {{"no_such_key", 1}}, "no_such_key");
}

// Natural velocity bases (sleigh, disk, skate, snakeboard): A S = 0 with S of full column rank n - m, and
// Sdot v = d/dt S(q(t)) v along qd = S v against a central difference, at random configurations (the check of
// `clmbench check`, runs/model_checks.hpp: relative 1e-12 and 1e-7, measured 5.7e-17 and 2.9e-13 at most).
TEST(VelocityBasis, AnnihilatedByConstraintsAndSdotMatchesFiniteDifferences) {
  std::mt19937 rng(41);
  int checked = 0;
  for (const ProblemEntry* entry : problem_registry().all()) {
    auto model = entry->make({}, true);
    if (!model->capability<VelocityBasis>()) continue;
    SCOPED_TRACE(entry->name);
    ++checked;
    std::vector<CheckState> states;
    for (int trial = 0; trial < 5; ++trial)
      states.push_back({0.0, random_vec(rng, model->n(), -3, 3), Vec::Zero(model->n()), 41});
    const ModelCheck c = check_velocity_basis(*model, states);
    EXPECT_EQ(c.verdict, ModelCheck::Verdict::kOk) << c.measured;
    EXPECT_LT(c.value, 1e-15) << c.measured;
  }
  EXPECT_EQ(checked, 4);
}

// The Lagrangian's partial derivatives that the variational integrators use (kLagrangianGradient, kMomentum)
// against central differences of L = T + qd . a - V from kEnergy (ModelTerms::gyroscopic is the
// term linear in qd, nonzero for charged_particle and contact_oscillator_nr), on every registered problem.
TEST(ModelReference, LagrangianGradientAndMomentumMatchFiniteDifferences) {
  std::mt19937 rng(23);
  for (const ProblemEntry* entry : problem_registry().all()) {
    SCOPED_TRACE(entry->name);
    auto model = make_model(entry->name, {});
    const int n = model->n();
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const Vec q = q0 + random_vec(rng, n, -0.2, 0.2), qd = qd0 + random_vec(rng, n, -1, 1);
    FiniteDifferenceTerms fd(*model);  // differences of L (analysis/finite_difference_terms.hpp)
    const Vec dL_dq_fd = fd.lagrangian_gradient(0, q, qd), p_fd = fd.momentum(0, q, qd);
    model->evaluate(0, q, qd, kLagrangianGradient | kMomentum, *ws, t);
    const Vec dL_dq = t.dL_dq, p = t.p;
    for (int j = 0; j < n; ++j) {
      EXPECT_NEAR(dL_dq[j], dL_dq_fd[j], 1e-8 * (1 + std::abs(dL_dq[j]))) << "dL/dq_" << j;
      EXPECT_NEAR(p[j], p_fd[j], 1e-8 * (1 + std::abs(p[j]))) << "p_" << j;
    }
  }
}
