// The physical dimension of an expression of a mechanism file (issue 42; docs/mechanism-files.md, "Units"): the
// parser's grammar (mechanism_files/expression_parser.cpp) over dimensions instead of graph nodes.
//
// The rules: a sum, a difference, min, max and atan2 need operands of one dimension; a product multiplies them; a
// power needs a dimensionless exponent and, on a dimensioned base, a constant rational one (at most sixths);
// sin cos tan asin acos atan sinh cosh tanh exp log need a dimensionless argument and give a dimensionless value;
// sqrt halves, abs keeps, sign drops the dimension.
// Numbers: a factor (0.5 m v^2) is dimensionless, but a number standing alone as an operand of a sum, min, max or
// atan2 (x - 1, where the file means 1 m) takes the other operand's dimension, as do expressions of numbers only
// (2*pi). A name whose unit is not declared is of unknown dimension: whatever reads it is unknown, and a sum of an
// unknown and a known operand is the known one; nothing unknown is ever reported as a mismatch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mechanism_files/dimensions.hpp"
#include "mechanism_files/expression_graph.hpp"

namespace clm {

struct DimensionValue {
  std::optional<Dimension> dimension;  // nullopt: unknown (reads a name without a unit)
  bool number = false;                 // an expression of numbers only: takes its dimension from a sum's other side
  double value = 0;                    // its value, where `number` (a power's exponent)
  // A number that is not a small ratio (9.81, 1e-3, not 2 or 1/2) scales a dimensioned quantity somewhere inside:
  // the likely cause of a mismatch is a constant whose unit the file does not state (an error's hint).
  bool unstated_constant = false;

  static DimensionValue known(const Dimension& d) { return {d, false, 0, false}; }
  static DimensionValue unknown() { return {std::nullopt, false, 0, false}; }
};

class DimensionAlgebra {
 public:
  using Value = DimensionValue;
  // A name's dimension (nullopt: not a name of the file; the graph's parse has already refused those).
  using Lookup = std::function<std::optional<DimensionValue>(std::string_view)>;
  DimensionAlgebra(Lookup name, Lookup velocity) : name_(std::move(name)), velocity_(std::move(velocity)) {}

  DimensionValue constant(double v, std::size_t at);
  DimensionValue unary(ExprOp op, const DimensionValue& a, std::size_t at);
  DimensionValue binary(ExprOp op, const DimensionValue& a, const DimensionValue& b, std::size_t at);
  std::optional<DimensionValue> name(std::string_view id) { return name_(id); }
  std::optional<DimensionValue> velocity(std::string_view coordinate) { return velocity_(coordinate); }
  std::string known() { return {}; }

 private:
  DimensionValue combine(ExprOp op, const DimensionValue& a, const DimensionValue& b, std::size_t at);
  Lookup name_, velocity_;
};

// The dimension of `text`. Throws ExpressionError at the operator (or function) whose operands do not fit.
DimensionValue parse_dimension(std::string_view text, DimensionAlgebra& algebra);

// " (a number is dimensionless: ...)" where v holds an unstated constant, else "": a mismatch's hint.
std::string unstated_constant_hint(const DimensionValue& v);

// "kg m^2 / s^2 (an energy)": a dimension as messages name it, with the quantity's name where it is a common one.
std::string describe(const Dimension& d);

}  // namespace clm
