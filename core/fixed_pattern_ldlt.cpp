#include "core/fixed_pattern_ldlt.hpp"

#include "core/formulation.hpp"

#include <Eigen/OrderingMethods>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace clm {

namespace {

SparseMat symmetric_pattern(int size, const std::vector<std::pair<int, int>>& pattern) {
  std::vector<Eigen::Triplet<double, int>> t;
  t.reserve(2 * pattern.size() + size);
  for (auto [i, j] : pattern) {
    t.emplace_back(i, j, 1.0);
    t.emplace_back(j, i, 1.0);
  }
  for (int i = 0; i < size; ++i) t.emplace_back(i, i, 1.0);
  SparseMat S(size, size);
  S.setFromTriplets(t.begin(), t.end());
  S.makeCompressed();
  return S;
}

}  // namespace

std::vector<int> FixedPatternLdlt::amd_order(int size, const std::vector<std::pair<int, int>>& pattern) {
  const SparseMat S = symmetric_pattern(size, pattern);
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> perm;
  Eigen::AMDOrdering<int> amd;
  amd(S, perm);  // perm.indices()[k] = the index eliminated k-th (Eigen's m_Pinv)
  return std::vector<int>(perm.indices().data(), perm.indices().data() + size);
}

FixedPatternLdlt::FixedPatternLdlt(int size, const std::vector<std::pair<int, int>>& pattern,
                                   const std::vector<int>& order)
    : size_(size), work_(Vec::Zero(size)) {
  order_ = order.empty() ? amd_order(size, pattern) : order;
  if (int(order_.size()) != size) throw std::logic_error("FixedPatternLdlt: order of the wrong size");
  position_.assign(size, -1);
  for (int k = 0; k < size; ++k) position_[order_[k]] = k;
  if (std::count(position_.begin(), position_.end(), -1) > 0)
    throw std::logic_error("FixedPatternLdlt: order is not a permutation");
  std::vector<Eigen::Triplet<double, int>> t;
  t.reserve(pattern.size() + size);
  for (auto [i, j] : pattern) {
    const int a = position_[i], b = position_[j];
    t.emplace_back(std::min(a, b), std::max(a, b), 0.0);
  }
  for (int i = 0; i < size; ++i) t.emplace_back(i, i, 0.0);
  upper_.resize(size, size);
  upper_.setFromTriplets(t.begin(), t.end());
  upper_.makeCompressed();
  ldlt_.analyze(upper_);
}

int FixedPatternLdlt::slot(int i, int j) const {
  const int a = std::min(position_[i], position_[j]), b = std::max(position_[i], position_[j]);
  for (int s = upper_.outerIndexPtr()[b]; s < upper_.outerIndexPtr()[b + 1]; ++s)
    if (upper_.innerIndexPtr()[s] == a) return s;
  throw std::logic_error("FixedPatternLdlt: entry outside the pattern");
}

std::vector<int> FixedPatternLdlt::upper_slots(const SparseMat& S, int offset) const {
  std::vector<int> slots;
  slots.reserve(S.nonZeros());
  for (int c = 0; c < S.cols(); ++c)
    for (int s = S.outerIndexPtr()[c]; s < S.outerIndexPtr()[c + 1]; ++s) {
      const int r = S.innerIndexPtr()[s];
      slots.push_back(r <= c ? slot(r + offset, c + offset) : -1);
    }
  return slots;
}

bool FixedPatternLdlt::factorize() {
  ldlt_.factor(upper_);
  if (ldlt_.info() != Eigen::Success) return false;
  const auto& d = ldlt_.diagonal();
  for (int i = 0; i < size_; ++i)
    if (!(d[i] != 0) || !std::isfinite(d[i])) return false;
  return true;
}

void FixedPatternLdlt::solve_in_place(Vec& b) {
  for (int k = 0; k < size_; ++k) work_[k] = b[order_[k]];
  ldlt_.matrixL().solveInPlace(work_);
  work_.array() /= ldlt_.diagonal().array();
  ldlt_.matrixU().solveInPlace(work_);
  for (int k = 0; k < size_; ++k) b[order_[k]] = work_[k];
}

double FixedPatternLdlt::pivot_ratio() const { return clm::pivot_ratio(ldlt_.diagonal()); }

int FixedPatternLdlt::negative_pivots() const {
  int count = 0;
  const auto& d = ldlt_.diagonal();
  for (int i = 0; i < size_; ++i) count += d[i] < 0;
  return count;
}

}  // namespace clm
