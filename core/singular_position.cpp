#include "core/singular_position.hpp"

#include <cmath>
#include <sstream>

#include "core/formulation.hpp"

namespace clm {

SingularPositionTest::SingularPositionTest(const Model& model, bool allow_sparse)
    : model_(model), n_(model.n()), m_(model.m()), ws_(model.make_workspace()), q_(Vec::Zero(n_)), zero_(Vec::Zero(n_)),
      row_sums_(Vec::Zero(m_)) {
  sparse_ = allow_sparse && model.has_sparse_terms();
  if (sparse_) {
    sparse_terms_ = model.make_sparse_terms();
    const int b = model.sparse_block_size();
    gram_ = std::make_unique<SparseGram>(sparse_terms_.A, b);
    G_sparse_ = std::make_unique<FixedPatternLdlt>(m_, gram_->pattern());
    gram_->bind(*G_sparse_);
    identity_blocks_ = Vec::Zero(sparse_terms_.M.nonZeros());
    for (int c = 0; c < n_; ++c) identity_blocks_[c * b + c % b] = 1.0;
    for (int i = 0; i < m_; ++i) diagonal_slot_.push_back(G_sparse_->slot(i, i));
  } else {
    terms_ = model.make_terms();
    G_ = Mat::Zero(m_, m_);
    ldlt_ = Eigen::LDLT<Mat>(m_);
  }
}

bool SingularPositionTest::may_be_singular(const Eigen::Ref<const Vec>& q) {
  if (m_ == 0) return false;
  q_ = q;
  double norm1 = 0, norm_inf = 0;  // |A|_1 |A|_inf >= |A|_2^2
  row_sums_.setZero();
  if (sparse_) {
    model_.evaluate_sparse(0.0, q_, zero_, kConstraintJacobian, *ws_, sparse_terms_);
    const SparseMat& A = sparse_terms_.A;
    if (!A.coeffs().allFinite()) return false;
    for (int c = 0; c < n_; ++c) {
      double col = 0;
      for (int s = A.outerIndexPtr()[c]; s < A.outerIndexPtr()[c + 1]; ++s) {
        col += std::abs(A.valuePtr()[s]);
        row_sums_[A.innerIndexPtr()[s]] += std::abs(A.valuePtr()[s]);
      }
      norm1 = std::max(norm1, col);
    }
    norm_inf = row_sums_.maxCoeff();
    const double tau = kSingularPositionRatio * kSingularPositionRatio * norm1 * norm_inf;
    if (!(tau > 0)) return false;  // A = 0: nothing to test (the exact test returns empty too)
    G_sparse_->set_zero();
    gram_->accumulate(A.valuePtr(), identity_blocks_.data(), G_sparse_->values());
    for (int slot : diagonal_slot_) G_sparse_->values()[slot] -= tau;
    if (!G_sparse_->factorize()) return true;  // a zero pivot: an eigenvalue at tau; let the SVD decide
    return G_sparse_->negative_pivots() > 0;
  }
  model_.evaluate(0.0, q_, zero_, kConstraintJacobian, *ws_, terms_);
  const Mat& A = terms_.A;
  if (!A.allFinite()) return false;
  norm1 = A.cwiseAbs().colwise().sum().maxCoeff();
  norm_inf = A.cwiseAbs().rowwise().sum().maxCoeff();
  const double tau = kSingularPositionRatio * kSingularPositionRatio * norm1 * norm_inf;
  if (!(tau > 0)) return false;
  G_.setZero();
  G_.selfadjointView<Eigen::Lower>().rankUpdate(A);
  G_.diagonal().array() -= tau;
  ldlt_.compute(G_);
  if (ldlt_.info() != Eigen::Success) return true;
  return (ldlt_.vectorD().array() < 0).count() > 0 || !ldlt_.vectorD().allFinite();
}

std::string SingularPositionTest::check(const Eigen::Ref<const Vec>& q) {
  if (m_ == 0 || q.size() != n_) return {};
  if (!may_be_singular(q)) return {};
  ++exact_tests_;
  return exact(Vec(q));
}

std::string SingularPositionTest::exact(const Vec& q) {
  ModelTerms t = model_.make_terms();
  auto ws = model_.make_workspace();
  model_.evaluate(0.0, q, Vec::Zero(n_), kConstraintJacobian, *ws, t);
  if (!t.A.allFinite()) return {};
  const Vec s = Eigen::BDCSVD<Mat>(t.A).singularValues();
  if (s.size() == 0 || !(s[0] > 0)) return {};
  // Exactly dependent rows (redundant constraints, Bricard) are not a singular position: only singular values
  // between the rank threshold and kSingularPositionRatio of the largest count.
  const double exact = rank_threshold(t.A.rows(), t.A.cols(), s[0]);
  int near = 0, exact_deficiency = int(std::max<Eigen::Index>(t.A.rows() - s.size(), 0));
  for (Eigen::Index i = 0; i < s.size(); ++i) {
    if (s[i] <= exact) ++exact_deficiency;
    else if (s[i] < kSingularPositionRatio * s[0]) ++near;
  }
  if (near == 0) return {};
  double smallest = s[s.size() - 1 - std::min<Eigen::Index>(exact_deficiency, s.size() - 1)];
  std::ostringstream msg;
  msg << "singular position of the constraints: A(q) has " << near << " singular value" << (near > 1 ? "s" : "")
      << " below " << kSingularPositionRatio << " of the largest (smallest " << smallest / s[0] << " of it), rank "
      << (m_ - exact_deficiency - near) << " of " << m_ << " there at that tolerance";
  return msg.str();
}

}  // namespace clm
