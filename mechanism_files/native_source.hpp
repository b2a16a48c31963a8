// The C source of a mechanism file's native evaluation (issue 40): each group of NativeTermGraph's terms as one
// straight-line C function over doubles, every node computed once per function (the graph's hash-consing already
// shared the common subexpressions across the terms of a group), compiled by runs/mechanism/native_library.hpp.
//
// The functions, all `void NAME(const double* x, double* out, double* s)` with x = q (n), qd (n), t, parameters
// (file order) and s a scratch array of clm_native_scratch() doubles the caller keeps (long term groups are cut into
// parts that hand values on through it):
//   clm_native_mass       out = M (n x n, row-major)
//   clm_native_dynamics   out = M, c, F (n x n + n + n; F zero without [forces])
//   clm_native_force      out = F (n)
//   clm_native_constraints out = A (m x n), bias (m), h (position rows), b (m when time-dependent, else nothing)
//   clm_native_energy     out = kinetic, W = V - T0, qd . a, dW/dt
// and `int clm_native_abi(void)` returning kNativeAbi, checked when the library is loaded,
// `int clm_native_scratch(void)`, and `void clm_native_parameters(double* x)`: the values of the parameters alone
// (hoisted out of the per-call functions), written once per parameter set into x after the parameters,
// `int clm_native_hoisted(void)` of them (x then holds 2n + 1 + parameters + hoisted doubles).
#pragma once

#include <string>

#include "mechanism_files/native_terms.hpp"

namespace clm {

inline constexpr int kNativeAbi = 3;

std::string native_c_source(const NativeTermGraph& terms, const std::string& origin);

}  // namespace clm
