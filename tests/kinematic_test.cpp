// Kinematic systems (issue 13 item 2; seed 000 eq. 2.13-2.14): the problems kinematic_car and unicycle (their
// constant-input closed forms against the free motion under kkt), the input vector fields and Lie brackets that
// `clmbench analyze` computes (against the brackets worked out by hand below), and `--out`.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "clmbench_process.hpp"
#include "core/problem_registry.hpp"
#include "app/problem_analysis.hpp"
#include "recorded_run.hpp"

using namespace clm;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Max |q - closed form|, |qd - closed form| over the samples of a run from (q0, qd0).
std::pair<double, double> closed_form_error(const Model& model, const Vec& q0, const Vec& qd0,
                                            const clm::testing::RecordedRun& run) {
  Vec q(model.n()), qd(model.n());
  double eq = 0, eqd = 0;
  for (size_t k = 0; k < run.t.size(); ++k) {
    EXPECT_TRUE(model.closed_form(run.t[k], q0, qd0, q, qd));
    eq = std::max(eq, (q - run.obs[k].q).cwiseAbs().maxCoeff());
    eqd = std::max(eqd, (qd - run.obs[k].qd).cwiseAbs().maxCoeff());
  }
  return {eq, eqd};
}

}  // namespace

// The free nonholonomic motion (kkt) from a state with psid = 0 keeps psi and the forward speed (the psi
// column of A is zero, M is constant; the energy fixes v): the circle of radius L / tan psi of closed_form.
TEST(KinematicCar, FreeMotionWithFixedSteeringIsTheClosedFormCircle) {
  const double L = 1.3, r = 0.25, psi = 0.4, wheel = 1.5, th0 = 0.7;
  auto model = make_model("kinematic_car", {{"L", L}, {"r", r}, {"I", 0.3}, {"Jw", 0.02}});
  const double v = r * wheel;
  Vec q0(5), qd0(5);
  q0 << 0.2, -0.1, th0, psi, 0.5;
  qd0 << v * std::cos(th0), v * std::sin(th0), v * std::tan(psi) / L, 0, wheel;
  clm::testing::RunSettings rs;
  rs.t_end = 10;
  rs.output_every = 0.5;
  const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  const auto [eq, eqd] = closed_form_error(*model, q0, qd0, run);
  std::printf("kinematic_car kkt vs circle: max|q err| %.2e, max|qd err| %.2e\n", eq, eqd);
  EXPECT_LT(eq, 1e-11);
  EXPECT_LT(eqd, 1e-11);
  // On the circle about the turning centre, radius L / tan psi.
  const double R = L / std::tan(psi);
  const double cx = q0[0] - R * std::sin(th0), cy = q0[1] + R * std::cos(th0);
  for (const auto& o : run.obs) EXPECT_NEAR(std::hypot(o.q[0] - cx, o.q[1] - cy), R, 1e-11);
  // A turning steering wheel (psid0 != 0) has no closed form.
  Vec q(5), qd(5);
  qd0[3] = 0.1;
  EXPECT_FALSE(model->closed_form(1.0, q0, qd0, q, qd));
}

TEST(Unicycle, FreeMotionIsTheClosedFormLineAndCircle) {
  auto model = make_model("unicycle", {{"r", 0.4}, {"I", 0.05}, {"J", 0.09}});
  for (const double w : {0.0, 0.8}) {
    const double th0 = -0.3, wheel = 2.5, v = 0.4 * wheel;
    Vec q0(4), qd0(4);
    q0 << 1, 2, th0, 0.1;
    qd0 << v * std::cos(th0), v * std::sin(th0), w, wheel;
    clm::testing::RunSettings rs;
    rs.t_end = 5;
    rs.output_every = 0.25;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    const auto [eq, eqd] = closed_form_error(*model, q0, qd0, run);
    std::printf("unicycle kkt (thetad = %g) vs closed form: max|q err| %.2e, max|qd err| %.2e\n", w, eq, eqd);
    EXPECT_LT(eq, 1e-11);
    EXPECT_LT(eqd, 1e-11);
    if (w == 0)  // the line through q0 along the heading
      for (const auto& o : run.obs)
        EXPECT_NEAR(-(o.q[0] - q0[0]) * std::sin(th0) + (o.q[1] - q0[1]) * std::cos(th0), 0.0, 1e-12);
  }
}

