// Relative equilibria (analysis/equilibrium_analysis.hpp, `clmbench analyze --equilibrium`): the sleigh's
// reduced equations and their linearization against the hand derivation of [seed-000] (u' = b w^2,
// w' = -beta u w, beta = m b / (m b^2 + Ic), from T = m/2 (xd^2 + yd^2) + Ic/2 thetad^2 and the blade
// constraint), its eigenvalues 0 and -beta u1 at (u1, 0) for random parameters and both signs of u1 and b,
// the verdict words, the refusals, and the CLI with its /analysis group.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "input_error_of.hpp"
#include "clmbench_process.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "analysis/equilibrium_analysis.hpp"

using namespace clm;

namespace {

double beta_of(double m, double Ic, double b) { return m * b / (m * b * b + Ic); }

// qd = S(theta) (u, w) of the sleigh's velocity basis [seed-000, after eq. 2.17].
Vec sleigh_qd(double theta, double b, double u, double w) {
  Vec qd(3);
  qd << u * std::cos(theta) - b * w * std::sin(theta), u * std::sin(theta) + b * w * std::cos(theta), w;
  return qd;
}

using clm::testing::error_of;

}  // namespace

// g(q, v) equals the nullspace formulation's vd (the same eq. 2.18, another code path) and the hand-derived
// reduced equations; dg/dv equals their hand linearization [[0, 2 b w], [-beta w, -beta u]] at any state.
TEST(Equilibrium, SleighReducedEquationsAndJacobian) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> pos(0.2, 3.0), sgn(-1.5, 1.5), ang(-4, 4);
  double worst_g = 0, worst_ns = 0, worst_j = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const double m = pos(rng), Ic = pos(rng), b = sgn(rng), u = sgn(rng), w = sgn(rng);
    auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}}, false);
    Vec q(3), v(2);
    q << sgn(rng), sgn(rng), ang(rng);
    v << u, w;
    const double beta = beta_of(m, Ic, b);
    const Vec g = reduced_acceleration(*model, q, v);
    worst_g = std::max({worst_g, std::abs(g[0] - b * w * w), std::abs(g[1] + beta * u * w)});
    auto ns = formulation_registry().get("nullspace").make(model, {});
    Vec y, dy(5);
    ns->initial_state(q, sleigh_qd(q[2], b, u, w), y);
    ns->rhs(0.0, y, dy);
    worst_ns = std::max(worst_ns, (dy.tail(2) - g).norm());
    const Mat J = reduced_jacobian(*model, q, v);
    Mat expected(2, 2);
    expected << 0, 2 * b * w, -beta * w, -beta * u;
    worst_j = std::max(worst_j, (J - expected).norm());
  }
  // Rounding only (observed 2.2e-16, 1.8e-15, 8.9e-16).
  EXPECT_LT(worst_g, 1e-14);
  EXPECT_LT(worst_ns, 1e-14);
  EXPECT_LT(worst_j, 1e-14);
  std::printf("sleigh reduced equations: vd vs hand %.2e, vs nullspace %.2e, J vs hand %.2e\n", worst_g, worst_ns,
              worst_j);
}

