// Suslov's problem [Suslov-1902], [Bloch-2003], [seed-004, "Servo constraints"]: a rigid body
// with a fixed point whose body angular velocity omega is kept orthogonal to a body-fixed vector l,
// (omega, l) = 0.
//
// Chart: ZXZ Euler angles q = (phi, theta, psi), orientation R = Rz(phi) Rx(theta) Rz(psi) (body to space).
// Body angular velocity (R^T Rdot = [omega]_x; geometry, checked against R^T Rdot in tests/suslov_test.cpp):
//   omega = J(q) qd,  J = [ sin(theta) sin(psi),  cos(psi), 0 ]
//                         [ sin(theta) cos(psi), -sin(psi), 0 ]
//                         [ cos(theta),           0,        1 ],   det J = -sin(theta).
// The chart is singular at sin(theta) = 0 (body e3 along space Z): M = J^T I J is singular there and the
// runs fail. default_initial starts at theta = pi/2, the middle of the chart.
//   T = 1/2 omega^T I omega (I the full inertia tensor in body axes, I12, I13, I23 allowed), V = 0,
//   constraint A(q) qd = l^T J(q) qd = 0: the reaction A^T lambda = J^T (lambda l) is a body torque lambda l.
//
// Servo version [seed-004]: the constraint realized by a control torque lambda n along a second body vector
// n instead of the ideal reaction along l: servo direction "control_torque", B(q) = n^T J(q). Beghin's
// realizability condition A M^-1 B^T != 0 is here l^T I^-1 n != 0 (J cancels). [seed-004] says it fails
// when l is orthogonal to n; that is the case I = identity: for a general body it fails when l is orthogonal
// to I^-1 n (tests check both). n = l gives B = A, Suslov's nonholonomic motion.
//
// Closed form (l along e3, I12 = 0; derived here): omega3 = 0 and
// Euler's equations I omegad + omega x I omega = lambda e3 give, rows 1 and 2, with s = I13 w1 + I23 w2,
//   I11 w1d = -w2 s,   I22 w2d = w1 s,
// so E = (I11 w1^2 + I22 w2^2)/2 is conserved; w1 = a cos(psi), w2 = b sin(psi), a = sqrt(2E/I11),
// b = sqrt(2E/I22) (psi here is an angle on the energy ellipse, not the Euler angle) and both rows give
//   psid = (I13 a cos(psi) + I23 b sin(psi)) / sqrt(I11 I22) = R cos(psi - alpha),
//   R = sqrt(I13^2 a^2 + I23^2 b^2) / sqrt(I11 I22),  alpha = atan2(I23 b, I13 a).
// chi = psi - alpha (shifted by pi where cos(psi0 - alpha) < 0, sigma = -1, else sigma = 1) obeys
// chid = sigma R cos(chi): sin(chi) = tanh(z), cos(chi) = 1/cosh(z), z = sigma R t + asinh(tan(psi0 - alpha)).
// As t -> -inf / +inf the body goes from one steady rotation (about the axis a cos(alpha -+ pi/2) e1 + ...)
// to the opposite-side one, in a time of order 1/R. Euler angles along it need the kinematic equation
// integrated, so the closed form is of omega only (angular_velocity_closed_form), not Model::closed_form.
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "problems/body_velocity_spec.hpp"

namespace clm {

struct Suslov {
  static constexpr const char* kName = "suslov";
  static constexpr const char* kDescription =
      "Suslov's problem: rigid body with a fixed point, body angular velocity orthogonal to a body vector l; "
      "ZXZ Euler angles q = (phi, theta, psi), singular at sin(theta) = 0";
  static constexpr int kDof = 3;
  static constexpr const char* kCoordinateNames[] = {"phi", "theta", "psi"};
  static constexpr const char* kCoordinateUnits[] = {"rad", "rad", "rad"};
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  // Servo directions (formulations/servo_direction.hpp): index `which` of servo_direction().
  static constexpr std::array<const char*, 1> kServoDirections = {"control_torque"};

