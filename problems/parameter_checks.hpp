// What many problems' validate() and mass_matrix() write alike: parameter checks that throw one InputError
// naming the problem and the parameter, and a constant diagonal mass matrix.
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/types.hpp"

namespace clm {

// Each (value, name), in order: > 0 and finite, else "<problem>: parameter <name> must be > 0".
inline void require_positive(const char* problem, std::initializer_list<std::pair<double, const char*>> params) {
  for (const auto& [v, name] : params)
    if (!(v > 0) || !std::isfinite(v)) throw InputError(std::string(problem) + ": parameter " + name + " must be > 0");
}

// Each (value, name), in order: finite, else "<problem>: parameter <name> must be finite".
inline void require_finite(const char* problem, std::initializer_list<std::pair<double, const char*>> params) {
  for (const auto& [v, name] : params)
    if (!std::isfinite(v)) throw InputError(std::string(problem) + ": parameter " + name + " must be finite");
}

// M = diag(d_0, d_1, ...), zero off the diagonal: point masses and bodies in the plane whose coordinates are
// their centre (or contact point) and angles.
template <class T, class Matrix, class... D>
void diagonal_mass_matrix(Matrix& M, D... d) {
  M.setZero();
  int i = 0;
  ((M(i, i) = T(d), ++i), ...);
}

}  // namespace clm
