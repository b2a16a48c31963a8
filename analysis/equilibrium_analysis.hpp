// Stability of relative equilibria (issue 13 item 6; `clmbench analyze --equilibrium`).
//
// The reduced velocities are those of the null-space elimination [seed-000, eq. 2.17-2.18]: qd = S(q) v with
// S the problem's velocity_basis (A S = 0), and
//     vd = g(q, v) = (S^T M S)^-1 S^T (F - c(q, S v) - M Sdot v).
// A relative equilibrium (steady motion) is a state where the reduced velocities are stationary, g = 0,
// while the group coordinates move (the sleigh: u and w constant, x, y, theta advancing). The tool decides
// which coordinates are group (cyclic) coordinates numerically: those q_l on which g does not depend,
// |g(q + d e_l, v) - g(q, v)| below kQDependenceTol x the scale of g for the finite offsets d = kQOffsets x
// (1 + |q_l|) (a symmetry is global: a derivative at q alone misses g cos(phi) at phi = 0; a symmetric problem
// differs by rounding, ~1e-16, a broken symmetry by O(1)). When g depends on some q_l the reduced equations
// are not closed in v: the state is refused, naming the coordinates (a full linearization in (q, v) is not
// what this analysis is).
//
// Linearization: J = dg/dv at (q, v), exact up to rounding, in two parts:
//   - dc/dqd from Model::dynamics_derivatives (automatic differentiation of the problem's templated
//     M(q); the problem must have no generalized force, which is what that needs), times S;
//   - d(Sdot v)/dv by polarization: Sdot v = sum_l dS/dq_l (S v)_l v is a homogeneous quadratic form Q(v)
//     in v at fixed q, so (Q(v + s e_j) - Q(v - s e_j)) / (2 s) is its derivative along e_j exactly for
//     every s (the difference has no s^2 term); s = max(1, |v|) keeps the rounding at ~eps |Q|/|v|.
//   Then J = (S^T M S)^-1 S^T (-dc/dqd S - M dQ/dv); F is zero (no generalized force) and does not enter.
// Eigenvalues by Eigen's EigenSolver.
//
// Verdict (tol = EquilibriumOptions::eigenvalue_tol x max(1, |J|_F)):
//   - unstable if some eigenvalue has Re > tol;
//   - zero eigenvalues forced by a conserved quantity are set aside: when the energy E = 1/2 v^T (S^T M S) v
//     + V is conserved (no generalized force) and v != 0, its gradient w = v^T (S^T M S) is a left null
//     vector of J (d/dt E = w g = 0 for all v, differentiated at g = 0: w J = 0; checked numerically), so
//     one eigenvalue is 0 whatever the stability: the direction along the family of equilibria at other
//     energies (for a homogeneous quadratic g also J v = 0: the ray s v). One eigenvalue with |lambda| <= tol
//     is set aside for it;
//   - stable if every remaining eigenvalue has Re < -tol (asymptotically stable modulo that family: a
//     nearby motion converges to a nearby equilibrium of the family, as the sleigh's);
//   - marginal otherwise (a further eigenvalue with |Re| <= tol: linearization is inconclusive, e.g. the
//     rolling disk's steady rolling, J = 0).
#pragma once

#include <complex>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/types.hpp"

namespace clm {

struct EquilibriumOptions {
  // |vd| above this (units of vd) is "not an equilibrium"; also the relative tolerance of the eigenvalues'
  // real parts and of the checks above.
  double residual_tol = 1e-9;
  double eigenvalue_tol = 1e-9;
};

// The q-dependence threshold, relative to max(1, |J|_F |v|, |vd|), and the offsets (see the header comment).
inline constexpr double kQDependenceTol = 1e-6;
inline constexpr double kQOffsets[] = {0.5, -1.3, 2.9};

struct EquilibriumAnalysis {
  std::string problem;
  std::vector<std::string> coordinate_names;
  Vec q, qd;                      // the state analysed (qd on the constraints: S v)
  Vec v;                          // reduced velocities, S v = qd
  Vec vd;                         // g(q, v)
  double residual = 0;            // |vd|
  std::vector<int> group_coordinates;  // q_l with dg/dq_l = 0 (to the threshold)
  double max_q_dependence = 0;    // max over l and the offsets of |g(q + d e_l, v) - g(q, v)|
  Mat jacobian;                   // dg/dv
  std::vector<std::complex<double>> eigenvalues;  // sorted by real part, descending
  bool energy_conserved = false;  // the energy's gradient is a left null vector of J (checked)
  int forced_zeros = 0;           // zero eigenvalues set aside for the family of equilibria
  double tolerance = 0;           // the eigenvalue tolerance used, eigenvalue_tol x max(1, |J|_F)
  std::string verdict;            // stable | unstable | marginal
  std::string reason;             // one sentence
  EquilibriumOptions options;
};

// Analyses (q, qd) for the model's reduced velocities. Throws InputError with one line when the model has
// no velocity basis or no exact derivatives (generalized force), when q or qd have the wrong size or are
// not finite, when qd violates the constraints (|qd - S v| printed with the closest admissible qd), when the
// reduced equations depend on a coordinate (not symmetry-reduced), and when (q, qd) is not a relative
// equilibrium (|vd| printed).
EquilibriumAnalysis analyze_equilibrium(const Model& model, const Vec& q, const Vec& qd,
                                        const EquilibriumOptions& options = {});

// The reduced velocity equation vd = g(q, v) alone (tests: against the nullspace formulation), and its
// Jacobian dg/dv at any state (tests: against the sleigh's hand linearization [seed-000]).
Vec reduced_acceleration(const Model& model, const Vec& q, const Vec& v);
Mat reduced_jacobian(const Model& model, const Vec& q, const Vec& v);

// Human-readable report, several lines, ending with "verdict            <word>".
std::string format_equilibrium_analysis(const EquilibriumAnalysis& a);

}  // namespace clm
