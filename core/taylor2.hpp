// Truncated univariate Taylor arithmetic of degree 2: x(s) = c0 + c1 s + c2 s^2, one direction carried to
// second order (3 numbers per value). AutoDiffModel evaluates Adot qd of a holonomic constraint as
// d^2/ds^2 h(q + s qd) at s = 0 = 2 c2 in one pass. Comparisons, elementary functions and Eigen traits:
// core/second_order_scalar.hpp (shared with HyperDual).
#pragma once

#include "core/second_order_scalar.hpp"

namespace clm {

struct Taylor2 : SecondOrderScalar<Taylor2> {
  double c0 = 0, c1 = 0, c2 = 0;
  Taylor2() = default;
  Taylor2(double v) : c0(v) {}  // NOLINT: implicit on purpose, as for double
  Taylor2(double a, double b, double c) : c0(a), c1(b), c2(c) {}

  double value() const { return c0; }
  void set_value(double v) { c0 = v; }
  bool all_finite() const { return std::isfinite(c0) && std::isfinite(c1) && std::isfinite(c2); }
  // g(x0 + d), d = c1 s + c2 s^2: g + g' d + g''/2 d^2, truncated at s^2.
  static Taylor2 compose(const Taylor2& x, double f, double df, double ddf) {
    return {f, df * x.c1, df * x.c2 + 0.5 * ddf * x.c1 * x.c1};
  }

  Taylor2& operator+=(const Taylor2& o) { c0 += o.c0; c1 += o.c1; c2 += o.c2; return *this; }
  Taylor2& operator-=(const Taylor2& o) { c0 -= o.c0; c1 -= o.c1; c2 -= o.c2; return *this; }
  Taylor2& operator*=(const Taylor2& o) { return *this = *this * o; }
  Taylor2& operator/=(const Taylor2& o) { return *this = *this / o; }

  friend Taylor2 operator+(const Taylor2& a, const Taylor2& b) { return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2}; }
  friend Taylor2 operator-(const Taylor2& a, const Taylor2& b) { return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2}; }
  friend Taylor2 operator-(const Taylor2& a) { return {-a.c0, -a.c1, -a.c2}; }
  friend Taylor2 operator+(const Taylor2& a) { return a; }
  friend Taylor2 operator*(const Taylor2& a, const Taylor2& b) {
    return {a.c0 * b.c0, a.c0 * b.c1 + a.c1 * b.c0, a.c0 * b.c2 + a.c1 * b.c1 + a.c2 * b.c0};
  }
  friend Taylor2 operator/(const Taylor2& a, const Taylor2& b) {
    const double q0 = a.c0 / b.c0;
    const double q1 = (a.c1 - q0 * b.c1) / b.c0;
    const double q2 = (a.c2 - q0 * b.c2 - q1 * b.c1) / b.c0;
    return {q0, q1, q2};
  }
};

}  // namespace clm

namespace Eigen {
template <>
struct NumTraits<clm::Taylor2> : clm::SecondOrderNumTraits<clm::Taylor2, 3, 6> {};
}  // namespace Eigen
