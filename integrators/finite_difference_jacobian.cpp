#include "integrators/finite_difference_jacobian.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clm {

long finite_difference_jacobian(OdeSystem& sys, double t, const Vec& y, const Vec& f, Vec& y_work, Vec& f_work,
                                Mat& J) {
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  const long n = y.size();
  y_work = y;
  for (long j = 0; j < n; ++j) {
    const double delta = std::sqrt(kEps * std::max(1e-5, std::abs(y[j])));
    y_work[j] = y[j] + delta;
    // The increment actually represented in floating point (y + delta - y), not delta itself.
    const double step = y_work[j] - y[j];
    sys.rhs(t, y_work, f_work);
    J.col(j) = (f_work - f) / step;
    y_work[j] = y[j];
  }
  return n;
}

}  // namespace clm