// At (u1, 0): eigenvalues 0 and -beta u1, stable when beta u1 > 0 (forward motion with the blade behind the
// centre of mass), unstable when beta u1 < 0; x, y, theta are the group coordinates.
TEST(Equilibrium, SleighEigenvaluesAndVerdicts) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> pos(0.2, 3.0), speed(0.1, 3.0), off(-2, 2), ang(-4, 4);
  int stable = 0, unstable = 0;
  double worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const double m = pos(rng), Ic = pos(rng), b = (trial % 4 < 2 ? 1 : -1) * pos(rng) * 0.5;
    const double u1 = (trial % 2 ? 1 : -1) * speed(rng);
    auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}}, false);
    Vec q(3);
    q << off(rng), off(rng), ang(rng);
    const EquilibriumAnalysis a = analyze_equilibrium(*model, q, sleigh_qd(q[2], b, u1, 0.0));
    const double beta = beta_of(m, Ic, b);
    ASSERT_EQ(a.eigenvalues.size(), 2u);
    // Sorted by real part, descending: the larger one first.
    const double l1 = -beta * u1;
    const double hi = std::max(0.0, l1), lo = std::min(0.0, l1);
    worst = std::max({worst, std::abs(a.eigenvalues[0].real() - hi), std::abs(a.eigenvalues[1].real() - lo),
                      std::abs(a.eigenvalues[0].imag()), std::abs(a.eigenvalues[1].imag())});
    EXPECT_LT(a.residual, 1e-15);
    EXPECT_EQ(a.group_coordinates, (std::vector<int>{0, 1, 2}));
    EXPECT_TRUE(a.energy_conserved);
    EXPECT_EQ(a.forced_zeros, 1);
    EXPECT_EQ(a.verdict, beta * u1 > 0 ? "stable" : "unstable") << "b " << b << " u1 " << u1;
    (a.verdict == "stable" ? stable : unstable)++;
  }
  EXPECT_LT(worst, 1e-14);  // the issue asks 1e-10; rounding only (observed 8.9e-16)
  std::printf("sleigh eigenvalues vs (0, -beta u1): %.2e over %d stable and %d unstable equilibria\n", worst, stable,
              unstable);
  EXPECT_GT(stable, 5);
  EXPECT_GT(unstable, 5);
}

// b = 0 (blade at the centre of mass, beta = 0): J = 0, both eigenvalues 0, one of them not forced by the
// energy: marginal. The same for the skate on a flat plane (g = 0; its reduced equations u' = 0, w' = 0) and
// the rolling disk's steady rolling ((M R^2 + I) thetadd = 0, J phidd = 0 [seed-003]).
TEST(Equilibrium, MarginalCases) {
  Vec q(3), q4(4);
  q << 0.3, -0.2, 0.7;
  q4 << 0.1, 0.2, 0.3, 0.4;
  const auto sleigh = analyze_equilibrium(*make_model("chaplygin_sleigh", {{"b", 0.0}}, false), q, sleigh_qd(0.7, 0, 1.3, 0));
  const auto skate = analyze_equilibrium(*make_model("skate_incline", {{"g", 0.0}}, false), q,
                                         (Vec(3) << 1.3 * std::cos(0.7), 1.3 * std::sin(0.7), 0.4).finished());
  const auto disk = analyze_equilibrium(*make_model("rolling_disk", {}, false), q4,
                                        (Vec(4) << 0.5 * 2 * std::cos(0.4), 0.5 * 2 * std::sin(0.4), 2, 0.7).finished());
  for (const auto* a : {&sleigh, &skate, &disk}) {
    SCOPED_TRACE(a->problem);
    EXPECT_EQ(a->verdict, "marginal");
    EXPECT_LT(a->jacobian.norm(), 1e-14);
    for (const auto& l : a->eigenvalues) EXPECT_LT(std::abs(l), 1e-14);
    EXPECT_EQ(a->forced_zeros, 1);
  }
}

TEST(Equilibrium, RefusalsNameTheReason) {
  auto sleigh = make_model("chaplygin_sleigh", {{"m", 2}, {"Ic", 0.7}, {"b", 0.4}}, false);
  const Vec q = Vec::Zero(3);
  // Turning (w = 0.5): vd = (b w^2, -beta u w) = (0.1, -0.5 beta); |vd| printed.
  const double beta = beta_of(2, 0.7, 0.4);
  const std::string not_equilibrium = error_of([&] { analyze_equilibrium(*sleigh, q, sleigh_qd(0, 0.4, 1, 0.5)); });
  EXPECT_NE(not_equilibrium.find("not a relative equilibrium"), std::string::npos) << not_equilibrium;
  char expected[64];
  std::snprintf(expected, sizeof expected, "|vd| = %.6g", std::hypot(0.1, 0.5 * beta));
  EXPECT_NE(not_equilibrium.find(expected), std::string::npos) << not_equilibrium << " / " << expected;
  // Off the constraint: the sideways velocity is named with the closest admissible qd.
  const std::string off = error_of([&] { analyze_equilibrium(*sleigh, q, (Vec(3) << 1, 0.3, 0).finished()); });
  EXPECT_NE(off.find("violates the constraints"), std::string::npos) << off;
  // Gravity on the incline breaks the rotation symmetry: vd depends on phi.
  const std::string incline = error_of(
      [&] { analyze_equilibrium(*make_model("skate_incline", {}, false), q, (Vec(3) << 1, 0, 0).finished()); });
  EXPECT_NE(incline.find("depend on phi (vd changes by"), std::string::npos) << incline;
  // No velocity basis, no reduced velocities.
  const std::string none = error_of([&] {
    analyze_equilibrium(*make_model("pendulum_polar", {}, false), (Vec(2) << 1, 0.1).finished(), Vec::Zero(2));
  });
  EXPECT_NE(none.find("has no reduced velocities"), std::string::npos) << none;
  EXPECT_NE(none.find("a mechanism file states one in a [velocity_basis] section"), std::string::npos) << none;
  const std::string size = error_of([&] { analyze_equilibrium(*sleigh, Vec::Zero(2), Vec::Zero(3)); });
  EXPECT_NE(size.find("need 3 numbers"), std::string::npos) << size;
}

