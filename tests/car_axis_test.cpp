// The Bari test set's car axis problem (problems/car_axis.hpp): the test set's hand-written right-hand side
// against the autodiff terms, consistent default data, and its reference solution at t = 3.
#include <gtest/gtest.h>

#include <cmath>

#include "core/problem_registry.hpp"
#include "problems/car_axis.hpp"
#include "recorded_run.hpp"

using namespace clm;

namespace {

// caraxis.f's f(5..8) (carfunc) at (t, q, lambda), written out from the test set: the spring forces, gravity
// and G^T lambda.
Vec test_set_force(const CarAxis& p, double t, const Vec& q, const Vec& lambda) {
  const double yb = p.r * std::sin(p.w * t), xb = std::sqrt(p.L * p.L - yb * yb);
  const double xl = q[0], yl = q[1], xr = q[2], yr = q[3];
  const double Ll = std::sqrt(xl * xl + yl * yl), Lr = std::sqrt((xr - xb) * (xr - xb) + (yr - yb) * (yr - yb));
  const double mg = p.M * p.eps * p.eps * p.g / 2;
  Vec f(4);
  f[0] = (p.L0 - Ll) * xl / Ll + lambda[0] * xb + 2 * lambda[1] * (xl - xr);
  f[1] = (p.L0 - Ll) * yl / Ll + lambda[0] * yb + 2 * lambda[1] * (yl - yr) - mg;
  f[2] = (p.L0 - Lr) * (xr - xb) / Lr - 2 * lambda[1] * (xl - xr);
  f[3] = (p.L0 - Lr) * (yr - yb) / Lr - 2 * lambda[1] * (yl - yr) - mg;
  return f;
}

Vec as_vec(const auto& a) {
  Vec v(static_cast<Eigen::Index>(a.size()));
  for (size_t i = 0; i < a.size(); ++i) v[static_cast<Eigen::Index>(i)] = a[i];
  return v;
}

}  // namespace

// F - c + A^T lambda of the autodiff model = the test set's f(5..8), its G = A, K = M, at the reference state
// and at a state off it, for the test set's and for other parameters.
TEST(CarAxis, AutodiffTermsMatchTheTestSetsRightHandSide) {
  for (const auto& params : {std::map<std::string, double>{}, std::map<std::string, double>{
                                                                  {"eps", 0.05}, {"M", 3}, {"L", 1.4}, {"L0", 0.7},
                                                                  {"r", 0.3}, {"w", 4}, {"g", 2.5}}}) {
    auto model = make_model("car_axis", params);
    CarAxis p;
    for (const auto& [k, v] : params) {
      for (const auto& spec : CarAxis::kParameters)
        if (spec.name == k) p.*(spec.member) = v;
    }
    auto ws = model->make_workspace();
    ModelTerms terms = model->make_terms();
    Vec lambda = as_vec(CarAxis::kReferenceLambda);
    for (const auto& [t, shift] : {std::pair{3.0, 0.0}, std::pair{0.41, 0.13}}) {
      Vec q = as_vec(CarAxis::kReferenceQ).array() + shift, qd = as_vec(CarAxis::kReferenceQd);
      model->evaluate(t, q, qd, kAll, *ws, terms);
      const Vec f = terms.F - terms.c + terms.A.transpose() * lambda;
      EXPECT_LT((f - test_set_force(p, t, q, lambda)).lpNorm<Eigen::Infinity>(), 1e-15) << t;
      EXPECT_LT((terms.M - p.mass() * Mat::Identity(4, 4)).lpNorm<Eigen::Infinity>(), 1e-18);
      const double yb = p.r * std::sin(p.w * t), xb = std::sqrt(p.L * p.L - yb * yb);
      Mat G(2, 4);
      G << xb, yb, 0, 0, 2 * (q[0] - q[2]), 2 * (q[1] - q[3]), -2 * (q[0] - q[2]), -2 * (q[1] - q[3]);
      EXPECT_LT((terms.A - G).lpNorm<Eigen::Infinity>(), 1e-15);
      // b = dh/dt = (xb' xl + yb' yl, 0), yb' = r w cos(w t), xb' = -yb yb' / xb.
      const double ybd = p.r * p.w * std::cos(p.w * t), xbd = -yb * ybd / xb;
      EXPECT_NEAR(terms.b[0], xbd * q[0] + ybd * q[1], 1e-15);
      EXPECT_EQ(terms.b[1], 0.0);
    }
  }
}

