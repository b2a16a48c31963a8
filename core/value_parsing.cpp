#include "core/value_parsing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/number_range.hpp"
#include "core/types.hpp"

namespace clm {

std::string format_figure(double v, const char* format, const char* nan_text) {
  if (std::isnan(v)) return nan_text;
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string echo_value(const std::string& text) {
  constexpr size_t kMax = 80;
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= kMax && text.size() > kMax) out = out.substr(0, kMax - 3) + "... (" + std::to_string(text.size()) + " characters)";
  return out;
}

double parse_number(const std::string& text_in, const std::string& what) {
  const std::string text = trim(text_in);
  double value = 0;
  // from_chars does not accept a leading '+'; allow it, since people write "+1e-3".
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    const std::string range = number_range_problem(text);
    throw InputError((range.empty() ? "malformed number '" + echo_value(text) + "'" : range) + " for " + what);
  }
  return value;
}

std::vector<double> parse_number_list(const std::string& text, const std::string& what) {
  std::vector<double> values;
  std::string token;
  bool after_comma = false;  // a comma and no number since: "1,,2", ",1" and "1," have an empty entry
  auto flush = [&] {
    if (!token.empty()) {
      values.push_back(parse_number(token, what));
      after_comma = false;
    }
    token.clear();
  };
  const auto empty_entry = [&] {
    return InputError("empty entry in the list of numbers '" + echo_value(trim(text)) + "' for " + what +
                      " (numbers separated by commas or spaces)");
  };
  for (char ch : text) {
    if (ch == ',') {
      flush();
      if (after_comma || values.empty()) throw empty_entry();  // before it only a comma, or nothing
      after_comma = true;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      flush();
    } else {
      token += ch;
    }
  }
  flush();
  if (after_comma) throw empty_entry();
  if (values.empty()) throw InputError("empty list of numbers for " + what);
  return values;
}

bool parse_bool(const std::string& text_in, const std::string& what) {
  std::string text = trim(text_in);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true" || text == "yes" || text == "on" || text == "1") return true;
  if (text == "false" || text == "no" || text == "off" || text == "0") return false;
  throw InputError("malformed boolean '" + echo_value(trim(text_in)) + "' for " + what + " (expected true or false)");
}

std::string format_number(double value) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    double back = 0;
    std::from_chars(buf, buf + std::char_traits<char>::length(buf), back);
    if (back == value) break;
  }
  return buf;
}

}  // namespace clm
