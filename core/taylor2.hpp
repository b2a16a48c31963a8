// Truncated univariate Taylor arithmetic of degree 2: x(s) = c0 + c1 s + c2 s^2.
//
// Why not nested ceres::Jet: Adot qd of a holonomic constraint is the second directional derivative
// d^2/ds^2 h(q + s qd) at s = 0, which needs second-order forward mode. Ceres 2.1's Jet<Jet<double,1>,1>
// does not compose with Eigen reductions (Eigen builds Scalar(0) from an int, which Jet's explicit
// constructor refuses), so problem code that writes `R * p` would not compile. Taylor2 is a plain
// scalar with implicit construction from double, one pass and 3 numbers per value.
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace clm {

struct Taylor2 {
  double c0 = 0, c1 = 0, c2 = 0;
  Taylor2() = default;
  Taylor2(double v) : c0(v) {}  // NOLINT: implicit on purpose, as for double
  Taylor2(double a, double b, double c) : c0(a), c1(b), c2(c) {}

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
  friend bool operator<(const Taylor2& a, const Taylor2& b) { return a.c0 < b.c0; }
  friend bool operator>(const Taylor2& a, const Taylor2& b) { return a.c0 > b.c0; }
  friend bool operator<=(const Taylor2& a, const Taylor2& b) { return a.c0 <= b.c0; }
  friend bool operator>=(const Taylor2& a, const Taylor2& b) { return a.c0 >= b.c0; }
  friend bool operator==(const Taylor2& a, const Taylor2& b) { return a.c0 == b.c0; }
  friend bool operator!=(const Taylor2& a, const Taylor2& b) { return a.c0 != b.c0; }
};

// f(x0 + d), d = c1 s + c2 s^2: f + f' d + f''/2 d^2, truncated at s^2.
inline Taylor2 taylor_compose(const Taylor2& x, double f, double df, double ddf) {
  return {f, df * x.c1, df * x.c2 + 0.5 * ddf * x.c1 * x.c1};
}
inline Taylor2 sin(const Taylor2& x) { const double s = std::sin(x.c0), c = std::cos(x.c0); return taylor_compose(x, s, c, -s); }
inline Taylor2 cos(const Taylor2& x) { const double s = std::sin(x.c0), c = std::cos(x.c0); return taylor_compose(x, c, -s, -c); }
inline Taylor2 exp(const Taylor2& x) { const double e = std::exp(x.c0); return taylor_compose(x, e, e, e); }
inline Taylor2 log(const Taylor2& x) { return taylor_compose(x, std::log(x.c0), 1 / x.c0, -1 / (x.c0 * x.c0)); }
inline Taylor2 sqrt(const Taylor2& x) {
  const double r = std::sqrt(x.c0);
  return taylor_compose(x, r, 0.5 / r, -0.25 / (r * x.c0));
}
inline Taylor2 tan(const Taylor2& x) {
  const double t = std::tan(x.c0), d = 1 + t * t;
  return taylor_compose(x, t, d, 2 * t * d);
}
inline Taylor2 atan(const Taylor2& x) {
  const double d = 1 / (1 + x.c0 * x.c0);
  return taylor_compose(x, std::atan(x.c0), d, -2 * x.c0 * d * d);
}
inline Taylor2 atan2(const Taylor2& y, const Taylor2& x) {
  // atan2 = atan(y/x) up to a branch constant, whose derivatives are those of atan(y/x).
  Taylor2 r = atan(y / x);
  r.c0 = std::atan2(y.c0, x.c0);
  return r;
}
inline Taylor2 pow(const Taylor2& x, double p) {
  const double f = std::pow(x.c0, p);
  return taylor_compose(x, f, p * f / x.c0, p * (p - 1) * f / (x.c0 * x.c0));
}
inline Taylor2 abs(const Taylor2& x) { return x.c0 < 0 ? -x : x; }
inline bool isfinite(const Taylor2& x) { return std::isfinite(x.c0) && std::isfinite(x.c1) && std::isfinite(x.c2); }

}  // namespace clm

namespace Eigen {
template <>
struct NumTraits<clm::Taylor2> : NumTraits<double> {
  using Real = clm::Taylor2;
  using NonInteger = clm::Taylor2;
  using Nested = clm::Taylor2;
  using Literal = clm::Taylor2;
  enum { IsComplex = 0, IsInteger = 0, IsSigned = 1, RequireInitialization = 1, ReadCost = 3, AddCost = 3, MulCost = 6 };
};
}  // namespace Eigen
