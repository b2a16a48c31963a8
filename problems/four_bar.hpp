// Grounded four-bar linkage in body coordinates ([seed-000], first example: 3 free bars x 3 coordinates,
// 4 pins x 2 constraints, 9 - 8 = 1 DOF). q = (x1, y1, theta1, x2, y2, theta2, x3, y3, theta3): centre of
// mass and angle of each uniform bar, e(a) = (cos a, sin a), gravity along -y.
//   bar 1 (crank):    ground pin O = (0, 0) -> joint P1,  O  = c1 - L1/2 e(theta1), P1 = c1 + L1/2 e(theta1)
//   bar 2 (coupler):  P1 -> P2,                           P1 = c2 - L2/2 e(theta2), P2 = c2 + L2/2 e(theta2)
//   bar 3 (rocker):   P2 -> ground pin Q = (L0, 0),        P2 = c3 - L3/2 e(theta3), Q  = c3 + L3/2 e(theta3)
//   T = sum_i m_i/2 |c_i'|^2 + I_i/2 theta_i'^2, I_i = m_i L_i^2 / 12,   V = g sum_i m_i y_i.
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <numbers>
#include <string>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct FourBar {
  static constexpr const char* kName = "four_bar";
  static constexpr const char* kDescription =
      "grounded four-bar linkage, 3 free uniform bars in body coordinates (x_i, y_i, theta_i), 8 pin constraints";
  static constexpr int kDof = 9;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x1", "y1", "theta1", "x2", "y2", "theta2", "x3", "y3", "theta3"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "m", "m", "rad", "m", "m", "rad"};
  static constexpr int kConstraints = 8;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;

  // Grashof crank-rocker: shortest (L1) + longest (L2) = 1.6 < 1.8 = L0 + L3, shortest link is the crank.
  double L0 = 1.0;
  double L1 = 0.4;
  double L2 = 1.2;
  double L3 = 0.8;
  double m1 = 0.4;
  double m2 = 1.2;
  double m3 = 0.8;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<FourBar>{"L0", &FourBar::L0, "ground link length: distance between the ground pins [m]"},
      ParameterSpec<FourBar>{"L1", &FourBar::L1, "crank length (bar 1, pinned at the origin) [m]"},
      ParameterSpec<FourBar>{"L2", &FourBar::L2, "coupler length (bar 2) [m]"},
      ParameterSpec<FourBar>{"L3", &FourBar::L3, "rocker length (bar 3, pinned at (L0, 0)) [m]"},
      ParameterSpec<FourBar>{"m1", &FourBar::m1, "crank mass [kg]"},
      ParameterSpec<FourBar>{"m2", &FourBar::m2, "coupler mass [kg]"},
      ParameterSpec<FourBar>{"m3", &FourBar::m3, "rocker mass [kg]"},
      ParameterSpec<FourBar>{"g", &FourBar::g, "gravity [m/s^2], along -y"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"crank_pivot", "m"}, {"crank_pin", "m"}, {"rocker_pin", "m"}, {"rocker_pivot", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    // The ends of the bars from their centres and angles (h(q) = 0 makes consecutive ends coincide), in chain
    // order: the crank's pivot, its pin with the coupler, the coupler's pin with the rocker, the rocker's pivot.
    out[0] = q[0] - 0.5 * L1 * std::cos(q[2]);
    out[1] = q[1] - 0.5 * L1 * std::sin(q[2]);
    out[2] = q[0] + 0.5 * L1 * std::cos(q[2]);
    out[3] = q[1] + 0.5 * L1 * std::sin(q[2]);
    out[4] = q[3] + 0.5 * L2 * std::cos(q[5]);
    out[5] = q[4] + 0.5 * L2 * std::sin(q[5]);
    out[6] = q[6] + 0.5 * L3 * std::cos(q[8]);
    out[7] = q[7] + 0.5 * L3 * std::sin(q[8]);
  }
  int dof() const { return 9; }
  int constraints() const { return 8; }
  void validate() const {
    auto positive = [](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v))
        throw InputError(std::string("four_bar: parameter ") + name + " must be > 0");
    };
    positive(L0, "L0");
    positive(L1, "L1");
    positive(L2, "L2");
    positive(L3, "L3");
    positive(m1, "m1");
    positive(m2, "m2");
    positive(m3, "m3");
    if (!std::isfinite(g)) throw InputError("four_bar: parameter g must be finite");
    double alpha;
    if (!assembly_angle(alpha)) {
      throw InputError("four_bar: parameters L0, L1, L2, L3 cannot assemble (no crank angle where the coupler "
                       "L2 and rocker L3 reach between P1 and the ground pin (L0, 0) with margin)");
    }
  }

  template <class T>
  void mass_matrix(const VecN<T, 9>&, MatN<T, 9, 9>& M) const {
    M.setZero();
    const double m[3] = {m1, m2, m3}, L[3] = {L1, L2, L3};
    for (int i = 0; i < 3; ++i) {
      M(3 * i, 3 * i) = T(m[i]);
      M(3 * i + 1, 3 * i + 1) = T(m[i]);
      M(3 * i + 2, 3 * i + 2) = T(m[i] * L[i] * L[i] / 12.0);
    }
  }
  template <class T>
  T potential(const VecN<T, 9>& q) const {
    return g * (m1 * q[1] + m2 * q[4] + m3 * q[7]);
  }
  template <class T>
  void constraint(const VecN<T, 9>& q, VecN<T, 8>& h) const {
    using std::cos;
    using std::sin;
    const T c1 = cos(q[2]), s1 = sin(q[2]), c2 = cos(q[5]), s2 = sin(q[5]), c3 = cos(q[8]), s3 = sin(q[8]);
    // O: bar 1 tail at the origin.
    h[0] = q[0] - 0.5 * L1 * c1;
    h[1] = q[1] - 0.5 * L1 * s1;
    // P1: bar 1 head = bar 2 tail.
    h[2] = q[0] + 0.5 * L1 * c1 - (q[3] - 0.5 * L2 * c2);
    h[3] = q[1] + 0.5 * L1 * s1 - (q[4] - 0.5 * L2 * s2);
    // P2: bar 2 head = bar 3 tail.
    h[4] = q[3] + 0.5 * L2 * c2 - (q[6] - 0.5 * L3 * c3);
    h[5] = q[4] + 0.5 * L2 * s2 - (q[7] - 0.5 * L3 * s3);
    // Q: bar 3 head at (L0, 0).
    h[6] = q[6] + 0.5 * L3 * c3 - L0;
    h[7] = q[7] + 0.5 * L3 * s3;
  }

  // Whether the loop closes at crank angle alpha, with a margin that keeps the pin-constraint Jacobian well
  // conditioned (d = |Q - P1| strictly inside (|L2 - L3|, L2 + L3)).
  bool assembles_at(double alpha) const {
    const double px = L1 * std::cos(alpha), py = L1 * std::sin(alpha);
    const double d = std::hypot(L0 - px, -py);
    const double margin = 1e-3 * (L2 + L3);
    return d > std::abs(L2 - L3) + margin && d < L2 + L3 - margin;
  }
  // The default crank angle: pi/3 if the loop closes there, otherwise the first angle of a fine scan of the
  // crank circle that keeps the largest distance from the assembly limits.
  bool assembly_angle(double& alpha) const {
    const double preferred = std::numbers::pi / 3;
    if (assembles_at(preferred)) {
      alpha = preferred;
      return true;
    }
    double best = -1;
    for (int k = 0; k < 720; ++k) {
      const double a = 2 * std::numbers::pi * k / 720;
      const double px = L1 * std::cos(a), py = L1 * std::sin(a);
      const double d = std::hypot(L0 - px, -py);
      const double slack = std::min(d - std::abs(L2 - L3), L2 + L3 - d);
      if (assembles_at(a) && slack > best) {
        best = slack;
        alpha = a;
      }
    }
    return best > 0;
  }

  // Assembly by circle intersection (P2 on the circle of radius L2 about P1 and of radius L3 about Q, the
  // branch to the left of P1 -> Q, i.e. "elbow up" for the default crank-rocker), crank turning at 2 rad/s.
  // The joint rates follow from the loop closure L1 e(a) + L2 e(theta2) + L3 e(theta3) = (L0, 0) differentiated:
  //   L1 w1 e'(a) + L2 w2 e'(theta2) + L3 w3 e'(theta3) = 0,  e'(a) = (-sin a, cos a),
  // a 2 x 2 solve for (w2, w3): the one-dimensional null space of A scaled to the crank rate.
  void default_initial(Vec& q0, Vec& qd0) const {
    double a = 0;
    if (!assembly_angle(a)) throw InputError("four_bar: parameters L0, L1, L2, L3 cannot assemble");
    const double p1x = L1 * std::cos(a), p1y = L1 * std::sin(a);
    const double dx = L0 - p1x, dy = -p1y, d = std::hypot(dx, dy);
    const double along = (L2 * L2 - L3 * L3 + d * d) / (2 * d);
    const double across = std::sqrt(std::max(0.0, L2 * L2 - along * along));
    const double ux = dx / d, uy = dy / d;
    const double p2x = p1x + along * ux - across * uy, p2y = p1y + along * uy + across * ux;
    const double t2 = std::atan2(p2y - p1y, p2x - p1x), t3 = std::atan2(-p2y, L0 - p2x);
    q0 << 0.5 * L1 * std::cos(a), 0.5 * L1 * std::sin(a), a,  //
        p1x + 0.5 * L2 * std::cos(t2), p1y + 0.5 * L2 * std::sin(t2), t2,  //
        p2x + 0.5 * L3 * std::cos(t3), p2y + 0.5 * L3 * std::sin(t3), t3;

    const double w1 = 2.0;
    // [ -L2 sin t2  -L3 sin t3 ] [w2]   [ L1 w1 sin a ]
    // [  L2 cos t2   L3 cos t3 ] [w3] = [-L1 w1 cos a ]
    const double a11 = -L2 * std::sin(t2), a12 = -L3 * std::sin(t3), a21 = L2 * std::cos(t2), a22 = L3 * std::cos(t3);
    const double b1 = L1 * w1 * std::sin(a), b2 = -L1 * w1 * std::cos(a);
    const double det = a11 * a22 - a12 * a21;  // = L2 L3 sin(t3 - t2), nonzero away from the assembly limits
    const double w2 = (b1 * a22 - a12 * b2) / det, w3 = (a11 * b2 - a21 * b1) / det;
    // Velocities of the pins and centres: r' = w e'(angle) per bar segment.
    const double p1dx = -L1 * w1 * std::sin(a), p1dy = L1 * w1 * std::cos(a);
    const double p2dx = p1dx - L2 * w2 * std::sin(t2), p2dy = p1dy + L2 * w2 * std::cos(t2);
    qd0 << 0.5 * p1dx, 0.5 * p1dy, w1,  //
        p1dx - 0.5 * L2 * w2 * std::sin(t2), p1dy + 0.5 * L2 * w2 * std::cos(t2), w2,  //
        p2dx - 0.5 * L3 * w3 * std::sin(t3), p2dy + 0.5 * L3 * w3 * std::cos(t3), w3;
  }
};

}  // namespace clm
