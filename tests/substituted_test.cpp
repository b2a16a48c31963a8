// The `substituted` formulation ([seed-002]'s "Common Mistake", formulations/substituted_formulation.hpp):
// right for a holonomic constraint, wrong for the nonholonomic sleigh, and failing cleanly at the chart
// singularity of the elimination.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>

#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "recorded_run.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "formulations/substituted_formulation.hpp"

using namespace clm;

namespace {

struct Sample {
  double t;
  Vec q, qd, lambda;
};

struct RunRecord {
  SimulationResult result;
  std::vector<Sample> samples;
};

// One run with dopri5 at tight tolerance, sampled every `every`.
RunRecord run(const std::shared_ptr<const Model>& model, const std::string& formulation, const Vec& q0, const Vec& qd0,
        double t_end, double every = 0.05) {
  clm::testing::RunSettings rs;
  rs.t_end = t_end;
  rs.output_every = every;
  rs.atol = 1e-13;
  const clm::testing::RecordedRun r = clm::testing::record_run(model, formulation, q0, qd0, rs);
  RunRecord out;
  out.result = r.result;
  for (size_t k = 0; k < r.t.size(); ++k) out.samples.push_back({r.t[k], r.obs[k].q, r.obs[k].qd, r.obs[k].lambda});
  return out;
}

// Largest |difference| in (q, qd) over the common samples of two runs with the same grid.
double max_state_difference(const RunRecord& a, const RunRecord& b, double up_to = std::numeric_limits<double>::infinity()) {
  double worst = 0;
  const std::size_t k = std::min(a.samples.size(), b.samples.size());
  for (std::size_t i = 0; i < k; ++i) {
    if (a.samples[i].t > up_to + 1e-12) break;
    EXPECT_NEAR(a.samples[i].t, b.samples[i].t, 1e-12);
    worst = std::max(worst, (a.samples[i].q - b.samples[i].q).cwiseAbs().maxCoeff());
    worst = std::max(worst, (a.samples[i].qd - b.samples[i].qd).cwiseAbs().maxCoeff());
  }
  return worst;
}

// Sleigh initial data on the constraint: forward speed u along the blade, turning rate w.
void sleigh_initial(double x, double y, double theta, double u, double w, double b, Vec& q0, Vec& qd0) {
  q0.resize(3);
  qd0.resize(3);
  q0 << x, y, theta;
  qd0 << u * std::cos(theta) - b * w * std::sin(theta), u * std::sin(theta) + b * w * std::cos(theta), w;
}

// The substituted sleigh derived by hand (independently of formulations/substitution.hpp). Eliminating yd from
// A qd = -sin(th) xd + cos(th) yd - b thd = 0 gives yd = t xd + b s thd (t = tan th, s = sec th), and
//   L_c = m/2 (xd^2 + (t xd + b s thd)^2) + Ic/2 thd^2 = 1/2 v^T Mc v,  v = (xd, thd),
//   Mc = [[m s^2, m b t s], [m b t s, m b^2 s^2 + Ic]].
// Mc depends on th only, so Euler-Lagrange in (x, th): Mc vd + thd Mc' v - (0, 1/2 v^T Mc' v) = 0 with
//   Mc' = dMc/dth = [[2 m s^2 t, m b s (s^2 + t^2)], [m b s (s^2 + t^2), 2 m b^2 s^2 t]].
// State z = (x, y, th, xd, thd).
Eigen::Matrix<double, 5, 1> hand_substituted_sleigh(const Eigen::Matrix<double, 5, 1>& z, double m, double Ic,
                                                    double b) {
  const double th = z[2], xd = z[3], thd = z[4];
  const double t = std::tan(th), s = 1.0 / std::cos(th);
  Eigen::Matrix2d Mc, dMc;
  Mc << m * s * s, m * b * t * s, m * b * t * s, m * b * b * s * s + Ic;
  dMc << 2 * m * s * s * t, m * b * s * (s * s + t * t), m * b * s * (s * s + t * t), 2 * m * b * b * s * s * t;
  const Eigen::Vector2d v(xd, thd);
  Eigen::Vector2d rhs = -thd * (dMc * v);
  rhs[1] += 0.5 * v.dot(dMc * v);
  const Eigen::Vector2d vd = Mc.ldlt().solve(rhs);
  Eigen::Matrix<double, 5, 1> dz;
  dz << xd, t * xd + b * s * thd, thd, vd[0], vd[1];
  return dz;
}

std::string read_string_attribute(const H5::H5Object& obj, const std::string& name) {
  H5::Attribute a = obj.openAttribute(name);
  std::string value;
  a.read(a.getStrType(), value);
  return value;
}

std::vector<double> read_doubles(const H5::H5File& f, const std::string& path) {
  H5::DataSet ds = f.openDataSet(path);
  std::vector<double> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  return v;
}

}  // namespace

