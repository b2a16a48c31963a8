// Rigid bodies and rolling contacts as data (issue 41; mechanism_files/rigid_bodies.hpp, docs/mechanism-files.md
// "Rigid bodies"): mechanism files that state bodies by mass, inertia, centre of mass and orientation, and rolling
// contacts, against independent references: the zoo's rolling disk (its hand-written terms), the hand-written heavy
// top files (T in Euler angles and in a quaternion), Chaplygin's ball's classical integrals (the energy and the
// angular momentum about the contact point, conserved in space), and, in python/tests/test_run.py, sympy's
// KanesMethod rolling disc. Errors are one line FILE:LINE:COLUMN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "input_error_of.hpp"
#include "run_spec_for.hpp"
#include "core/problem_registry.hpp"
#include "mechanism_files/export_header.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace clm {
namespace {

const std::string kSource = CLMBENCH_SOURCE_DIR;
const std::string kMechanisms = kSource + "/mechanisms/";

RunRecord run(const std::string& problem, const std::string& integrator, double t_end, double tol) {
  RunSpec s = clm::testing::spec_for(problem, "kkt", integrator);
  s.t_end = t_end;
  s.output_every = t_end / 20;
  s.rtol = s.atol = tol;
  RunRecord r = clm::testing::execute(s, /*keep_samples=*/true);
  EXPECT_EQ(r.status, "ok") << problem << ": " << r.message;
  return r;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) worst = std::max(worst, std::abs(a[k] - b[k]));
  return worst;
}

// The zoo's rolling disk written as a body (Euler ZYX, inertia (J, I, J)) and a rolling contact: the same terms
// (T = M/2 |v|^2 + (I thetad^2 + J phid^2)/2, the rows xd = R cos(phi) thetad, yd = R sin(phi) thetad) by another
// route, so the same motion and multipliers to round-off.
TEST(RigidBodies, TheZoosRollingDiskWrittenAsABody) {
  const RunRecord zoo = run("rolling_disk", "dopri5", 3, 1e-10);
  const RunRecord body = run(kSource + "/tests/data/mechanisms/rolling_disk_bodies.toml", "dopri5", 3, 1e-10);
  const double dq = max_difference(body.q, zoo.q), dl = max_difference(body.lambda, zoo.lambda);
  std::printf("rolling disk as a body: max |q - q_zoo| %.2e, max |lambda - lambda_zoo| %.2e\n", dq, dl);
  EXPECT_LE(dq, 1e-14);  // measured 0 (the same doubles)
  EXPECT_LE(dl, 1e-14);
  EXPECT_EQ(body.stats.steps, zoo.stats.steps);
}

// A planar body ({ angle = "theta" }, one moment about the normal): the zoo's Chaplygin sleigh, its blade row written
// with the body's velocity (sleigh.vx, sleigh.vy, sleigh.wz): the zoo's motion and multiplier to round-off.
TEST(RigidBodies, TheZoosSleighWrittenAsAPlanarBody) {
  const RunRecord zoo = run("chaplygin_sleigh", "dopri5", 5, 1e-10);
  const RunRecord body = run(kSource + "/tests/data/mechanisms/chaplygin_sleigh_body.toml", "dopri5", 5, 1e-10);
  const double dq = max_difference(body.q, zoo.q), dl = max_difference(body.lambda, zoo.lambda);
  std::printf("sleigh as a planar body: max |q - q_zoo| %.2e, max |lambda - lambda_zoo| %.2e\n", dq, dl);
  EXPECT_LE(dq, 1e-14);
  EXPECT_LE(dl, 1e-14);
}

