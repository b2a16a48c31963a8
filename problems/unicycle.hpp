// Unicycle (a vertical wheel rolling without slipping on the plane, steered by its heading) [seed-000,
// eq. 2.13-2.14; [MLS-1994]]: q = (x, y, theta, phi): (x, y) the contact point, theta the heading,
// phi the wheel's rotation angle; radius r. Rolling: xd = r cos(theta) phid, yd = r sin(theta) phid,
//   A = [1 0 0 -r cos(theta); 0 1 0 -r sin(theta)].
// Actuated (theta, phi) (kActuatedCoordinates), passive (x, y): m = 2 = n_p and W_p = I, a kinematic system
// whose W_p is never singular. The same mechanism as rolling_disk (seed 003), with heading and wheel angle as
// the two inputs: qd = g_theta thetad + g_phi phid with g_theta = d/dtheta, g_phi = (r cos, r sin, 0, 1), and
// [g_theta, g_phi] = (-r sin(theta), r cos(theta), 0, 0), the sideways direction the wheel cannot move in
// directly.
// Masses for the dynamic formulations: m (at the contact point's vertical), I about the vertical, J about the
// axle; M constant and diagonal, the theta column of A zero, so the free motion has thetad and phid constant
// (energy) and coincides with the kinematic motion under constant inputs: a circle of radius r phid / thetad,
// a straight line when thetad = 0 (closed_form).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/rolling_contact.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct Unicycle {
  static constexpr const char* kName = "unicycle";
  static constexpr const char* kDescription =
      "wheel rolling upright without slipping, q = (x, y, theta heading, phi wheel angle), actuated (theta, "
      "phi): a kinematic system (seed 000 eq. 2.14)";
  static constexpr int kDof = 4;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad"};
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr std::array kActuatedCoordinates = {2, 3};

  double r = 0.5;    // wheel radius
  double m = 1.0;    // mass
  double I = 0.0625; // about the vertical diameter, m r^2 / 4
  double J = 0.125;  // about the axle, m r^2 / 2
  static constexpr std::array kParameters = {
      ParameterSpec<Unicycle>{"r", &Unicycle::r, "wheel radius [m]"},
      ParameterSpec<Unicycle>{"m", &Unicycle::m, "mass [kg]"},
      ParameterSpec<Unicycle>{"I", &Unicycle::I, "moment of inertia about the vertical diameter [kg m^2]"},
      ParameterSpec<Unicycle>{"J", &Unicycle::J, "moment of inertia about the axle [kg m^2]"},
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
  int dof() const { return 4; }
  int constraints() const { return 2; }
  void validate() const { require_positive(kName, {{r, "r"}, {m, "m"}, {I, "I"}, {J, "J"}}); }

  template <class T>
  void mass_matrix(const VecN<T, 4>&, MatN<T, 4, 4>& M) const {
    diagonal_mass_matrix<T>(M, m, m, I, J);
  }
  template <class T>
  T potential(const VecN<T, 4>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 4>& q, MatN<T, 2, 4>& A) const {
    rolling_wheel_rows(q[2], r, 3, A);  // heading theta, wheel angle phi
  }

  // thetad = w and phid constant: speed v = r phid on a circle of radius v / w, a line for w = 0 (chord form
  // t sinc(w t / 2), exact as w -> 0).
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const double w = qd0[2], wheel = qd0[3], v = r * wheel;
    const double half = 0.5 * w * t, th = q0[2] + w * t;
    const double chord = turning_chord(v, t, half);
    q << q0[0] + chord * std::cos(q0[2] + half), q0[1] + chord * std::sin(q0[2] + half), th, q0[3] + wheel * t;
    qd << v * std::cos(th), v * std::sin(th), w, wheel;
    return true;
  }

  // Heading 0.5 rad, wheel at 2 rad/s, not turning: a straight line at 1 m/s.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double th = 0.5, wheel = 2.0, v = r * wheel;
    q0 << 0, 0, th, 0;
    qd0 << v * std::cos(th), v * std::sin(th), 0, wheel;
  }
};

}  // namespace clm
