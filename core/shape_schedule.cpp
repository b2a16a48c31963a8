#include "core/shape_schedule.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include "core/input_changed.hpp"
#include "core/input_file.hpp"
#include "core/sha256.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

// A shape file is a table of samples: 64 MiB is millions of them (and refuses /dev/zero-like inputs).
constexpr size_t kMaxShapeFileBytes = size_t{64} << 20;
// Larger samples make the spline's differences overflow (two samples of +-1e308 gave infinities and then a
// wrong-cause error far from the file).
constexpr double kMaxShapeMagnitude = 1e150;
// "file:PATH@sha256:HEX": a file named with the contents it must have (ShapeFunction::recorded_text).
constexpr std::string_view kHashMark = "@sha256:";

bool is_sha256(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A finite number written in full: the config's rule, as parse_number (core/value_parsing.hpp) applies it, but
// answering false instead of throwing its InputError (an expression is not a config value).
bool read_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  // ERANGE also flags an underflow (5e-324 reads as the subnormal it is, 1e-400 as 0): only overflow is bad.
  if (end != text.c_str() + text.size() || !std::isfinite(out) || (errno == ERANGE && std::fabs(out) == HUGE_VAL))
    return false;
  // strtod also reads hex floats, "inf" and "nan": only decimal digits, '.', e/E and signs are numbers here.
  for (char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
      return false;
  return true;
}

// Recursive descent over the expression without its spaces.
class ExpressionParser {
 public:
  ExpressionParser(const std::string& original, std::string compact) : original_(original), s_(std::move(compact)) {}

  template <class OnConstantOrPower, class OnHarmonic>
  void parse(OnConstantOrPower&& power, OnHarmonic&& harmonic) {
    double sign = 1;
    if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) sign = s_[pos_++] == '-' ? -1 : 1;
    for (;;) {
      term(sign, power, harmonic);
      if (pos_ == s_.size()) return;
      if (s_[pos_] != '+' && s_[pos_] != '-') fail("expected + or - between terms");
      sign = s_[pos_++] == '-' ? -1 : 1;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const std::string rest = pos_ < s_.size() ? "'" + s_.substr(pos_) + "'" : std::string("the end");
    throw InputError("malformed shape function '" + original_ + "': " + what + " at " + rest +
                     " (terms: c, c*t^k with k = 1..9, A*sin(w*t + p), A*cos(w*t + p), or file:PATH)");
  }
  bool at(const char* word) const { return s_.compare(pos_, std::strlen(word), word) == 0; }

  // [digits][.digits][e[+-]digits], at least one mantissa digit; false (pos unchanged) when none is here.
  bool number(double& out) {
    size_t p = pos_;
    size_t digits = 0;
    while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) ++p, ++digits;
    if (p < s_.size() && s_[p] == '.') {
      ++p;
      while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) ++p, ++digits;
    }
    if (digits == 0) return false;
    if (p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
      size_t e = p + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      const size_t exponent_start = e;
      while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
      if (e > exponent_start) p = e;
    }
    if (!read_number(s_.substr(pos_, p - pos_), out)) fail("number out of range");
    pos_ = p;
    return true;
  }

  template <class OnPower, class OnHarmonic>
  void term(double sign, OnPower& power, OnHarmonic& harmonic) {
    double coefficient = 1;
    if (number(coefficient)) {
      if (pos_ == s_.size() || s_[pos_] != '*') {  // a constant
        power(0, sign * coefficient);
        return;
      }
      ++pos_;
      if (!(at("t") || at("sin(") || at("cos("))) fail("expected t, sin( or cos( after *");
    }
    if (at("sin(") || at("cos(")) {
      const bool cosine = at("cos(");
      pos_ += 4;
      double w_sign = 1;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) w_sign = s_[pos_++] == '-' ? -1 : 1;
      double w = 1;
      if (number(w)) {
        if (pos_ == s_.size() || s_[pos_] != '*') fail("expected w*t inside " + std::string(cosine ? "cos" : "sin"));
        ++pos_;
      }
      if (!at("t")) fail("expected w*t inside " + std::string(cosine ? "cos" : "sin"));
      ++pos_;
      double phase = 0;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
        const double p_sign = s_[pos_++] == '-' ? -1 : 1;
        if (!number(phase)) fail("expected a number for the phase p");
        phase *= p_sign;
      }
      if (!at(")")) fail("expected )");
      ++pos_;
      harmonic(sign * coefficient, w_sign * w, phase, cosine);
      return;
    }
    if (at("t")) {
      ++pos_;
      int k = 1;
      if (at("^")) {
        ++pos_;
        if (pos_ >= s_.size() || s_[pos_] < '1' || s_[pos_] > '9' ||
            (pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))))
          fail("expected an integer power 1..9 after t^");
        k = s_[pos_++] - '0';
      }
      power(k, sign * coefficient);
      return;
    }
    fail("expected a term");
  }

  const std::string& original_;
  std::string s_;
  size_t pos_ = 0;
};

}  // namespace

