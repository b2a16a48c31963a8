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
  m_slot_ = K_.upper_slots(pattern.M);
}

void SparseAugmentedMass::assemble(const SparseModelTerms& t, double beta) {
  K_.set_zero();
  K_.set_values(m_slot_, t.M.valuePtr());
  double* k = K_.values();
  const double* av = t.A.valuePtr();
  double* atv = At_.valuePtr();
  for (size_t s = 0; s < at_from_a_.size(); ++s) atv[s] = av[at_from_a_[s]];
  w_.setConstant(beta);
  gram_.accumulate(atv, w_.data(), k);
}

}  // namespace clm
