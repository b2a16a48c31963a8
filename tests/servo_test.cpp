// The servo formulation (formulations/servo_formulation.hpp): B = A is kkt (sleigh, slider-crank, Suslov);
// B != A against independent derivations (the sleigh pushed sideways at its centre of mass: a closed form
// derived here; Suslov's body with a control torque along n: Euler's equations with the servo torque written
// by hand and integrated by RK4); the realizability condition of [seed-004] refused at q0 and failing along
// a run; no heap allocation per step.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "clmbench_process.hpp"
#include "core/autodiff_model.hpp"
#include "core/problem_registry.hpp"
#include "runs/problem_capabilities.hpp"
#include "formulations/servo_formulation.hpp"
#include "problems/suslov.hpp"
#include "recorded_run.hpp"
#include "run_allocations.hpp"

using namespace clm;

namespace {

clm::testing::RecordedRun run(const std::shared_ptr<const Model>& model, const std::string& formulation,
                              const Vec& q0, const Vec& qd0, clm::testing::RunSettings rs) {
  auto r = clm::testing::record_run(model, formulation, q0, qd0, rs);
  EXPECT_EQ(r.result.status, "ok") << r.result.message;
  return r;
}

struct Difference {
  double q = 0, qd = 0, lambda = 0;
};
Difference max_difference(const clm::testing::RecordedRun& a, const clm::testing::RecordedRun& b) {
  Difference d;
  EXPECT_EQ(a.t.size(), b.t.size());
  for (size_t k = 0; k < std::min(a.t.size(), b.t.size()); ++k) {
    d.q = std::max(d.q, (a.obs[k].q - b.obs[k].q).lpNorm<Eigen::Infinity>());
    d.qd = std::max(d.qd, (a.obs[k].qd - b.obs[k].qd).lpNorm<Eigen::Infinity>());
    d.lambda = std::max(d.lambda, (a.obs[k].lambda - b.obs[k].lambda).lpNorm<Eigen::Infinity>());
  }
  return d;
}

std::string refusal(const std::shared_ptr<const Model>& model, const FormulationOptions& o) {
  try {
    auto f = formulation_registry().get("servo").make(model, o);
    Vec q0(model->n()), qd0(model->n()), y;
    model->default_initial(q0, qd0);
    f->initial_state(q0, qd0, y);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

// B = A: the same equations as kkt, solved another way. rk4 at a fixed step takes the same steps in both, so
// the trajectories agree to rounding; the realizability is 1.
TEST(Servo, IdealReactionEqualsKkt) {
  struct Case {
    std::string problem;
    std::map<std::string, double> params;
    double t_end;
    double baumgarte = 0;  // alpha = beta, read by kkt and servo alike
  };
  const std::vector<Case> cases = {{"chaplygin_sleigh", {{"b", 0.4}, {"Ic", 0.3}}, 5.0},
                                   {"slider_crank", {}, 2.0},
                                   {"slider_crank", {}, 2.0, 5.0},
                                   {"pendulum_polar", {{"fx", 0.7}}, 3.0},
                                   {"suslov", {{"l1", 0.3}, {"I12", 0.2}}, 5.0}};
  for (const auto& c : cases) {
    auto model = make_model(c.problem, c.params);
    Vec q0(model->n()), qd0(model->n());
    model->default_initial(q0, qd0);
    clm::testing::RunSettings rs;
    rs.integrator = "rk4";
    rs.dt = 1e-3;
    rs.t_end = c.t_end;
    rs.output_every = 0.1;
    rs.options.baumgarte_alpha = rs.options.baumgarte_beta = c.baumgarte;
    const auto kkt = run(model, "kkt", q0, qd0, rs);
    const auto servo = run(model, "servo", q0, qd0, rs);
    const Difference d = max_difference(kkt, servo);
    double lambda_scale = 0, realizability_err = 0;
    for (size_t k = 0; k < servo.obs.size(); ++k) {
      lambda_scale = std::max(lambda_scale, kkt.obs[k].lambda.lpNorm<Eigen::Infinity>());
      ASSERT_EQ(servo.obs[k].extras.size(), 1u);
      realizability_err = std::max(realizability_err, std::abs(servo.obs[k].extras[0] - 1));
    }
    // Observed (rounding only): at most 7e-14 in q, 1.9e-13 in qd, 7.6e-13 / 12 in lambda (suslov, slider_crank).
    EXPECT_LT(d.q, 1e-12) << c.problem;
    EXPECT_LT(d.qd, 1e-12) << c.problem;
    EXPECT_LT(d.lambda, 1e-12 * std::max(1.0, lambda_scale)) << c.problem;
    EXPECT_LT(realizability_err, 1e-13) << c.problem;
    std::printf("servo B = A vs kkt, %s (Baumgarte %g): |dq| %.1e |dqd| %.1e |dlambda| %.1e (scale %.2g)\n",
                c.problem.c_str(), c.baumgarte, d.q, d.qd, d.lambda, lambda_scale);
  }
}

// Sleigh with the servo force at the centre of mass, B = (-sin theta, cos theta, 0) ("lateral_com"), derived
// by hand: m xdd = -lambda sin(theta), m ydd = lambda cos(theta), Ic thetadd = 0, so w = thetad is constant;
// with u = xd cos(theta) + yd sin(theta) and v = -xd sin(theta) + yd cos(theta) the constraint keeps v = b w,
// so u' = w v = b w^2 and 0 = v' = lambda/m - w u: u = u0 + b w^2 t, lambda = m w u, theta = theta0 + w t,
// and x, y by integrating u e1 + v e2 in closed form (integration by parts, w != 0):
//   x = x0 + u0 (s - s0)/w + a (t s/w + (c - c0)/w^2) + v (c - c0)/w,
//   y = y0 - u0 (c - c0)/w + a (-t c/w + (s - s0)/w^2) + v (s - s0)/w,   a = b w^2, c = cos(theta), s = sin(theta).
TEST(Servo, SleighPushedAtCentreOfMassFollowsItsClosedForm) {
  const double m = 1.7, Ic = 0.4, b = 0.35;
  auto model = make_model("chaplygin_sleigh", {{"m", m}, {"Ic", Ic}, {"b", b}});
  const double th0 = 0.3, u0 = -0.4, w = 0.9;  // starting backwards: u changes sign on the way
  Vec q0(3), qd0(3);
  q0 << 0.2, -0.1, th0;
  qd0 << u0 * std::cos(th0) - b * w * std::sin(th0), u0 * std::sin(th0) + b * w * std::cos(th0), w;
  clm::testing::RunSettings rs;
  rs.t_end = 6;
  rs.output_every = 0.1;
  rs.options.servo_direction = "lateral_com";
  const auto servo = run(model, "servo", q0, qd0, rs);
  const auto kkt = run(model, "kkt", q0, qd0, rs);
  double eq = 0, eqd = 0, el = 0, ee = 0, lambda_scale = 0;
  const double a = b * w * w, v = b * w, c0 = std::cos(th0), s0 = std::sin(th0);
  for (size_t k = 0; k < servo.t.size(); ++k) {
    const double t = servo.t[k], th = th0 + w * t, c = std::cos(th), s = std::sin(th), u = u0 + a * t;
    Vec q(3), qd(3);
    q << q0[0] + u0 * (s - s0) / w + a * (t * s / w + (c - c0) / (w * w)) + v * (c - c0) / w,
        q0[1] - u0 * (c - c0) / w + a * (-t * c / w + (s - s0) / (w * w)) + v * (s - s0) / w, th;
    qd << u * c - v * s, u * s + v * c, w;
    const auto& o = servo.obs[k];
    eq = std::max(eq, (o.q - q).lpNorm<Eigen::Infinity>());
    eqd = std::max(eqd, (o.qd - qd).lpNorm<Eigen::Infinity>());
    el = std::max(el, std::abs(o.lambda[0] - m * w * u));
    lambda_scale = std::max(lambda_scale, std::abs(m * w * u));
    // The servo force does work: E = m (u^2 + v^2)/2 + Ic w^2/2 grows with u^2.
    ee = std::max(ee, std::abs(o.energy - 0.5 * (m * (u * u + v * v) + Ic * w * w)));
  }
  // Observed: 1.5e-13, 1.8e-13, 2.1e-13, 2.3e-13 (dopri5 at rtol 1e-12).
  EXPECT_LT(eq, 2e-12);
  EXPECT_LT(eqd, 2e-12);
  EXPECT_LT(el, 2e-12 * lambda_scale);
  EXPECT_LT(ee, 2e-12);
  // ... and it is not the nonholonomic motion (which turns the sleigh to run forwards at constant energy).
  const Difference d = max_difference(kkt, servo);
  EXPECT_GT(d.q, 0.5);
  // realizability: |A M^-1 B^T| / sqrt(A M^-1 A^T B M^-1 B^T) = (1/m) / sqrt((1/m + b^2/Ic) / m).
  const double rho = (1 / m) / std::sqrt((1 / m + b * b / Ic) / m);
  EXPECT_NEAR(servo.obs.back().extras[0], rho, 1e-14);
  std::printf("servo sleigh lateral_com vs closed form: |dq| %.1e |dqd| %.1e |dlambda| %.1e |dE| %.1e; vs kkt %.2f\n",
              eq, eqd, el, ee, d.q);
}

// Suslov's body with the control torque lambda n, n != l (the seed's servo version): Euler's equations
//   I omegad = -omega x I omega + lambda n,  l . omegad = 0  =>  lambda = l . I^-1 (omega x I omega) / (l . I^-1 n)
// integrated by classical RK4 at h = 1e-4 here, against servo + dopri5 in Euler angles.
TEST(Servo, SuslovControlTorqueMatchesEulerEquations) {
  Eigen::Matrix3d I;
  I << 2.1, 0.15, 0.3, 0.15, 2.9, -0.25, 0.3, -0.25, 3.7;
  const Eigen::Vector3d l(0.2, -0.3, 1.0), n(0.5, 0.4, 1.0);
  auto model = make_model("suslov", {{"I11", I(0, 0)}, {"I22", I(1, 1)}, {"I33", I(2, 2)}, {"I12", I(0, 1)},
                                     {"I13", I(0, 2)}, {"I23", I(1, 2)}, {"l1", l[0]}, {"l2", l[1]}, {"l3", l[2]},
                                     {"n1", n[0]}, {"n2", n[1]}, {"n3", n[2]}});
  Vec q0(3), qd0(3);
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 4;
  rs.output_every = 0.5;
  rs.rtol = 1e-13;
  rs.atol = 1e-15;
  rs.options.servo_direction = "control_torque";
  const auto servo = run(model, "servo", q0, qd0, rs);

  const Eigen::Matrix3d Iinv = I.inverse();
  auto lambda_of = [&](const Eigen::Vector3d& w) {
    return l.dot(Iinv * w.cross(I * w)) / l.dot(Iinv * n);
  };
  auto f = [&](const Eigen::Vector3d& w) -> Eigen::Vector3d {
    return Iinv * (-w.cross(I * w) + lambda_of(w) * n);
  };
  Eigen::Vector3d w = Suslov::body_angular_velocity(q0, qd0);
  const double h = 1e-4;
  double t = 0, err = 0, err_lambda = 0, power_seen = 0;
  for (size_t k = 0; k < servo.t.size(); ++k) {
    while (t < servo.t[k] - h / 2) {
      const Eigen::Vector3d k1 = f(w), k2 = f(w + h / 2 * k1), k3 = f(w + h / 2 * k2), k4 = f(w + h * k3);
      w += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      t += h;
    }
    const auto& o = servo.obs[k];
    err = std::max(err, (Suslov::body_angular_velocity(o.q, o.qd) - w).norm());
    err_lambda = std::max(err_lambda, std::abs(o.lambda[0] - lambda_of(w)));
    power_seen = std::max(power_seen, std::abs(lambda_of(w) * n.dot(w)));
  }
  // Observed: 1.6e-13 and 1e-13 (dopri5 at rtol 1e-13; RK4's own error at h = 1e-4 is below 1e-15).
  EXPECT_LT(err, 2e-12);
  EXPECT_LT(err_lambda, 2e-12);
  EXPECT_GT(power_seen, 1e-2);  // the control torque does work: not Suslov's conservative motion
  std::printf("servo suslov control_torque vs Euler equations: |domega| %.1e |dlambda| %.1e\n", err, err_lambda);
}

// Realizability fails at q0: refused in one line. For Suslov A M^-1 B^T = l . I^-1 n, so it fails when l is
// orthogonal to I^-1 n; [seed-004]'s "l orthogonal to n" is the isotropic case I = identity.
TEST(Servo, RefusesUnrealizableServoAtInitialConfiguration) {
  FormulationOptions o;
  o.servo_direction = "control_torque";
  {
    // n = I v with v orthogonal to l.
    auto model = make_model("suslov", {{"I13", 0.4}, {"I23", -0.3}, {"l1", 0.0}, {"l2", 0.0}, {"l3", 1.0},
                                       {"n1", 2.0}, {"n2", 0.0}, {"n3", 0.4}});  // n = I (1, 0, 0)
    const std::string msg = refusal(model, o);
    EXPECT_NE(msg.find("realizability condition A M^-1 B^T != 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at q0"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  // l orthogonal to n: refused for the isotropic body, accepted for the default one (l . I^-1 n != 0).
  EXPECT_NE(refusal(make_model("suslov", {{"I11", 1}, {"I22", 1}, {"I33", 1}, {"I13", 0}, {"I23", 0}, {"n1", 1},
                                          {"n3", 0}}),
                    o)
                .find("realizability"),
            std::string::npos);
  EXPECT_EQ(refusal(make_model("suslov", {{"n1", 1}, {"n3", 0}}), o), "accepted");
  // B = 0: the control force cannot act at all.
  EXPECT_NE(refusal(make_model("suslov", {{"n3", 0}}), o).find("servo_realizability = 0"), std::string::npos);
  // Unknown field: named with the ones there are.
  o.servo_direction = "thruster";
  const std::string msg = refusal(make_model("chaplygin_sleigh", {}), o);
  EXPECT_NE(msg.find("no servo direction 'thruster'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("constraint, lateral_com"), std::string::npos) << msg;
  EXPECT_NE(refusal(make_model("pendulum_polar", {}), o).find("(formulation.servo_direction: constraint)"),
            std::string::npos);
}

namespace {
// A point in the plane kept on the line y = const (A = (0, 1)) by a force along B = (1, exp(-x)): as x grows
// the force turns away from the constraint normal and the realizability exp(-x)/sqrt(1 + exp(-2x)) vanishes.
struct FadingServo {
  static constexpr const char* kName = "fading_servo";
  static constexpr const char* kDescription = "test problem";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr std::array<ParameterSpec<FadingServo>, 0> kParameters{};
  static constexpr std::array<const char*, 1> kServoDirections = {"fading"};
  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {}
  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    M.setIdentity();
  }
  template <class T>
  T potential(const VecN<T, 2>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 2>&, MatN<T, 1, 2>& A) const {
    A << T(0.0), T(1.0);
  }
  template <class T>
  void servo_direction(const VecN<T, 2>& q, MatN<T, 1, 2>& B, int) const {
    using std::exp;
    B << T(1.0), exp(-q[0]);
  }
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0, 0;
    qd0 << 1, 0;
  }
};
}  // namespace

// x = t exactly (lambda = 0); the run ends "failed" naming the condition once exp(-t) ~ 1e-8, t ~ 18.42
// (rk4 at dt = 0.01: the last stage of the failing step is at most 0.01 past it).
TEST(Servo, RunFailsWhenRealizabilityVanishes) {
  auto model = make_model_with_capabilities(FadingServo{});
  clm::testing::RunSettings rs;
  rs.integrator = "rk4";
  rs.dt = 0.01;
  rs.t_end = 30;
  rs.output_every = 1;
  rs.options.servo_direction = "fading";
  Vec q0(2), qd0(2);
  model->default_initial(q0, qd0);
  const auto r = clm::testing::record_run(model, "servo", q0, qd0, rs);
  EXPECT_EQ(r.result.status, "failed");
  EXPECT_NE(r.result.message.find("servo_realizability"), std::string::npos) << r.result.message;
  const double crossing = 0.5 * std::log(1e16 - 1);  // exp(-x)/sqrt(1 + exp(-2x)) = 1e-8
  EXPECT_GT(r.result.t_reached, crossing - 0.011);
  EXPECT_LT(r.result.t_reached, crossing);
  // Logged along the run: exp(-x)/sqrt(1 + exp(-2x)) at x = t.
  for (size_t k = 0; k < r.t.size(); ++k)
    EXPECT_NEAR(r.obs[k].extras[0], std::exp(-r.t[k]) / std::sqrt(1 + std::exp(-2 * r.t[k])), 1e-12);
}

// Everything is allocated up front: a ten times longer run allocates no more (sleigh lateral_com, Suslov).
TEST(Servo, NoHeapAllocationPerStep) {
  for (const auto& [problem, direction] : std::vector<std::pair<std::string, std::string>>{
           {"chaplygin_sleigh", "lateral_com"}, {"suslov", "control_torque"}, {"slider_crank", "constraint"}}) {
    auto model = make_model(problem, problem == "suslov" ? std::map<std::string, double>{{"n1", 0.5}}
                                                         : std::map<std::string, double>{});
    FormulationOptions o;
    o.servo_direction = direction;
    auto f = formulation_registry().get("servo").make(model, o);
    Vec q0(model->n()), qd0(model->n()), y0;
    model->default_initial(q0, qd0);
    f->initial_state(q0, qd0, y0);
    IntegratorSettings s;
    s.dt = 1e-3;
    const auto counts = clm::testing::allocations_of_runs(*f, "rk4", y0, s, 0.01, 0.05, 0.5);
    EXPECT_EQ(counts[0], counts[1]) << problem;
  }
}

// The CLI: the refusal is one line with exit code 1 before anything runs.
TEST(Servo, CliRefusesUnrealizableServoInOneLine) {
  clm::testing::ScratchDir dir("servo");
  const auto r = dir.run(
      "run --problem suslov --formulation servo --integrator dopri5 --t-end 1 --servo-direction control_torque "
      "--param I11=1 --param I22=1 --param I33=1 --param I13=0 --param I23=0 --param n1=1 --param n3=0 --out x.h5");
  clm::testing::expect_one_line_error(r, 1, {"realizability", "suslov", "control_torque", "at q0"});
}

// With B != A the reference is a servo run with the same field, not the problem's (nonholonomic) closed form.
TEST(Servo, ReferenceOfAServoRunIsAServoRun) {
  clm::testing::ScratchDir dir("servo_reference");
  const auto r = dir.run(
      "run --problem chaplygin_sleigh --formulation servo --servo-direction lateral_com --integrator dopri5 "
      "--t-end 2 --rtol 1e-8 --atol 1e-10 --reference --out s.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("reference run servo/dopri5"), std::string::npos) << r.out << r.err;
  const auto info = dir.run("info s.h5");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("reference_run"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("closed_form"), std::string::npos) << info.out;
}
