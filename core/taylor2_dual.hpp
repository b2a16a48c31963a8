// Taylor2Dual: a degree-2 truncated Taylor series in s whose coefficients carry one first-order dual part e
// (e^2 = 0): x(s, e) = (c0 + c1 s + c2 s^2) + e (d0 + d1 s + d2 s^2), 6 numbers per value. Seeded with
// q + s qd + e e_l, one pass through a holonomic constraint h gives d^2/ds^2 h (the bias qd^T h_qq qd, as
// Taylor2 does) and its derivative along e_l, the third-order term h_qqq[qd, qd, e_l]: the derivative of the
// acceleration-level bias with respect to q that the formulation Jacobians of kkt and schur need
// (Model::dynamics_derivatives). A third-order quantity: no second-order scalar (Taylor2, HyperDual) can carry
// it, and nested ceres::Jet does not compose with Eigen (core/second_order_scalar.hpp), so this scalar has its
// own elementary functions, each composed from f, f', f'', f''' at the value (the same set of functions as
// core/second_order_scalar.hpp: a problem that compiles with HyperDual compiles with this).
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace clm {

struct Taylor2Dual {
  double c0 = 0, c1 = 0, c2 = 0;  // the series in s
  double d0 = 0, d1 = 0, d2 = 0;  // its e part
  Taylor2Dual() = default;
  Taylor2Dual(double v) : c0(v) {}  // NOLINT: implicit on purpose, as for double
  Taylor2Dual(double a0, double a1, double a2, double b0, double b1, double b2)
      : c0(a0), c1(a1), c2(a2), d0(b0), d1(b1), d2(b2) {}

  double value() const { return c0; }
  void set_value(double v) { c0 = v; }
  bool all_finite() const {
    return std::isfinite(c0) && std::isfinite(c1) && std::isfinite(c2) && std::isfinite(d0) && std::isfinite(d1) &&
           std::isfinite(d2);
  }
  // g(X + e Y) = g(X) + e g'(X) Y, both series truncated at s^2: g(X) needs g, g', g''; g'(X) needs g', g'', g'''.
  static Taylor2Dual compose(const Taylor2Dual& x, double f, double df, double ddf, double dddf) {
    const double g0 = df, g1 = ddf * x.c1, g2 = ddf * x.c2 + 0.5 * dddf * x.c1 * x.c1;  // g'(X)
    return {f,
            df * x.c1,
            df * x.c2 + 0.5 * ddf * x.c1 * x.c1,
            g0 * x.d0,
            g0 * x.d1 + g1 * x.d0,
            g0 * x.d2 + g1 * x.d1 + g2 * x.d0};
  }

  Taylor2Dual& operator+=(const Taylor2Dual& o) { return *this = *this + o; }
  Taylor2Dual& operator-=(const Taylor2Dual& o) { return *this = *this - o; }
  Taylor2Dual& operator*=(const Taylor2Dual& o) { return *this = *this * o; }
  Taylor2Dual& operator/=(const Taylor2Dual& o) { return *this = *this / o; }

  friend Taylor2Dual operator+(const Taylor2Dual& a, const Taylor2Dual& b) {
    return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2, a.d0 + b.d0, a.d1 + b.d1, a.d2 + b.d2};
  }
  friend Taylor2Dual operator-(const Taylor2Dual& a, const Taylor2Dual& b) {
    return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2, a.d0 - b.d0, a.d1 - b.d1, a.d2 - b.d2};
  }
  friend Taylor2Dual operator-(const Taylor2Dual& a) { return {-a.c0, -a.c1, -a.c2, -a.d0, -a.d1, -a.d2}; }
  friend Taylor2Dual operator+(const Taylor2Dual& a) { return a; }
  friend Taylor2Dual operator*(const Taylor2Dual& a, const Taylor2Dual& b) {
    return {a.c0 * b.c0,
            a.c0 * b.c1 + a.c1 * b.c0,
            a.c0 * b.c2 + a.c1 * b.c1 + a.c2 * b.c0,
            a.c0 * b.d0 + a.d0 * b.c0,
            a.c0 * b.d1 + a.c1 * b.d0 + a.d0 * b.c1 + a.d1 * b.c0,
            a.c0 * b.d2 + a.c1 * b.d1 + a.c2 * b.d0 + a.d0 * b.c2 + a.d1 * b.c1 + a.d2 * b.c0};
  }
  // a / b = a * (1/b), 1/b composed like any function of b.
  friend Taylor2Dual operator/(const Taylor2Dual& a, const Taylor2Dual& b) {
    const double v = b.c0, r = 1 / v;
    return a * compose(b, r, -r * r, 2 * r * r * r, -6 * r * r * r * r);
  }

  friend bool operator<(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 < b.c0; }
  friend bool operator>(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 > b.c0; }
  friend bool operator<=(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 <= b.c0; }
  friend bool operator>=(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 >= b.c0; }
  friend bool operator==(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 == b.c0; }
  friend bool operator!=(const Taylor2Dual& a, const Taylor2Dual& b) { return a.c0 != b.c0; }

  friend Taylor2Dual sin(const Taylor2Dual& x) {
    const double s = std::sin(x.c0), c = std::cos(x.c0);
    return compose(x, s, c, -s, -c);
  }
  friend Taylor2Dual cos(const Taylor2Dual& x) {
    const double s = std::sin(x.c0), c = std::cos(x.c0);
    return compose(x, c, -s, -c, s);
  }
  friend Taylor2Dual exp(const Taylor2Dual& x) {
    const double e = std::exp(x.c0);
    return compose(x, e, e, e, e);
  }
  friend Taylor2Dual log(const Taylor2Dual& x) {
    const double v = x.c0;
    return compose(x, std::log(v), 1 / v, -1 / (v * v), 2 / (v * v * v));
  }
  friend Taylor2Dual sqrt(const Taylor2Dual& x) {
    const double v = x.c0, r = std::sqrt(v);
    return compose(x, r, 0.5 / r, -0.25 / (r * v), 0.375 / (r * v * v));
  }
  friend Taylor2Dual tan(const Taylor2Dual& x) {
    const double t = std::tan(x.c0), d = 1 + t * t;
    return compose(x, t, d, 2 * t * d, 2 * d * d + 4 * t * t * d);
  }
  friend Taylor2Dual atan(const Taylor2Dual& x) {
    const double v = x.c0, d = 1 / (1 + v * v);
    return compose(x, std::atan(v), d, -2 * v * d * d, -2 * d * d + 8 * v * v * d * d * d);
  }
  // atan2 = atan(y/x) up to a branch constant, whose derivatives are those of atan(y/x).
  friend Taylor2Dual atan2(const Taylor2Dual& y, const Taylor2Dual& x) {
    Taylor2Dual r = atan(y / x);
    r.set_value(std::atan2(y.c0, x.c0));
    return r;
  }
  friend Taylor2Dual pow(const Taylor2Dual& x, double p) {
    const double v = x.c0, f = std::pow(v, p);
    return compose(x, f, p * f / v, p * (p - 1) * f / (v * v), p * (p - 1) * (p - 2) * f / (v * v * v));
  }
  friend Taylor2Dual abs(const Taylor2Dual& x) { return x.c0 < 0 ? -x : x; }
  friend bool isfinite(const Taylor2Dual& x) { return x.all_finite(); }
};

}  // namespace clm

namespace Eigen {
template <>
struct NumTraits<clm::Taylor2Dual> : NumTraits<double> {
  using Real = clm::Taylor2Dual;
  using NonInteger = clm::Taylor2Dual;
  using Nested = clm::Taylor2Dual;
  using Literal = clm::Taylor2Dual;
  enum { IsComplex = 0, IsInteger = 0, IsSigned = 1, RequireInitialization = 1, ReadCost = 6, AddCost = 6, MulCost = 21 };
};
}  // namespace Eigen
