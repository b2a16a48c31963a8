// The roller racer [KT-2001] under a prescribed joint angle (formulation prescribed_shape, [seed-000, eq. 2.16];
// issue 13 item 1). References: (a) the round trip: kkt on the same mechanism, driven by the actuator force
// F_a(t) that prescribed_shape computed (fed back as a generalized force on phi), follows the same motion to
// 1e-9; (b) the distance travelled over whole shape cycles from rest against the small-amplitude estimate
// x(N T) = pi^2 N^2 a^2 (I1 d2 - I2 d1) / ((m1 + m2) (d1 + d2)^2) (docs/findings.md, "Roller racer"), whose
// error is O(a^4): the fitted exponent of the measured error; (c) the energy balance E(t) - E(0) = the
// actuators' work; (d) an evaluation allocates nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <sstream>

#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "core/shape_schedule.hpp"
#include "forced_model.hpp"
#include "formulations/prescribed_shape_formulation.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

namespace clm {
namespace {

using testing::ForcedModel;
using testing::record_run;
using testing::RecordedRun;
using testing::RunSettings;

constexpr double kPi = std::numbers::pi;
constexpr int kPhi = 3;

ShapeSchedule joint_angle(const std::string& text) {
  ShapeSchedule s;
  s.coordinates = {kPhi};
  s.functions = {ShapeFunction::parse(text)};
  return s;
}

// Consistent start at rest (u = 0) with phi = 0, phid = a w: thetad = -d2 phid / (d1 + d2) keeps the rear axle
// from slipping (A qd = 0 at q = 0).
void start_at_rest(const Model& model, double phid0, Vec& q0, Vec& qd0) {
  std::map<std::string, double> p;
  for (const auto& [name, value] : model.parameters()) p[name] = value;
  q0 = Vec::Zero(4);
  qd0 = Vec::Zero(4);
  qd0[2] = -p["d2"] * phid0 / (p["d1"] + p["d2"]);
  qd0[3] = phid0;
}

RecordedRun prescribed(const std::shared_ptr<const Model>& model, double a, double w, double t_end,
                       double output_every, double rtol = 1e-12, const std::string& integrator = "dopri5") {
  RunSettings rs;
  rs.integrator = integrator;
  rs.dt = 2.5e-4;
  rs.t_end = t_end;
  rs.output_every = output_every;
  rs.rtol = rtol;
  rs.atol = rtol * 1e-2;
  std::ostringstream text;  // every digit: the start below uses phid(0) = a w
  text.precision(17);
  text << a << "*sin(" << w << "*t)";
  rs.options.shape = joint_angle(text.str());
  Vec q0, qd0;
  start_at_rest(*model, a * w, q0, qd0);
  RecordedRun run = record_run(model, "prescribed_shape", q0, qd0, rs);
  EXPECT_EQ(run.result.status, "ok") << run.result.message;
  return run;
}


TEST(RollerRacer, ProblemDeclaresItsShapeAndConstraints) {
  const auto model = make_model("roller_racer");
  EXPECT_EQ(model->n(), 4);
  EXPECT_EQ(model->m(), 2);
  ASSERT_EQ(model->actuated_coordinates(), std::vector<int>{kPhi});
  // A(q) annihilates the rigid rotation of the whole racer about the intersection of its axles' lines: at
  // q = (0, 0, 0, phi) the front axle line is x = 0, the rear one passes through r2 at heading phi.
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  const double d1 = 0.3, d2 = 0.5, phi = 0.4;
  Vec q(4);
  q << 0, 0, 0, phi;
  model->evaluate(0, q, Vec::Zero(4), kConstraintJacobian, *ws, terms);
  // Centre C = (0, yc) on the front axle line, on the rear axle line r2 + s n(phi):
  const double r2x = -d1 - d2 * std::cos(phi), r2y = -d2 * std::sin(phi);
  const double s = -r2x / (-std::sin(phi)), yc = r2y + s * std::cos(phi);
  // Unit rotation about C: velocity of (x, y) = k x (r1 - C) = (yc, 0), thetad = 1, phid = 0.
  Vec qd(4);
  qd << yc, 0, 1, 0;
  EXPECT_LT((terms.A * qd).norm(), 1e-15);
}

TEST(RollerRacer, RoundTripWithKktDrivenByTheActuatorForce) {
  // prescribed_shape with phi = a sin(w t) gives F_a(t); kkt with F_a(t) applied to phi from the same start
  // must follow the same motion. F_a is recorded every 1e-3 s at the step points of rk4 (dt = 2.5e-4) and fed
  // back through the not-a-knot spline (interpolation error ~ h^4 |F''''| / 384 ~ 1e-11 here). Measured: 7.4e-12
  // in q, 1.0e-11 in qd, 1.8e-11 in lambda (the issue asks for 1e-9).
  const auto model = make_model("roller_racer");
  const double a = 0.5, w = 2 * kPi, t_end = 2;
  const RecordedRun shaped = prescribed(model, a, w, t_end, 1e-3, 1e-13, "rk4");
  ASSERT_FALSE(shaped.obs.empty());
  auto forced = std::make_shared<ForcedModel>(model, std::vector<int>{kPhi},
                                              testing::recorded_actuator_forces(shaped, "clm_roller_racer_force"));
  RunSettings rs;
  rs.t_end = t_end;
  rs.output_every = 0.05;
  rs.rtol = 1e-13;
  rs.atol = 1e-15;
  Vec q0, qd0;
  start_at_rest(*model, a * w, q0, qd0);
  const RecordedRun kkt = record_run(forced, "kkt", q0, qd0, rs);
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  double dq = 0, dqd = 0, dlambda = 0;
  for (size_t k = 0; k < kkt.t.size(); ++k) {
    const size_t j = static_cast<size_t>(std::lround(kkt.t[k] / 1e-3));
    ASSERT_NEAR(shaped.t[j], kkt.t[k], 1e-12);
    dq = std::max(dq, (kkt.obs[k].q - shaped.obs[j].q).lpNorm<Eigen::Infinity>());
    dqd = std::max(dqd, (kkt.obs[k].qd - shaped.obs[j].qd).lpNorm<Eigen::Infinity>());
    dlambda = std::max(dlambda, (kkt.obs[k].lambda - shaped.obs[j].lambda).lpNorm<Eigen::Infinity>());
  }
  // The racer moved (x ~ 0.1 m), and both formulations agree on it.
  EXPECT_GT(shaped.obs.back().q[0], 0.05);
  EXPECT_LT(dq, 3e-11);  // measured 7.4e-12
  EXPECT_LT(dqd, 5e-11);  // 1.0e-11
  EXPECT_LT(dlambda, 1e-10);  // 1.8e-11
  std::cout << "round trip: |dq| = " << dq << ", |dqd| = " << dqd << ", |dlambda| = " << dlambda << "\n";
}

TEST(RollerRacer, DistancePerCycleMatchesTheSmallAmplitudeEstimateToOrderA4) {
  const auto model = make_model("roller_racer");
  const double m1 = 1, I1 = 0.2, d1 = 0.3, m2 = 0.5, I2 = 0.02, d2 = 0.5;
  const double g = (I1 * d2 - I2 * d1) / ((m1 + m2) * (d1 + d2) * (d1 + d2));
  const double w = 3, T = 2 * kPi / w;
  const int cycles = 2;
  std::vector<double> amplitudes, errors;
  for (double a : {0.05, 0.1, 0.2, 0.4}) {
    const RecordedRun run = prescribed(model, a, w, cycles * T, cycles * T / 4);
    const double x = run.obs.back().q[0];
    const double estimate = kPi * kPi * cycles * cycles * a * a * g;
    amplitudes.push_back(a);
    errors.push_back(std::abs(x - estimate));
    std::cout << "a = " << a << ": x(2T) = " << x << ", estimate " << estimate << ", relative error "
              << std::abs(x - estimate) / estimate << "\n";
    // Measured: relative error 0.19 a^2.
    EXPECT_NEAR(x / estimate, 1, 0.25 * a * a);
  }
  const LogLogFit fit = fit_loglog(amplitudes, errors);
  EXPECT_NEAR(fit.slope, 4, 0.15) << "error exponent";
  std::cout << "error ~ a^" << fit.slope << "\n";
}

TEST(RollerRacer, EnergyGainEqualsTheActuatorWork) {
  // E(t) - E(0) = int_0^t F_a . qd_a: the constraint forces do no work, the actuator does all of it. The work
  // is integrated by Simpson's rule on a 1e-3 grid (error ~ h^4 |P''''| t / 180; the trapezoidal rule's h^2
  // left 5e-6).
  const auto model = make_model("roller_racer");
  const RecordedRun run = prescribed(model, 0.5, 2 * kPi, 2, 1e-3);
  double work = 0, worst = 0;
  for (size_t k = 2; k < run.t.size(); k += 2) {
    const double h = 0.5 * (run.t[k] - run.t[k - 2]);
    work += h / 3 * (run.obs[k - 2].actuator_power + 4 * run.obs[k - 1].actuator_power + run.obs[k].actuator_power);
    worst = std::max(worst, std::abs(run.obs[k].energy - run.obs[0].energy - work));
  }
  EXPECT_GT(run.obs.back().energy - run.obs[0].energy, 1e-3);
  EXPECT_LT(worst, 5e-10);  // measured 5.5e-11
  std::cout << "energy balance: max |E - E0 - W| = " << worst << " (E gained " << run.obs.back().energy - run.obs[0].energy
            << " J)\n";
}

TEST(RollerRacer, PrescribedShapeEvaluationAllocatesNothing) {
  const auto model = make_model("roller_racer");
  FormulationOptions o;
  o.shape = joint_angle("0.3*sin(2*t) + 0.1*t^2");
  PrescribedShapeFormulation f(model, o);
  Vec q0, qd0, y0;
  start_at_rest(*model, 0.6, q0, qd0);
  f.initial_state(q0, qd0, y0);
  Vec dy(f.dimension());
  {
    testing::AllocationScope scope;
    for (int i = 0; i < 50; ++i) f.rhs(0.01 * i, y0, dy);
    EXPECT_EQ(scope.count(), 0u);
  }
  IntegratorSettings s;
  s.rtol = 1e-8;
  const auto counts = testing::allocations_of_runs(f, "dopri5", y0, s, 0.1, 1, 10);
  EXPECT_EQ(counts[0], counts[1]);
}

TEST(RollerRacer, RefusalsAreOneLine) {
  testing::ScratchDir dir("roller_racer");
  const std::string run = "run --problem roller_racer --integrator dopri5 --t-end 0.5 --out x.h5 ";
  // prescribed_shape needs the shape; a [shape] needs a formulation that prescribes it.
  testing::expect_one_line_error(dir.run(run + "--formulation prescribed_shape"), 1, {"[shape] has no phi"});
  testing::expect_one_line_error(dir.run(run + "--formulation kkt --shape 'phi=0.3*sin(t)'"), 1,
                                 {"formulation kkt does not prescribe a shape", "prescribed_shape"});
  testing::expect_one_line_error(dir.run(run + "--formulation prescribed_shape --shape 'theta=0.3*sin(t)'"), 1,
                                 {"'theta'", "actuated coordinates: phi"});
  testing::expect_one_line_error(dir.run(run + "--formulation prescribed_shape --shape 'phi=0.3*sin(t'"), 1,
                                 {"--shape phi", "malformed shape function"});
  testing::expect_one_line_error(
      dir.run("run --problem chaplygin_sleigh --formulation prescribed_shape --integrator dopri5 --out x.h5"), 1,
      {"no actuated (shape) coordinates"});
  // Samples that end before t_end.
  testing::write_text(dir / "phi.txt", "0 0\n0.1 0.01\n0.2 0.04\n0.3 0.09\n");
  testing::expect_one_line_error(dir.run(run + "--formulation prescribed_shape --shape phi=file:phi.txt"), 1,
                                 {"[0, 0.3]", "run.t_end"});
}

}  // namespace
}  // namespace clm