  double I11 = 2.0, I22 = 3.0, I33 = 4.0, I12 = 0.0, I13 = 0.4, I23 = -0.3;
  double l1 = 0.0, l2 = 0.0, l3 = 1.0;
  double n1 = 0.0, n2 = 0.0, n3 = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<Suslov>{"I11", &Suslov::I11, "inertia tensor, body axes [kg m^2]"},
      ParameterSpec<Suslov>{"I22", &Suslov::I22, "inertia tensor [kg m^2]"},
      ParameterSpec<Suslov>{"I33", &Suslov::I33, "inertia tensor [kg m^2]"},
      ParameterSpec<Suslov>{"I12", &Suslov::I12, "inertia tensor, off-diagonal [kg m^2]"},
      ParameterSpec<Suslov>{"I13", &Suslov::I13, "inertia tensor, off-diagonal [kg m^2]"},
      ParameterSpec<Suslov>{"I23", &Suslov::I23, "inertia tensor, off-diagonal [kg m^2]"},
      ParameterSpec<Suslov>{"l1", &Suslov::l1, "constraint vector l (omega . l = 0), body axes"},
      ParameterSpec<Suslov>{"l2", &Suslov::l2, "constraint vector l"},
      ParameterSpec<Suslov>{"l3", &Suslov::l3, "constraint vector l"},
      ParameterSpec<Suslov>{"n1", &Suslov::n1, "servo: control torque direction n, body axes (servo_direction = control_torque)"},
      ParameterSpec<Suslov>{"n2", &Suslov::n2, "servo: control torque direction n"},
      ParameterSpec<Suslov>{"n3", &Suslov::n3, "servo: control torque direction n"},
  };

  int dof() const { return 3; }
  int constraints() const { return 1; }

  Eigen::Matrix3d inertia() const {
    Eigen::Matrix3d I;
    I << I11, I12, I13, I12, I22, I23, I13, I23, I33;
    return I;
  }
  Eigen::Vector3d l() const { return {l1, l2, l3}; }
  Eigen::Vector3d n() const { return {n1, n2, n3}; }

  void validate() const {
    for (const auto& spec : kParameters)
      if (!std::isfinite(this->*(spec.member)))
        throw InputError("suslov: parameter " + std::string(spec.name) + " must be finite");
    // Sylvester's criterion on the leading minors (a physical tensor also obeys the triangle inequalities
    // of the principal moments; only definiteness matters for the equations).
    const Eigen::Matrix3d I = inertia();
    if (!(I11 > 0 && I11 * I22 - I12 * I12 > 0 && I.determinant() > 0))
      throw InputError("suslov: inertia tensor (I11 I22 I33 I12 I13 I23) must be positive definite");
    if (l().squaredNorm() == 0) throw InputError("suslov: constraint vector (l1, l2, l3) must be nonzero");
  }

