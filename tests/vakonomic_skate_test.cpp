// The vakonomic skate [seed-004] (problems/vakonomic_skate.hpp): the closed form on the flat plane (g = 0,
// lambda(0) = 0) against the `vakonomic` formulation integrated by dopri5 at rtol 1e-12 (q, qd, lambda to
// 1e-9 over 5 s, random parameters and initial data, both turning directions, forward and backward speeds),
// its xi against Legendre's E (std::ellint_2), and the slide's incline relations xd = g t cos^2(phi),
// yd = g t sin(phi) cos(phi) along a vakonomic run from rest with phi(0) = 0.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "clmbench_process.hpp"
#include "problems/vakonomic_skate.hpp"

using namespace clm;

namespace {

// Runs vakonomic + dopri5 and calls check(t, obs) at every sample.
template <class Check>
void run_vakonomic(const std::map<std::string, double>& params, const Vec& q0, const Vec& qd0, double t_end,
                   Check&& check, const FormulationOptions& options = {}) {
  auto model = make_model("skate_incline", params, false);
  auto f = formulation_registry().get("vakonomic").make(model, options);
  auto integ = integrator_registry().get("dopri5").make();
  Vec y0;
  f->initial_state(q0, qd0, y0);
  SimulationSettings sim;
  sim.t_end = t_end;
  sim.output_every = 0.05;
  IntegratorSettings s;
  s.dt = 1e-4;
  s.rtol = 1e-12;
  s.atol = 1e-14;
  Observation obs;
  int samples = 0;
  const auto r = simulate(*f, *integ, y0, sim, s, [&](double t, const Vec& y) {
    f->observe(t, y, obs);
    check(t, obs);
    ++samples;
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  EXPECT_GE(samples, int(t_end / 0.05));
}

}  // namespace

TEST(VakonomicSkate, ClosedFormMatchesVakonomicRun) {
  std::mt19937 rng(2004);
  std::uniform_real_distribution<double> pos(0.3, 2.0), sgn(-2.0, 2.0), ang(-3, 3);
  double worst_q = 0, worst_qd = 0, worst_lambda = 0, lambda_scale = 0;
  for (int trial = 0; trial < 6; ++trial) {
    SkateIncline p;
    p.m = pos(rng);
    p.J = pos(rng) * 0.3;
    p.g = 0;
    // trial 0 is the slide's case phi(0) = 0; then rotated headings, backward speeds, both turning senses.
    const double phi0 = trial == 0 ? 0.0 : ang(rng), u0 = (trial % 3 == 2 ? -1 : 1) * pos(rng);
    const double w = (trial % 2 ? -1 : 1) * pos(rng);
    Vec q0(3), qd0(3);
    q0 << sgn(rng), sgn(rng), phi0;
    qd0 << u0 * std::cos(phi0), u0 * std::sin(phi0), w;
    Vec q, qd;
    double lambda = 0;
    run_vakonomic({{"m", p.m}, {"J", p.J}, {"g", 0.0}}, q0, qd0, 5.0, [&](double t, const Observation& obs) {
      ASSERT_TRUE(vakonomic_skate_closed_form(p, t, q0, qd0, 0.0, q, qd, lambda));
      worst_q = std::max(worst_q, (obs.q - q).norm());
      worst_qd = std::max(worst_qd, (obs.qd - qd).norm());
      worst_lambda = std::max(worst_lambda, std::abs(obs.lambda[0] - lambda));
      lambda_scale = std::max(lambda_scale, std::abs(lambda));
    });
  }
  // dopri5 at rtol 1e-12 over 5 s (observed q 5.2e-12, qd 1.1e-11, lambda 3.7e-12; the issue asks 1e-9).
  EXPECT_LT(worst_q, 1e-10);
  EXPECT_LT(worst_qd, 1e-10);
  EXPECT_LT(worst_lambda, 1e-10);
  EXPECT_GT(lambda_scale, 0.3);  // the multiplier is exercised, not identically zero
  RecordProperty("worst_q", std::to_string(worst_q));
  std::printf("vakonomic skate vs closed form: q %.2e, qd %.2e, lambda %.2e\n", worst_q, worst_qd, worst_lambda);
}

// The condition lambda(0) = 0 matters: set explicitly through the formulation option lambda0 the run is the
// closed form; with lambda0 = 0.3 (p_y != 0) it is another motion, far from it.
TEST(VakonomicSkate, Lambda0SelectsTheMotion) {
  SkateIncline p;
  p.m = 1.2;
  p.J = 0.3;
  p.g = 0;
  Vec q0(3), qd0(3), q, qd;
  q0 << 0.5, -0.2, 0.0;
  qd0 << 0.9, 0.0, 1.4;
  double lambda = 0, zero = 0, other = 0;
  for (double l0 : {0.0, 0.3}) {
    FormulationOptions o;
    o.lambda0 = {l0};
    run_vakonomic({{"m", p.m}, {"J", p.J}, {"g", 0.0}}, q0, qd0, 3.0, [&](double t, const Observation& obs) {
      ASSERT_TRUE(vakonomic_skate_closed_form(p, t, q0, qd0, 0.0, q, qd, lambda));
      (l0 == 0 ? zero : other) = std::max(l0 == 0 ? zero : other, (obs.q - q).norm());
    }, o);
  }
  EXPECT_LT(zero, 5e-12);  // observed 3.1e-13
  EXPECT_GT(other, 1e-2);
  std::printf("lambda0 = 0: %.2e from the closed form; lambda0 = 0.3: %.2e\n", zero, other);
}

// xi (the quadrature) against the Legendre form xi = u0 t - (u0/k^2)(Omega (E(kappa) - E(pi/2 - |psi|)) - W^2 t),
// and eta against (u0/k^2)(psid - w); the one-line cases w = 0 (straight) and u0 = 0 (spinning in place).
TEST(VakonomicSkate, ClosedFormAgainstLegendreE) {
  SkateIncline p;
  p.m = 1.3;
  p.J = 0.4;
  p.g = 0;
  const double u0 = 0.8, w = 1.1, k2 = p.m * u0 * u0 / p.J, Omega = std::sqrt(w * w + k2), kappa = std::sqrt(k2) / Omega;
  Vec q0(3), qd0(3), q, qd;
  q0 << 0, 0, 0;
  qd0 << u0, 0, w;
  double lambda, worst = 0;
  for (double t : {0.3, 1.0, 2.5, 7.0, 20.0}) {
    ASSERT_TRUE(vakonomic_skate_closed_form(p, t, q0, qd0, 0.0, q, qd, lambda));
    const double psi = q[2];
    const double xi = u0 * t - u0 / k2 * (Omega * (std::comp_ellint_2(kappa) - std::ellint_2(kappa, M_PI / 2 - psi)) - w * w * t);
    const double eta = u0 / k2 * (qd[2] - w);
    worst = std::max({worst, std::abs(q[0] - xi) / (1 + std::abs(xi)), std::abs(q[1] - eta) / (1 + std::abs(eta))});
    // psid^2 = w^2 + k^2 sin^2(psi), lambda = -m u0 sin(psi), qd along the blade with speed u0 cos(psi).
    EXPECT_NEAR(qd[2] * qd[2], w * w + k2 * std::sin(psi) * std::sin(psi), 1e-12);
    EXPECT_NEAR(lambda, -p.m * u0 * std::sin(psi), 1e-15);
    EXPECT_NEAR(qd[0] * std::cos(psi) + qd[1] * std::sin(psi), u0 * std::cos(psi), 1e-14);
  }
  EXPECT_LT(worst, 1e-13);  // observed 1.1e-14 (the E form's cancellation, 1/kappa^2 = 1.6 here)
  std::printf("xi, eta vs Legendre E form: %.2e\n", worst);
  // w = 0: straight on; u0 = 0: spinning in place; lambda0 != 0 or g != 0: not this closed form.
  qd0 << u0, 0, 0;
  ASSERT_TRUE(vakonomic_skate_closed_form(p, 2.0, q0, qd0, 0.0, q, qd, lambda));
  EXPECT_NEAR(q[0], 2 * u0, 1e-15);
  EXPECT_EQ(q[1], 0.0);
  EXPECT_EQ(q[2], 0.0);
  qd0 << 0, 0, w;
  ASSERT_TRUE(vakonomic_skate_closed_form(p, 2.0, q0, qd0, 0.0, q, qd, lambda));
  EXPECT_NEAR(q[2], 2 * w, 1e-14);
  EXPECT_EQ(q[0], 0.0);
  EXPECT_FALSE(vakonomic_skate_closed_form(p, 2.0, q0, qd0, 0.1, q, qd, lambda));
  p.g = 1;
  EXPECT_FALSE(vakonomic_skate_closed_form(p, 2.0, q0, qd0, 0.0, q, qd, lambda));
}

// The slide's own case, on the incline (m = J = g = 1, from rest, phi(0) = 0, lambda(0) = 0): p_x = t, p_y = 0,
// so xd = t cos^2(phi), yd = t sin(phi) cos(phi) and lambda = -t sin(phi) along the vakonomic run.
TEST(VakonomicSkate, SlideRelationsOnTheIncline) {
  Vec q0 = Vec::Zero(3), qd0(3);
  qd0 << 0, 0, 1.3;
  double worst = 0;
  run_vakonomic({{"m", 1.0}, {"J", 1.0}, {"g", 1.0}}, q0, qd0, 4.0, [&](double t, const Observation& o) {
    const double c = std::cos(o.q[2]), s = std::sin(o.q[2]);
    worst = std::max({worst, std::abs(o.qd[0] - t * c * c), std::abs(o.qd[1] - t * s * c),
                      std::abs(o.lambda[0] + t * s)});
  });
  EXPECT_LT(worst, 5e-11);  // dopri5 at rtol 1e-12 (observed 3.7e-12)
  std::printf("slide relations along the incline run: %.2e\n", worst);
}

// The Kozlov Theorem 2 study on the flat plane (experiments/kozlov_added_mass_skate_flat.ini, shortened) has
// the closed form as a second reference: the reference run agrees with it to its own accuracy, and each
// limit run's error against it equals its error against the reference run to within that (triangle
// inequality). The shipped incline study (g = 9.81) has no closed form and no such dataset.
TEST(VakonomicSkate, KozlovStudySecondReference) {
  clm::testing::ScratchDir dir("vakonomic_skate_kozlov");
  const std::string root = CLMBENCH_SOURCE_DIR;
  const auto r = dir.run("kozlov " + root + "/experiments/kozlov_added_mass_skate_flat.ini --set run.t_end=2 "
                         "--set 'kozlov.N=1e2 1e3 1e4' --out flat.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("second reference: vakonomic skate closed form"), std::string::npos) << r.out;
  H5::H5File file(dir / "flat.h5", H5F_ACC_RDONLY);
  H5::Group g = file.openGroup("/kozlov/added_mass_skate_flat");
  double ref_error = 1;
  g.openAttribute("reference_closed_form_error").read(H5::PredType::NATIVE_DOUBLE, &ref_error);
  EXPECT_LT(ref_error, 5e-12);  // the reference's own error at rtol 1e-12 (observed 4.4e-13)
  auto read = [&](const char* name) {
    H5::DataSet ds = g.openDataSet(name);
    hsize_t n = 0;
    ds.getSpace().getSimpleExtentDims(&n);
    std::vector<double> v(n);
    ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
    return v;
  };
  const auto eq = read("error_q"), ecf = read("error_q_closed_form");
  ASSERT_EQ(eq.size(), 3u);
  ASSERT_EQ(ecf.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(ecf[i], 1e-7) << i;  // the limit error, well above the reference's
    EXPECT_LE(std::abs(ecf[i] - eq[i]), ref_error * 1.0001 + 1e-15) << i;
  }
  std::printf("flat skate study: reference vs closed form %.2e; error_q vs closed form %.3e %.3e %.3e\n", ref_error,
              ecf[0], ecf[1], ecf[2]);

  const auto incline = dir.run("kozlov " + root + "/experiments/kozlov_added_mass_skate.ini --set run.t_end=0.5 "
                               "--set 'kozlov.N=1e2 1e3' --out incline.h5");
  ASSERT_EQ(incline.exit_code, 0) << incline.err;
  EXPECT_EQ(incline.out.find("second reference"), std::string::npos) << incline.out;
  H5::H5File f2(dir / "incline.h5", H5F_ACC_RDONLY);
  EXPECT_FALSE(f2.openGroup("/kozlov/added_mass_skate").nameExists("error_q_closed_form"));
}
