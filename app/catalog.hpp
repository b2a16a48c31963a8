// `clmbench list`: what the registries hold, with one-line descriptions and problem parameters.
#pragma once

#include <string>

namespace clm {

// what: "" (everything), "problems", "formulations" or "integrators"; anything else is an InputError.
std::string format_catalog(const std::string& what);

}  // namespace clm