// Holonomic constraint: eliminating rd from r = L is Lagrange's method in the independent coordinate theta,
// so substituted and kkt compute the same motion ([seed-002]: "in the special case that the constraint is
// integrable, these equations agree"). Non-default parameters and a nonzero horizontal force.
TEST(Substituted, EqualsKktForPendulumPolar) {
  auto model = make_model("pendulum_polar", {{"m", 1.7}, {"L", 1.3}, {"g", 9.3}, {"fx", 0.8}});
  Vec q0(2), qd0(2);
  q0 << 1.3, 0.7;
  qd0 << 0.0, -1.1;
  const RunRecord sub = run(model, "substituted", q0, qd0, 5.0);
  const RunRecord kkt = run(model, "kkt", q0, qd0, 5.0);
  ASSERT_EQ(sub.result.status, "ok") << sub.result.message;
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  ASSERT_EQ(sub.samples.size(), 101u);
  ASSERT_EQ(kkt.samples.size(), 101u);
  const double diff = max_state_difference(sub, kkt);
  EXPECT_LT(diff, 1e-8);  // measured 1.2e-12
  // The pendulum actually swings (the comparison is not between two resting states).
  EXPECT_GT(std::abs(sub.samples.back().q[1] - q0[1]), 0.1);
  // No multiplier is defined for this formulation.
  EXPECT_TRUE(std::isnan(sub.samples.back().lambda[0]));
  // r stays at L: rd = 0 by construction.
  EXPECT_NEAR(sub.samples.back().q[0], 1.3, 1e-14);
}

// The refusal: problems that declare no eliminated velocities.
TEST(Substituted, RefusesProblemsWithoutElimination) {
  const auto& entry = formulation_registry().get("substituted");
  EXPECT_EQ(entry.refuses(*make_model("four_bar")), "substituted: problem four_bar declares no eliminated velocities (a "
                                                      "zoo header's kEliminated; a mechanism file cannot state them)");
  for (const char* name : {"chaplygin_sleigh", "rolling_disk", "skate_incline", "pendulum_polar"})
    EXPECT_EQ(entry.refuses(*make_model(name)), "") << name;
}

// The rhs does not touch the heap (fixed-size Jet buffers on the stack, buffers sized once).
TEST(Substituted, RhsDoesNotAllocate) {
  for (const char* name : {"chaplygin_sleigh", "rolling_disk", "skate_incline", "pendulum_polar"}) {
    auto model = make_model(name);
    auto f = formulation_registry().get("substituted").make(model, {});
    Vec q0, qd0, y, dy(f->dimension());
    model->default_initial(q0, qd0);
    f->initial_state(q0, qd0, y);
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 5; ++i) f->rhs(0.0, y, dy);
    EXPECT_EQ(scope.count(), 0u) << name;
  }
}

// Initial data shared by the sleigh tests (non-default parameters; theta stays well inside (-pi/2, pi/2)
// over 1 s, so the substituted chart is regular there).
constexpr double kM = 1.3, kIc = 0.4, kB = 0.25;

void sleigh_case(Vec& q0, Vec& qd0) { sleigh_initial(0.2, -0.1, -0.2, 0.9, 0.7, kB, q0, qd0); }

// Nonholonomic: substituting the constraint into L is the mistake. Measured: max |(q, qd)_sub - (q, qd)_kkt|
// over [0, 1] = 0.61 (4.5e-3 already by t = 0.1); asserted > 0.2, twenty times the issue's 1e-2.
TEST(Substituted, DiffersFromKktOnTheSleigh) {
  auto model = make_model("chaplygin_sleigh", {{"m", kM}, {"Ic", kIc}, {"b", kB}});
  Vec q0, qd0;
  sleigh_case(q0, qd0);
  const RunRecord sub = run(model, "substituted", q0, qd0, 1.0);
  const RunRecord kkt = run(model, "kkt", q0, qd0, 1.0);
  ASSERT_EQ(sub.result.status, "ok") << sub.result.message;
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  ASSERT_EQ(sub.samples.size(), 21u);
  const double diff = max_state_difference(sub, kkt);
  EXPECT_GT(diff, 0.2);
  // L_c is autonomous, so its energy (= T of the original L on the constraint) is conserved: the motion is
  // wrong but not sloppy.
  Observation obs;
  auto f = formulation_registry().get("substituted").make(model, {});
  Vec y_start, y_end(5);
  f->initial_state(q0, qd0, y_start);
  f->observe(0.0, y_start, obs);
  const double e0 = obs.energy;
  y_end << sub.samples.back().q, sub.samples.back().qd[0], sub.samples.back().qd[2];
  f->observe(1.0, y_end, obs);
  EXPECT_NEAR(obs.energy, e0, 1e-10 * e0);
  EXPECT_LT(obs.drift_velocity, 1e-14);
  // Both start from the same state and the substituted one keeps A qd = 0 by construction.
  EXPECT_LT(max_state_difference(sub, kkt, 0.0), 1e-15);
}

