// S = A W A^T for a sparse A (m x n, fixed pattern) and a block-diagonal W (blocks of b coordinates, stored
// like SparseModelTerms::M: column c's block entries at w[c b .. c b + b - 1]): the Schur matrix A M^-1 A^T
// of the sparse schur formulation (W = M^-1) and the Gram matrix A A^T of the singular-position test (W = I).
//
// The pattern of S and a product plan are worked out once from A's pattern: for every block and every pair
// of rows (i <= j) touching it, the terms A_ik W_kl A_jl, each a triple of value indices with the slot of
// S_ij in a FixedPatternLdlt. Evaluating S is then a loop over the plan: O(nnz(A) x rows per block x b),
// O(n) for a mechanism of bodies and joints, and no allocation (Eigen's sparse product would allocate).
#pragma once

#include <utility>
#include <vector>

#include "core/fixed_pattern_ldlt.hpp"
#include "core/model.hpp"

namespace clm {

class SparseGram {
 public:
  SparseGram(const SparseMat& A, int block_size);
  // The entries (i, j), i <= j, of S's pattern (for FixedPatternLdlt, or an order).
  const std::vector<std::pair<int, int>>& pattern() const { return pattern_; }
  // Points the plan at the slots of S's entries in `target`, whose indices are S's shifted by `offset`.
  void bind(const FixedPatternLdlt& target, int offset = 0);
  // target values += A W A^T (A's values and W's block values as described above).
  void accumulate(const double* a, const double* w, double* target) const;

 private:
  struct Term {
    int s, a1, w, a2;
  };
  std::vector<std::pair<int, int>> pattern_;
  std::vector<Term> terms_;        // s indexes pattern_ until bind() turns it into a slot
  std::vector<int> pattern_index_;  // per term, its entry of pattern_
};

}  // namespace clm
