// A charged particle in a uniform magnetic field B e_z, moving in the plane z = 0: q = (x, y), no constraints.
// The field enters the Lagrangian as a term linear in qd (the Problem's optional gyroscopic member,
// core/problem.hpp) through the vector potential A(q) = B/2 (-y, x) (curl A = B e_z) [Goldstein-2002, section 1.5]:
//   L = m/2 (xd^2 + yd^2) + e qd . A(q),   a(q) = e A(q) = e B/2 (-y, x),   V = 0.
// The Euler-Lagrange equations M qdd + (Da - Da^T) qd = 0 are the Lorentz force m qdd = e qd x B,
//   m xdd = e B yd,   m ydd = -e B xd,
// which the core derives by autodiff from a(q). The motion is a circle of radius m |v| / |e B| traversed
// clockwise (for e B > 0) with the cyclotron frequency omega = e B / m, period 2 pi m / |e B|; the speed, and so
// the energy T = m/2 |qd|^2, is constant (the magnetic force does no work). It is the suite's test of
// gyroscopic terms (closed form to round-off) and of problems without constraints (m = 0 rows).
#pragma once

#include <vector>

#include <array>
#include <cmath>

#include "core/problem.hpp"
#include "problems/parameter_checks.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct ChargedParticle {
  static constexpr const char* kName = "charged_particle";
  static constexpr const char* kDescription =
      "charged particle in a uniform magnetic field B e_z, q = (x, y), L = m/2 |qd|^2 + e qd . A(q), "
      "A = B/2 (-y, x); no constraints; closed-form circle of radius m v / (e B)";
  static constexpr int kDof = 2;
  static constexpr const char* kCoordinateNames[] = {"x", "y"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m"};
  // No constraint rows: holonomic with h empty (nothing to drift).
  static constexpr int kConstraints = 0;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;

  double m = 1.0;
  double e = 1.0;
  double B = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<ChargedParticle>{"m", &ChargedParticle::m, "mass [kg]"},
      ParameterSpec<ChargedParticle>{"e", &ChargedParticle::e, "charge [C]"},
      ParameterSpec<ChargedParticle>{"B", &ChargedParticle::B, "magnetic flux density along z [T]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"particle", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
  }
  int dof() const { return 2; }
  int constraints() const { return 0; }
  void validate() const {
    require_positive(kName, {{m, "m"}});
    require_finite(kName, {{e, "e"}, {B, "B"}});
  }

  template <class T>
  void mass_matrix(const VecN<T, 2>&, MatN<T, 2, 2>& M) const {
    diagonal_mass_matrix<T>(M, m, m);
  }
  template <class T>
  T potential(const VecN<T, 2>&) const {
    return T(0.0);
  }
  template <class T>
  void constraint(const VecN<T, 2>&, VecN<T, 0>&) const {}
  // a(q) = e A(q), A = B/2 (-y, x) (symmetric gauge).
  template <class T>
  void gyroscopic(const VecN<T, 2>& q, VecN<T, 2>& a) const {
    a[0] = -0.5 * e * B * q[1];
    a[1] = 0.5 * e * B * q[0];
  }

  // With w = xd + i yd: wd = -i omega w, omega = e B / m, so w(t) = w0 exp(-i omega t) and
  // z(t) = x + i y = c + (i w0 / omega) exp(-i omega t), centre c = z0 - i w0 / omega. omega = 0: a line.
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const double omega = e * B / m;
    if (omega == 0) {
      q = q0 + t * qd0;
      qd = qd0;
      return true;
    }
    const double c = std::cos(omega * t), s = std::sin(omega * t);
    // w(t) = w0 (cos - i sin): (vx c + vy s, vy c - vx s).
    qd << qd0[0] * c + qd0[1] * s, qd0[1] * c - qd0[0] * s;
    // z - z0 = (i / omega)(w(t) - w0): i (u + i v) = -v + i u.
    q << q0[0] - (qd[1] - qd0[1]) / omega, q0[1] + (qd[0] - qd0[0]) / omega;
    return true;
  }
  // Centre of the circle (the guiding centre), c = z0 - i w0 / omega, for the tests.
  void circle_centre(const Vec& q, const Vec& qd, double& cx, double& cy) const {
    const double omega = e * B / m;
    cx = q[0] + qd[1] / omega;
    cy = q[1] - qd[0] / omega;
  }
  // From the origin at unit speed along x: with the defaults a unit circle centred at (0, -1).
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.0, 0.0;
    qd0 << 1.0, 0.0;
  }
};

}  // namespace clm