// The substituted sleigh agrees with an independent hand derivation of the same wrong equations (see
// hand_substituted_sleigh): the disagreement with kkt is the substitution mistake, not a bug. Hand
// equations integrated by classical RK4 with h = 1e-4 (error ~1e-13 here).
TEST(Substituted, SleighMatchesHandDerivedSubstitutedEquations) {
  auto model = make_model("chaplygin_sleigh", {{"m", kM}, {"Ic", kIc}, {"b", kB}});
  Vec q0, qd0;
  sleigh_case(q0, qd0);
  const RunRecord sub = run(model, "substituted", q0, qd0, 1.0);
  ASSERT_EQ(sub.result.status, "ok") << sub.result.message;
  Eigen::Matrix<double, 5, 1> z;
  z << q0[0], q0[1], q0[2], qd0[0], qd0[2];
  auto f = [](const Eigen::Matrix<double, 5, 1>& x) { return hand_substituted_sleigh(x, kM, kIc, kB); };
  const int steps_per_sample = 500;
  const double h = 0.05 / steps_per_sample;
  double worst = 0;
  for (std::size_t k = 0; k < sub.samples.size(); ++k) {
    if (k > 0) {
      for (int i = 0; i < steps_per_sample; ++i) {
        const auto k1 = f(z), k2 = f(z + 0.5 * h * k1), k3 = f(z + 0.5 * h * k2), k4 = f(z + h * k3);
        z += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      }
    }
    const auto dz = f(z);
    const Sample& s = sub.samples[k];
    ASSERT_NEAR(s.t, 0.05 * k, 1e-12);
    Vec hand_q(3), hand_qd(3);
    hand_q << z[0], z[1], z[2];
    hand_qd << z[3], dz[1], z[4];
    worst = std::max({worst, (s.q - hand_q).cwiseAbs().maxCoeff(), (s.qd - hand_qd).cwiseAbs().maxCoeff()});
  }
  // Measured 1.4e-12.
  EXPECT_LT(worst, 1e-8);
}

// Heading for the chart singularity: from theta0 = 1.2 turning at 1 rad/s the substituted sleigh reaches
// theta = pi/2 (cos(theta) = det A_D = 0) in finite time with thetad ~ 1.29 (measured t = 0.3108); the run
// ends "failed" with the chart message there, while kkt passes through theta = pi/2 without noticing.
TEST(Substituted, SleighFailsAtTheChartSingularity) {
  auto model = make_model("chaplygin_sleigh", {{"m", kM}, {"Ic", kIc}, {"b", kB}});
  Vec q0, qd0;
  sleigh_initial(0, 0, 1.2, 0.5, 1.0, kB, q0, qd0);
  const RunRecord sub = run(model, "substituted", q0, qd0, 2.0, 0.01);
  EXPECT_EQ(sub.result.status, "failed");
  EXPECT_NE(sub.result.message.find("substituted: chart singularity: the eliminated velocities"), std::string::npos)
      << sub.result.message;
  EXPECT_NE(sub.result.message.find("cos(theta) = "), std::string::npos) << sub.result.message;
  EXPECT_NEAR(sub.result.t_reached, 0.3108, 2e-3);
  ASSERT_FALSE(sub.samples.empty());
  EXPECT_LE(sub.samples.back().t, sub.result.t_reached);
  EXPECT_GT(sub.samples.back().t, sub.result.t_reached - 0.01);
  EXPECT_NEAR(sub.samples.back().q[2], M_PI / 2, 2e-2);
  const RunRecord kkt = run(model, "kkt", q0, qd0, 2.0, 0.01);
  EXPECT_EQ(kkt.result.status, "ok") << kkt.result.message;
  EXPECT_GT(kkt.samples.back().q[2], M_PI / 2 + 0.1);
}