ShapeFunction ShapeFunction::parse(const std::string& text) {
  ShapeFunction f;
  f.text_ = text;
  std::string compact;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  if (compact.empty()) throw InputError("empty shape function (expected e.g. 0.3*sin(2*t) or file:PATH)");

  if (compact.rfind("file:", 0) == 0) {
    // The path as written after "file:", only its surrounding spaces removed.
    const auto colon = text.find(':');
    std::string path = text.substr(colon + 1);
    path.erase(0, path.find_first_not_of(" \t"));
    path.erase(path.find_last_not_of(" \t\r") + 1);
    // "file:PATH@sha256:HEX" (a resolved configuration): the contents the result was computed from.
    std::string recorded;
    if (const auto at = path.rfind(kHashMark); at != std::string::npos && is_sha256(path.substr(at + kHashMark.size()))) {
      recorded = path.substr(at + kHashMark.size());
      path.resize(at);
    }
    std::string bytes;
    try {
      bytes = read_input_file(path, "file", kMaxShapeFileBytes);
    } catch (const InputError& e) {
      throw InputError("shape function '" + echo_value(text) + "': " + e.what());
    }
    f.file_ = path;
    f.sha256_ = sha256_hex(bytes);
    if (!recorded.empty() && recorded != f.sha256_)
      throw InputChanged("shape file '" + echo_value(path) +
                             "' has changed since the configuration naming it was recorded (sha256 " +
                             f.sha256_.substr(0, 12) + "..., recorded " + recorded.substr(0, 12) +
                             "...): restore it, or name it without @sha256 to use it as it is now",
                         "shape file '" + echo_value(path) + "'", f.sha256_.substr(0, 12) + "...",
                         recorded.substr(0, 12) + "...");
    std::istringstream in(bytes);
    long line_number = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_number;
      if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::replace(line.begin(), line.end(), ',', ' ');
      std::istringstream fields(line);
      std::vector<std::string> tokens;
      for (std::string token; fields >> token;) tokens.push_back(token);
      if (tokens.empty()) continue;
      double t = 0, y = 0;
      if (tokens.size() != 2 || !read_number(tokens[0], t) || !read_number(tokens[1], y))
        throw InputError("shape file '" + path + "' line " + std::to_string(line_number) +
                         ": expected two numbers t, value (whitespace or comma separated)");
      if (!(std::fabs(t) <= kMaxShapeMagnitude && std::fabs(y) <= kMaxShapeMagnitude))
        throw InputError("shape file '" + path + "' line " + std::to_string(line_number) + ": |t| and |value| must be at most " +
                         format_number(kMaxShapeMagnitude) + " (the spline's differences would overflow)");
      if (!f.knots_.empty() && !(t > f.knots_.back()))
        throw InputError("shape file '" + path + "' line " + std::to_string(line_number) +
                         ": times must increase strictly (t = " + tokens[0] + " after " +
                         std::to_string(f.knots_.back()) + ")");
      f.knots_.push_back(t);
      f.values_.push_back(y);
    }
    const size_t n = f.knots_.size();
    if (n < 4)
      throw InputError("shape file '" + path + "' has " + std::to_string(n) +
                       " samples; a cubic spline with not-a-knot ends needs at least 4");
    // Second derivatives M_i: the C2 conditions at the interior knots,
    //   h_{i-1} M_{i-1} + 2 (h_{i-1} + h_i) M_i + h_i M_{i+1} = 6 (d_i - d_{i-1}),  d_i = (y_{i+1} - y_i) / h_i,
    // with not-a-knot ends (S''' continuous at t_1 and t_{n-2}) eliminating M_0 and M_{n-1}:
    //   M_0 = (1 + r) M_1 - r M_2, r = h_0 / h_1;  M_{n-1} = (1 + s) M_{n-2} - s M_{n-3}, s = h_{n-2} / h_{n-3}.
    // A tridiagonal system in M_1 .. M_{n-2} (Thomas algorithm).
    std::vector<double> h(n - 1), d(n - 1);
    for (size_t i = 0; i + 1 < n; ++i) {
      h[i] = f.knots_[i + 1] - f.knots_[i];
      d[i] = (f.values_[i + 1] - f.values_[i]) / h[i];
    }
    const size_t k = n - 2;  // unknowns M_1 .. M_{n-2}
    std::vector<double> lower(k, 0), diag(k), upper(k, 0), rhs(k);
    for (size_t j = 0; j < k; ++j) {
      const size_t i = j + 1;
      lower[j] = h[i - 1];
      diag[j] = 2 * (h[i - 1] + h[i]);
      upper[j] = h[i];
      rhs[j] = 6 * (d[i] - d[i - 1]);
    }
    const double r = h[0] / h[1], s = h[n - 2] / h[n - 3];
    // First row: h_0 M_0 = h_0 ((1 + r) M_1 - r M_2).
    diag[0] += h[0] * (1 + r);
    upper[0] -= h[0] * r;
    // Last row: h_{n-2} M_{n-1} = h_{n-2} ((1 + s) M_{n-2} - s M_{n-3}).
    diag[k - 1] += h[n - 2] * (1 + s);
    lower[k - 1] -= h[n - 2] * s;
    for (size_t j = 1; j < k; ++j) {
      const double factor = lower[j] / diag[j - 1];
      diag[j] -= factor * upper[j - 1];
      rhs[j] -= factor * rhs[j - 1];
    }
    f.second_.assign(n, 0.0);
    f.second_[k] = rhs[k - 1] / diag[k - 1];
    for (size_t j = k - 1; j-- > 0;) f.second_[j + 1] = (rhs[j] - upper[j] * f.second_[j + 2]) / diag[j];
    f.second_[0] = (1 + r) * f.second_[1] - r * f.second_[2];
    f.second_[n - 1] = (1 + s) * f.second_[n - 2] - s * f.second_[n - 3];
    for (double m : f.second_)
      if (!std::isfinite(m))
        throw InputError("shape file '" + path + "': the spline through its samples is not finite (samples too close "
                         "together for their values)");
    f.t_min_ = f.knots_.front();
    f.t_max_ = f.knots_.back();
    // Finite coefficients can still overflow in evaluation (y / h for samples 1e-300 apart): checked at
    // every knot and midpoint, so that a run never meets an infinite prescribed coordinate.
    for (size_t i = 0; i + 1 < n; ++i)
      for (double t : {f.knots_[i], 0.5 * (f.knots_[i] + f.knots_[i + 1])})
        for (int order = 0; order <= 2; ++order)
          if (!std::isfinite(f.spline(t, order)))
            throw InputError("shape file '" + path + "': the spline through its samples is not finite near t = " +
                             format_number(t) + " (samples too close together for their values)");
    return f;
  }

  ExpressionParser(text, compact)
      .parse(
          [&](int k, double c) {
            f.polynomial_[k] += c;
            f.degree_ = std::max(f.degree_, k);
          },
          [&](double a, double w, double p, bool cosine) { f.harmonics_.push_back({a, w, p, cosine}); });
  return f;
}

