// Hyper-dual numbers x = a + b e1 + c e2 + d e1 e2 (e1^2 = e2^2 = 0): one pass through a templated problem
// function gives f, its derivatives along two directions and the mixed second derivative d^2 f / de1 de2
// exactly (to round-off). AutoDiffModel uses them for the derivatives of c (which already contains first
// derivatives of M and V) and of a holonomic A = dh/dq (formulation Jacobians, Model::dynamics_derivatives).
// Not nested ceres::Jet, for the reason given in core/taylor2.hpp: Jet<Jet> does not compose with Eigen
// reductions; like Taylor2 this is a plain scalar, implicitly constructible from double.
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace clm {

struct HyperDual {
  double a = 0, b = 0, c = 0, d = 0;
  HyperDual() = default;
  HyperDual(double v) : a(v) {}  // NOLINT: implicit on purpose, as for double
  HyperDual(double a_, double b_, double c_, double d_) : a(a_), b(b_), c(c_), d(d_) {}

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
  friend bool operator<(const HyperDual& x, const HyperDual& y) { return x.a < y.a; }
  friend bool operator>(const HyperDual& x, const HyperDual& y) { return x.a > y.a; }
  friend bool operator<=(const HyperDual& x, const HyperDual& y) { return x.a <= y.a; }
  friend bool operator>=(const HyperDual& x, const HyperDual& y) { return x.a >= y.a; }
  friend bool operator==(const HyperDual& x, const HyperDual& y) { return x.a == y.a; }
  friend bool operator!=(const HyperDual& x, const HyperDual& y) { return x.a != y.a; }
};

// f(x) for a scalar function with derivatives df, ddf at x.a.
inline HyperDual hyperdual_compose(const HyperDual& x, double f, double df, double ddf) {
  return {f, df * x.b, df * x.c, df * x.d + ddf * x.b * x.c};
}
inline HyperDual sin(const HyperDual& x) { const double s = std::sin(x.a), c = std::cos(x.a); return hyperdual_compose(x, s, c, -s); }
inline HyperDual cos(const HyperDual& x) { const double s = std::sin(x.a), c = std::cos(x.a); return hyperdual_compose(x, c, -s, -c); }
inline HyperDual exp(const HyperDual& x) { const double e = std::exp(x.a); return hyperdual_compose(x, e, e, e); }
inline HyperDual log(const HyperDual& x) { return hyperdual_compose(x, std::log(x.a), 1 / x.a, -1 / (x.a * x.a)); }
inline HyperDual sqrt(const HyperDual& x) {
  const double r = std::sqrt(x.a);
  return hyperdual_compose(x, r, 0.5 / r, -0.25 / (r * x.a));
}
inline HyperDual tan(const HyperDual& x) {
  const double t = std::tan(x.a), dt = 1 + t * t;
  return hyperdual_compose(x, t, dt, 2 * t * dt);
}
inline HyperDual atan(const HyperDual& x) {
  const double r = 1 / (1 + x.a * x.a);
  return hyperdual_compose(x, std::atan(x.a), r, -2 * x.a * r * r);
}
inline HyperDual atan2(const HyperDual& y, const HyperDual& x) {
  HyperDual r = atan(y / x);  // the derivatives of atan2 are those of atan(y/x)
  r.a = std::atan2(y.a, x.a);
  return r;
}
inline HyperDual pow(const HyperDual& x, double p) {
  const double f = std::pow(x.a, p);
  return hyperdual_compose(x, f, p * f / x.a, p * (p - 1) * f / (x.a * x.a));
}
inline HyperDual abs(const HyperDual& x) { return x.a < 0 ? -x : x; }
inline bool isfinite(const HyperDual& x) {
  return std::isfinite(x.a) && std::isfinite(x.b) && std::isfinite(x.c) && std::isfinite(x.d);
}

}  // namespace clm

namespace Eigen {
template <>
struct NumTraits<clm::HyperDual> : NumTraits<double> {
  using Real = clm::HyperDual;
  using NonInteger = clm::HyperDual;
  using Nested = clm::HyperDual;
  using Literal = clm::HyperDual;
  enum { IsComplex = 0, IsInteger = 0, IsSigned = 1, RequireInitialization = 1, ReadCost = 4, AddCost = 4, MulCost = 10 };
};
}  // namespace Eigen
