// Suslov's problem (problems/suslov.hpp): the chart's angular-velocity map against R^T Rdot of the ZXZ
// rotation written out independently, the closed-form body angular velocity for l = e3, I12 = 0 against
// kkt + dopri5 for random inertia tensors, energy conservation for a general l, and input validation.
#include <gtest/gtest.h>

#include <ceres/jet.h>

#include <cmath>
#include <random>

#include "core/problem_registry.hpp"
#include "core/autodiff_model.hpp"
#include "problems/suslov.hpp"
#include "recorded_run.hpp"

using namespace clm;

namespace {

template <class T>
Eigen::Matrix<T, 3, 3> rot_z(T a) {
  using std::cos;
  using std::sin;
  Eigen::Matrix<T, 3, 3> R;
  R << cos(a), -sin(a), T(0.0), sin(a), cos(a), T(0.0), T(0.0), T(0.0), T(1.0);
  return R;
}
template <class T>
Eigen::Matrix<T, 3, 3> rot_x(T a) {
  using std::cos;
  using std::sin;
  Eigen::Matrix<T, 3, 3> R;
  R << T(1.0), T(0.0), T(0.0), T(0.0), cos(a), -sin(a), T(0.0), sin(a), cos(a);
  return R;
}

std::map<std::string, double> params(const Eigen::Matrix3d& I, const Eigen::Vector3d& l) {
  return {{"I11", I(0, 0)}, {"I22", I(1, 1)}, {"I33", I(2, 2)}, {"I12", I(0, 1)}, {"I13", I(0, 2)},
          {"I23", I(1, 2)}, {"l1", l[0]},     {"l2", l[1]},     {"l3", l[2]}};
}

// A random positive definite tensor: diagonal in [1, 3] plus off-diagonal terms up to 0.4 (diagonally dominant).
Eigen::Matrix3d random_inertia(std::mt19937& rng, bool i12_zero) {
  std::uniform_real_distribution<double> diag(1.0, 3.0), off(-0.4, 0.4);
  Eigen::Matrix3d I;
  const double i12 = i12_zero ? 0.0 : off(rng), i13 = off(rng), i23 = off(rng);
  I << diag(rng), i12, i13, i12, diag(rng), i23, i13, i23, diag(rng);
  return I;
}

// qd with J(q) qd = w.
Vec velocities_for(const Vec& q, const Eigen::Vector3d& w) {
  MatN<double, 3, 3> J;
  Suslov::angular_velocity_map<double>(VecN<double, 3>(q), J);
  return J.partialPivLu().solve(w);
}

}  // namespace

// omega = J(q) qd is the vee of R^T Rdot for R = Rz(phi) Rx(theta) Rz(psi), Rdot by a Jet along qd.
TEST(Suslov, AngularVelocityMapIsTheBodyAngularVelocityOfTheChart) {
  using Jet = ceres::Jet<double, 1>;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  for (int k = 0; k < 20; ++k) {
    Vec q(3), qd(3);
    q << u(rng), u(rng), u(rng);
    qd << u(rng), u(rng), u(rng);
    Jet qj[3];
    for (int i = 0; i < 3; ++i) qj[i] = Jet(q[i]), qj[i].v[0] = qd[i];
    const Eigen::Matrix<Jet, 3, 3> R = rot_z(qj[0]) * rot_x(qj[1]) * rot_z(qj[2]);
    Eigen::Matrix3d Rv, Rdot;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Rv(i, j) = R(i, j).a, Rdot(i, j) = R(i, j).v[0];
    const Eigen::Matrix3d W = Rv.transpose() * Rdot;
    EXPECT_LT((W + W.transpose()).cwiseAbs().maxCoeff(), 1e-14);
    const Eigen::Vector3d w(W(2, 1), W(0, 2), W(1, 0));
    EXPECT_LT((Suslov::body_angular_velocity(q, qd) - w).norm(), 1e-14) << "k = " << k;
  }
}

