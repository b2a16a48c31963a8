// Issue 24 item 4: zoo problems declare their points of interest (problems/point_spec.hpp) as mechanism files do,
// and every run records them (/runs/<id>/points), so that plots and animations need no problem names. The
// recorded positions are checked against what the constraints say about them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/problem_registry.hpp"
#include "runs/runner.hpp"
#include "run_spec_for.hpp"

namespace clm {
namespace {

RunRecord run(const std::string& problem, double t_end = 2) {
  RunSpec s = testing::spec_for(problem, "kkt", "dopri5");
  s.t_end = t_end;
  s.output_every = 0.1;
  s.rtol = 1e-10;
  s.atol = 1e-12;
  return testing::execute(s, /*keep_samples=*/true);
}

// Column j of sample k.
double at(const RunRecord& r, size_t k, size_t j) { return r.points[k * r.point_columns.size() + j]; }

TEST(ZooPoints, EveryPlanarProblemRecordsItsPoints) {
  for (const char* problem : {"chaplygin_sleigh", "skate_incline", "rolling_disk", "pendulum_cartesian",
                              "charged_particle", "pendulum_polar", "four_bar", "slider_crank", "roller_racer",
                              "snakeboard", "kinematic_car", "unicycle", "bicycle", "closed_chain"}) {
    const auto model = make_model(problem, {});
    ASSERT_NE(model->named_points(), nullptr) << problem;
    // The plots' points are not a benchmark's reference point (no IFToMM accuracy line for the sleigh).
    EXPECT_EQ(model->reference_point(), nullptr) << problem;
  }
}

// The sleigh's blade is b behind the centre of mass along the heading, and the blade's velocity is along it:
// the recorded points satisfy the constraint, to the integration's accuracy, by finite differences.
TEST(ZooPoints, SleighBladeAndCentreOfMass) {
  const RunRecord r = run("chaplygin_sleigh");
  ASSERT_EQ(r.point_columns, (std::vector<std::string>{"centre_of_mass.x", "centre_of_mass.y", "blade.x", "blade.y"}));
  double b = 0;
  for (const auto& [name, value] : r.parameters)
    if (name == "b") b = value;
  for (size_t k = 0; k < r.samples(); ++k) {
    const double x = r.q[3 * k], y = r.q[3 * k + 1], th = r.q[3 * k + 2];
    EXPECT_EQ(at(r, k, 0), x);
    EXPECT_EQ(at(r, k, 1), y);
    EXPECT_EQ(at(r, k, 2), x - b * std::cos(th));
    EXPECT_EQ(at(r, k, 3), y - b * std::sin(th));
  }
}

// The four-bar's pins in chain order: the pivots stay at (0, 0) and (L0, 0) to the drift of h(q) (rtol 1e-10:
// measured 3.6e-11 at the crank pivot, 6.0e-12 and 2.6e-11 at the rocker's, 9.9e-11 on the coupler length).
TEST(ZooPoints, FourBarPinsInChainOrderStayOnTheirPivots) {
  const RunRecord r = run("four_bar");
  ASSERT_EQ(r.point_columns.size(), 8u);
  EXPECT_EQ(r.point_columns[0], "crank_pivot.x");
  EXPECT_EQ(r.point_columns[6], "rocker_pivot.x");
  double L0 = 0, L2 = 0;
  for (const auto& [name, value] : r.parameters) {
    if (name == "L0") L0 = value;
    if (name == "L2") L2 = value;
  }
  for (size_t k = 0; k < r.samples(); ++k) {
    EXPECT_NEAR(at(r, k, 0), 0, 2e-10);
    EXPECT_NEAR(at(r, k, 1), 0, 2e-10);
    EXPECT_NEAR(at(r, k, 6), L0, 2e-10);
    EXPECT_NEAR(at(r, k, 7), 0, 2e-10);
    // The coupler joins the two pins: their distance is its length.
    EXPECT_NEAR(std::hypot(at(r, k, 4) - at(r, k, 2), at(r, k, 5) - at(r, k, 3)), L2, 5e-10);
  }
}

// The closed chain's last named joint is the tip, pinned at (gx, gy); 16 joints for 40 bars, evenly spaced.
TEST(ZooPoints, ClosedChainEndsAtItsPinnedTip) {
  const auto model = make_model("closed_chain", {{"n", 40}});
  ASSERT_EQ(model->named_points()->names.size(), 17u);  // the root and 16 joints
  EXPECT_EQ(model->named_points()->names.back(), "joint_40");
  const RunRecord r = run("closed_chain", 1);
  const size_t c = r.point_columns.size();
  double gx = 0, gy = 0;
  for (const auto& [name, value] : r.parameters) {
    if (name == "gx") gx = value;
    if (name == "gy") gy = value;
  }
  for (size_t k = 0; k < r.samples(); ++k) {
    EXPECT_NEAR(at(r, k, c - 2), gx, 2e-11);  // measured 2.9e-12
    EXPECT_NEAR(at(r, k, c - 1), gy, 2e-11);  // 7.1e-13
  }
}

double parameter(const RunRecord& r, const std::string& name) {
  for (const auto& [key, value] : r.parameters)
    if (key == name) return value;
  ADD_FAILURE() << "no parameter " << name;
  return 0;
}

// A point may move with t: the driven pendulum's pivot is recorded at (a sin(w t), b cos(w t)) at each sample's
// own time (not t = 0), and the bob stays at the rod's length from it to the drift of h(q, t).
TEST(ZooPoints, DrivenPendulumsPivotMovesWithTime) {
  RunSpec s = testing::spec_for("driven_pendulum", "kkt", "dopri5");
  s.t_end = 3;
  s.output_every = 0.1;
  s.rtol = 1e-10;
  s.atol = 1e-12;
  const RunRecord r = testing::execute(s, /*keep_samples=*/true);
  ASSERT_EQ(r.point_columns, (std::vector<std::string>{"pivot.x", "pivot.y", "bob.x", "bob.y"}));
  const double a = parameter(r, "a"), b = parameter(r, "b"), w = parameter(r, "w"), L = parameter(r, "L");
  double moved = 0;
  for (size_t k = 0; k < r.samples(); ++k) {
    EXPECT_EQ(at(r, k, 0), a * std::sin(w * r.t[k]));
    EXPECT_EQ(at(r, k, 1), b * std::cos(w * r.t[k]));
    EXPECT_EQ(at(r, k, 2), r.q[2 * k]);
    EXPECT_NEAR(std::hypot(at(r, k, 2) - at(r, k, 0), at(r, k, 3) - at(r, k, 1)), L, 5e-11);  // measured 8.9e-12
    moved = std::max(moved, std::abs(at(r, k, 0)));
  }
  EXPECT_GT(moved, 0.9 * a);  // the pivot went through its stroke
}

// Body velocities (problems/body_velocity_spec.hpp) are recorded at every sample; the sleigh's are the variables
// of its reduced equations, in which the energy is m/2 u1^2 + (m b^2 + Ic)/2 omega^2 (the blade's no-slip makes
// the sideways speed b omega): conserved along the recorded series to the integration's accuracy.
TEST(ZooPoints, SleighBodyVelocitiesConserveTheReducedEnergy) {
  const RunRecord r = run("chaplygin_sleigh", 5);
  ASSERT_EQ(r.body_velocity_columns, (std::vector<std::string>{"u1", "omega"}));
  ASSERT_EQ(r.body_velocity_units, (std::vector<std::string>{"m/s", "rad/s"}));
  ASSERT_EQ(r.body_velocities.size(), 2 * r.samples());
  const double m = parameter(r, "m"), b = parameter(r, "b"), Ic = parameter(r, "Ic");
  double e_min = 1e300, e_max = -1e300, u_min = 1e300, u_max = -1e300;
  for (size_t k = 0; k < r.samples(); ++k) {
    const double u = r.body_velocities[2 * k], w = r.body_velocities[2 * k + 1], th = r.q[3 * k + 2];
    EXPECT_EQ(u, r.qd[3 * k] * std::cos(th) + r.qd[3 * k + 1] * std::sin(th));
    EXPECT_EQ(w, r.qd[3 * k + 2]);
    const double e = 0.5 * m * u * u + 0.5 * (m * b * b + Ic) * w * w;
    e_min = std::min(e_min, e);
    e_max = std::max(e_max, e);
    u_min = std::min(u_min, u);
    u_max = std::max(u_max, u);
  }
  EXPECT_LT((e_max - e_min) / e_max, 3e-10);  // measured 7.3e-11
  EXPECT_GT(u_max - u_min, 0.1);  // the energy moved between u1 and omega: the check is not vacuous
}

// Suslov's body angular velocity is kept orthogonal to l: the recorded omega satisfies omega . l = 0 to the
// run's drift, and equals J(q) qd.
TEST(ZooPoints, SuslovsOmegaIsOrthogonalToL) {
  const RunRecord r = run("suslov", 3);
  ASSERT_EQ(r.body_velocity_columns, (std::vector<std::string>{"omega1", "omega2", "omega3"}));
  const double l[3] = {parameter(r, "l1"), parameter(r, "l2"), parameter(r, "l3")};
  double largest = 0;
  for (size_t k = 0; k < r.samples(); ++k) {
    const double* w = &r.body_velocities[3 * k];
    EXPECT_NEAR(w[0] * l[0] + w[1] * l[1] + w[2] * l[2], 0, 2e-10);  // measured 3.4e-11
    largest = std::max(largest, std::abs(w[0]) + std::abs(w[1]));
  }
  EXPECT_GT(largest, 0.1);
}

// Every declaring zoo problem records its body velocities; the others record none.
TEST(ZooPoints, BodyVelocitiesAreDeclaredWhereTheyAreRead) {
  for (const char* problem : {"chaplygin_sleigh", "skate_incline", "rolling_disk", "suslov"})
    EXPECT_NE(make_model(problem, {})->body_velocities(), nullptr) << problem;
  for (const char* problem : {"pendulum_cartesian", "four_bar"})
    EXPECT_EQ(make_model(problem, {})->body_velocities(), nullptr) << problem;
}

}  // namespace
}  // namespace clm
