// Gyroscopic (qd-linear) terms of the Lagrangian, L = 1/2 qd^T M qd + qd . a(q) - V (core/problem.hpp,
// `gyroscopic`): the charged particle in a uniform magnetic field against its closed-form circle and the
// hand-derived Lorentz force; c, dL/dq, p and the dynamics derivatives of a problem with q-dependent M, a
// non-gradient a(q) and a constraint against finite differences; formulations that build their own
// Lagrangian from M and V refuse such problems; problems without constraints (m = 0) run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>

#include "allocation_counter.hpp"
#include "recorded_run.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "runs/problem_capabilities.hpp"
#include "problems/charged_particle.hpp"

using namespace clm;

namespace {

Vec random_vec(std::mt19937& rng, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  Vec v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

// A test-only problem with everything a gyroscopic term can meet: q-dependent M, a potential, an a(q) with
// nonzero curl (not a gauge term) and a Pfaffian constraint.
struct GyroscopicTop {
  static constexpr const char* kName = "gyroscopic_top";
  static constexpr const char* kDescription = "test problem: q-dependent M, non-gradient a(q), one Pfaffian row";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr std::array<ParameterSpec<GyroscopicTop>, 0> kParameters{};
  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 3>& q, MatN<T, 3, 3>& M) const {
    using std::cos;
    M.setZero();
    M(0, 0) = 1.0 + q[1] * q[1];
    M(1, 1) = T(2.0);
    M(2, 2) = 1.5 + 0.5 * cos(q[0]);
    M(0, 2) = M(2, 0) = 0.3 * q[1];
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    using std::sin;
    return q[0] * q[0] + sin(q[1]) * q[2];
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    using std::cos;
    A(0, 0) = T(1.0);
    A(0, 1) = q[0];
    A(0, 2) = cos(q[2]);
  }
  template <class T>
  void gyroscopic(const VecN<T, 3>& q, VecN<T, 3>& a) const {
    using std::sin;
    a[0] = q[1] * q[2];
    a[1] = sin(q[0]) + q[2] * q[2];
    a[2] = q[0] * q[1] * q[1];
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.1, 0.2, 0.3;
    qd0 << -0.1, 1.0, 0.0;  // xd + x yd + cos(z) zd = 0
  }
};

// Fourth-order central difference of f along coordinate j of q (in_q) or of qd.
template <class F>
double central(F&& f, const Vec& q, const Vec& qd, int j, bool in_q, double s = 1e-3) {
  auto at = [&](double d) {
    Vec x = q, v = qd;
    (in_q ? x : v)[j] += d;
    return f(x, v);
  };
  const double d1 = (at(s) - at(-s)) / (2 * s), d2 = (at(s / 2) - at(-s / 2)) / s;
  return (4 * d2 - d1) / 3;
}

}  // namespace

// c = (Da - Da^T) qd for a = e B/2 (-y, x) is the Lorentz force moved to the left, c = e B (-yd, xd)
// (m xdd = e B yd, m ydd = -e B xd); dL/dq = Da^T qd = e B/2 (yd, -xd); p = m qd + a; the energy T is
// m/2 |qd|^2 and the gyroscopic part of L is qd . a. All hand-derived here, at random states and parameters.
TEST(ChargedParticle, AutodiffTermsMatchHandDerivedLorentzForce) {
  std::mt19937 rng(11);
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Vec par = random_vec(rng, 3, 0.2, 3.0);
    const double m = par[0], e = par[1] * (trial % 2 ? -1 : 1), B = par[2];
    auto model = make_model("charged_particle", {{"m", m}, {"e", e}, {"B", B}});
    ASSERT_TRUE(model->gyroscopic());
    ASSERT_EQ(model->m(), 0);
    const Vec q = random_vec(rng, 2, -3, 3), qd = random_vec(rng, 2, -3, 3);
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    model->evaluate(0, q, qd, kAll | kLagrangianGradient | kMomentum, *ws, t);
    Vec c(2), dL(2), p(2);
    c << -e * B * qd[1], e * B * qd[0];
    dL << 0.5 * e * B * qd[1], -0.5 * e * B * qd[0];
    p << m * qd[0] - 0.5 * e * B * q[1], m * qd[1] + 0.5 * e * B * q[0];
    const double scale = 1 + std::abs(e * B) * (q.norm() + qd.norm()) + m * qd.norm();
    worst = std::max({worst, (t.c - c).cwiseAbs().maxCoeff() / scale, (t.dL_dq - dL).cwiseAbs().maxCoeff() / scale,
                      (t.p - p).cwiseAbs().maxCoeff() / scale});
    EXPECT_NEAR(t.kinetic, 0.5 * m * qd.squaredNorm(), 1e-13 * scale * scale);
    EXPECT_EQ(t.potential, 0.0);
    EXPECT_NEAR(t.gyroscopic, 0.5 * e * B * (q[0] * qd[1] - q[1] * qd[0]), 1e-13 * scale * scale);
    EXPECT_EQ(t.energy(), t.kinetic);  // the magnetic term does no work: not in the energy
  }
  std::printf("  charged particle: worst relative |c|, |dL/dq|, |p| error vs hand-derived %.2e\n", worst);
  EXPECT_LT(worst, 1e-15);  // measured 0 (the same few flops); the issue asked for 1e-12
}

