// Roller racer [KT-2001] (the riding toy of [seed-000, eq. 2.13-2.16]): two rigid platforms on a horizontal
// plane joined by a revolute joint, each carried by a wheel axle that cannot slip sideways. The rider turns
// the joint angle back and forth (the actuated shape coordinate) and the toy propels itself forward.
//
// q = (x, y, theta, phi): (x, y) the centre of the front axle, theta the heading of the front platform,
// e1 = (cos theta, sin theta); phi the joint angle, the rear platform's heading psi = theta + phi. The joint
// is a distance d1 behind the front axle, the rear axle a distance d2 behind the joint:
//   r1 = (x, y),  r_joint = r1 - d1 e(theta),  r2 = r_joint - d2 e(psi).
// Each platform's centre of mass is at its axle (as in [KT-2001]; their model has m2 = 0):
//   T = m1/2 |r1'|^2 + I1/2 theta'^2 + m2/2 |r2'|^2 + I2/2 psi'^2,  V = 0,
// written below as M(q) = sum_b J_b^T diag(m_b, m_b, I_b) J_b with J_b the Jacobian of (r_b, heading_b).
// Constraints (Pfaffian, m = 2): no sideways velocity at either axle, n(theta) . r1' = 0, n(psi) . r2' = 0,
// n(a) = (-sin a, cos a), each row the normal times the axle point's Jacobian.
// phi is actuated (kActuatedCoordinates): with phi prescribed, n_p = 3 passive coordinates and m = 2 < 3
// constraints, so the racer is not "kinematic" [seed-000, eq. 2.14]; its speed follows a dynamic equation
// (docs/findings.md, "Roller racer": the small-amplitude estimate of the distance per shape cycle).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/rolling_contact.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct RollerRacer {
  static constexpr const char* kName = "roller_racer";
  static constexpr const char* kDescription =
      "two platforms on wheel axles joined by a revolute joint, joint angle phi actuated (Krishnaprasad & "
      "Tsakiris 2001); q = (x, y, theta, phi)";
  static constexpr int kDof = 4;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad"};
  // The joint angle is the shape the rider prescribes (a run's [shape] phi = ...).
  static constexpr std::array kActuatedCoordinates = {3};

  double m1 = 1.0;
  double I1 = 0.2;
  double d1 = 0.3;
  double m2 = 0.5;
  double I2 = 0.02;
  double d2 = 0.5;
  static constexpr std::array kParameters = {
      ParameterSpec<RollerRacer>{"m1", &RollerRacer::m1, "mass of the front platform, centred on its axle [kg]"},
      ParameterSpec<RollerRacer>{"I1", &RollerRacer::I1, "moment of inertia of the front platform about its axle centre [kg m^2]"},
      ParameterSpec<RollerRacer>{"d1", &RollerRacer::d1, "distance from the front axle back to the joint [m]"},
      ParameterSpec<RollerRacer>{"m2", &RollerRacer::m2, "mass of the rear platform, centred on its axle [kg]"},
      ParameterSpec<RollerRacer>{"I2", &RollerRacer::I2, "moment of inertia of the rear platform about its axle centre [kg m^2]"},
      ParameterSpec<RollerRacer>{"d2", &RollerRacer::d2, "distance from the joint back to the rear axle [m]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"front_axle", "m"}, {"rear_axle", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
    out[2] = q[0] - d1 * std::cos(q[2]) - d2 * std::cos(q[2] + q[3]);  // - d1 e(theta) - d2 e(theta + phi)
    out[3] = q[1] - d1 * std::sin(q[2]) - d2 * std::sin(q[2] + q[3]);
  }
  int dof() const { return kDof; }
  int constraints() const { return kConstraints; }
  void validate() const {
    if (!(m1 > 0)) throw InputError("roller_racer: parameter m1 must be > 0");
    if (!(I1 > 0)) throw InputError("roller_racer: parameter I1 must be > 0");
    if (!(m2 >= 0) || !std::isfinite(m2)) throw InputError("roller_racer: parameter m2 must be >= 0 and finite");
    if (!(I2 > 0)) throw InputError("roller_racer: parameter I2 must be > 0");
    if (!(d1 > 0) || !std::isfinite(d1)) throw InputError("roller_racer: parameter d1 must be > 0 and finite");
    if (!(d2 > 0) || !std::isfinite(d2)) throw InputError("roller_racer: parameter d2 must be > 0 and finite");
    if (!std::isfinite(m1) || !std::isfinite(I1) || !std::isfinite(I2))
      throw InputError("roller_racer: masses and inertias must be finite");
  }

  // The Jacobian of the rear axle point r2(q) (2 x 4).
  template <class T>
  void rear_axle_jacobian(const VecN<T, 4>& q, MatN<T, 2, 4>& J) const {
    using std::cos;
    using std::sin;
    const T psi = q[2] + q[3];
    // r2 = (x, y) - d1 (cos theta, sin theta) - d2 (cos psi, sin psi)
    J << T(1.0), T(0.0), d1 * sin(q[2]) + d2 * sin(psi), d2 * sin(psi),  //
        T(0.0), T(1.0), -d1 * cos(q[2]) - d2 * cos(psi), -d2 * cos(psi);
  }

  template <class T>
  void mass_matrix(const VecN<T, 4>& q, MatN<T, 4, 4>& M) const {
    M.setZero();
    // Front platform: r1 = (x, y), heading theta.
    M(0, 0) += T(m1);
    M(1, 1) += T(m1);
    M(2, 2) += T(I1);
    // Rear platform: r2(q), heading psi = theta + phi.
    MatN<T, 2, 4> J;
    rear_axle_jacobian(q, J);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) M(i, j) += m2 * (J(0, i) * J(0, j) + J(1, i) * J(1, j));
    for (int i = 2; i < 4; ++i)
      for (int j = 2; j < 4; ++j) M(i, j) += T(I2);
  }
  template <class T>
  T potential(const VecN<T, 4>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 4>& q, MatN<T, 2, 4>& A) const {
    using std::cos;
    using std::sin;
    // n(theta) . r1' = 0
    blade_normal(q[2], A.row(0));
    A(0, 2) = T(0.0);
    A(0, 3) = T(0.0);
    // n(psi) . r2' = n(psi)^T J2 qd = 0
    const T psi = q[2] + q[3];
    MatN<T, 2, 4> J;
    rear_axle_jacobian(q, J);
    for (int j = 0; j < 4; ++j) A(1, j) = -sin(psi) * J(0, j) + cos(psi) * J(1, j);
  }

  // Straight (phi = 0), rolling forward at 0.5 m/s: consistent for every parameter set (both axles move along
  // their own direction). A run's [shape] then sets phi(0), phid(0) and the projection the passive velocities.
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 = Vec::Zero(4);
    qd0 = Vec::Zero(4);
    qd0[0] = 0.5;
  }
};

}  // namespace clm
