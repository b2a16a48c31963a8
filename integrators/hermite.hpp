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

// The start (t, y, f = y') of the last step, kept by the methods that sample it with the Hermite interpolant.
struct StepStart {
  double t = 0;
  Vec y, f;

  // (t0, y0, f0) becomes the start: call before the step moves the state on.
  void keep(double t0, const Vec& y0, const Vec& f0) {
    y = y0;
    f = f0;
    t = t0;
  }
  // The state at `at` on the step from here to its end (t1, y1, f1).
  void interpolate(double t1, const Vec& y1, const Vec& f1, double at, Vec& out) const {
    hermite_interpolate(t, y, f, t1, y1, f1, at, out);
  }
};

}  // namespace clm
