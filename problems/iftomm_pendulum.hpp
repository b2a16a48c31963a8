// IFToMM multibody benchmark A01, the simple pendulum [IFToMM-library]: a point mass m = 1 kg on a massless
// rod of length L = 1 m, g = 9.81 m/s^2, released from rest with the rod horizontal, 10 s; the benchmark's
// reference point P1 is the mass. pendulum_cartesian with its own start and energy origin (q = (x, y), y up, pivot at
// the origin, h = (x^2 + y^2 - L^2)/2, T = m/2 |qd|^2, V = m g (y + L)); what is its own is the benchmark's start and
// the closed-form motion that serves as its reference.
//
// Closed form (libration; Lawden, "Elliptic functions and applications", ch. 5):
// with theta the angle from the downward vertical (x = L sin theta, y = -L cos theta), w^2 = g / L and the
// modulus k = sin(theta_max / 2), sin^2(theta_max / 2) = sin^2(theta0 / 2) + thetad0^2 / (4 w^2) < 1,
//   sin(theta / 2) = k sn(w t + u0, k),   thetad = 2 k w cn(w t + u0, k),
// u0 = F(asin(sin(theta0 / 2) / k), k) when thetad0 >= 0, 2 K(k) - F(...) otherwise (sn then decreasing).
// Released horizontally: k = sin(pi/4), u0 = K. Jacobi's sn, cn by the descending Landen (AGM) transformation
// (Abramowitz and Stegun, Handbook of Mathematical Functions, 16.4) to round-off; F and K from C++17's std::ellint_1 / std::comp_ellint_1.
// Rotating motions (k >= 1) and g <= 0 have no closed form here (false: the error columns are "-").
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "core/problem.hpp"
#include "problems/jacobi_elliptic.hpp"
#include "problems/pendulum_cartesian.hpp"

namespace clm {

// The mass matrix, constraint and closed-form multiplier are pendulum_cartesian's (inherited); what this
// problem states is the benchmark's name, start, energy origin and closed-form motion.
struct IftommPendulum : PendulumCartesian {
  static constexpr const char* kName = "iftomm_pendulum";
  static constexpr const char* kDescription =
      "IFToMM benchmark A01: simple pendulum (point mass, massless rod) released horizontally, q = (x, y); "
      "closed-form (elliptic) reference";
  // The benchmark's reference point P1 is the mass, q itself (core/published_reference.hpp).
  static constexpr const char* kReferencePointName = "P1";
  static constexpr std::array kReferencePointCoordinates = {0, 1};
  static constexpr std::array kParameters = {
      ParameterSpec<IftommPendulum>{"m", &IftommPendulum::m, "point mass [kg]"},
      ParameterSpec<IftommPendulum>{"L", &IftommPendulum::L, "rod length [m]"},
      ParameterSpec<IftommPendulum>{"g", &IftommPendulum::g, "gravity [m/s^2], along -y"},
  };

  void validate() const {
    if (!(m > 0) || !std::isfinite(m)) throw InputError("iftomm_pendulum: parameter m must be > 0");
    if (!(L > 0) || !std::isfinite(L)) throw InputError("iftomm_pendulum: parameter L must be > 0");
    if (!std::isfinite(g)) throw InputError("iftomm_pendulum: parameter g must be finite");
  }

  // Height measured from the lowest point (y = -L): the same forces as m g y, but the energy of the benchmark's
  // start is m g L, not 0, so the relative energy error of the summary is relative to something.
  template <class T>
  T potential(const VecN<T, 2>& q) const {
    return m * g * (q[1] + L);
  }
  // The benchmark's start: the rod horizontal (mass at (L, 0)), at rest.
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << L, 0.0;
    qd0 << 0.0, 0.0;
  }

  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    if (!(g > 0)) return false;
    const double w = std::sqrt(g / L);
    const double theta0 = std::atan2(q0[0], -q0[1]);
    const double thetad0 = (q0[0] * qd0[1] - q0[1] * qd0[0]) / (q0[0] * q0[0] + q0[1] * q0[1]);  // (r x v)/r^2
    const double s0 = std::sin(0.5 * theta0);
    const double k2 = s0 * s0 + thetad0 * thetad0 / (4 * w * w);
    if (!(k2 < 1)) return false;  // rotation (or the upright separatrix): no libration closed form
    const double k = std::sqrt(k2);
    if (k == 0) {  // hanging at rest
      q = q0;
      qd.setZero(2);
      return true;
    }
    const double phi = std::asin(std::clamp(s0 / k, -1.0, 1.0));
    const double F = std::ellint_1(k, phi);
    const double u0 = thetad0 >= 0 ? F : 2 * std::comp_ellint_1(k) - F;
    double sn, cn, dn;
    jacobi(w * t + u0, k2, sn, cn, dn);
    const double theta = 2 * std::asin(std::clamp(k * sn, -1.0, 1.0));
    const double thetad = 2 * k * w * cn;
    q.resize(2);
    qd.resize(2);
    q << L * std::sin(theta), -L * std::cos(theta);
    qd << L * std::cos(theta) * thetad, L * std::sin(theta) * thetad;
    return true;
  }

  // Jacobi's sn, cn, dn of u with parameter m = k^2 (0 <= m < 1): problems/jacobi_elliptic.hpp.
  static void jacobi(double u, double mpar, double& sn, double& cn, double& dn) {
    const double phi = jacobi_amplitude(u, mpar, &dn);
    sn = std::sin(phi);
    cn = std::cos(phi);
  }
};

}  // namespace clm