// The heavy top as a body (the centre of mass l R e3, the inertia about it I - m l^2 across, gravity) against the
// hand-written files of the same top: in ZXZ Euler angles and in a unit quaternion; the body's angular velocity
// against the Euler-angle formula written by hand; and the two bodies' centres of mass against each other.
TEST(RigidBodies, TheHeavyTopAsABodyMovesAsTheHandWrittenTop) {
  const RunRecord euler = run(kMechanisms + "heavy_top_body.toml", "dop853", 3, 1e-12);
  const RunRecord hand = run(kMechanisms + "heavy_top_euler.toml", "dop853", 3, 1e-12);
  const RunRecord quaternion = run(kMechanisms + "heavy_top_body_quaternion.toml", "dop853", 3, 1e-12);
  const RunRecord hand_quaternion = run(kMechanisms + "heavy_top_quaternion.toml", "dop853", 3, 1e-12);
  const double de = max_difference(euler.q, hand.q), dq = max_difference(quaternion.q, hand_quaternion.q);
  const double dp = max_difference(euler.points, quaternion.points);
  // Omega = (phid sin(theta) sin(psi) + thetad cos(psi), phid sin(theta) cos(psi) - thetad sin(psi),
  //          phid cos(theta) + psid) at every sample.
  double dw = 0;
  for (std::size_t k = 0; k < euler.samples(); ++k) {
    const double th = euler.q[3 * k + 1], ps = euler.q[3 * k + 2];
    const double pd = euler.qd[3 * k], td = euler.qd[3 * k + 1], sd = euler.qd[3 * k + 2];
    const double w[3] = {pd * std::sin(th) * std::sin(ps) + td * std::cos(ps),
                         pd * std::sin(th) * std::cos(ps) - td * std::sin(ps), pd * std::cos(th) + sd};
    for (int i = 0; i < 3; ++i) dw = std::max(dw, std::abs(euler.body_velocities[3 * k + i] - w[i]));
  }
  std::printf("heavy top as a body: Euler angles vs the hand-written T %.2e, quaternion vs hand-written %.2e, "
              "centre of mass Euler vs quaternion body %.2e, Omega vs its formula %.2e\n",
              de, dq, dp, dw);
  // Measured 7.1e-15 (the same steps), 3.2e-13 and 8.7e-12 (other coordinates: dop853's error at rtol 1e-12).
  EXPECT_LT(de, 3e-14);
  EXPECT_LT(dq, 1.5e-12);
  EXPECT_LT(dp, 3e-11);
  EXPECT_LT(dw, 1e-13);  // the same quantity at the same state
  EXPECT_EQ(euler.point_columns, (std::vector<std::string>{"centre_of_mass.x", "centre_of_mass.y", "centre_of_mass.z"}));
}

// Chaplygin's ball (a quaternion body, the norm row, two rolling rows: mixed): its energy and its angular momentum
// about the contact point K = I omega + m r^2 (omega_x, omega_y, 0) ([body_velocities] Kx, Ky, Kz) stay constant,
// while the ball wanders (the centre moves by metres over 20 s).
TEST(RigidBodies, ChaplyginsBallKeepsItsIntegrals) {
  const RunRecord r = run(kMechanisms + "chaplygin_ball.toml", "dop853", 20, 1e-12);
  ASSERT_EQ(r.body_velocity_columns, (std::vector<std::string>{"Kx", "Ky", "Kz"}));
  double dK = 0, travel = 0;
  for (std::size_t k = 0; k < r.samples(); ++k) {
    for (int i = 0; i < 3; ++i) dK = std::max(dK, std::abs(r.body_velocities[3 * k + i] - r.body_velocities[i]));
    travel = std::max(travel, std::hypot(r.q[6 * k], r.q[6 * k + 1]));
  }
  std::printf("Chaplygin's ball: K(0) = (%.3f, %.3f, %.3f), max |K - K(0)| %.2e, max rel energy error %.2e, "
              "travel %.2f m\n",
              r.body_velocities[0], r.body_velocities[1], r.body_velocities[2], dK, r.summary.max_rel_energy_error,
              travel);
  EXPECT_NEAR(r.body_velocities[0], 0.08 + 0.25, 1e-15);  // I1 Omega_1 + m r^2 omega_x at the start
  EXPECT_NEAR(r.body_velocities[1], 0.10 * 0.5 + 0.25 * 0.5, 1e-15);
  EXPECT_NEAR(r.body_velocities[2], 0.12 * 2, 1e-15);
  EXPECT_LT(dK, 2e-11);  // measured 4.7e-12 and 1.6e-11 (dop853 at rtol 1e-12 over 20 s)
  EXPECT_LT(r.summary.max_rel_energy_error, 6e-11);
  EXPECT_GT(travel, 1.0);
}

