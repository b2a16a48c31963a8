// Slider-crank mechanism [seed-000, "Example: Slider-crank mechanism"], q = (theta, phi, x):
// a crank of length 2 L1 pinned at the origin (centre of mass at L1 e(theta)), a connecting rod of length
// 2 L2 from the crank pin 2 L1 e(theta) to the slider pin P = 2 L1 e(theta) - 2 L2 e(phi) (centre of mass
// at 2 L1 e(theta) - L2 e(phi)), and a slider of mass m3 at x e1. e(a) = (cos a, sin a), gravity along -e2.
//   T = 1/2 (m1 L1^2 + I1) thetad^2 + 1/2 m2 |d/dt(2 L1 e(theta) - L2 e(phi))|^2 + 1/2 I2 phid^2 + 1/2 m3 xd^2
//   V = m1 g L1 sin(theta) + m2 g (2 L1 sin(theta) - L2 sin(phi))
//   h = (2 L1 cos(theta) - 2 L2 cos(phi) - x, 2 L1 sin(theta) - 2 L2 sin(phi))     ([seed-000]: r_P - x e1)
//   F = (tau, 0, f)   (crank torque, force on the slider)
// M is written from the kinetic energy of the bodies; c comes from autodiff (the seed's hand-derived G and
// B have slips: G_phi lacks g, B_phi has cos for sin).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <numbers>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct SliderCrank {
  static constexpr const char* kName = "slider_crank";
  static constexpr const char* kDescription =
      "slider-crank (seed 000): crank 2 L1, rod 2 L2, slider on the x axis; q = (theta, phi, x)";
  static constexpr int kDof = 3;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"theta", "phi", "x"};
  static constexpr const char* kCoordinateUnits[] = {"rad", "rad", "m"};
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;

  double m1 = 1.0;
  double m2 = 1.0;
  double m3 = 0.5;
  double I1 = 0.02;  // ~ m1 (2 L1)^2 / 12, a uniform crank
  double I2 = 0.08;  // ~ m2 (2 L2)^2 / 12, a uniform rod
  double L1 = 0.25;
  double L2 = 0.5;
  double g = 9.81;
  double tau = 0.0;
  double f = 0.0;
  static constexpr std::array kParameters = {
      ParameterSpec<SliderCrank>{"m1", &SliderCrank::m1, "crank mass [kg]"},
      ParameterSpec<SliderCrank>{"m2", &SliderCrank::m2, "connecting-rod mass [kg]"},
      ParameterSpec<SliderCrank>{"m3", &SliderCrank::m3, "slider mass [kg]"},
      ParameterSpec<SliderCrank>{"I1", &SliderCrank::I1, "crank moment of inertia about its centre of mass [kg m^2]"},
      ParameterSpec<SliderCrank>{"I2", &SliderCrank::I2, "rod moment of inertia about its centre of mass [kg m^2]"},
      ParameterSpec<SliderCrank>{"L1", &SliderCrank::L1, "half crank length [m] (crank pin at 2 L1)"},
      ParameterSpec<SliderCrank>{"L2", &SliderCrank::L2, "half rod length [m] (rod length 2 L2)"},
      ParameterSpec<SliderCrank>{"g", &SliderCrank::g, "gravity [m/s^2], along -y"},
      ParameterSpec<SliderCrank>{"tau", &SliderCrank::tau, "constant torque on the crank [N m]"},
      ParameterSpec<SliderCrank>{"f", &SliderCrank::f, "constant force on the slider along x [N]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"crank_pivot", "m"}, {"crank_pin", "m"}, {"slider", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = 0;
    out[1] = 0;
    out[2] = 2 * L1 * std::cos(q[0]);
    out[3] = 2 * L1 * std::sin(q[0]);
    out[4] = q[2];
    out[5] = 0;
  }
  int dof() const { return 3; }
  int constraints() const { return 2; }
  void validate() const {
    auto positive = [](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v))
        throw InputError(std::string("slider_crank: parameter ") + name + " must be > 0");
    };
    auto nonnegative = [](double v, const char* name) {
      if (!(v >= 0) || !std::isfinite(v))
        throw InputError(std::string("slider_crank: parameter ") + name + " must be >= 0");
    };
    auto finite = [](double v, const char* name) {
      if (!std::isfinite(v)) throw InputError(std::string("slider_crank: parameter ") + name + " must be finite");
    };
    // m1, m2 > 0 keep M positive definite even with I1 = I2 = 0 (det >= m1 L1^2 m2 L2^2 m3).
    positive(m1, "m1");
    positive(m2, "m2");
    positive(m3, "m3");
    nonnegative(I1, "I1");
    nonnegative(I2, "I2");
    // Positive lengths always assemble: at theta = 0 the rod lies on the x axis (see assembly_angle()).
    positive(L1, "L1");
    positive(L2, "L2");
    finite(g, "g");
    finite(tau, "tau");
    finite(f, "f");
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>& q, MatN<T, 3, 3>& M) const {
    using std::cos;
    const T k = -2.0 * m2 * L1 * L2 * cos(q[0] - q[1]);
    M(0, 0) = T(I1 + m1 * L1 * L1 + 4.0 * m2 * L1 * L1);
    M(0, 1) = k;
    M(0, 2) = T(0.0);
    M(1, 0) = k;
    M(1, 1) = T(I2 + m2 * L2 * L2);
    M(1, 2) = T(0.0);
    M(2, 0) = T(0.0);
    M(2, 1) = T(0.0);
    M(2, 2) = T(m3);
  }
  template <class T>
  T potential(const VecN<T, 3>& q) const {
    using std::sin;
    return m1 * g * L1 * sin(q[0]) + m2 * g * (2.0 * L1 * sin(q[0]) - L2 * sin(q[1]));
  }
  template <class T>
  void constraint(const VecN<T, 3>& q, VecN<T, 2>& h) const {
    using std::cos;
    using std::sin;
    h[0] = 2.0 * L1 * cos(q[0]) - 2.0 * L2 * cos(q[1]) - q[2];
    h[1] = 2.0 * L1 * sin(q[0]) - 2.0 * L2 * sin(q[1]);
  }
  // Constant torque and force, written over the scalar like the energies (core/problem.hpp): the exact Jacobian
  // differentiates it.
  template <class T, class Q, class Out>
  void generalized_force(const T&, const Q&, const Q&, Out& F) const {
    F[0] = T(tau);
    F[1] = T(0.0);
    F[2] = T(f);
  }

  // Crank angle of the default configuration: pi/4 where the rod reaches (|L1 sin theta| <= 0.8 L2),
  // otherwise the angle where |sin(phi)| = 0.8, which keeps cos(phi) (the velocity-level pivot) away from 0.
  double assembly_angle() const {
    const double preferred = std::numbers::pi / 4;
    if (L1 * std::sin(preferred) <= 0.8 * L2) return preferred;
    return std::asin(0.8 * L2 / L1);
  }
  // Slider on the +x side of the crank pin (phi near pi: the rod points from P back up to the crank pin),
  // crank turning at 1 rad/s; phid and xd from the two velocity constraints.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double th = assembly_angle();
    const double s = L1 * std::sin(th) / L2;  // sin(phi), |s| <= 0.8
    const double phi = std::numbers::pi - std::asin(s);
    const double x = 2.0 * L1 * std::cos(th) - 2.0 * L2 * std::cos(phi);
    const double thd = 1.0;
    const double phid = L1 * std::cos(th) * thd / (L2 * std::cos(phi));
    const double xd = -2.0 * L1 * std::sin(th) * thd + 2.0 * L2 * std::sin(phi) * phid;
    q0 << th, phi, x;
    qd0 << thd, phid, xd;
  }
};

}  // namespace clm
