// The vakonomic skate in closed form [seed-004, slide "The vakonomic skate"]: skate_incline on the flat
// plane (g = 0) under the vakonomic equations, i.e. the Euler-Lagrange equations of L - lambda Phi with
// L = m/2 (xd^2 + yd^2) + J/2 phid^2, Phi = A qd = xd sin(phi) - yd cos(phi) (docs/design.md section 1;
// formulation `vakonomic`), for initial multiplier lambda(0) = 0.
//
// Derivation (from L - lambda Phi; not copied from the slide). x and y are cyclic, so the momenta
//   p_x = m xd - lambda sin(phi),  p_y = m yd + lambda cos(phi)
// are constant. With Phi = 0: lambda = p_y cos(phi) - p_x sin(phi), m u = p_x cos(phi) + p_y sin(phi)
// (u = xd cos(phi) + yd sin(phi), the speed along the blade, qd = (u cos phi, u sin phi, phid)), and the phi
// equation J phidd = -lambda u. The slide's condition "phi = 0 and yd + lambda cos(phi) = 0 at t = 0" (m = 1)
// is p_y = 0 with phi(0) = 0; since A qd = 0 forces yd(0) = 0 there, it says lambda(0) = 0. By the plane's
// rotation invariance the same holds for any phi(0) = phi0 with lambda(0) = 0: p = m u0 (cos phi0, sin phi0),
// u0 the initial speed along the blade. With psi = phi - phi0, w = phid(0):
//   lambda = -m u0 sin(psi),  u = u0 cos(psi),  J psidd = m u0^2 sin(psi) cos(psi),
// and in the frame of the initial heading (xi along it, eta across):
//   xid = u0 cos^2(psi),  etad = u0 sin(psi) cos(psi)
// (the slide's xd = t cos^2(phi), yd = t sin(phi) cos(phi), phidd = t^2 sin(phi) cos(phi) are the same
// equations on the incline with m = J = g = 1 from rest, where p_x = m g t grows instead of staying m u0).
// With k^2 = m u0^2 / J the phi equation integrates once to psid^2 = w^2 + k^2 sin^2(psi): psid keeps the
// sign of w. For W = |w| > 0, Omega = sqrt(W^2 + k^2), modulus kappa = k / Omega,
//   t = int_0^psi ds / sqrt(W^2 + k^2 sin^2 s) = (K(kappa) - F(pi/2 - psi | kappa)) / Omega
// (substituting s -> pi/2 - s), so
//   psi(t) = sign(w) (pi/2 - am(K(kappa) - Omega t | kappa^2))          (Jacobi amplitude),
//   eta(t) = (u0 / k^2)(psid - w) = u0 sin^2(psi) / (psid + w)         (J psidd = J k^2 sin cos: exact; the
//            second form has no cancellation as u0 -> 0),
//   xi(t)  = u0 int_0^t cos^2(psi(s)) ds, by composite 10-point Gauss-Legendre on panels of at most
//            0.5 / Omega (psi is analytic with time scale 1/Omega: accurate to rounding). Closed form in
//            Legendre's E as well, xi = u0 t - (u0 / k^2)(Omega (E(kappa) - E(pi/2 - |psi| | kappa)) - W^2 t),
//            which loses digits like eps / kappa^2 for small u0; tests/vakonomic_skate_test.cpp compares them.
// w = 0: psi = 0 (straight line, an unstable equilibrium of psi); u0 = 0: psi = w t, the skate spins in place.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/types.hpp"
#include "problems/jacobi_elliptic.hpp"
#include "problems/skate_incline.hpp"

namespace clm {

// Complete elliptic integral of the first kind K(k) = pi / (2 AGM(1, sqrt(1 - k^2))), 0 <= k < 1.
inline double complete_elliptic_k(double k) {
  double a = 1.0, b = std::sqrt((1.0 - k) * (1.0 + k));
  for (int i = 0; i < 40 && std::abs(a - b) > 1e-16 * a; ++i) {
    const double an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return M_PI / (a + b);
}

// The motion at t from consistent (q0, qd0) with lambda(0) = lambda0 (see the header comment): q, qd and the
// multiplier lambda (vakonomic sign convention). false when it does not apply: g != 0 or lambda0 != 0.
inline bool vakonomic_skate_closed_form(const SkateIncline& p, double t, const Vec& q0, const Vec& qd0,
                                        double lambda0, Vec& q, Vec& qd, double& lambda) {
  if (p.g != 0 || lambda0 != 0) return false;
  const double phi0 = q0[2], w = qd0[2];
  const double u0 = qd0[0] * std::cos(phi0) + qd0[1] * std::sin(phi0);
  const double k2 = p.m * u0 * u0 / p.J, W = std::abs(w), sgn = w < 0 ? -1.0 : 1.0;
  const double Omega = std::sqrt(W * W + k2);
  const double kappa = Omega > 0 ? std::sqrt(k2) / Omega : 0.0;
  const bool straight = (W == 0);  // psi stays 0
  const double K = straight ? 0.0 : complete_elliptic_k(kappa);
  // psi and psid at time s.
  auto angle = [&](double s, double& psi, double& psid) {
    if (straight) {
      psi = psid = 0;
      return;
    }
    const double pp = M_PI / 2 - jacobi_amplitude(K - Omega * s, kappa * kappa);
    const double sp = std::sin(pp);
    psi = sgn * pp;
    psid = sgn * std::sqrt(W * W + k2 * sp * sp);
  };
  static constexpr double kNodes[5][2] = {
      {0.14887433898163122, 0.29552422471475298}, {0.43339539412924721, 0.26926671930999652},
      {0.67940956829902444, 0.21908636251598201}, {0.86506336668898454, 0.14945134915058036},
      {0.97390652851717174, 0.066671344308688069}};
  const long panels = std::max(1L, static_cast<long>(std::ceil(std::abs(t) * Omega / 0.5)));
  const double h = t / panels;
  double xi = 0;
  for (long k = 0; k < panels; ++k) {
    const double mid = (k + 0.5) * h;
    for (const auto& [node, weight] : kNodes)
      for (double side : {-1.0, 1.0}) {
        double psi, psid;
        angle(mid + side * node * 0.5 * h, psi, psid);
        const double c = std::cos(psi);
        xi += 0.5 * h * weight * u0 * c * c;
      }
  }
  double psi, psid;
  angle(t, psi, psid);
  const double s = std::sin(psi), c = std::cos(psi);
  const double eta = (psid + w) != 0 ? u0 * s * s / (psid + w) : 0.0;
  const double u = u0 * c, phi = phi0 + psi;
  q.resize(3);
  qd.resize(3);
  q << q0[0] + xi * std::cos(phi0) - eta * std::sin(phi0), q0[1] + xi * std::sin(phi0) + eta * std::cos(phi0), phi;
  qd << u * std::cos(phi), u * std::sin(phi), psid;
  lambda = -p.m * u0 * s;
  return true;
}

}  // namespace clm
