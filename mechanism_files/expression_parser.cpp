#include "mechanism_files/expression_parser.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/number_range.hpp"
#include "core/value_parsing.hpp"
#include "mechanism_files/dimension_algebra.hpp"

namespace clm {

namespace {

// Deeper nesting than this is refused (a stack guard for the recursive descent; fuzzed).
constexpr int kMaxDepth = 200;

struct FunctionSpec {
  const char* name;
  ExprOp op;
  int arity;
};

constexpr FunctionSpec kFunctionSpecs[] = {
    {"sin", ExprOp::kSin, 1},     {"cos", ExprOp::kCos, 1},   {"tan", ExprOp::kTan, 1},   {"asin", ExprOp::kAsin, 1},
    {"acos", ExprOp::kAcos, 1},   {"atan", ExprOp::kAtan, 1}, {"atan2", ExprOp::kAtan2, 2},
    {"sinh", ExprOp::kSinh, 1},   {"cosh", ExprOp::kCosh, 1}, {"tanh", ExprOp::kTanh, 1}, {"exp", ExprOp::kExp, 1},
    {"log", ExprOp::kLog, 1},     {"sqrt", ExprOp::kSqrt, 1}, {"abs", ExprOp::kAbs, 1},   {"min", ExprOp::kMin, 2},
    {"max", ExprOp::kMax, 2},     {"pow", ExprOp::kPow, 2},   {"sign", ExprOp::kSign, 1},
};

// The nodes of an ExpressionGraph, the names resolved by the caller's symbols.
class GraphBuilder {
 public:
  using Value = int;
  GraphBuilder(ExpressionGraph& g, const ExpressionSymbols& s) : g_(g), s_(s) {}
  int constant(double v, std::size_t) { return g_.constant(v); }
  int unary(ExprOp op, int a, std::size_t) { return g_.unary(op, a); }
  int binary(ExprOp op, int a, int b, std::size_t) { return g_.binary(op, a, b); }
  std::optional<int> name(std::string_view id) { return s_.name(id); }
  std::optional<int> velocity(std::string_view coordinate) { return s_.velocity(coordinate); }
  std::string known() { return s_.known(); }

 private:
  ExpressionGraph& g_;
  const ExpressionSymbols& s_;
};

// The grammar once, over any Builder (GraphBuilder: the graph's nodes; DimensionAlgebra: the expression's physical
// dimension, mechanism_files/dimension_algebra.hpp). Each operation is handed the offset of its operator (of its
// name, for a function), where a builder's own errors point.
template <class Builder>
class Parser {
 public:
  using Value = typename Builder::Value;
  Parser(std::string_view text, Builder& b) : text_(text), g_(b) {}

