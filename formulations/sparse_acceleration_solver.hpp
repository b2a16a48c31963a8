// The sparse path of kkt and schur (docs/design.md "Sparse path"): accelerations and multipliers of
//
//   M qdd + c = F + A^T lambda,   A qdd = gamma
//
// from SparseModelTerms (block-diagonal M, sparse A with a fixed pattern; core/model.hpp), in O(n) for a
// mechanism built from bodies and joints. Symbolic analysis (pattern, ordering, elimination tree, product
// plan) is done once in the constructor; solve() factors and solves without heap allocation.
//
//   SparseSchurSolver: M^-1 block by block, S = A M^-1 A^T by a fixed product plan (core/sparse_gram.hpp),
//     S = L D L^T in AMD order (S is SPD for A of full row rank); lambda = S^-1 (gamma - A M^-1 f),
//     qdd = M^-1 (f + A^T lambda), f = F - c.
//   SparseKktSolver: the symmetric KKT matrix [M A^T; A 0] [qdd; -lambda] = [f; gamma] by one L D L^T with the
//     coordinates eliminated first (M's pivots, no fill since M is block-diagonal) and the constraints after
//     them in the AMD order of A M^-1 A^T's pattern (the pivots of -A M^-1 A^T): no pivoting is needed, which
//     is what makes the factorization allocation-free (Eigen's SparseLU would pivot and allocate per call).
// Both throw NumericalFailure (the dense path's messages) when a factorization is singular or ill-conditioned.
#pragma once

#include <string>

#include "core/fixed_pattern_ldlt.hpp"
#include "core/model.hpp"
#include "core/sparse_gram.hpp"

namespace clm {

// M^-1 of a block-diagonal M (SparseModelTerms::M's layout) into `inverse` (same layout); false when a block
// is not positive definite or its pivot ratio is below the suite's conditioning floor.
bool invert_block_diagonal(const SparseMat& M, int block_size, Vec& inverse);
// y = W x for W block-diagonal in that layout.
void multiply_block_diagonal(const Vec& w, int block_size, const Vec& x, Vec& y);

class SparseSchurSolver {
 public:
  SparseSchurSolver(const SparseModelTerms& pattern, int block_size);
  void solve(const SparseModelTerms& t, const Vec& f, const Vec& gamma, Vec& qdd, Vec& lambda);

  // The pieces solve() is made of, for users that keep M while A changes (the coordinate projection's
  // Gauss-Newton, formulations/coordinate_projection.hpp). Each returns false where solve() would throw.
  bool invert_mass(const SparseMat& M);    // M^-1 block by block
  bool factor_schur(const SparseMat& A);   // S = A M^-1 A^T and its L D L^T (conditioning checked)
  // At a singular position (the projection of a problem with kSingularPositions): the L D L^T of S + delta I,
  // delta = ratio max_i S_ii, a Tikhonov-regularized S whose solve drops the directions of S's eigenvalues far
  // below delta (the dense path's pseudo-inverse, made smooth); false when even that is not positive definite.
  bool factor_schur_regularized(const SparseMat& A, double ratio);
  // solve() with S + delta I (factor_schur_regularized); false where that factorization fails.
  bool solve_regularized(const SparseModelTerms& t, const Vec& f, const Vec& gamma, double ratio, Vec& qdd,
                         Vec& lambda);
  void solve_schur(Vec& x) { S_.solve_in_place(x); }  // x := S^-1 x
  void minv_at(const SparseMat& A, const Vec& mu, Vec& out);  // out = M^-1 A^T mu
  double pivot_ratio() const { return S_.pivot_ratio(); }  // of the last factor of S

 private:
  int n_, m_, b_;
  SparseGram gram_;
  FixedPatternLdlt S_;
  std::vector<int> diagonal_slot_;  // S_'s values() slot of S_ii
  Vec minv_, free_, t_;
};

class SparseKktSolver {
 public:
  SparseKktSolver(const SparseModelTerms& pattern, int block_size);
  void solve(const SparseModelTerms& t, const Vec& f, const Vec& gamma, Vec& qdd, Vec& lambda);
  double pivot_ratio() const { return K_.pivot_ratio(); }  // of the last factor of K

 private:
  int n_, m_;
  FixedPatternLdlt K_;
  std::vector<int> m_slot_, a_slot_;  // slot in K of each value of M and of A
  Vec x_;
};

}  // namespace clm
