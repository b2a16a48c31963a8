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

}  // namespace clm