  Value parse() {
    skip_space();
    if (pos_ == text_.size()) throw ExpressionError(0, "empty expression");
    Value node = expression();
    skip_space();
    if (pos_ != text_.size()) throw ExpressionError(pos_, "unexpected " + character_at(pos_));
    return node;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) {
      if (pos_ >= text_.size()) throw ExpressionError(pos_, std::string("expected ") + what + " at the end");
      throw ExpressionError(pos_, std::string("expected ") + what + ", found '" + echo_value(std::string(1, text_[pos_])) + "'");
    }
  }
  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) throw ExpressionError(p_.pos_, "expression nested too deeply");
    }
    ~DepthGuard() { --p_.depth_; }
    Parser& p_;
  };

  // Operands are evaluated before the operation is built, each in its own statement (the order of a call's
  // arguments is unspecified).
  Value expression() {
    DepthGuard guard(*this);
    Value left = term();
    for (;;) {
      skip_space();
      const std::size_t at = pos_;
      if (accept('+')) {
        Value right = term();
        left = g_.binary(ExprOp::kAdd, left, right, at);
      } else if (accept('-')) {
        Value right = term();
        left = g_.binary(ExprOp::kSub, left, right, at);
      } else {
        return left;
      }
    }
  }
  Value term() {
    Value left = unary();
    for (;;) {
      skip_space();
      if (pos_ + 1 < text_.size() && text_[pos_] == '*' && text_[pos_ + 1] == '*') return left;  // power's
      const std::size_t at = pos_;
      if (accept('*')) {
        Value right = unary();
        left = g_.binary(ExprOp::kMul, left, right, at);
      } else if (accept('/')) {
        Value right = unary();
        left = g_.binary(ExprOp::kDiv, left, right, at);
      } else {
        return left;
      }
    }
  }
  Value unary() {
    DepthGuard guard(*this);
    skip_space();
    const std::size_t at = pos_;
    if (accept('-')) {
      Value a = unary();
      return g_.unary(ExprOp::kNeg, a, at);
    }
    if (accept('+')) return unary();
    return power();
  }
  Value power() {
    Value base = primary();
    skip_space();
    const std::size_t at = pos_;
    if (accept('^')) {
      Value exponent = unary();
      return g_.binary(ExprOp::kPow, base, exponent, at);
    }
    if (pos_ + 1 < text_.size() && text_[pos_] == '*' && text_[pos_ + 1] == '*') {
      pos_ += 2;
      Value exponent = unary();
      return g_.binary(ExprOp::kPow, base, exponent, at);
    }
    return base;
  }
  Value primary() {
    skip_space();
    if (pos_ >= text_.size()) throw ExpressionError(pos_, "expected a number, a name or '(' at the end");
    const char c = text_[pos_];
    if (accept('(')) {
      Value inner = expression();
      expect(')', "')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    throw ExpressionError(pos_, "unexpected " + character_at(pos_));
  }
  Value number() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      std::size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) {
        while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
        pos_ = p;
      }
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, v);
    if (ec != std::errc() || end != text_.data() + pos_ || !std::isfinite(v)) {
      const std::string text(text_.substr(start, pos_ - start));
      const std::string range = number_range_problem(text);
      throw ExpressionError(start, range.empty() ? "malformed number '" + echo_value(text) + "'" : range);
    }
    return g_.constant(v, start);
  }
  // The character at `at` as a message shows it: 'c' for ASCII, its code point for a UTF-8 sequence (issue 43: a
  // non-ASCII operator such as U+00D7 printed a lone byte), else the byte.
  std::string character_at(std::size_t at) const {
    const auto b = static_cast<unsigned char>(text_[at]);
    if (b < 0x80) return "'" + echo_value(std::string(1, text_[at])) + "'";
    const int extra = b >= 0xF0 && b < 0xF8 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
    char32_t cp = b & (0x3F >> extra);
    bool ok = extra > 0 && at + extra < text_.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(text_[at + k]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    char buf[48];
    if (ok) std::snprintf(buf, sizeof buf, "character U+%04X", static_cast<unsigned>(cp));
    else std::snprintf(buf, sizeof buf, "byte 0x%02X (not UTF-8)", b);
    return buf;
  }
  // A name, or BODY.member (a rigid body's kinematics, issue 41): one dot followed by a letter or '_'.
  std::string_view identifier() {
    const std::size_t start = pos_;
    auto word = [&] {
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    };
    word();
    if (pos_ + 1 < text_.size() && text_[pos_] == '.' &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_ + 1])) || text_[pos_ + 1] == '_')) {
      ++pos_;
      word();
    }
    return text_.substr(start, pos_ - start);
  }
  Value name() {
    const std::size_t start = pos_;
    const std::string_view id = identifier();
    if (peek('(')) {
      ++pos_;
      if (id == "der") {
        skip_space();
        const std::size_t arg_start = pos_;
        const std::string_view arg = (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
                                                              text_[pos_] == '_'))
                                         ? identifier()
                                         : std::string_view();
        auto node = arg.empty() ? std::nullopt : g_.velocity(arg);
        if (!node)
          throw ExpressionError(arg_start, "der() takes the name of a coordinate" +
                                               (arg.empty() ? std::string() : " (got '" + std::string(arg) + "')"));
        expect(')', "')'");
        return *node;
      }
      const FunctionSpec* spec = nullptr;
      for (const auto& f : kFunctionSpecs)
        if (id == f.name) spec = &f;
      if (!spec) {
        std::string names;
        for (const auto& f : kFunctionSpecs) names += (names.empty() ? "" : " ") + std::string(f.name);
        throw ExpressionError(start, "unknown function '" + std::string(id) + "' (functions: der " + names + ")");
      }
      std::vector<Value> args;
      if (!peek(')')) {
        args.push_back(expression());
        while (accept(',')) args.push_back(expression());
      }
      expect(')', "')'");
      if (static_cast<int>(args.size()) != spec->arity)
        throw ExpressionError(start, std::string(spec->name) + "() takes " + std::to_string(spec->arity) +
                                         (spec->arity == 1 ? " argument" : " arguments") + ", got " +
                                         std::to_string(args.size()));
      return spec->arity == 1 ? g_.unary(spec->op, args[0], start) : g_.binary(spec->op, args[0], args[1], start);
    }
    if (id.size() > 4 && id.substr(id.size() - 4) == "_dot") {
      if (auto node = g_.velocity(id.substr(0, id.size() - 4))) return *node;
    }
    if (auto node = g_.name(id)) return *node;
    for (const auto& f : kFunctionSpecs)
      if (id == f.name) throw ExpressionError(start, std::string(f.name) + " is a function: write " + f.name + "(...)");
    throw ExpressionError(start, "unknown symbol '" + std::string(id) + "' (known: " + g_.known() + ")");
  }

  std::string_view text_;
  Builder& g_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

int parse_expression(std::string_view text, ExpressionGraph& graph, const ExpressionSymbols& symbols) {
  GraphBuilder builder(graph, symbols);
  return Parser<GraphBuilder>(text, builder).parse();
}

DimensionValue parse_dimension(std::string_view text, DimensionAlgebra& algebra) {
  return Parser<DimensionAlgebra>(text, algebra).parse();
}

}  // namespace clm
