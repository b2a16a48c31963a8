#include "io/config_identity.hpp"

#include <sstream>

namespace clm {

std::string comparable_config(const std::string& config_text) {
  std::istringstream in(config_text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0 || line.rfind("out = ", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

std::string first_difference(const std::string& a, const std::string& b, const std::string& b_is) {
  std::istringstream x(a), y(b);
  std::string lx, ly;
  while (true) {
    const bool gx = static_cast<bool>(std::getline(x, lx)), gy = static_cast<bool>(std::getline(y, ly));
    if (!gx && !gy) return "";
    if (!gx) lx = "(nothing)";
    if (!gy) ly = "(nothing)";
    if (lx != ly || !gx || !gy) return "'" + lx + "', " + b_is + " '" + ly + "'";
  }
}

}  // namespace clm
