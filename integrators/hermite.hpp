// Cubic Hermite interpolation on a step from end-point values and derivatives (third order); the
// off-grid sampler of methods without a dense output of their own.
#pragma once

#include "core/types.hpp"

namespace clm {

inline void hermite_interpolate(double t0, const Vec& y0, const Vec& f0, double t1, const Vec& y1, const Vec& f1,
                                double t, Vec& y) {
  const double h = t1 - t0;
  if (h == 0) {
    y = y1;
    return;
  }
  const double s = (t - t0) / h, s2 = s * s, s3 = s2 * s;
  const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
  y = h00 * y0 + (h10 * h) * f0 + h01 * y1 + (h11 * h) * f1;
}

}  // namespace clm
