#include "mechanism_files/dimension_algebra.hpp"

#include <algorithm>
#include <cmath>

#include "mechanism_files/expression_parser.hpp"

namespace clm {

namespace {

// How a message names the operation: '+' and '-', or the function as the file writes it ("sin()", from the graph's
// table of functions).
std::string symbol_of(ExprOp op) {
  if (op == ExprOp::kAdd) return "'+'";
  if (op == ExprOp::kSub) return "'-'";
  const char* name = expr_function_name(op);
  return name ? std::string(name) + "()" : std::string("the operation");
}

// p/q with q <= 6 equal to v (to 1e-12), for a power's exponent.
bool rational(double v, int& p, int& q) {
  for (q = 1; q <= Dimension::kDenominator; ++q) {
    const double pq = v * q;
    if (std::abs(pq) > 1e6) return false;
    p = static_cast<int>(std::lround(pq));
    if (std::abs(pq - p) <= 1e-12 * std::max(1.0, std::abs(pq))) return true;
  }
  return false;
}

DimensionValue number(double v) { return {Dimension::none(), true, v, false}; }

// 2, 1/2, 3/4: a factor of a formula, not a constant with a unit.
bool small_ratio(double v) {
  for (int q = 1; q <= 12; ++q) {
    const double p = v * q;
    if (std::abs(p) <= 12 && std::abs(p - std::round(p)) <= 1e-12 * std::max(1.0, std::abs(p))) return true;
  }
  return false;
}

const char* hint(bool unstated_constant) {
  return unstated_constant ? " (a number is dimensionless: a constant with a unit is a parameter with that unit)" : "";
}

}  // namespace

std::string unstated_constant_hint(const DimensionValue& v) { return hint(v.unstated_constant); }

std::string describe(const Dimension& d) {
  struct Named {
    Dimension d;
    const char* name;
  };
  const Dimension L = length(), M = mass(), T = time_dimension();
  const Named kNamed[] = {
      {energy(), "an energy"},         {energy() / L, "a force"},       {L, "a length"},
      {L / T, "a velocity"},           {L / T / T, "an acceleration"},  {M, "a mass"},
      {M * L * L, "a moment of inertia"}, {T, "a time"},              {Dimension::none() / T, "a rate"},
      {M * L * L / T, "an angular momentum"}, {M * L / T, "a momentum"},
  };
  std::string s = to_string(d);
  if (d.dimensionless()) return "1 (dimensionless)";
  for (const auto& n : kNamed)
    if (n.d == d) return s + " (" + n.name + ")";
  return s;
}

DimensionValue DimensionAlgebra::constant(double v, std::size_t) { return number(v); }

DimensionValue DimensionAlgebra::unary(ExprOp op, const DimensionValue& a, std::size_t at) {
  switch (op) {
    case ExprOp::kNeg:
    case ExprOp::kAbs: return a.number ? number(op == ExprOp::kNeg ? -a.value : std::abs(a.value)) : a;
    case ExprOp::kSign: return a.number ? number(a.value > 0 ? 1.0 : a.value < 0 ? -1.0 : 0.0) : DimensionValue::known(Dimension::none());
    case ExprOp::kSqrt:
      if (a.number) return number(std::sqrt(a.value));
      if (!a.dimension) return a;
      if (auto d = a.dimension->power(1, 2)) return DimensionValue::known(*d);
      throw ExpressionError(at, "sqrt() of " + to_string(*a.dimension) + " leaves the exponents the suite checks (sixths)");
    default: break;
  }
  // The transcendental functions: a dimensionless argument (an angle in rad is one).
  if (a.dimension && !a.dimension->dimensionless())
    throw ExpressionError(at, symbol_of(op) + " of a quantity of dimension " + describe(*a.dimension) +
                                  ": its argument must be dimensionless" + hint(a.unstated_constant));
  if (a.number) {
    double v = a.value;
    switch (op) {
      case ExprOp::kSin: v = std::sin(v); break;
      case ExprOp::kCos: v = std::cos(v); break;
      case ExprOp::kTan: v = std::tan(v); break;
      case ExprOp::kExp: v = std::exp(v); break;
      case ExprOp::kLog: v = std::log(v); break;
      default: v = std::nan(""); break;  // a number nobody raises a dimension to
    }
    return number(v);
  }
  return DimensionValue::known(Dimension::none());
}

DimensionValue DimensionAlgebra::binary(ExprOp op, const DimensionValue& a, const DimensionValue& b, std::size_t at) {
  DimensionValue out = combine(op, a, b, at);
  out.unstated_constant = out.unstated_constant || a.unstated_constant || b.unstated_constant;
  if ((op == ExprOp::kMul || op == ExprOp::kDiv) && a.number != b.number)
    out.unstated_constant = out.unstated_constant || !small_ratio(a.number ? a.value : b.value);
  return out;
}

DimensionValue DimensionAlgebra::combine(ExprOp op, const DimensionValue& a, const DimensionValue& b, std::size_t at) {
  switch (op) {
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMin:
    case ExprOp::kMax:
    case ExprOp::kAtan2: {
      DimensionValue out;
      if (a.number && b.number) {
        const double v = op == ExprOp::kAdd ? a.value + b.value : op == ExprOp::kSub ? a.value - b.value
                         : op == ExprOp::kMin ? std::min(a.value, b.value) : op == ExprOp::kMax ? std::max(a.value, b.value)
                                              : std::atan2(a.value, b.value);
        return number(v);
      }
      if (a.number) out = b;
      else if (b.number) out = a;
      else if (!a.dimension) out = b;
      else if (!b.dimension) out = a;
      else if (*a.dimension != *b.dimension)
        throw ExpressionError(at, symbol_of(op) + " joins " + describe(*a.dimension) + " and " +
                                      describe(*b.dimension) + ", which differ" +
                                      hint(a.unstated_constant || b.unstated_constant));
      else out = a;
      out.number = false;
      if (op == ExprOp::kAtan2) return DimensionValue::known(Dimension::none());
      return out;
    }
    case ExprOp::kMul:
    case ExprOp::kDiv: {
      if (a.number && b.number) return number(op == ExprOp::kMul ? a.value * b.value : a.value / b.value);
      if (!a.dimension || !b.dimension) return DimensionValue::unknown();
      const Dimension d = op == ExprOp::kMul ? *a.dimension * *b.dimension : *a.dimension / *b.dimension;
      if (!d.bounded()) throw ExpressionError(at, "a dimension with an exponent beyond 10000");
      return DimensionValue::known(d);
    }
    case ExprOp::kPow: {
      if (b.dimension && !b.dimension->dimensionless())
        throw ExpressionError(at, "an exponent of dimension " + describe(*b.dimension) + ": an exponent must be dimensionless");
      if (a.number && b.number) return number(std::pow(a.value, b.value));
      if (!a.dimension) return DimensionValue::unknown();
      if (a.dimension->dimensionless()) return DimensionValue::known(Dimension::none());
      int p = 0, q = 1;
      if (!b.number)
        throw ExpressionError(at, "a quantity of dimension " + describe(*a.dimension) +
                                      " raised to a power that is not a number: its dimension would change with the power");
      if (!rational(b.value, p, q))
        throw ExpressionError(at, "a quantity of dimension " + describe(*a.dimension) +
                                      " raised to a power that is not a ratio of integers p/q with q <= 6");
      if (auto d = a.dimension->power(p, q)) return DimensionValue::known(*d);
      throw ExpressionError(at, to_string(*a.dimension) + " to the power " + std::to_string(p) + "/" +
                                    std::to_string(q) + " leaves the exponents the suite checks (sixths, at most 10000)");
    }
    default: break;
  }
  return DimensionValue::unknown();
}

}  // namespace clm