// The default initial data are consistent (h(q0, 0) = 0, A qd0 + b = 0) for the test set's parameters and others.
TEST(CarAxis, DefaultInitialIsConsistent) {
  for (const auto& params : {std::map<std::string, double>{},
                             std::map<std::string, double>{{"L", 1.4}, {"r", 0.3}, {"w", 4}},
                             std::map<std::string, double>{{"L", 0.5}, {"r", -0.45}, {"w", 20}}}) {
    auto model = make_model("car_axis", params);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    auto ws = model->make_workspace();
    ModelTerms terms = model->make_terms();
    model->evaluate(0.0, q0, qd0, kAll, *ws, terms);
    EXPECT_LT(terms.h.lpNorm<Eigen::Infinity>(), 1e-15);
    EXPECT_LT((terms.A * qd0 + terms.b).lpNorm<Eigen::Infinity>(), 1e-15);
    EXPECT_GT(qd0.norm(), 1e-3);
  }
  {
    CarAxis p;
    Vec q0(4), qd0(4);
    p.default_initial(q0, qd0);
    Vec expected_q(4), expected_qd(4);
    expected_q << 0, 0.5, 1, 0.5;  // caraxis.f's y0
    expected_qd << -0.5, 0, -0.5, 0;
    EXPECT_EQ(q0, expected_q);
    EXPECT_EQ(qd0, expected_qd);
  }
}

// The test set's reference at t = 3: all 10 components (q, qd, lambda) under kkt and schur with radau5 at
// rtol 1e-12.
TEST(CarAxis, ReferenceSolutionAtThree) {
  auto model = make_model("car_axis");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  const Vec qr = as_vec(CarAxis::kReferenceQ), qdr = as_vec(CarAxis::kReferenceQd),
            lr = as_vec(CarAxis::kReferenceLambda);
  for (const char* formulation : {"kkt", "schur"}) {
    clm::testing::RunSettings rs;
    rs.integrator = "radau5";
    rs.t_end = CarAxis::kReferenceTime;
    rs.output_every = 1.5;
    rs.dt = 1e-4;
    rs.rtol = 1e-12;
    rs.atol = 1e-12;
    const auto run = clm::testing::record_run(model, formulation, q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    const Observation& o = run.obs.back();
    ASSERT_DOUBLE_EQ(run.t.back(), 3.0);
    const double eq = (o.q - qr).lpNorm<Eigen::Infinity>(), eqd = (o.qd - qdr).lpNorm<Eigen::Infinity>(),
                 el = (o.lambda - lr).lpNorm<Eigen::Infinity>();
    // The issue asks for 1e-7; measured 1.3e-11 (q), 3.8e-10 (qd), 1.6e-10 (lambda), so the bands are a few
    // times the observed errors (the test set's reference is itself a RADAU5 solution at tight tolerance).
    EXPECT_LT(eq, 1e-10) << formulation;
    EXPECT_LT(eqd, 2e-9) << formulation;
    EXPECT_LT(el, 1e-9) << formulation;
    // scd as in the test set: -log10 of the largest relative error over the 10 components.
    double rel = 0;
    for (int i = 0; i < 4; ++i) {
      rel = std::max(rel, std::abs((o.q[i] - qr[i]) / qr[i]));
      rel = std::max(rel, std::abs((o.qd[i] - qdr[i]) / qdr[i]));
    }
    for (int i = 0; i < 2; ++i) rel = std::max(rel, std::abs((o.lambda[i] - lr[i]) / lr[i]));
    std::printf("[measured] car_axis %s + radau5 rtol 1e-12: |dq| %.2e |dqd| %.2e |dlambda| %.2e scd %.2f, "
                "%ld steps\n", formulation, eq, eqd, el, -std::log10(rel), run.result.stats.steps);
  }
}