std::string ShapeFunction::recorded_text() const {
  return file_.empty() ? text_ : "file:" + file_ + std::string(kHashMark) + sha256_;
}

double ShapeFunction::evaluate(double t, int order) const {
  if (!knots_.empty()) return spline(t, order);
  double sum = 0;
  // d^order/dt^order of sum_k c_k t^k by Horner's rule on the differentiated coefficients.
  for (int k = degree_; k >= order; --k) {
    double falling = 1;  // k (k-1) ... (k-order+1)
    for (int j = 0; j < order; ++j) falling *= k - j;
    sum = sum * t + falling * polynomial_[k];
  }
  for (const Harmonic& h : harmonics_) {
    const double x = h.frequency * t + h.phase;
    // d/dt sin = w cos, d2/dt2 sin = -w^2 sin; cos likewise with cos -> -sin.
    const double s = std::sin(x), c = std::cos(x);
    double v = 0;
    switch (order) {
      case 0: v = h.cosine ? c : s; break;
      case 1: v = h.frequency * (h.cosine ? -s : c); break;
      default: v = -h.frequency * h.frequency * (h.cosine ? c : s); break;
    }
    sum += h.amplitude * v;
  }
  return sum;
}

double ShapeFunction::spline(double t, int order) const {
  // A time a rounding error outside the samples (t_end computed as a sum of steps) is the end sample.
  const double slack = 1e-12 * std::max(1.0, t_max_ - t_min_);
  if (!(t >= t_min_ - slack && t <= t_max_ + slack)) {
    throw NumericalFailure("shape function '" + text_ + "' is sampled on [" + std::to_string(t_min_) + ", " +
                           std::to_string(t_max_) + "] and was asked at t = " + std::to_string(t));
  }
  // The interval [t_i, t_{i+1}] holding t (binary search; no allocation).
  const auto upper = std::upper_bound(knots_.begin(), knots_.end(), t);
  size_t i = upper == knots_.begin() ? 0 : static_cast<size_t>(upper - knots_.begin()) - 1;
  i = std::min(i, knots_.size() - 2);
  const double h = knots_[i + 1] - knots_[i];
  const double a = knots_[i + 1] - t, b = t - knots_[i];
  const double m0 = second_[i], m1 = second_[i + 1];
  const double c0 = values_[i] / h - m0 * h / 6, c1 = values_[i + 1] / h - m1 * h / 6;
  switch (order) {
    case 0: return (m0 * a * a * a + m1 * b * b * b) / (6 * h) + c0 * a + c1 * b;
    case 1: return (-m0 * a * a + m1 * b * b) / (2 * h) - c0 + c1;
    default: return (m0 * a + m1 * b) / h;
  }
}

double ShapeFunction::value(double t) const { return evaluate(t, 0); }
double ShapeFunction::rate(double t) const { return evaluate(t, 1); }
double ShapeFunction::acceleration(double t) const { return evaluate(t, 2); }
const std::string& ShapeFunction::text() const { return text_; }

void ShapeSchedule::evaluate(double t, Vec& qa, Vec& qda, Vec& qdda) const {
  for (size_t j = 0; j < functions.size(); ++j) {
    qa[j] = functions[j].value(t);
    qda[j] = functions[j].rate(t);
    qdda[j] = functions[j].acceleration(t);
  }
}

}  // namespace clm