// l = e3, I12 = 0: the tanh closed form of omega against kkt + dopri5 (rtol 1e-13), starting at z = -3 on the
// tanh (before the transition) and running until z = +3 (after it), for random tensors with I13, I23 != 0.
TEST(Suslov, ClosedFormAngularVelocityForRandomInertiaTensors) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> u(0, 1);
  double worst = 0, worst_energy = 0;
  for (int k = 0; k < 5; ++k) {
    const Eigen::Matrix3d I = random_inertia(rng, true);
    const double l3 = k % 2 == 0 ? 1.0 : -2.5;  // l along e3, either sign and any length
    auto model = make_model("suslov", params(I, {0, 0, l3}));
    const auto& p = static_cast<const AutoDiffModel<Suslov>&>(*model).problem();
    ASSERT_TRUE(p.has_angular_velocity_closed_form());
    // w0 on the energy ellipse at z0 = -3: psi0 = alpha + atan(sinh(-3)) (sigma = 1).
    const double E2 = 1.0 + u(rng);
    const double a = std::sqrt(E2 / I(0, 0)), b = std::sqrt(E2 / I(1, 1));
    const double R = std::hypot(I(0, 2) * a, I(1, 2) * b) / std::sqrt(I(0, 0) * I(1, 1));
    const double psi0 = std::atan2(I(1, 2) * b, I(0, 2) * a) + std::atan(std::sinh(-3.0));
    const Eigen::Vector3d w0(a * std::cos(psi0), b * std::sin(psi0), 0.0);
    Vec q0(3);
    q0 << 0.1, M_PI / 2, 0.2;
    const Vec qd0 = velocities_for(q0, w0);
    clm::testing::RunSettings rs;
    rs.t_end = 6.0 / R;
    rs.output_every = rs.t_end / 60;
    rs.rtol = 1e-13;
    rs.atol = 1e-15;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    double err = 0, min_sin_theta = 1;
    Eigen::Vector3d w_first, w_last;
    for (size_t s = 0; s < run.t.size(); ++s) {
      Eigen::Vector3d w;
      ASSERT_TRUE(p.angular_velocity_closed_form(run.t[s], w0, w));
      err = std::max(err, (Suslov::body_angular_velocity(run.obs[s].q, run.obs[s].qd) - w).norm());
      min_sin_theta = std::min(min_sin_theta, std::abs(std::sin(run.obs[s].q[1])));
      worst_energy = std::max(worst_energy, std::abs(run.obs[s].energy / run.obs[0].energy - 1));
      if (s == 0) w_first = w;
      w_last = w;
    }
    // The chart stays regular along the comparison, and the motion really goes from near one steady
    // rotation to near the other (chi from -84 to +84 degrees).
    EXPECT_GT(min_sin_theta, 0.05) << "k = " << k;
    EXPECT_LT(w_first.normalized().dot(w_last.normalized()), 0.5) << "k = " << k;
    EXPECT_LT(err, 5e-12) << "k = " << k;  // observed at most 6.3e-13 (dopri5, rtol 1e-13)
    worst = std::max(worst, err);
  }
  EXPECT_LT(worst_energy, 1e-11);  // observed 9.5e-13
  std::printf("suslov closed form: max |omega - omega_exact| = %.2e, max relative energy error %.2e\n", worst,
              worst_energy);
}

// General l and I12 != 0 (no closed form): energy conserved and omega . l = 0 kept.
TEST(Suslov, EnergyConservedForGeneralConstraintVector) {
  std::mt19937 rng(11);
  double worst_e = 0, worst_c = 0;
  for (int k = 0; k < 3; ++k) {
    const Eigen::Matrix3d I = random_inertia(rng, false);
    const Eigen::Vector3d l(0.3 + 0.1 * k, -0.5, 1.0);
    auto model = make_model("suslov", params(I, l));
    Vec q0(3), qd0(3);
    model->default_initial(q0, qd0);
    EXPECT_NEAR(Suslov::body_angular_velocity(q0, qd0).dot(l), 0, 1e-15);
    clm::testing::RunSettings rs;
    rs.t_end = 5;
    rs.output_every = 0.1;
    const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
    ASSERT_EQ(run.result.status, "ok") << run.result.message;
    double e = 0, c = 0;
    for (const auto& o : run.obs) {
      e = std::max(e, std::abs(o.energy / run.obs[0].energy - 1));
      c = std::max(c, std::abs(Suslov::body_angular_velocity(o.q, o.qd).dot(l)));
    }
    EXPECT_LT(e, 1e-11) << "k = " << k;
    EXPECT_LT(c, 1e-11) << "k = " << k;
    worst_e = std::max(worst_e, e);
    worst_c = std::max(worst_c, c);
  }
  std::printf("suslov general l: max relative energy error %.2e, max |omega . l| %.2e\n", worst_e, worst_c);
}

TEST(Suslov, RefusesIndefiniteInertiaAndZeroConstraintVector) {
  auto message = [](const std::map<std::string, double>& p) {
    try {
      make_model("suslov", p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"I12", 3.0}}).find("positive definite"), std::string::npos);
  EXPECT_NE(message({{"I11", -1.0}}).find("positive definite"), std::string::npos);
  EXPECT_NE(message({{"l1", 0.0}, {"l2", 0.0}, {"l3", 0.0}}).find("must be nonzero"), std::string::npos);
  EXPECT_EQ(message({}), "accepted");
}
