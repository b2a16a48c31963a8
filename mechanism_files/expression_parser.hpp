// A recursive-descent parser of the expressions of mechanism files (docs/mechanism-files.md), building nodes of
// an ExpressionGraph directly: nothing is ever evaluated by a host language.
//
//   expression := term { ("+" | "-") term }
//   term       := unary { ("*" | "/") unary }
//   unary      := ("-" | "+") unary | power
//   power      := primary [ ("^" | "**") unary ]          right-associative: 2^3^2 = 2^9, -x^2 = -(x^2)
//   primary    := number | name | name "(" expression { "," expression } ")" | "(" expression ")"
//
// Names are resolved by the caller's Symbols: coordinates, parameters, t, the [let] names, a body's kinematics
// (BODY.member: one dot), and der(q) (or q_dot) for the velocity of coordinate q. Functions: sin cos tan asin acos atan atan2 sinh cosh tanh exp log sqrt abs
// min max pow sign.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "mechanism_files/expression_graph.hpp"

namespace clm {

// A parse or resolution error at byte offset `offset` of the expression text.
class ExpressionError : public std::runtime_error {
 public:
  ExpressionError(std::size_t offset, const std::string& message) : std::runtime_error(message), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

struct ExpressionSymbols {
  // The node a plain name stands for, or nullopt when unknown.
  std::function<std::optional<int>(std::string_view name)> name;
  // The node of der(coordinate), or nullopt when the argument is not a coordinate.
  std::function<std::optional<int>(std::string_view coordinate)> velocity;
  // For error messages: the names that are known, comma-separated.
  std::function<std::string()> known;
};

// Parses `text` into nodes of `graph`; returns the expression's node. Throws ExpressionError.
int parse_expression(std::string_view text, ExpressionGraph& graph, const ExpressionSymbols& symbols);

}  // namespace clm