// Joints: the heavy top as a free body held by a spherical joint (3 position rows) moves as the top whose centre of
// mass is written into its position; a rod hung by a revolute joint (5 rows, one degree of freedom) swings as the
// reduced equation (I2 + m d^2) b'' = -m g d sin(b), integrated here by RK4.
TEST(RigidBodies, JointsHoldTheirPoints) {
  const std::string data = kSource + "/tests/data/mechanisms/";
  const RunRecord free = run(data + "heavy_top_joint.toml", "dop853", 3, 1e-12);
  const RunRecord held = run(kMechanisms + "heavy_top_body.toml", "dop853", 3, 1e-12);
  double dangles = 0;
  for (std::size_t k = 0; k < held.samples(); ++k)
    for (int i = 0; i < 3; ++i) dangles = std::max(dangles, std::abs(free.q[6 * k + 3 + i] - held.q[3 * k + i]));
  const RunRecord rod = run(data + "compound_pendulum_joint.toml", "dop853", 3, 1e-12);
  const double m = 2.0, d = 0.4, g = 9.81, I2 = 0.12, h = 1e-4;
  double b = 0.7, bd = 0, t = 0, dpitch = 0, dothers = 0;
  auto f = [&](double x) { return -m * g * d * std::sin(x) / (I2 + m * d * d); };
  for (std::size_t k = 0; k < rod.samples(); ++k) {
    while (t < rod.t[k] - 1e-12) {
      const double k1 = bd, l1 = f(b), k2 = bd + h / 2 * l1, l2 = f(b + h / 2 * k1), k3 = bd + h / 2 * l2,
                   l3 = f(b + h / 2 * k2), k4 = bd + h * l3, l4 = f(b + h * k3);
      b += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      bd += h / 6 * (l1 + 2 * l2 + 2 * l3 + l4);
      t += h;
    }
    dpitch = std::max(dpitch, std::abs(rod.q[6 * k + 4] - b));
    dothers = std::max({dothers, std::abs(rod.q[6 * k + 3]), std::abs(rod.q[6 * k + 5]), std::abs(rod.q[6 * k + 1])});
  }
  std::printf("joints: heavy top held by a spherical joint vs its position written in %.2e; rod on a revolute joint "
              "vs the reduced equation %.2e (yaw, roll, y stay %.1e)\n",
              dangles, dpitch, dothers);
  EXPECT_LT(dangles, 2e-11);  // measured 4.3e-12 (dop853 at rtol 1e-12, other coordinates)
  EXPECT_LT(dpitch, 2e-12);   // measured 5.6e-13
  EXPECT_LT(dothers, 1e-14);  // measured 0
}

// What a file says wrong about its bodies is one line FILE:LINE:COLUMN.
TEST(RigidBodies, ErrorsAreOneLineAtTheirPlace) {
  const std::string head = "name = \"b\"\ncoordinates = [\"x\", \"y\", \"a\", \"b\", \"c\"]\n[initial]\nq = [0, 0, 0, 0.5, 0]\n";
  struct Bad {
    std::string body;
    std::string expected;
  };
  const std::vector<Bad> cases = {
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, 1, 1]\n"
       "orientation = { euler = \"ZZX\", angles = [\"a\", \"b\", \"c\"] }\n",
       ":9:25: Euler sequence 'ZZX' does not exist (three of X, Y, Z, no axis twice in a row: ZXZ, ZYX, XYZ, ...)"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, -2, 1]\n"
       "orientation = { euler = \"ZXZ\", angles = [\"a\", \"b\", \"c\"] }\n",
       ":8:12: body ball inertia is not positive definite (eigenvalues -2, 1, 1)"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, 1, 1]\n"
       "orientation = { euler = \"ZXZ\", angles = [\"a\", \"b\", \"c\"] }\n[[rolling]]\nbody = \"bal\"\ncontact = [0, 0, -1]\n",
       ":11:8: [[rolling]] body 'bal' is not a body (bodies: ball)"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, 1, 1]\n"
       "orientation = { euler = \"ZXZ\", angles = [\"a\", \"b\", \"c\"] }\n[[rolling]]\nbody = \"ball\"\n"
       "contact = [0, \"der(x)\", -1]\n",
       ":12:16: [[rolling]] contact must not depend on velocities (the contact point is a position)"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, 1, 1]\n"
       "orientation = { euler = \"ZXZ\", angles = [\"a\", \"b\", \"c\"] }\n[[rolling]]\nbody = \"ball\"\n"
       "contact = [0, 0, -2]\n",
       ":10:1: [[rolling]] body ball: its contact point is at height -1 at every q, not on the plane z = 0"},
      {"[bodies.ball]\nmass = \"x\"\nposition = [\"x\", \"y\", 1]\n",
       ":6:9: body ball mass must be a constant (numbers and parameters), not of q, der(q) or t"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\n[energy]\nT = \"ball.wq\"\n",
       ":9:6: unknown symbol 'ball.wq'"},
      {"[bodies.ball]\nmass = 1\nposition = [\"x\", \"y\", 1]\ninertia = [1, 1, 1]\n",
       ":8:11: body ball has an inertia but no orientation (a body without one is a point mass)"},
  };
  const std::string path = ::testing::TempDir() + "bad_bodies.toml";
  for (const Bad& b : cases) {
    std::ofstream(path) << head << b.body;
    const std::string message = clm::testing::error_of([&] { make_model(path); });
    EXPECT_NE(message.find(path + b.expected), std::string::npos) << "expected: " << b.expected << "\ngot: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// A file with bodies exports to a header like any other (the bodies are expressions on the same graph).
TEST(RigidBodies, AFileWithBodiesExports) {
  const std::string header = export_header(read_mechanism_file(kMechanisms + "chaplygin_ball.toml"));
  EXPECT_NE(header.find("struct ChaplyginBall {"), std::string::npos);
  EXPECT_NE(header.find("kConstraintKind = ConstraintKind::kMixed"), std::string::npos) << header.substr(0, 3000);
}

}  // namespace
}  // namespace clm