// kkt + dopri5 at rtol 1e-12 against the closed form: a circle of radius m v / |e B| about the guiding
// centre z0 - i w0 / omega, period 2 pi m / |e B|, energy m v^2 / 2 conserved.
TEST(ChargedParticle, CircleOfRadiusMvOverEBUnderKktDopri5) {
  const double m = 1.3, e = 0.7, B = 2.1;
  auto model = make_model("charged_particle", {{"m", m}, {"e", e}, {"B", B}});
  const ChargedParticle particle{m, e, B};
  Vec q0(2), qd0(2);
  q0 << 0.4, -0.2;
  qd0 << 0.9, 0.5;
  const double v = qd0.norm(), radius = m * v / std::abs(e * B), period = 2 * std::numbers::pi * m / std::abs(e * B);
  double cx, cy;
  particle.circle_centre(q0, qd0, cx, cy);
  EXPECT_NEAR(std::hypot(q0[0] - cx, q0[1] - cy), radius, 1e-15);
  clm::testing::RunSettings rs;
  rs.integrator = "dopri5";
  rs.t_end = 5 * period;
  rs.output_every = period / 40;
  rs.rtol = 1e-12;
  rs.atol = 1e-14;
  const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  double radius_err = 0, centre_err = 0, energy_err = 0, closed_err = 0, period_err = 0;
  const double E0 = 0.5 * m * v * v;
  Vec q(2), qd(2);
  for (size_t k = 0; k < run.t.size(); ++k) {
    const Observation& o = run.obs[k];
    radius_err = std::max(radius_err, std::abs(std::hypot(o.q[0] - cx, o.q[1] - cy) - radius));
    double kx, ky;
    particle.circle_centre(o.q, o.qd, kx, ky);
    centre_err = std::max(centre_err, std::hypot(kx - cx, ky - cy));
    energy_err = std::max(energy_err, std::abs(o.energy - E0) / E0);
    ASSERT_TRUE(model->closed_form(run.t[k], q0, qd0, q, qd));
    closed_err = std::max(closed_err, std::max((q - o.q).cwiseAbs().maxCoeff(), (qd - o.qd).cwiseAbs().maxCoeff()));
    // Back at the start after every whole period.
    const double periods = run.t[k] / period;
    if (k > 0 && std::abs(periods - std::round(periods)) < 1e-9)
      period_err = std::max(period_err, std::max((o.q - q0).cwiseAbs().maxCoeff(), (o.qd - qd0).cwiseAbs().maxCoeff()));
  }
  std::printf("  charged particle, 5 periods, kkt + dopri5 rtol 1e-12: radius %.2e, centre %.2e, closed form "
              "%.2e, after whole periods %.2e, relative energy %.2e\n",
              radius_err, centre_err, closed_err, period_err, energy_err);
  EXPECT_GT(period_err, 0.0);  // the whole-period samples were found
  // Measured: radius 2.4e-12, centre 5.1e-15, closed form 2.6e-12, whole periods 2.3e-12, energy 5.2e-12 (the
  // issue asked for 1e-10; dopri5's global error at rtol 1e-12 is a few 1e-12 here).
  EXPECT_LT(radius_err, 6e-12);
  EXPECT_LT(centre_err, 1.5e-14);
  EXPECT_LT(closed_err, 6e-12);
  EXPECT_LT(period_err, 6e-12);
  EXPECT_LT(energy_err, 1.5e-11);
}

