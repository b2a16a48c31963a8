// The singular-position test of Formulation::after_step (core/formulation.hpp), made once per run and cheap:
// after every accepted step of a problem with kSingularPositions it must decide whether A(q) has a singular
// value between the exact-rank threshold and kSingularPositionRatio r of the largest.
//
// An SVD per step costs O(m^2 n) and allocates. Instead a screen decides "certainly not" in the cost of one
// symmetric factorization, by Sylvester's law of inertia: the number of eigenvalues of G = A A^T below
// tau = r^2 lambda_bound is the number of negative pivots of an L D L^T of G - tau I, and lambda_bound =
// |A|_1 |A|_inf >= |A|_2^2 = lambda_max(G), so no negative pivot means every singular value of A is at least
// r sigma_max: no singular position. Only when the screen finds eigenvalues below tau (near a singular
// position, within the bound's slack, or with exactly dependent rows) does the exact SVD test run, which
// names what it finds. The dense path factors G with Eigen's LDLT (O(m^2 n + m^3), workspace allocated once);
// a model with sparse terms (bodies and joints) forms G by a fixed product plan and factors it with
// FixedPatternLdlt, O(n) for a mechanism. Neither allocates while the screen says "no".
#pragma once

#include <memory>
#include <string>

#include "core/fixed_pattern_ldlt.hpp"
#include "core/model.hpp"
#include "core/sparse_gram.hpp"

namespace clm {

class SingularPositionTest {
 public:
  // allow_sparse = false takes the dense path even for a model with sparse terms (tests compare the two).
  explicit SingularPositionTest(const Model& model, bool allow_sparse = true);
  // Empty when A(q) has no more small singular values than its exact rank deficiency; otherwise the clause of
  // Formulation::singular_position.
  std::string check(const Eigen::Ref<const Vec>& q);
  // The screen alone: false when certainly no singular value of A(q) is below r sigma_max (no allocation).
  bool may_be_singular(const Eigen::Ref<const Vec>& q);
  // Screens that passed to the SVD since construction (tests and measurements).
  long exact_tests() const { return exact_tests_; }

 private:
  std::string exact(const Vec& q);
  const Model& model_;
  int n_, m_;
  std::unique_ptr<ModelWorkspace> ws_;
  Vec q_, zero_;
  // dense path
  ModelTerms terms_;
  Mat G_;
  Eigen::LDLT<Mat> ldlt_;
  // sparse path
  bool sparse_ = false;
  SparseModelTerms sparse_terms_;
  std::unique_ptr<SparseGram> gram_;
  std::unique_ptr<FixedPatternLdlt> G_sparse_;
  Vec identity_blocks_;
  std::vector<int> diagonal_slot_;
  Vec row_sums_;
  long exact_tests_ = 0;
};

}  // namespace clm
