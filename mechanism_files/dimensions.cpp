#include "mechanism_files/dimensions.hpp"

#include <cctype>
#include <cstdlib>
#include <numeric>
#include <utility>

namespace clm {

namespace {

constexpr const char* kBaseSymbols[Dimension::kBase] = {"kg", "m", "s", "A", "K", "mol", "cd"};

// Exponents of kg m s A K mol cd.
Dimension of(int kg, int m, int s, int a = 0, int k = 0) {
  Dimension d;
  const int e[] = {kg, m, s, a, k};
  for (int i = 0; i < 5; ++i) d.sixths[i] = e[i] * Dimension::kDenominator;
  return d;
}

struct UnitSymbol {
  const char* symbol;
  Dimension dimension;
  bool prefixes;  // takes n u m c k M G
};

const UnitSymbol* find_symbol(std::string_view s) {
  static const UnitSymbol kSymbols[] = {
      {"g", of(1, 0, 0), true},        {"m", of(0, 1, 0), true},       {"s", of(0, 0, 1), true},
      {"A", of(0, 0, 0, 1), true},     {"K", of(0, 0, 0, 0, 1), false}, {"mol", Dimension::base(5), true},
      {"cd", Dimension::base(6), false}, {"N", of(1, 1, -2), true},    {"J", of(1, 2, -2), true},
      {"W", of(1, 2, -3), true},       {"Pa", of(1, -1, -2), true},    {"Hz", of(0, 0, -1), true},
      {"C", of(0, 0, 1, 1), true},     {"V", of(1, 2, -3, -1), true},  {"Ohm", of(1, 2, -3, -2), true},
      {"rad", {}, true},               {"deg", {}, false},             {"rev", {}, false},
      {"sr", {}, false},               {"min", of(0, 0, 1), false},    {"h", of(0, 0, 1), false},
      {"l", of(0, 3, 0), true},        {"rpm", of(0, 0, -1), false},
  };
  for (const auto& u : kSymbols)
    if (s == u.symbol) return &u;
  return nullptr;
}

// A symbol, or a prefix n u m c k M G and a symbol that takes it ("mm", "kN", "ms"; "kg" is k + g).
std::optional<Dimension> symbol_dimension(std::string_view s) {
  if (const UnitSymbol* u = find_symbol(s)) return u->dimension;
  if (s.size() > 1 && std::string_view("numckMG").find(s[0]) != std::string_view::npos)
    if (const UnitSymbol* u = find_symbol(s.substr(1)); u && u->prefixes) return u->dimension;
  return std::nullopt;
}

class UnitParser {
 public:
  explicit UnitParser(std::string_view text) : text_(text) {}

  std::optional<Dimension> parse(std::string* error) {
    skip_space();
    if (text_.substr(pos_) == "-" || text_.substr(pos_) == "1") return Dimension::none();
    std::optional<Dimension> d = product(0);
    skip_space();
    if (d && pos_ != text_.size()) d = fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (!d && error) *error = error_;
    return d;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  std::optional<Dimension> fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return std::nullopt;
  }
  std::optional<Dimension> product(int depth) {
    if (depth > 8) return fail("parentheses nested too deeply");
    std::optional<Dimension> d = factor(depth);
    for (;;) {
      if (!d) return d;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] == ')') return d;
      if (std::isdigit(static_cast<unsigned char>(text_[pos_])))
        return fail("a number after a symbol: a power is written with '^' (s^2)");
      bool divide = false;
      if (text_[pos_] == '*' || text_[pos_] == '/') {
        divide = text_[pos_] == '/';
        ++pos_;
        skip_space();
      }
      const std::optional<Dimension> next = factor(depth);
      if (!next) return next;
      d = divide ? *d / *next : *d * *next;
      if (!d->bounded()) return fail("an exponent beyond 10000");
    }
  }
  std::optional<Dimension> factor(int depth) {
    skip_space();
    if (pos_ >= text_.size()) return fail("a unit symbol is missing at the end");
    std::optional<Dimension> d;
    if (text_[pos_] == '(') {
      ++pos_;
      d = product(depth + 1);
      if (!d) return d;
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') return fail("')' is missing");
      ++pos_;
    } else if (text_[pos_] == '1') {
      ++pos_;  // "1/s"
      d = Dimension::none();
    } else {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      const std::string_view symbol = text_.substr(start, pos_ - start);
      if (symbol.empty()) return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
      d = symbol_dimension(symbol);
      if (!d) return fail("unknown unit symbol '" + std::string(symbol) + "'");
    }
    if (pos_ < text_.size() && text_[pos_] == '^') {
      ++pos_;
      int p = 0, q = 1;
      if (!exponent(p, q)) return std::nullopt;
      d = d->power(p, q);
      if (!d) return fail("an exponent that leaves sixths, or beyond 10000");
    }
    return d;
  }
  // An integer ("2", "-1") or a parenthesized fraction ("(1/2)", "(-3/2)").
  bool exponent(int& p, int& q) {
    const bool paren = pos_ < text_.size() && text_[pos_] == '(';
    if (paren) ++pos_;
    if (!integer(p)) return false;
    if (paren && pos_ < text_.size() && text_[pos_] == '/') {
      ++pos_;
      if (!integer(q) || q <= 0) return fail("a fraction's denominator must be a positive integer"), false;
    }
    if (paren) {
      if (pos_ >= text_.size() || text_[pos_] != ')') return fail("')' is missing after the exponent"), false;
      ++pos_;
    }
    return true;
  }
  bool integer(int& v) {
    const std::size_t start = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    const std::size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) && pos_ - digits < 3) ++pos_;
    if (pos_ == digits) return fail("an exponent must be an integer or (p/q)"), false;
    v = std::atoi(std::string(text_.substr(start, pos_ - start)).c_str());
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Dimension> Dimension::power(int p, int q) const {
  Dimension d;
  for (int k = 0; k < kBase; ++k) {
    const long long num = static_cast<long long>(sixths[k]) * p;  // both bounded: |num| <= 6e4 * 1e6
    if (num % q != 0 || num / q > kMaxSixths || num / q < -kMaxSixths) return std::nullopt;
    d.sixths[k] = static_cast<int>(num / q);
  }
  return d;
}

std::string to_string(const Dimension& d) {
  if (d.dimensionless()) return "1";
  auto factor = [](int k, int sixths) {
    std::string s(kBaseSymbols[k]);
    if (sixths == Dimension::kDenominator) return s;
    const int g = std::gcd(sixths, Dimension::kDenominator);
    const int p = sixths / g, q = Dimension::kDenominator / g;
    s.push_back('^');
    if (q == 1) {
      s.append(std::to_string(p));
    } else {
      s.push_back('(');
      s.append(std::to_string(p)).push_back('/');
      s.append(std::to_string(q)).push_back(')');
    }
    return s;
  };
  std::string num, den;
  for (int k = 0; k < Dimension::kBase; ++k) {
    if (d.sixths[k] == 0) continue;
    std::string& side = d.sixths[k] > 0 ? num : den;
    if (!side.empty()) side.push_back(' ');
    side.append(factor(k, std::abs(d.sixths[k])));
  }
  if (den.empty()) return num;
  std::string out = num.empty() ? std::string("1") : num;
  out.append(" / ").append(den);
  return out;
}

std::optional<Dimension> parse_unit(std::string_view unit, std::string* error) {
  return UnitParser(unit).parse(error);
}

}  // namespace clm
