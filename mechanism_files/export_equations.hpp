// The equations a mechanism file implies, as a person reads them (issue 42): `clmbench mechanism export --format
// sympy` writes a Python module that builds them as sympy objects (what clmbench.Mechanism.equations() returns), and
// `--format latex` a LaTeX align environment. Both print the nodes the tapes run, over symbolic parameters:
//
//   T(q, qd) and V(q, t) as stated (bodies and gravity included), M = d2T/dqd2, the gyroscopic a(q) = dT/dqd at
//   qd = 0 (where T has terms linear in qd), the generalized forces F(q, qd, t), the position rows h(q, t), the
//   velocity rows' A(q) and b(q, t);
//
// the sympy module also states Lagrange's equations d/dt dT/dqd - dT/dq + dV/dq - F - C^T lambda = 0, C the rows'
// Jacobian (dh/dq over A), in the accelerations NAME_ddot and the multipliers lambda_1 .. lambda_m.
#pragma once

#include <string>

#include "mechanism_files/mechanism_file.hpp"

namespace clm {

// A Python module (it imports sympy): the symbols (coordinates, velocities NAME_dot, accelerations NAME_ddot, t,
// the parameters, the multipliers), T, V, M, a, F, h, A, b (Matrix for vectors and matrices; None where absent), the
// parameters' values and `equations_of_motion`.
std::string export_sympy(const MechanismFile& file);

// A LaTeX fragment (amsmath): one align* environment with T, V, each entry of M (upper triangle), a, F, h, A and b;
// Greek names as their letters (theta -> \theta), trailing digits as subscripts, velocities dotted.
std::string export_latex(const MechanismFile& file);

}  // namespace clm
