// Physical dimensions for the dimensional analysis of mechanism files (issue 42; docs/mechanism-files.md,
// "Units"): a dimension is a product of the seven SI base dimensions to rational powers (sixths, so that sqrt and
// a cube root of a declared unit stay exact), read from a unit as files write it ("kg m^2/s", "N m", "rad/s",
// "-"). Only the dimension counts here: "mm" and "m" are both a length (the scale is the file's business), and
// rad, deg and rev are dimensionless (an angle is a ratio of lengths).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace clm {

struct Dimension {
  // Exponents of kg, m, s, A, K, mol, cd, in sixths (m^2 is {0, 12, 0, ...}).
  static constexpr int kBase = 7, kDenominator = 6;
  std::array<int, kBase> sixths{};

  static Dimension none() { return {}; }  // dimensionless
  static Dimension base(int index, int power = 1) {
    Dimension d;
    d.sixths[index] = power * kDenominator;
    return d;
  }
  bool dimensionless() const { return *this == Dimension{}; }
  // Exponents beyond +-10,000 (m^10000) are refused by the readers: no physical quantity has them, and bounding them
  // keeps every sum of two in int (a file of 100,000 factors m^999 would overflow).
  static constexpr int kMaxSixths = 10000 * kDenominator;
  bool bounded() const {
    for (const int e : sixths)
      if (e > kMaxSixths || e < -kMaxSixths) return false;
    return true;
  }
  bool operator==(const Dimension&) const = default;
  Dimension operator*(const Dimension& o) const {
    Dimension d;
    for (int k = 0; k < kBase; ++k) d.sixths[k] = sixths[k] + o.sixths[k];
    return d;
  }
  Dimension operator/(const Dimension& o) const {
    Dimension d;
    for (int k = 0; k < kBase; ++k) d.sixths[k] = sixths[k] - o.sixths[k];
    return d;
  }
  // This dimension to the power p/q; nullopt where an exponent leaves the sixths (m^(1/4)).
  std::optional<Dimension> power(int p, int q) const;
};

// The dimensions the checks name.
inline Dimension length() { return Dimension::base(1); }
inline Dimension mass() { return Dimension::base(0); }
inline Dimension time_dimension() { return Dimension::base(2); }
inline Dimension energy() { return mass() * length() * length() / time_dimension() / time_dimension(); }

// As a message writes it: "kg m^2 / s^2", "1 / s", "m^(1/2)", "1" (dimensionless).
std::string to_string(const Dimension& d);

// The dimension of a unit: a product of symbols with integer or (p/q) exponents, '*' or a space between factors,
// '/' dividing by the next factor (or parenthesized group): "kg m^2/s^2", "m/s/s", "J/(kg K)", "s^-1", "-" and "1"
// (dimensionless). Symbols: the SI base units, N J W Pa Hz C V Ohm, rad deg rev sr, min h, g and l, with the
// prefixes n u m c k M G on those that take them. nullopt (and `error` says why) for anything else.
std::optional<Dimension> parse_unit(std::string_view unit, std::string* error = nullptr);

}  // namespace clm
