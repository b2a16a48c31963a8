// The snakeboard [Ostrowski-1994]: a board of mass m and inertia J about its centre (x, y), heading theta,
// with a rotor (inertia J_r) on a vertical axis at the centre, turned by the rider through psi relative to the
// board, and two wheel axles at distance r ahead of and behind the centre, steered by phi and -phi (they
// counter-rotate, the coupling of [Ostrowski-1994]); each axle's wheels cannot slip sideways.
// q = (x, y, theta, psi, phi). The Lagrangian is [Ostrowski-1994]'s with phi_f = phi, phi_b = -phi:
//   T = m/2 (xd^2 + yd^2) + J/2 thetad^2 + J_r/2 (thetad + psid)^2 + J_w/2 ((thetad + phid)^2 + (thetad - phid)^2),
//   V = 0  (constant M: J_t = J + J_r + 2 J_w on theta, J_r on theta-psi, 2 J_w on phi; the phi cross terms cancel).
// Constraints: the velocity of the front axle's centre (x + r cos theta, y + r sin theta) has no component
// along its axle direction (-sin(theta + phi), cos(theta + phi)), likewise the back one with -r and -phi:
//   -sin(theta + phi) xd + cos(theta + phi) yd + r cos(phi) thetad = 0,
//   -sin(theta - phi) xd + cos(theta - phi) yd - r cos(phi) thetad = 0.
// For cos(phi) != 0 the board then turns about the point where the two axle lines meet: with the body-frame
// velocity (u, v) of the centre, v = 0 and thetad = u tan(phi) / r, so the board's velocities are s xi(q),
//   xi = (r cos(phi) cos(theta), r cos(phi) sin(theta), sin(phi), 0, 0),   s = u cos(phi)/r + thetad sin(phi).
// At phi = +-pi/2 both axles are parallel to the board and the rows coincide (rank 1): the gaits of
// [Ostrowski-1994] keep |phi| < pi/2, and so must the motions run here (the constraints are not declared
// singular-position capable: a motion that reaches pi/2 leaves the model).
// Reduced momentum equation (Lagrange-d'Alembert along xi, derived in docs/findings.md "The snakeboard"): with
// K_t(phi) = m r^2 cos^2(phi) + J_t sin^2(phi),
//   d/dt (s sqrt(K_t)) = -J_r sin(phi) psidd / sqrt(K_t),                                         (1)
// whatever torques act on psi and phi (xi has no psi, phi components). With J_t = m r^2 (the simplification of
// [Ostrowski-1994]) K_t = m r^2 and this is the paper's momentum equation up to its normalisation of p.
// Unforced (no torque on psi or phi): phidd = 0 and J_r (thetadd + psidd) = 0, which turn (1) into
//   s^2 K(phi) = const,  K(phi) = m r^2 cos^2(phi) + (J + 2 J_w) sin^2(phi),                         (2)
// and thetad = s sin(phi) integrates in closed form for phi = phi0 + phid0 t (unforced_reduced_motion below,
// the independent check of the autodiff terms in tests/snakeboard_test.cpp).
// Actuated coordinates (issue 13, prescribed shape): psi and phi.
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct Snakeboard {
  static constexpr const char* kName = "snakeboard";
  static constexpr const char* kDescription =
      "snakeboard (Ostrowski et al. 1994): board with a rotor psi and two counter-steered axles phi, -phi at "
      "+-r that cannot slip sideways; q = (x, y, theta, psi, phi); psi, phi actuated (shape)";
  static constexpr int kDof = 5;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "psi", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad", "rad"};
  // The shape (issue 13): the rider drives the rotor angle psi and the axle angle phi.
  static constexpr std::array kActuatedCoordinates = {3, 4};

  // Defaults satisfy [Ostrowski-1994]'s simplification J + J_r + 2 J_w = m r^2 (0.19 + 0.05 + 0.01 = 0.25);
  // nothing here relies on it.
  double m = 1.0, J = 0.19, J_r = 0.05, J_w = 0.005, r = 0.5;
  using S = Snakeboard;
  static constexpr std::array kParameters = {
      ParameterSpec<S>{"m", &S::m, "mass of the board [kg]"},
      ParameterSpec<S>{"J", &S::J, "moment of inertia of the board about its centre [kg m^2]"},
      ParameterSpec<S>{"J_r", &S::J_r, "moment of inertia of the rotor about its (vertical) axis [kg m^2]"},
      ParameterSpec<S>{"J_w", &S::J_w, "moment of inertia of each wheel axle about its vertical pivot [kg m^2]"},
      ParameterSpec<S>{"r", &S::r, "distance from the centre to each axle (half the wheelbase) [m]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"board_centre", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
  }
  int dof() const { return 5; }
  int constraints() const { return 2; }
  void validate() const {
    for (const auto& p : kParameters)
      if (!std::isfinite(this->*(p.member)))
        throw InputError("snakeboard: parameter " + std::string(p.name) + " must be finite");
    if (!(m > 0)) throw InputError("snakeboard: parameter m must be > 0");
    if (!(J >= 0)) throw InputError("snakeboard: parameter J must be >= 0");
    // J_r > 0 and J_w > 0 keep M positive definite (psi and phi would carry no inertia otherwise).
    if (!(J_r > 0)) throw InputError("snakeboard: parameter J_r must be > 0");
    if (!(J_w > 0)) throw InputError("snakeboard: parameter J_w must be > 0");
    if (!(r > 0)) throw InputError("snakeboard: parameter r must be > 0");
  }

  double total_rotational_inertia() const { return J + J_r + 2 * J_w; }  // J_t

  template <class T>
  void mass_matrix(const VecN<T, 5>&, MatN<T, 5, 5>& M) const {
    M.setConstant(T(0.0));
    M(0, 0) = T(m);
    M(1, 1) = T(m);
    M(2, 2) = T(total_rotational_inertia());
    M(2, 3) = M(3, 2) = T(J_r);
    M(3, 3) = T(J_r);
    M(4, 4) = T(2 * J_w);
  }
  template <class T>
  T potential(const VecN<T, 5>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 5>& q, MatN<T, 2, 5>& A) const {
    using std::cos;
    using std::sin;
    const T front = q[2] + q[4], back = q[2] - q[4], rc = r * cos(q[4]);
    A(0, 0) = -sin(front);
    A(0, 1) = cos(front);
    A(0, 2) = rc;
    A(1, 0) = -sin(back);
    A(1, 1) = cos(back);
    A(1, 2) = -rc;
    A(0, 3) = A(0, 4) = A(1, 3) = A(1, 4) = T(0.0);
  }
  // Null-space basis: xi (the board turning about the axles' meeting point), psi, phi.
  template <class T>
  void velocity_basis(const VecN<T, 5>& q, MatN<T, 5, Eigen::Dynamic>& Sb) const {
    using std::cos;
    using std::sin;
    Sb.setConstant(T(0.0));
    Sb(0, 0) = r * cos(q[4]) * cos(q[2]);
    Sb(1, 0) = r * cos(q[4]) * sin(q[2]);
    Sb(2, 0) = sin(q[4]);
    Sb(3, 1) = T(1.0);
    Sb(4, 2) = T(1.0);
  }

  // s of qd = s xi + psid e_psi + phid e_phi (exact on A qd = 0): u cos(phi)/r + thetad sin(phi).
  double board_rate(const Vec& q, const Vec& qd) const {
    const double u = qd[0] * std::cos(q[2]) + qd[1] * std::sin(q[2]);
    return u * std::cos(q[4]) / r + qd[2] * std::sin(q[4]);
  }
  // K(phi) of (2) and K_t(phi) of (1).
  double reduced_inertia(double phi) const {
    const double c = std::cos(phi), s = std::sin(phi);
    return m * r * r * c * c + (J + 2 * J_w) * s * s;
  }
  double reduced_inertia_with_rotor(double phi) const { return reduced_inertia(phi) + J_r * std::sin(phi) * std::sin(phi); }

  // The unforced reduced motion (2) from a consistent (q0, qd0): phi = phi0 + phid0 t, s = s0 sqrt(K(phi0)/K(phi)),
  // theta = theta0 + int s sin(phi) dt in closed form (w = cos(phi), K = c + d w^2, c = J + 2 J_w, d = m r^2 - c:
  // int sin(phi) dphi / sqrt(K) = -int dw / sqrt(c + d w^2)), psid = (thetad0 + psid0) - thetad (no torque on
  // the rotor). Fills (theta, thetad, psid, phi, phid, s) at t. Requires |phi| < pi/2 along the way.
  struct ReducedState {
    double theta, thetad, psid, phi, phid, s;
  };
  ReducedState unforced_reduced_motion(double t, const Vec& q0, const Vec& qd0) const {
    const double phi0 = q0[4], phid = qd0[4], s0 = board_rate(q0, qd0);
    const double c = J + 2 * J_w, d = m * r * r - c;
    const double k = s0 * std::sqrt(reduced_inertia(phi0));  // s sqrt(K), conserved
    ReducedState out;
    out.phi = phi0 + phid * t;
    out.phid = phid;
    out.s = k / std::sqrt(reduced_inertia(out.phi));
    out.thetad = out.s * std::sin(out.phi);
    // F(w) = int dw / sqrt(c + d w^2); theta - theta0 = k (F(w0) - F(w)) / phid.
    auto F = [&](double w) {
      if (d > 0) return std::asinh(w * std::sqrt(d / c)) / std::sqrt(d);
      if (d < 0) return std::asin(w * std::sqrt(-d / c)) / std::sqrt(-d);
      return w / std::sqrt(c);
    };
    if (phid == 0)
      out.theta = q0[2] + out.thetad * t;
    else
      out.theta = q0[2] + k * (F(std::cos(phi0)) - F(std::cos(out.phi))) / phid;
    out.psid = qd0[2] + qd0[3] - out.thetad;
    return out;
  }

  // Gliding forward at 1 m/s with the axles at phi = 0.3 turning slowly (phid = 0.1, psid = 0): unforced,
  // the board follows (2), the rotor counter-turning as the board's turning rate changes.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double phi = 0.3, u = 1.0;
    q0 << 0, 0, 0, 0, phi;
    qd0 << u, 0, u * std::tan(phi) / r, 0, 0.1;
  }
};

}  // namespace clm
