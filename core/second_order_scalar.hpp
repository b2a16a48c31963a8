// What the two second-order forward-mode scalars (core/taylor2.hpp, core/hyperdual.hpp) share: the
// comparisons (on the value), the elementary functions by the chain rule up to second order, isfinite,
// and Eigen's NumTraits. Each scalar supplies only its algebra (+ - * /) and
//   double value() const;                                  the zeroth-order part
//   static S compose(const S& x, double f, double df, double ddf);  g(x) from g, g', g'' at value()
//   bool all_finite() const;
// Why two scalars: Taylor2 carries one direction to second order (3 numbers: Adot qd = d^2/ds^2
// h(q + s qd)), HyperDual two directions and their mixed derivative (4 numbers: Jacobians of c and A).
// Why not nested ceres::Jet: Ceres 2.1's Jet<Jet> does not compose with Eigen reductions (Eigen builds
// Scalar(0) from an int, which Jet's explicit constructor refuses). The functions are hidden friends of
// this CRTP base, found by argument-dependent lookup, so mixed expressions such as x < 0.0 convert the
// double implicitly, as they do for double.
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace clm {

template <class S>
struct SecondOrderScalar {
  friend bool operator<(const S& a, const S& b) { return a.value() < b.value(); }
  friend bool operator>(const S& a, const S& b) { return a.value() > b.value(); }
  friend bool operator<=(const S& a, const S& b) { return a.value() <= b.value(); }
  friend bool operator>=(const S& a, const S& b) { return a.value() >= b.value(); }
  friend bool operator==(const S& a, const S& b) { return a.value() == b.value(); }
  friend bool operator!=(const S& a, const S& b) { return a.value() != b.value(); }

  friend S sin(const S& x) {
    const double s = std::sin(x.value()), c = std::cos(x.value());
    return S::compose(x, s, c, -s);
  }
  friend S cos(const S& x) {
    const double s = std::sin(x.value()), c = std::cos(x.value());
    return S::compose(x, c, -s, -c);
  }
  friend S exp(const S& x) {
    const double e = std::exp(x.value());
    return S::compose(x, e, e, e);
  }
  friend S log(const S& x) {
    const double v = x.value();
    return S::compose(x, std::log(v), 1 / v, -1 / (v * v));
  }
  friend S sqrt(const S& x) {
    const double v = x.value(), r = std::sqrt(v);
    return S::compose(x, r, 0.5 / r, -0.25 / (r * v));
  }
  friend S tan(const S& x) {
    const double t = std::tan(x.value()), d = 1 + t * t;
    return S::compose(x, t, d, 2 * t * d);
  }
  friend S atan(const S& x) {
    const double v = x.value(), d = 1 / (1 + v * v);
    return S::compose(x, std::atan(v), d, -2 * v * d * d);
  }
  // atan2 = atan(y/x) up to a branch constant, whose derivatives are those of atan(y/x).
  friend S atan2(const S& y, const S& x) {
    S r = atan(y / x);
    r.set_value(std::atan2(y.value(), x.value()));
    return r;
  }
  friend S pow(const S& x, double p) {
    const double v = x.value(), f = std::pow(v, p);
    return S::compose(x, f, p * f / v, p * (p - 1) * f / (v * v));
  }
  friend S abs(const S& x) { return x.value() < 0 ? -x : x; }
  friend bool isfinite(const S& x) { return x.all_finite(); }
};

// Eigen treats a second-order scalar as a real number; the costs are per operation in doubles.
template <class S, int kReadCost, int kMulCost>
struct SecondOrderNumTraits : Eigen::NumTraits<double> {
  using Real = S;
  using NonInteger = S;
  using Nested = S;
  using Literal = S;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = kReadCost,
    AddCost = kReadCost,
    MulCost = kMulCost
  };
};

}  // namespace clm
