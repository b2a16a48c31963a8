// Kinematic car [seed-000, eq. 2.13-2.14, "kinematic" systems; [MLS-1994] (the front-wheel-steered
// car)]: q = (x, y, theta, psi, phi): (x, y) the midpoint of the rear axle, theta the heading, psi the steering
// angle of the front wheel, phi the rotation angle of the rear wheels; wheelbase L, wheel radius r.
// Three Pfaffian rows:
//   rear wheels roll without slipping:    xd cos theta + yd sin theta - r phid = 0,
//   rear wheels do not slip sideways:     -xd sin theta + yd cos theta = 0,
//   front wheel does not slip sideways:   the velocity of the front contact point (x + L cos theta,
//       y + L sin theta) has no component along the wheel's axle (-sin(theta + psi), cos(theta + psi)):
//       -xd sin(theta + psi) + yd cos(theta + psi) + L cos(psi) thetad = 0.
// With the actuated coordinates q_a = (psi, phi) (kActuatedCoordinates) and the passive ones q_p = (x, y, theta),
// m = 3 = n_p: a "kinematic" system [seed-000, eq. 2.14]. det W_p = L cos psi, so W_p is singular at
// psi = pi/2 (the front wheel across the car); A itself keeps rank 3 there (the phi column), so the constraints
// have no singular positions, only the split into W_p and W_a does.
// Masses, so that the dynamic formulations (kkt, ...) can run it too: the body's mass m at the rear-axle
// midpoint and its moment of inertia I about it, the steering inertia Js (about the vertical steering axis
// through the front contact point) and the rear wheels' spin inertia Jw; a diagonal, constant M and V = 0.
// The psi column of A is zero (the front wheel's lateral force passes through the steering axis), so under the
// free nonholonomic motion psi turns at a constant rate; with psid = 0 the energy (m + I tan^2(psi)/L^2 +
// Jw/r^2) v^2/2 fixes the forward speed v = r phid: the free motion is then the same circle as the kinematic
// motion under constant inputs, of radius L / tan psi (closed_form).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct KinematicCar {
  static constexpr const char* kName = "kinematic_car";
  static constexpr const char* kDescription =
      "front-wheel-steered car, rolling rear wheels and a front wheel that does not slip sideways; q = (x, y, "
      "theta, psi steering, phi rear wheel), actuated (psi, phi): a kinematic system (seed 000 eq. 2.14)";
  static constexpr int kDof = 5;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "psi", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad", "rad"};
  static constexpr int kConstraints = 3;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // The prescribed (shape) coordinates: steering angle and rear-wheel angle.
  static constexpr std::array kActuatedCoordinates = {3, 4};

  double L = 1.0;    // wheelbase
  double r = 0.3;    // rear wheel radius
  double m = 1.0;    // body mass (at the rear-axle midpoint)
  double I = 0.5;    // body moment of inertia about the rear-axle midpoint
  double Js = 0.01;  // steering inertia
  double Jw = 0.05;  // rear wheels' spin inertia
  static constexpr std::array kParameters = {
      ParameterSpec<KinematicCar>{"L", &KinematicCar::L, "wheelbase, rear axle to front contact point [m]"},
      ParameterSpec<KinematicCar>{"r", &KinematicCar::r, "rear wheel radius [m]"},
      ParameterSpec<KinematicCar>{"m", &KinematicCar::m, "body mass, at the rear-axle midpoint [kg]"},
      ParameterSpec<KinematicCar>{"I", &KinematicCar::I, "body moment of inertia about the rear-axle midpoint [kg m^2]"},
      ParameterSpec<KinematicCar>{"Js", &KinematicCar::Js, "steering moment of inertia [kg m^2]"},
      ParameterSpec<KinematicCar>{"Jw", &KinematicCar::Jw, "rear wheels' spin moment of inertia [kg m^2]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"rear_axle_midpoint", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
  }
  int dof() const { return 5; }
  int constraints() const { return 3; }
  void validate() const {
    auto positive = [](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v))
        throw InputError(std::string("kinematic_car: parameter ") + name + " must be > 0");
    };
    positive(L, "L");
    positive(r, "r");
    positive(m, "m");
    positive(I, "I");
    positive(Js, "Js");
    positive(Jw, "Jw");
  }

  template <class T>
  void mass_matrix(const VecN<T, 5>&, MatN<T, 5, 5>& M) const {
    M.setZero();
    M(0, 0) = T(m);
    M(1, 1) = T(m);
    M(2, 2) = T(I);
    M(3, 3) = T(Js);
    M(4, 4) = T(Jw);
  }
  template <class T>
  T potential(const VecN<T, 5>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 5>& q, MatN<T, 3, 5>& A) const {
    using std::cos;
    using std::sin;
    const T c = cos(q[2]), s = sin(q[2]);
    const T cf = cos(q[2] + q[3]), sf = sin(q[2] + q[3]);
    A.setZero();
    A(0, 0) = c;
    A(0, 1) = s;
    A(0, 4) = T(-r);
    A(1, 0) = -s;
    A(1, 1) = c;
    A(2, 0) = -sf;
    A(2, 1) = cf;
    A(2, 2) = L * cos(q[3]);
  }

  // Constant steering psi and wheel rate phid (psid0 = 0): forward speed v = r phid, turning rate
  // w = v tan(psi) / L, a circle of radius L / tan(psi) (a line for psi = 0). The chord form
  // t sinc(w t / 2) (cos, sin)(theta0 + w t / 2) stays exact as w -> 0. Both the free motion (see the header
  // comment) and the kinematic motion with constant inputs. false when psid0 != 0 (the free steering then
  // turns and the speed varies: no closed form).
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    if (qd0[3] != 0) return false;
    const double psi = q0[3], wheel = qd0[4], v = r * wheel, w = v * std::tan(psi) / L;
    const double half = 0.5 * w * t, th = q0[2] + w * t;
    const double chord = v * t * (half == 0 ? 1.0 : std::sin(half) / half);
    q << q0[0] + chord * std::cos(q0[2] + half), q0[1] + chord * std::sin(q0[2] + half), th, psi, q0[4] + wheel * t;
    qd << v * std::cos(th), v * std::sin(th), w, 0.0, wheel;
    return true;
  }

  // Steering 0.3 rad, rear wheels at 1 rad/s: v = 0.3 m/s on a circle of radius L / tan(0.3) = 3.23 m.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double psi = 0.3, wheel = 1.0, v = r * wheel;
    q0 << 0, 0, 0, psi, 0;
    qd0 << v, 0, v * std::tan(psi) / L, 0, wheel;
  }
};

}  // namespace clm