// m = 0 rows: the formulations that apply to every problem run it and agree (schur, nullspace with an empty
// constraint: S = I); those that need constraints refuse it in one line.
TEST(ChargedParticle, UnconstrainedProblemRunsUnderEveryGeneralFormulation) {
  auto model = make_model("charged_particle", {});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 2.0;
  rs.output_every = 0.5;
  for (const char* name : {"kkt", "schur", "nullspace"}) {
    const auto run = clm::testing::record_run(model, name, q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << name << ": " << run.result.message;
    Vec q(2), qd(2);
    model->closed_form(run.t.back(), q0, qd0, q, qd);
    const double err = (q - run.obs.back().q).cwiseAbs().maxCoeff();
    std::printf("  charged_particle, %-9s + dopri5 rtol 1e-12 to t = 2: |q - closed form| %.2e\n", name, err);
    EXPECT_LT(err, 3e-13) << name;  // measured 1.3e-13 under all three
    EXPECT_EQ(run.obs.back().lambda.size(), 0) << name;
  }
  for (const char* name : {"penalty", "added_mass", "vakonomic", "fernandez_bloch", "substituted"}) {
    const std::string why = formulation_registry().get(name).refuses(*model);
    EXPECT_FALSE(why.empty()) << name;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

// The formulations that build their own Lagrangian from M and V alone refuse a gyroscopic problem in one line
// naming the term; every formulation that goes through the Model's c accepts it.
TEST(Gyroscopic, FormulationsBypassingTheBiasRefuseInOneLine) {
  auto model = make_model("contact_oscillator_nr", {});
  ASSERT_TRUE(model->gyroscopic());
  EXPECT_FALSE(make_model("contact_oscillator", {})->gyroscopic());
  for (const char* name : {"fernandez_bloch", "substituted"}) {
    const std::string why = formulation_registry().get(name).refuses(*model);
    EXPECT_NE(why.find("gyroscopic"), std::string::npos) << name << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    try {
      formulation_registry().get(name).make(model, FormulationOptions{});
      ADD_FAILURE() << name << " accepted a gyroscopic problem";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("gyroscopic"), std::string::npos) << e.what();
    }
  }
  for (const char* name : {"kkt", "schur", "nullspace", "penalty", "added_mass", "vakonomic"})
    EXPECT_TRUE(formulation_registry().get(name).refuses(*model).empty()) << name;
  // The reversible oscillator keeps its substituted formulation (xd = -y zd).
  EXPECT_TRUE(formulation_registry().get("substituted").refuses(*make_model("contact_oscillator", {})).empty());
}

// On a problem with q-dependent M, a non-gradient a(q) and a constraint: dL/dq and p against central
// differences of L = T + qd . a - V (from kEnergy), c against c = d/dt p |_(qdd = 0) - dL/dq with d/dt p
// by central differences along qd, and Model::dynamics_derivatives (dc/dq, dc/dqd, dM/dq) against central
// differences of c and M.
TEST(Gyroscopic, TermsAndDynamicsDerivativesMatchFiniteDifferences) {
  auto model = make_model_with_capabilities(GyroscopicTop{});
  ASSERT_TRUE(model->gyroscopic());
  ASSERT_TRUE(model->has_dynamics_derivatives());
  const int n = 3;
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  DynamicsDerivatives d = model->make_derivatives();
  std::mt19937 rng(5);
  double worst_grad = 0, worst_c = 0, worst_dc = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const Vec q = random_vec(rng, n, -1.5, 1.5), qd = random_vec(rng, n, -2, 2);
    auto L = [&](const Vec& x, const Vec& v) {
      model->evaluate(0, x, v, kEnergy, *ws, t);
      return t.kinetic + t.gyroscopic - t.potential;
    };
    model->evaluate(0, q, qd, kAll | kLagrangianGradient | kMomentum, *ws, t);
    const Vec c = t.c, dL_dq = t.dL_dq, p = t.p;
    const Mat M = t.M;
    for (int j = 0; j < n; ++j) {
      worst_grad = std::max(worst_grad, std::abs(dL_dq[j] - central(L, q, qd, j, true)) / (1 + std::abs(dL_dq[j])));
      worst_grad = std::max(worst_grad, std::abs(p[j] - central(L, q, qd, j, false)) / (1 + std::abs(p[j])));
    }
    // d/dt p at qdd = 0: derivative of p(q + s qd, qd) in s.
    auto p_along = [&](double s) {
      model->evaluate(0, q + s * qd, qd, kMomentum, *ws, t);
      return Vec(t.p);
    };
    const double s = 1e-3;
    const Vec pdot = (4 * (p_along(s / 2) - p_along(-s / 2)) / s - (p_along(s) - p_along(-s)) / (2 * s)) / 3;
    worst_c = std::max(worst_c, (c - (pdot - dL_dq)).cwiseAbs().maxCoeff() / (1 + c.cwiseAbs().maxCoeff()));
    model->dynamics_derivatives(q, qd, *ws, d);
    for (int l = 0; l < n; ++l) {
      for (bool in_q : {true, false}) {
        for (int i = 0; i < n; ++i) {
          auto ci = [&](const Vec& x, const Vec& v) {
            model->evaluate(0, x, v, kBias, *ws, t);
            return t.c[i];
          };
          const double fd = central(ci, q, qd, l, in_q);
          const double ad = in_q ? d.dc_dq(i, l) : d.dc_dqd(i, l);
          worst_dc = std::max(worst_dc, std::abs(ad - fd) / (1 + std::abs(ad)));
        }
      }
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          auto Mij = [&](const Vec& x, const Vec& v) {
            model->evaluate(0, x, v, kMassMatrix, *ws, t);
            return t.M(i, j);
          };
          worst_dc = std::max(worst_dc, std::abs(d.dM[l](i, j) - central(Mij, q, qd, l, true)));
        }
    }
  }
  std::printf("  gyroscopic_top: dL/dq, p vs FD %.2e; c vs d/dt p - dL/dq %.2e; dc/dq, dc/dqd, dM/dq vs FD %.2e\n",
              worst_grad, worst_c, worst_dc);
  // Fourth-order differences with s = 1e-3: truncation ~ s^4 |f^(5)| ~ 1e-12, round-off ~ 1e-16 / s ~ 1e-13.
  // Measured: 1.1e-12, 4.1e-13, 1.2e-12.
  EXPECT_LT(worst_grad, 3e-12);
  EXPECT_LT(worst_c, 1e-12);
  EXPECT_LT(worst_dc, 3e-12);
}

// The gyroscopic passes use the workspace's fixed-size Jet buffers: no heap allocation in evaluate() (every
// term) or dynamics_derivatives() on the registered gyroscopic problems (after a first call has sized C).
TEST(Gyroscopic, EvaluateAndDerivativesDoNotAllocate) {
  for (const char* name : {"charged_particle", "contact_oscillator_nr"}) {
    auto model = make_model(name, {});
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    DynamicsDerivatives d = model->make_derivatives();
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const unsigned all = kAll | kMomentum | kLagrangianGradient | kConstraintCurvature;
    model->evaluate(0, q0, qd0, all, *ws, t);
    clm::testing::AllocationScope scope;
    for (int k = 0; k < 10; ++k) {
      model->evaluate(0.1 * k, q0, qd0, all, *ws, t);
      model->dynamics_derivatives(q0, qd0, *ws, d);
    }
    EXPECT_EQ(scope.count(), 0u) << name;
  }
}
