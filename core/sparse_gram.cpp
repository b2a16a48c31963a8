#include "core/sparse_gram.hpp"

#include <map>

namespace clm {

SparseGram::SparseGram(const SparseMat& A, int block_size) {
  const int n = int(A.cols());
  std::map<std::pair<int, int>, int> index;  // (i, j) -> entry of pattern_
  for (int first = 0; first < n; first += block_size) {
    // The entries (row, A value index, column) of this block's columns.
    struct Entry {
      int row, a, col;
    };
    std::vector<Entry> entries;
    for (int c = first; c < std::min(n, first + block_size); ++c)
      for (int s = A.outerIndexPtr()[c]; s < A.outerIndexPtr()[c + 1]; ++s) entries.push_back({A.innerIndexPtr()[s], s, c});
    for (const Entry& e1 : entries)
      for (const Entry& e2 : entries) {
        if (e1.row > e2.row) continue;
        const auto key = std::make_pair(e1.row, e2.row);
        auto [it, inserted] = index.emplace(key, int(pattern_.size()));
        if (inserted) pattern_.push_back(key);
        // W's entry (row e1.col, column e2.col) of the block: at e2.col * b + (e1.col - first).
        terms_.push_back({it->second, e1.a, e2.col * block_size + (e1.col - first), e2.a});
      }
  }
  pattern_index_.reserve(terms_.size());
  for (const Term& t : terms_) pattern_index_.push_back(t.s);
}

void SparseGram::bind(const FixedPatternLdlt& target, int offset) {
  std::vector<int> slot(pattern_.size());
  for (size_t e = 0; e < pattern_.size(); ++e) slot[e] = target.slot(pattern_[e].first + offset, pattern_[e].second + offset);
  for (size_t k = 0; k < terms_.size(); ++k) terms_[k].s = slot[pattern_index_[k]];
}

void SparseGram::accumulate(const double* a, const double* w, double* target) const {
  for (const Term& t : terms_) target[t.s] += a[t.a1] * w[t.w] * a[t.a2];
}

}  // namespace clm
