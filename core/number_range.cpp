#include "core/number_range.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/value_parsing.hpp"

namespace clm {

std::string number_range_problem(std::string_view text_in) {
  std::string text(text_in);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.erase(text.begin());
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789+-.eE_") != std::string::npos) return "";
  std::string digits = text;
  std::erase(digits, '_');  // TOML's digit separators
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || errno != ERANGE) return "";
  if (std::isinf(value)) return "number '" + echo_value(text) + "' is beyond the range of a double (largest 1.8e308)";
  if (value == 0)
    return "number '" + echo_value(text) +
           "' is below the smallest positive double (4.9e-324): write 0 where zero is meant";
  return "";  // a subnormal: representable, if imprecisely
}

}  // namespace clm
