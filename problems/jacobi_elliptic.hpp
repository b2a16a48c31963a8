// Jacobi's elliptic functions by the descending Landen transformation (arithmetic-geometric mean)
// [AS-1964, 16.4], shared by the closed forms that need them (iftomm_pendulum's libration, the vakonomic
// skate's turning angle). Round-off accuracy for 0 <= m <= 1 - 1e-12; continuous and increasing in u.
#pragma once

#include <algorithm>
#include <cmath>

namespace clm {

// The amplitude am(u | m), 0 <= m < 1, and dn(u | m) (sn = sin am, cn = cos am).
inline double jacobi_amplitude(double u, double mpar, double* dn = nullptr) {
  constexpr int kLevels = 40;  // the loop stops at round-off after a handful of levels
  double a[kLevels + 1], c[kLevels + 1];
  a[0] = 1.0;
  double b = std::sqrt(1.0 - mpar);
  c[0] = std::sqrt(mpar);
  int n = 0;
  while (n < kLevels && std::abs(c[n]) > 1e-16 * a[n]) {
    a[n + 1] = 0.5 * (a[n] + b);
    c[n + 1] = 0.5 * (a[n] - b);
    b = std::sqrt(a[n] * b);
    ++n;
  }
  double phi = std::ldexp(a[n] * u, n);
  for (int i = n; i > 0; --i) phi = 0.5 * (phi + std::asin(std::clamp(c[i] / a[i] * std::sin(phi), -1.0, 1.0)));
  // dn = sqrt(1 - m sn^2), in [sqrt(1 - m), 1]. Not Landen's cos(phi_0) / cos(phi_1 - phi_0) [AS-1964, 16.4.4]:
  // that is 0/0 where am passes an odd multiple of pi/2 with phi_1 - phi_0 near pi/2, and gave dn off by O(1)
  // there (found by n_four_bar's rotating closed form against RK4).
  if (dn) {
    const double sn = std::sin(phi);
    *dn = std::sqrt(std::max(0.0, 1.0 - mpar * sn * sn));
  }
  return phi;
}

}  // namespace clm
