// A sparse symmetric L D L^T factorization whose pattern and ordering are fixed once per run: the sparse path's
// one linear-algebra kernel (the Schur matrix A M^-1 A^T, the KKT matrix, and the singular-position test's
// A A^T - tau I; docs/design.md "Sparse path").
//
// The caller describes the pattern (the symmetric matrix's entries, either triangle) and optionally the
// elimination order; by default the order is Eigen's approximate minimum degree (AMD). The constructor
// permutes the pattern once, runs Eigen's symbolic analysis (SimplicialLDLT) once, and hands out slots: the
// caller writes values into values()[slot(i, j)] (original indices) and calls factorize().
//
// Why not SimplicialLDLT::factorize: it builds a temporary SparseMatrix (a heap allocation) for the permuted
// copy on every call. Here the matrix is stored already permuted and upper, and factorize_preordered (the
// numeric factorization alone) is called directly, so a factorization allocates nothing (Eigen's work
// vectors are on the stack up to EIGEN_STACK_ALLOCATION_LIMIT = 128 KB: orders below ~16000).
// No pivoting: the order must make every pivot nonzero. For a symmetric positive-definite matrix any order
// does; for the KKT matrix [M A^T; A 0] the coordinates are eliminated before the constraints (M's pivots,
// then those of -A M^-1 A^T). D's signs give the inertia (Sylvester's law): negative_pivots().
#pragma once

#include <Eigen/SparseCholesky>
#include <vector>

#include "core/model.hpp"

namespace clm {

class FixedPatternLdlt {
 public:
  // pattern: the entries (i, j) of a symmetric size x size matrix (either triangle or both; duplicates and
  // the diagonal are fine, the diagonal is always included). order: the elimination order (order[k] = the
  // index eliminated k-th); empty for AMD.
  FixedPatternLdlt(int size, const std::vector<std::pair<int, int>>& pattern, const std::vector<int>& order = {});

  int size() const { return size_; }
  // Index into values() of the entry (i, j) = (j, i); throws std::logic_error outside the pattern (setup only).
  int slot(int i, int j) const;
  double* values() { return upper_.valuePtr(); }
  // The slot of every stored value of S (a symmetric matrix stored full, e.g. SparseModelTerms::M) at (i + offset,
  // j + offset) in the upper triangle, -1 for the values of its strict lower triangle (setup only).
  std::vector<int> upper_slots(const SparseMat& S, int offset = 0) const;
  // values()[slot[s]] = v[s] for every slot >= 0 (S's values through upper_slots).
  void set_values(const std::vector<int>& slot, const double* v) {
    double* k = values();
    for (size_t s = 0; s < slot.size(); ++s)
      if (slot[s] >= 0) k[slot[s]] = v[s];
  }
  void set_zero() { upper_.coeffs().setZero(); }
  // Numeric factorization of the values written; false when a pivot is zero or not finite.
  bool factorize();
  // b := K^-1 b (b of size(); work_ is the permuted copy).
  void solve_in_place(Vec& b);
  // min |d_i| / max |d_i| (the suite's pivot-ratio conditioning check, core/formulation.hpp).
  double pivot_ratio() const;
  // The number of negative pivots = the number of negative eigenvalues of the matrix factored.
  int negative_pivots() const;
  // The permutation: order()[k] is the index eliminated k-th.
  const std::vector<int>& order() const { return order_; }
  // AMD order of the symmetric pattern (helper for callers that compose orders, e.g. the KKT matrix).
  static std::vector<int> amd_order(int size, const std::vector<std::pair<int, int>>& pattern);

 private:
  // Exposes Eigen's symbolic and numeric factorizations of an already permuted upper matrix.
  class Preordered : public Eigen::SimplicialLDLT<SparseMat, Eigen::Upper, Eigen::NaturalOrdering<int>> {
   public:
    void analyze(const SparseMat& upper) { analyzePattern_preordered(upper, true); }
    void factor(const SparseMat& upper) { factorize_preordered<true>(upper); }
    // D by reference (SimplicialLDLT::vectorD() returns a copy: a heap allocation per call).
    const Vec& diagonal() const { return m_diag; }
  };

  int size_;
  std::vector<int> order_;     // order_[k] = original index eliminated k-th
  std::vector<int> position_;  // position_[i] = k with order_[k] = i
  SparseMat upper_;            // the permuted matrix, upper triangle
  Preordered ldlt_;
  Vec work_;
};

}  // namespace clm