// The vertical rolling disk eliminating xd and yd (two rows, A_D = 1): L_c = (M R^2 + I)/2 thetad^2 +
// J/2 phid^2 does not depend on the dropped coordinates at all, so here the mistake happens to be harmless
// and substituted equals kkt (measured 7.0e-12 over 3 s; non-default parameters and initial data).
TEST(Substituted, EqualsKktForTheRollingDisk) {
  auto model = make_model("rolling_disk", {{"M", 1.7}, {"R", 0.4}, {"I", 0.09}, {"J", 0.05}});
  Vec q0(4), qd0(4);
  const double R = 0.4, thetad = 1.3, phi = 0.6, phid = -0.7;
  q0 << 0.3, -0.2, 0.1, phi;
  qd0 << R * thetad * std::cos(phi), R * thetad * std::sin(phi), thetad, phid;
  const RunRecord sub = run(model, "substituted", q0, qd0, 3.0);
  const RunRecord kkt = run(model, "kkt", q0, qd0, 3.0);
  ASSERT_EQ(sub.result.status, "ok") << sub.result.message;
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  ASSERT_EQ(sub.samples.size(), 61u);
  EXPECT_LT(max_state_difference(sub, kkt), 1e-8);
  EXPECT_GT(std::abs(sub.samples.back().q[0] - q0[0]), 0.1);
}

// A step that jumps across the singular set (det A_D changes sign, chart_rcond never small at the step's
// points) is caught after the step; the extra chart_rcond is |cos(theta)| / max(|sin|, |cos|, b) here.
TEST(Substituted, StepAcrossTheSingularityIsCaught) {
  auto model = make_model("chaplygin_sleigh", {{"m", kM}, {"Ic", kIc}, {"b", kB}});
  auto f = formulation_registry().get("substituted").make(model, {});
  Vec q0, qd0, y;
  sleigh_initial(0.1, 0.2, 1.2, 0.5, 1.0, kB, q0, qd0);
  f->initial_state(q0, qd0, y);
  Observation obs;
  f->observe(0.0, y, obs);
  ASSERT_EQ(obs.extras.size(), 1u);
  EXPECT_NEAR(obs.extras[0], std::cos(1.2) / std::sin(1.2), 1e-14);
  EXPECT_NEAR(obs.qd[1], qd0[1], 1e-14);  // yd recovered from (xd, thetad) through the chart
  Vec same = y;
  EXPECT_FALSE(f->after_step(0.0, same));
  Vec across = y;
  across[2] = 1.7;  // cos(theta) < 0: the other side of theta = pi/2
  try {
    f->after_step(0.1, across);
    FAIL() << "no failure across the chart singularity";
  } catch (const NumericalFailure& e) {
    EXPECT_NE(std::string(e.what()).find("substituted: chart singularity"), std::string::npos) << e.what();
  }
}

// End to end through the CLI: the failed run is recorded, with what was computed up to the failure.
TEST(Substituted, CliRunRecordsTheChartFailure) {
  using clm::testing::ScratchDir;
  ScratchDir dir("substituted_chart");
  Vec q0, qd0;
  sleigh_initial(0, 0, 1.2, 0.5, 1.0, kB, q0, qd0);
  std::ostringstream args;
  args.precision(17);
  args << "run --problem chaplygin_sleigh --formulation substituted --integrator dopri5 --t-end 2 --rtol 1e-10 "
          "--atol 1e-12 --output-every 0.01 --param m=1.3 --param Ic=0.4 --param b=0.25 --q0 "
       << q0[0] << ',' << q0[1] << ',' << q0[2] << " --qd0 " << qd0[0] << ',' << qd0[1] << ',' << qd0[2]
       << " --out s.h5";
  const auto r = dir.run(args.str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "s.h5"));
  H5::H5File f(dir / "s.h5", H5F_ACC_RDONLY);
  const std::string run_path = "/runs/chaplygin_sleigh_substituted_dopri5";
  H5::Group g = f.openGroup(run_path);
  EXPECT_EQ(read_string_attribute(g, "status"), "failed");
  EXPECT_NE(read_string_attribute(g, "message").find("substituted: chart singularity"), std::string::npos);
  const std::vector<double> t = read_doubles(f, run_path + "/t");
  ASSERT_GE(t.size(), 30u);
  EXPECT_EQ(t.front(), 0.0);
  EXPECT_NEAR(t.back(), 0.31, 1e-9);  // grid 0.01, failure at t = 0.3108
  const std::vector<double> q = read_doubles(f, run_path + "/q");
  ASSERT_EQ(q.size(), 3 * t.size());
  EXPECT_NEAR(q[3 * (t.size() - 1) + 2], M_PI / 2, 2e-2);
  const std::vector<double> lambda = read_doubles(f, run_path + "/lambda");
  ASSERT_EQ(lambda.size(), t.size());
  EXPECT_TRUE(std::isnan(lambda.back()));
}

// A problem that declares no eliminated velocities is refused with one clear line and exit code 1.
TEST(Substituted, CliRefusesFourBar) {
  using clm::testing::ScratchDir;
  ScratchDir dir("substituted_refuse");
  const auto r = dir.run("run --problem four_bar --formulation substituted --integrator rk4 --t-end 0.1 --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"substituted: problem four_bar declares no eliminated velocities"});
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));
}
