// The accuracy figures of the Test Set for IVP Solvers of the University of Bari [Bari-testset], at the
// final time, over the components y_i of a solution and r_i of its reference:
//
//   scd   = -log10 max_i |(y_i - r_i) / r_i|                 significant correct digits (relative error)
//   mescd = -log10 max_i |y_i - r_i| / (atol/rtol + |r_i|)  mixed error significant correct digits
//
// with the run's own atol and rtol. As in the test set, a component whose reference is exactly 0 has no
// relative error and is left out of scd (mescd measures it); with atol = 0 it is left out of mescd too.
// No component left: NaN. An exact match: +inf. A NaN in y or r makes the figure NaN (never a good score).
#pragma once

#include <cmath>
#include <limits>

#include "core/types.hpp"

namespace clm {

class TestSetAccuracy {
 public:
  explicit TestSetAccuracy(double atol = 0, double rtol = 1) : floor_(rtol > 0 ? atol / rtol : 0) {}

  // Adds the components of one block of the solution (q, then qd). No allocation.
  void add(const Vec& y, const Vec& ref) {
    if (y.size() != ref.size()) {
      relative_ = mixed_ = std::numeric_limits<double>::quiet_NaN();
      counted_relative_ = counted_mixed_ = true;
      return;
    }
    for (Eigen::Index i = 0; i < y.size(); ++i) {
      const double d = std::abs(y[i] - ref[i]), r = std::abs(ref[i]);  // (NaN != 0: a NaN is kept)
      if (r != 0) keep(relative_, d / r, counted_relative_);
      if (floor_ + r != 0) keep(mixed_, d / (floor_ + r), counted_mixed_);
    }
  }

  double scd() const { return digits(relative_, counted_relative_); }
  double mescd() const { return digits(mixed_, counted_mixed_); }
  double max_relative_error() const { return counted_relative_ ? relative_ : std::numeric_limits<double>::quiet_NaN(); }

 private:
  // A running maximum in which a NaN, once seen, stays.
  static void keep(double& m, double x, bool& counted) {
    counted = true;
    if (std::isnan(m)) return;
    m = std::isnan(x) ? x : std::max(m, x);
  }
  static double digits(double e, bool counted) {
    if (!counted || std::isnan(e)) return std::numeric_limits<double>::quiet_NaN();
    return e == 0 ? std::numeric_limits<double>::infinity() : -std::log10(e);
  }

  double floor_;  // atol / rtol
  double relative_ = 0, mixed_ = 0;
  bool counted_relative_ = false, counted_mixed_ = false;
};

}  // namespace clm