TEST(EquilibriumCli, PrintsVerdictAndWritesAnalysis) {
  clm::testing::ScratchDir dir("equilibrium");
  const auto fwd = dir.run(
      "analyze --problem chaplygin_sleigh --param b=0.5 --q0 0,0,0.3 --qd0 0.955336489125606,0.29552020666134,0 "
      "--equilibrium --out eq.h5");
  ASSERT_EQ(fwd.exit_code, 0) << fwd.err;
  EXPECT_NE(fwd.out.find("verdict            stable"), std::string::npos) << fwd.out;
  EXPECT_NE(fwd.out.find("group coordinates  x, y, theta"), std::string::npos) << fwd.out;
  // beta = m b / (m b^2 + Ic) = 0.5 / 0.75; u1 = 1.
  H5::H5File file(dir / "eq.h5", H5F_ACC_RDONLY);
  ASSERT_EQ(file.getNumObjs(), 1u);  // /analysis alone (issue 20, debt 3)
  H5::Group g = file.openGroup("/analysis");
  H5::DataSet re = g.openDataSet("equilibrium_eigenvalues_real");
  double values[2] = {1, 1};
  re.read(values, H5::PredType::NATIVE_DOUBLE);
  EXPECT_NEAR(values[0], 0.0, 1e-15);
  EXPECT_NEAR(values[1], -0.5 / 0.75, 1e-14);
  std::string verdict;
  H5::Attribute va = g.openAttribute("equilibrium_verdict");
  va.read(va.getStrType(), verdict);
  EXPECT_EQ(verdict, "stable");
  double residual = 1;
  g.openAttribute("equilibrium_residual").read(H5::PredType::NATIVE_DOUBLE, &residual);
  EXPECT_LT(residual, 1e-15);

  const auto back = dir.run("analyze --problem chaplygin_sleigh --qd0 -1,0,0 --equilibrium");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(back.out.find("verdict            unstable"), std::string::npos) << back.out;

  for (const std::string& args :
       {std::string("analyze --problem chaplygin_sleigh --qd0 1,0.3,1 --equilibrium --out no.h5"),
        std::string("analyze --problem pendulum_polar --equilibrium"),
        std::string("analyze --problem chaplygin_sleigh --qd0 1,0,0 --equilibrium --equilibrium-tol -1"),
        std::string("analyze --problem chaplygin_sleigh --qd0 1,0,0")}) {
    SCOPED_TRACE(args);
    clm::testing::expect_one_line_error(dir.run(args), 1, {});
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "no.h5"));
  // Velocities so large that J overflows: an error naming why, never a verdict (issue 21: NaN eigenvalues were
  // judged "marginal").
  for (const char* u : {"1e154", "1e300"})
    clm::testing::expect_one_line_error(dir.run(std::string("analyze --problem chaplygin_sleigh --qd0 ") + u +
                                                ",0,0 --equilibrium --out huge.h5"),
                                        1, {"is not finite", "no verdict"});
  EXPECT_FALSE(std::filesystem::exists(dir / "huge.h5"));
  const auto turning = dir.run("analyze --problem chaplygin_sleigh --equilibrium");  // the default qd0 turns
  clm::testing::expect_one_line_error(turning, 1, {"not a relative equilibrium", "|vd| = "});
}