// The input fields and their bracket, worked out by hand from A:
//   car:      g_psi = d/dpsi, g_phi = (r cos th, r sin th, r tan psi / L, 0, 1), [g_psi, g_phi] = d/dpsi g_phi
//             = (0, 0, r / (L cos^2 psi), 0, 0);
//   unicycle: g_th = d/dth, g_phi = (r cos th, r sin th, 0, 1), [g_th, g_phi] = (-r sin th, r cos th, 0, 0).
TEST(KinematicAnalysis, InputFieldsAndBracketsMatchTheHandDerivation) {
  const double L = 1.7, r = 0.35;
  for (const double psi : {-1.2, 0.0, 0.3, 1.0}) {
    Vec q(5);
    q << 0.4, -2, 0.9, psi, 3;
    const ConstraintAnalysis a = analyze_problem("kinematic_car", {{"L", L}, {"r", r}}, q);
    ASSERT_TRUE(a.input_fields_analysed) << a.input_fields_note;
    ASSERT_EQ(a.input_fields.cols(), 2);
    Vec g1 = Vec::Zero(5), g2(5), b = Vec::Zero(5);
    g1[3] = 1;
    g2 << r * std::cos(q[2]), r * std::sin(q[2]), r * std::tan(psi) / L, 0, 1;
    b[2] = r / (L * std::cos(psi) * std::cos(psi));
    EXPECT_LT((a.input_fields.col(0) - g1).norm(), 1e-15);
    EXPECT_LT((a.input_fields.col(1) - g2).norm(), 1e-15);
    ASSERT_EQ(a.brackets.cols(), 1);
    EXPECT_LT((a.brackets.col(0) - b).norm(), 1e-14 * b.norm()) << a.brackets.col(0).transpose();
    EXPECT_EQ(a.controllability_rank_depth1, 3);
    EXPECT_FALSE(a.integrable);
    // psi != 0: [g_phi, [g_phi, [g_psi, g_phi]]] adds forward motion without phi, all five directions at
    // depth 3; at psi = 0 that bracket vanishes (it carries tan psi) and depth 3 reaches four.
    EXPECT_EQ(a.accessible_dimension, psi == 0 ? 4 : 5);
  }
  Vec q(4);
  q << 1, 1, 2.2, 0;
  const ConstraintAnalysis u = analyze_problem("unicycle", {{"r", 0.8}}, q);
  ASSERT_TRUE(u.input_fields_analysed);
  Vec b(4);
  b << -0.8 * std::sin(2.2), 0.8 * std::cos(2.2), 0, 0;
  EXPECT_LT((u.brackets.col(0) - b).norm(), 1e-15);
  EXPECT_EQ(u.controllability_rank_depth1, 3);
  EXPECT_EQ(u.accessible_dimension, 4);
  // W_p singular (psi = pi/2): the fields are not defined; the note names the rank.
  Vec qs(5);
  qs << 0, 0, 0, kPi / 2, 0;
  const ConstraintAnalysis s = analyze_problem("kinematic_car", {}, qs);
  EXPECT_FALSE(s.input_fields_analysed);
  EXPECT_NE(s.input_fields_note.find("rank 2 < 3"), std::string::npos) << s.input_fields_note;
  // A problem without actuated coordinates prints nothing of it.
  EXPECT_TRUE(analyze_problem("chaplygin_sleigh", {}, std::nullopt).actuated.empty());
}

TEST(KinematicAnalysis, CliPrintsTheBracketAndWritesItWithOut) {
  clm::testing::ScratchDir dir("kinematic_analyze");
  const auto r = dir.run("analyze --problem kinematic_car --q0 0,0,0,0.3,0 --out car.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[g1, g2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("controllability    rank 3 of n = 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 with iterated brackets to depth 3: controllable"), std::string::npos) << r.out;
  H5::H5File f(dir / "car.h5", H5F_ACC_RDONLY);
  ASSERT_EQ(f.getNumObjs(), 1u);  // /analysis alone (issue 20, debt 3)
  H5::DataSet ds = f.openDataSet("/analysis/brackets");
  hsize_t dims[2];
  ds.getSpace().getSimpleExtentDims(dims);
  ASSERT_EQ(dims[0], 1u);
  ASSERT_EQ(dims[1], 5u);
  std::vector<double> br(5);
  ds.read(br.data(), H5::PredType::NATIVE_DOUBLE);
  EXPECT_NEAR(br[2], 0.3 / (std::cos(0.3) * std::cos(0.3)), 1e-15);
  H5::DataSet fields = f.openDataSet("/analysis/input_fields");
  fields.getSpace().getSimpleExtentDims(dims);
  EXPECT_EQ(dims[0], 2u);
  EXPECT_EQ(dims[1], 5u);
}
