// Vertical rolling disk [seed-003, sections 1-2]: q = (x, y, theta, phi), (x, y) the contact point,
// theta the rolling angle, phi the heading. Rolling without slipping:
//   xd = R cos(phi) thetad,  yd = R sin(phi) thetad   (A rows (1, 0, -R cos phi, 0), (0, 1, -R sin phi, 0)),
//   L = M/2 (xd^2 + yd^2) + I/2 thetad^2 + J/2 phid^2.
// Equations (M qdd = A^T lambda): M xdd = lambda1, M ydd = lambda2, I thetadd = -R (cos phi lambda1 +
// sin phi lambda2), J phidd = 0. With v = R thetad the tangential balance gives (I/R + M R) vd = 0, so
// thetad and phid = w are constant and the contact point runs on a circle of radius R thetad / w (a straight
// line when w = 0); lambda = M (xdd, ydd) = M R thetad w (-sin phi, cos phi).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/rolling_contact.hpp"
#include "problems/body_velocity_spec.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct RollingDisk {
  static constexpr const char* kName = "rolling_disk";
  static constexpr const char* kDescription =
      "vertical disk rolling without slipping (seed 003); q = (x, y, theta rolling angle, phi heading)";
  static constexpr int kDof = 4;
  // Names and units of q (HDF5 column names; tools/plot.py labels); qd is in units per second.
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad"};
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // Velocities the `substituted` formulation solves A qd = 0 for ([seed-002]'s mistake): xd and yd.
  static constexpr std::array kEliminated = {0, 1};

  double M = 1.0;
  double R = 0.5;
  double I = 0.125;   // uniform disk about its axle, M R^2 / 2
  double J = 0.0625;  // about a vertical diameter, M R^2 / 4
  static constexpr std::array kParameters = {
      ParameterSpec<RollingDisk>{"M", &RollingDisk::M, "mass [kg]"},
      ParameterSpec<RollingDisk>{"R", &RollingDisk::R, "radius [m]"},
      ParameterSpec<RollingDisk>{"I", &RollingDisk::I, "moment of inertia about the axle [kg m^2]"},
      ParameterSpec<RollingDisk>{"J", &RollingDisk::J, "moment of inertia about the vertical diameter [kg m^2]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"contact", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
  }
  // Body velocities (problems/body_velocity_spec.hpp): the rolling and heading rates, constant in the exact motion.
  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kVelocities{{"rolling_rate", "rad/s", "thetad, about the axle"},
                                                          {"heading_rate", "rad/s", "phid, about the vertical"}};
    return kVelocities;
  }
  void body_velocity_values(double /*t*/, const Vec& /*q*/, const Vec& qd, Vec& out) const {
    out[0] = qd[2];
    out[1] = qd[3];
  }
  int dof() const { return 4; }
  int constraints() const { return 2; }
  void validate() const { require_positive(kName, {{M, "M"}, {R, "R"}, {I, "I"}, {J, "J"}}); }

  template <class T>
  void mass_matrix(const VecN<T, 4>&, MatN<T, 4, 4>& Mq) const {
    diagonal_mass_matrix<T>(Mq, M, M, I, J);
  }
  template <class T>
  T potential(const VecN<T, 4>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 4>& q, MatN<T, 2, 4>& A) const {
    rolling_wheel_rows(q[3], R, 2, A);  // heading phi, wheel angle theta
  }
  // Rolling (qd = (R cos phi, R sin phi, 1, 0) thetad) and turning (qd = (0, 0, 0, 1) phid).
  // Transversal frame for fernandez_bloch [seed-003, section 5]: X_a = d/dx, d/dy, so Phi_a = dL/dxd, dL/dyd.
  template <class T>
  void transversal_frame(const VecN<T, 4>&, MatN<T, 4, 2>& X) const {
    X.setZero();
    X(0, 0) = T(1.0);
    X(1, 1) = T(1.0);
  }
  template <class T>
  void velocity_basis(const VecN<T, 4>& q, MatN<T, 4, Eigen::Dynamic>& S) const {
    using std::cos;
    using std::sin;
    S(0, 0) = R * cos(q[3]);
    S(1, 0) = R * sin(q[3]);
    S(2, 0) = T(1.0);
    S(3, 0) = T(0.0);
    S(0, 1) = T(0.0);
    S(1, 1) = T(0.0);
    S(2, 1) = T(0.0);
    S(3, 1) = T(1.0);
  }

  // Exact motion: thetad, phid constant; x, y on a circle of radius R thetad / phid (a line if phid = 0).
  // (sin phi - sin phi0)/w = t cos(phi0 + w t/2) sinc(w t/2) (and likewise for cos) is the form that stays
  // accurate as w -> 0 and is exact for w = 0.
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const double thd = qd0[2], w = qd0[3], v = R * thd;
    const double phi0 = q0[3], phi = phi0 + w * t, half = 0.5 * w * t;
    const double chord = turning_chord(v, t, half);
    q[0] = q0[0] + chord * std::cos(phi0 + half);
    q[1] = q0[1] + chord * std::sin(phi0 + half);
    q[2] = q0[2] + thd * t;
    q[3] = phi;
    qd << v * std::cos(phi), v * std::sin(phi), thd, w;
    return true;
  }
  void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const {
    const double k = M * R * qd[2] * qd[3];
    lambda[0] = -k * std::sin(q[3]);
    lambda[1] = k * std::cos(q[3]);
  }
  // Rolling at thetad = 2 rad/s while turning at 1 rad/s: a circle of radius 2 R.
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0, 0, 0, 0;
    qd0 << 2.0 * R, 0, 2.0, 1.0;
  }
};

}  // namespace clm