  // Body velocities (problems/body_velocity_spec.hpp): omega in body axes, whose closed form is known.
  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kVelocities{{"omega1", "rad/s", "body angular velocity, body axis 1"},
                                                          {"omega2", "rad/s", "body angular velocity, body axis 2"},
                                                          {"omega3", "rad/s", "body angular velocity, body axis 3"}};
    return kVelocities;
  }
  void body_velocity_values(double /*t*/, const Vec& q, const Vec& qd, Vec& out) const {
    const Eigen::Vector3d w = body_angular_velocity(q, qd);
    for (int k = 0; k < 3; ++k) out[k] = w[k];
  }

  // omega = J(q) qd in body axes (the chart's geometry, no dynamics).
  template <class T>
  static void angular_velocity_map(const VecN<T, 3>& q, MatN<T, 3, 3>& J) {
    using std::cos;
    using std::sin;
    const T st = sin(q[1]), ct = cos(q[1]), sp = sin(q[2]), cp = cos(q[2]);
    J(0, 0) = st * sp; J(0, 1) = cp;  J(0, 2) = T(0.0);
    J(1, 0) = st * cp; J(1, 1) = -sp; J(1, 2) = T(0.0);
    J(2, 0) = ct;      J(2, 1) = T(0.0); J(2, 2) = T(1.0);
  }
  static Eigen::Vector3d body_angular_velocity(const Vec& q, const Vec& qd) {
    MatN<double, 3, 3> J;
    angular_velocity_map<double>(VecN<double, 3>(q), J);
    return J * qd.head<3>();
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>& q, MatN<T, 3, 3>& M) const {
    MatN<T, 3, 3> J;
    angular_velocity_map(q, J);
    M = J.transpose() * inertia().template cast<T>() * J;
  }
  template <class T>
  T potential(const VecN<T, 3>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    MatN<T, 3, 3> J;
    angular_velocity_map(q, J);
    A = l().template cast<T>().transpose() * J;
  }
  // which = 0, "control_torque": a body torque along n, B = n^T J.
  template <class T>
  void servo_direction(const VecN<T, 3>& q, MatN<T, 1, 3>& B, int /*which*/) const {
    MatN<T, 3, 3> J;
    angular_velocity_map(q, J);
    B = n().template cast<T>().transpose() * J;
  }

  // Whether angular_velocity_closed_form applies: l along e3 and I12 = 0.
  bool has_angular_velocity_closed_form() const { return l1 == 0 && l2 == 0 && l3 != 0 && I12 == 0; }
  // Body angular velocity at t from w0 (w0 . e3 = 0) for l along e3, I12 = 0 (header comment); false when
  // the parameters do not allow it or w0 is off the constraint.
  bool angular_velocity_closed_form(double t, const Eigen::Vector3d& w0, Eigen::Vector3d& w) const {
    if (!has_angular_velocity_closed_form() || w0[2] != 0) return false;
    const double E2 = I11 * w0[0] * w0[0] + I22 * w0[1] * w0[1];  // 2E
    if (E2 == 0) {
      w.setZero();
      return true;
    }
    const double a = std::sqrt(E2 / I11), b = std::sqrt(E2 / I22);
    const double R = std::hypot(I13 * a, I23 * b) / std::sqrt(I11 * I22);
    if (R == 0) {  // I13 = I23 = 0: every rotation about an axis in the e1-e2 plane is steady
      w = w0;
      return true;
    }
    const double alpha = std::atan2(I23 * b, I13 * a);
    const double psi0 = std::atan2(w0[1] / b, w0[0] / a);
    const double c0 = std::cos(psi0 - alpha), s0 = std::sin(psi0 - alpha);
    const double sigma = c0 >= 0 ? 1.0 : -1.0;
    // tan(chi0) = tan(psi0 - alpha); c0 = 0 gives z = +-inf, the steady rotation itself.
    const double z = sigma * R * t + std::asinh(s0 / c0);
    const double sin_chi = std::tanh(z), cos_chi = 1.0 / std::cosh(z);
    const double ca = std::cos(alpha), sa = std::sin(alpha);
    w << a * sigma * (ca * cos_chi - sa * sin_chi), b * sigma * (sa * cos_chi + ca * sin_chi), 0.0;
    return true;
  }

  // theta = pi/2 (mid-chart), omega0 = the part of (1, 0.5, 0.2) orthogonal to l (or of (0.2, 1, 0.5) when
  // that is too small), rescaled to |omega0| = 1; qd0 = J(q0)^-1 omega0 = (w2, w1, w3) there.
  void default_initial(Vec& q0, Vec& qd0) const {
    const Eigen::Vector3d lh = l().normalized();
    Eigen::Vector3d w(1.0, 0.5, 0.2);
    w -= w.dot(lh) * lh;
    if (w.norm() < 0.3) {
      w = Eigen::Vector3d(0.2, 1.0, 0.5);
      w -= w.dot(lh) * lh;
    }
    w.normalize();
    q0 << 0.0, M_PI / 2, 0.0;
    qd0 << w[1], w[0], w[2];
  }
};

}  // namespace clm
