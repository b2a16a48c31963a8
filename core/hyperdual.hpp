// Hyper-dual numbers x = a + b e1 + c e2 + d e1 e2 (e1^2 = e2^2 = 0): one pass through a templated problem
// function gives f, its derivatives along two directions and the mixed second derivative d^2 f / de1 de2
// exactly (to round-off). AutoDiffModel uses them for the derivatives of c (which already contains first
// derivatives of M and V) and of a holonomic A = dh/dq (formulation Jacobians, Model::dynamics_derivatives).
// Comparisons, elementary functions and Eigen traits: core/second_order_scalar.hpp (shared with Taylor2).
#pragma once

#include "core/second_order_scalar.hpp"

namespace clm {

struct HyperDual : SecondOrderScalar<HyperDual> {
  double a = 0, b = 0, c = 0, d = 0;
  HyperDual() = default;
  HyperDual(double v) : a(v) {}  // NOLINT: implicit on purpose, as for double
  HyperDual(double a_, double b_, double c_, double d_) : a(a_), b(b_), c(c_), d(d_) {}

  double value() const { return a; }
  void set_value(double v) { a = v; }
  bool all_finite() const { return std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && std::isfinite(d); }
  // g(x) from g, g', g'' at x.a: the e1 e2 part picks up g'' b c.
  static HyperDual compose(const HyperDual& x, double f, double df, double ddf) {
    return {f, df * x.b, df * x.c, df * x.d + ddf * x.b * x.c};
  }

  HyperDual& operator+=(const HyperDual& o) { a += o.a; b += o.b; c += o.c; d += o.d; return *this; }
  HyperDual& operator-=(const HyperDual& o) { a -= o.a; b -= o.b; c -= o.c; d -= o.d; return *this; }
  HyperDual& operator*=(const HyperDual& o) { return *this = *this * o; }
  HyperDual& operator/=(const HyperDual& o) { return *this = *this / o; }

  friend HyperDual operator+(const HyperDual& x, const HyperDual& y) { return {x.a + y.a, x.b + y.b, x.c + y.c, x.d + y.d}; }
  friend HyperDual operator-(const HyperDual& x, const HyperDual& y) { return {x.a - y.a, x.b - y.b, x.c - y.c, x.d - y.d}; }
  friend HyperDual operator-(const HyperDual& x) { return {-x.a, -x.b, -x.c, -x.d}; }
  friend HyperDual operator+(const HyperDual& x) { return x; }
  friend HyperDual operator*(const HyperDual& x, const HyperDual& y) {
    return {x.a * y.a, x.a * y.b + x.b * y.a, x.a * y.c + x.c * y.a, x.a * y.d + x.b * y.c + x.c * y.b + x.d * y.a};
  }
  friend HyperDual operator/(const HyperDual& x, const HyperDual& y) {
    const double q0 = x.a / y.a;
    const double q1 = (x.b - q0 * y.b) / y.a;
    const double q2 = (x.c - q0 * y.c) / y.a;
    const double q3 = (x.d - q0 * y.d - q1 * y.c - q2 * y.b) / y.a;
    return {q0, q1, q2, q3};
  }
};

}  // namespace clm

namespace Eigen {
template <>
struct NumTraits<clm::HyperDual> : clm::SecondOrderNumTraits<clm::HyperDual, 4, 10> {};
}  // namespace Eigen
