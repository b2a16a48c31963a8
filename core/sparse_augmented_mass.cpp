#include "core/sparse_augmented_mass.hpp"

namespace clm {

SparseMat SparseAugmentedMass::transpose_pattern(const SparseMat& A, std::vector<int>& from_a) {
  // Transpose a copy whose values are A's value indices: A^T's values then say where each came from.
  SparseMat index = A;
  for (int k = 0; k < int(index.nonZeros()); ++k) index.valuePtr()[k] = k;
  SparseMat At = index.transpose();
  At.makeCompressed();
  from_a.resize(At.nonZeros());
  for (int k = 0; k < int(At.nonZeros()); ++k) from_a[k] = int(At.valuePtr()[k]);
  return At;
}

std::vector<std::pair<int, int>> SparseAugmentedMass::pattern_of(const SparseModelTerms& p, const SparseGram& gram,
                                                                  const std::vector<std::pair<int, int>>& extra) {
  std::vector<std::pair<int, int>> entries = gram.pattern();
  for (int c = 0; c < p.M.cols(); ++c)
    for (int s = p.M.outerIndexPtr()[c]; s < p.M.outerIndexPtr()[c + 1]; ++s) entries.emplace_back(p.M.innerIndexPtr()[s], c);
  entries.insert(entries.end(), extra.begin(), extra.end());
  return entries;
}

SparseAugmentedMass::SparseAugmentedMass(const SparseModelTerms& pattern,
                                         const std::vector<std::pair<int, int>>& extra_entries)
    : At_(transpose_pattern(pattern.A, at_from_a_)),
      gram_(At_, 1),
      K_(int(pattern.M.cols()), pattern_of(pattern, gram_, extra_entries)),
      w_(Vec::Zero(pattern.A.rows())) {
  gram_.bind(K_);
  const SparseMat& M = pattern.M;
  for (int c = 0; c < M.cols(); ++c)
    for (int s = M.outerIndexPtr()[c]; s < M.outerIndexPtr()[c + 1]; ++s)
      m_slot_.push_back(M.innerIndexPtr()[s] <= c ? K_.slot(M.innerIndexPtr()[s], c) : -1);
}

void SparseAugmentedMass::assemble(const SparseModelTerms& t, double beta) {
  K_.set_zero();
  double* k = K_.values();
  const double* mv = t.M.valuePtr();
  for (size_t s = 0; s < m_slot_.size(); ++s)
    if (m_slot_[s] >= 0) k[m_slot_[s]] = mv[s];
  const double* av = t.A.valuePtr();
  double* atv = At_.valuePtr();
  for (size_t s = 0; s < at_from_a_.size(); ++s) atv[s] = av[at_from_a_[s]];
  w_.setConstant(beta);
  gram_.accumulate(atv, w_.data(), k);
}

}  // namespace clm
