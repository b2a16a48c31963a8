// Tangent<T, D>: first-order forward-mode automatic differentiation over ANY scalar T, carrying D directions
// (x = v + sum_i d_i e_i, e_i e_j = 0). Unlike ceres::Jet it nests: T may itself be a ceres::Jet, a HyperDual,
// or another Tangent, so a problem's templated function can differentiate its own geometry (velocity
// Jacobians of body positions, the implicit pitch of a closed kinematic loop) whatever scalar the core calls
// it with, and a linearization can differentiate the core's derivatives once more (analysis/steady_motion.hpp).
// Why not Jet<Jet>: Ceres 2.1's Jet has an explicit constructor from double that Eigen's reductions refuse
// (docs/design.md section 1); this type is implicitly constructible from double and has Eigen traits.
// Only what the suite's geometry needs: + - * /, sin, cos, sqrt, atan2; comparisons on the value.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <type_traits>

namespace clm {

template <class T, int D>
struct Tangent;

// The double value of any scalar the suite uses (double, ceres::Jet, HyperDual, Taylor2, Tangent), for
// decisions that must not depend on derivatives (pivoting, convergence tests).
template <class T>
double value_of(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(x);
  } else if constexpr (requires { x.value(); }) {
    return x.value();
  } else {
    return value_of(x.a);  // ceres::Jet
  }
}

template <class T, int D>
struct Tangent {
  T v{};
  std::array<T, D> d{};

  Tangent() { d.fill(T(0.0)); }
  Tangent(const T& value) : v(value) { d.fill(T(0.0)); }  // NOLINT: implicit, as for double
  template <class U>
    requires(std::is_arithmetic_v<U> && !std::is_same_v<T, U>)
  Tangent(U value) : v(T(double(value))) {  // NOLINT
    d.fill(T(0.0));
  }
  // The variable x = value along direction `direction` (a unit seed).
  static Tangent variable(const T& value, int direction) {
    Tangent x(value);
    x.d[direction] = T(1.0);
    return x;
  }
  double value() const { return value_of(v); }

  Tangent& operator+=(const Tangent& o) { v += o.v; for (int i = 0; i < D; ++i) d[i] += o.d[i]; return *this; }
  Tangent& operator-=(const Tangent& o) { v -= o.v; for (int i = 0; i < D; ++i) d[i] -= o.d[i]; return *this; }
  Tangent& operator*=(const Tangent& o) { return *this = *this * o; }
  Tangent& operator/=(const Tangent& o) { return *this = *this / o; }

  friend Tangent operator+(Tangent a, const Tangent& b) { return a += b; }
  friend Tangent operator-(Tangent a, const Tangent& b) { return a -= b; }
  friend Tangent operator-(const Tangent& a) {
    Tangent r;
    r.v = -a.v;
    for (int i = 0; i < D; ++i) r.d[i] = -a.d[i];
    return r;
  }
  friend Tangent operator+(const Tangent& a) { return a; }
  friend Tangent operator*(const Tangent& a, const Tangent& b) {
    Tangent r;
    r.v = a.v * b.v;
    for (int i = 0; i < D; ++i) r.d[i] = a.v * b.d[i] + a.d[i] * b.v;
    return r;
  }
  friend Tangent operator/(const Tangent& a, const Tangent& b) {
    Tangent r;
    const T inv = T(1.0) / b.v;
    r.v = a.v * inv;
    for (int i = 0; i < D; ++i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
    return r;
  }
  // Mixed with double (constants in problem code).
  friend Tangent operator+(const Tangent& a, double b) { Tangent r = a; r.v += T(b); return r; }
  friend Tangent operator+(double b, const Tangent& a) { return a + b; }
  friend Tangent operator-(const Tangent& a, double b) { Tangent r = a; r.v -= T(b); return r; }
  friend Tangent operator-(double b, const Tangent& a) { return -a + b; }
  friend Tangent operator*(const Tangent& a, double b) {
    Tangent r;
    r.v = a.v * b;
    for (int i = 0; i < D; ++i) r.d[i] = a.d[i] * b;
    return r;
  }
  friend Tangent operator*(double b, const Tangent& a) { return a * b; }
  friend Tangent operator/(const Tangent& a, double b) { return a * (1.0 / b); }
  friend Tangent operator/(double b, const Tangent& a) { return Tangent(T(b)) / a; }

  friend bool operator<(const Tangent& a, const Tangent& b) { return a.value() < b.value(); }
  friend bool operator>(const Tangent& a, const Tangent& b) { return a.value() > b.value(); }
  friend bool operator<=(const Tangent& a, const Tangent& b) { return a.value() <= b.value(); }
  friend bool operator>=(const Tangent& a, const Tangent& b) { return a.value() >= b.value(); }

  // g(x) from g(v) and g'(v), both of type T.
  static Tangent chain(const Tangent& x, const T& g, const T& dg) {
    Tangent r;
    r.v = g;
    for (int i = 0; i < D; ++i) r.d[i] = dg * x.d[i];
    return r;
  }
  friend Tangent sin(const Tangent& x) {
    using std::cos;
    using std::sin;
    return chain(x, sin(x.v), cos(x.v));
  }
  friend Tangent cos(const Tangent& x) {
    using std::cos;
    using std::sin;
    return chain(x, cos(x.v), -sin(x.v));
  }
  friend Tangent sqrt(const Tangent& x) {
    using std::sqrt;
    const T r = sqrt(x.v);
    return chain(x, r, T(0.5) / r);
  }
  friend Tangent atan2(const Tangent& y, const Tangent& x) {
    using std::atan2;
    Tangent r;
    r.v = atan2(y.v, x.v);
    const T inv = T(1.0) / (x.v * x.v + y.v * y.v);
    for (int i = 0; i < D; ++i) r.d[i] = (x.v * y.d[i] - y.v * x.d[i]) * inv;
    return r;
  }
  friend Tangent abs(const Tangent& x) { return x.value() < 0 ? -x : x; }
  friend bool isfinite(const Tangent& x) {
    using std::isfinite;
    if (!isfinite(x.v)) return false;
    for (const T& e : x.d)
      if (!isfinite(e)) return false;
    return true;
  }
};

}  // namespace clm

namespace Eigen {
template <class T, int D>
struct NumTraits<clm::Tangent<T, D>> : NumTraits<double> {
  using Real = clm::Tangent<T, D>;
  using NonInteger = clm::Tangent<T, D>;
  using Nested = clm::Tangent<T, D>;
  using Literal = clm::Tangent<T, D>;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = D + 1,
    AddCost = D + 1,
    MulCost = 2 * D + 1
  };
};
}  // namespace Eigen
