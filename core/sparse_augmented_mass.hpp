// The augmented mass matrix M + beta A^T A of the augmented Lagrangian methods on the sparse path (docs/design.md
// "Sparse path"): the leading matrix of augmented_lagrangian's acceleration solve (beta = alpha) and of ALI3-P's
// Newton tangent and projections (integrators/trapezoidal.hpp, beta = alpha h^2/4), for problems built from
// bodies and joints (SparseModelTerms: M block-diagonal, A sparse with a fixed pattern).
//
// M + beta A^T A couples two coordinates when they share a constraint row, so for a mechanism of bodies and
// joints it has O(n) entries, and its L D L^T in AMD order costs O(n) too (a chain of loops has no fill beyond
// a band). The pattern, the AMD order, Eigen's symbolic analysis and the product plan of A^T A are made once
// (the constructor); assemble() and factorize() write values only: no heap allocation per evaluation.
// Extra symmetric entries (ALI3-P's geometric stiffness) may be added to the pattern; the caller writes them
// through slot(). M + beta A^T A is positive definite whatever the rank of A (redundant constraints need
// nothing special); with an indefinite addition the factorization still runs without pivoting as long as no
// pivot vanishes (false otherwise).
#pragma once

#include <utility>
#include <vector>

#include "core/fixed_pattern_ldlt.hpp"
#include "core/model.hpp"
#include "core/sparse_gram.hpp"

namespace clm {

class SparseAugmentedMass {
 public:
  // pattern: SparseModelTerms from Model::make_sparse_terms() (its patterns, not its values).
  explicit SparseAugmentedMass(const SparseModelTerms& pattern,
                               const std::vector<std::pair<int, int>>& extra_entries = {});

  // values := M + beta A^T A from t's values (extra entries zeroed).
  void assemble(const SparseModelTerms& t, double beta);
  // Slot of entry (i, j) in values() (setup only: throws std::logic_error outside the pattern).
  int slot(int i, int j) const { return K_.slot(i, j); }
  double* values() { return K_.values(); }
  bool factorize() { return K_.factorize(); }
  void solve_in_place(Vec& b) { K_.solve_in_place(b); }
  int negative_pivots() const { return K_.negative_pivots(); }

 private:
  static SparseMat transpose_pattern(const SparseMat& A, std::vector<int>& from_a);
  static std::vector<std::pair<int, int>> pattern_of(const SparseModelTerms& p, const SparseGram& gram,
                                                     const std::vector<std::pair<int, int>>& extra);

  std::vector<int> at_from_a_;  // A^T's k-th stored value is A's value at_from_a_[k]
  SparseMat At_;                // A^T: its pattern, and its values gathered from A on assemble()
  SparseGram gram_;             // (A^T) W (A^T)^T = A^T W A, W = beta I over the constraints
  FixedPatternLdlt K_;
  std::vector<int> m_slot_;  // slot of each stored value of M (upper triangle; -1 for the lower)
  Vec w_;                    // the m weights beta
};

}  // namespace clm
