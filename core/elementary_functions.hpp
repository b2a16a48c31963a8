// The elementary functions of the mechanism-file expressions over any scalar type of the suite, as a mechanism
// file's tape (mechanism_files/tape.hpp) and a header exported from it (`clmbench mechanism export`) both
// evaluate them, so that the two compute the same operations.
#pragma once

#include <cmath>

namespace clm {

namespace elementary {

// The elementary functions over T: the scalar's own where it has one (found by argument-dependent lookup, or
// std:: for double), otherwise composed from those every scalar of the suite has (sin cos tan atan atan2 exp
// log sqrt abs pow(x, double)).
using std::abs, std::acos, std::asin, std::atan, std::atan2, std::cos, std::cosh, std::exp, std::log, std::pow,
    std::sin, std::sinh, std::sqrt, std::tan, std::tanh;

template <class T>
T t_asin(const T& x) {
  if constexpr (requires { asin(x); }) return asin(x);
  else return atan2(x, sqrt(T(1.0) - x * x));
}
template <class T>
T t_acos(const T& x) {
  if constexpr (requires { acos(x); }) return acos(x);
  else return atan2(sqrt(T(1.0) - x * x), x);
}
template <class T>
T t_sinh(const T& x) {
  if constexpr (requires { sinh(x); }) return sinh(x);
  else return (exp(x) - exp(-x)) * 0.5;
}
template <class T>
T t_cosh(const T& x) {
  if constexpr (requires { cosh(x); }) return cosh(x);
  else return (exp(x) + exp(-x)) * 0.5;
}
template <class T>
T t_tanh(const T& x) {
  if constexpr (requires { tanh(x); }) return tanh(x);
  else return T(1.0) - T(2.0) / (exp(x * 2.0) + T(1.0));
}
template <class T>
T t_pow(const T& x, double p) {
  // Integer exponents multiplied out: exact for x < 0 and at x = 0 (pow's derivative p x^p / x is 0/0 there).
  if (p == std::round(p) && std::abs(p) <= 64) {
    long n = static_cast<long>(std::abs(p));
    T result(1.0), base = x;
    bool first = true;
    while (n > 0) {
      if (n & 1) {
        result = first ? base : result * base;
        first = false;
      }
      n >>= 1;
      if (n > 0) base = base * base;
    }
    return p < 0 ? T(1.0) / result : result;
  }
  if (p == 0.5) return sqrt(x);
  return pow(x, p);
}

}  // namespace elementary

}  // namespace clm
