#include "integrators/embedded_pair.hpp"

#include <algorithm>

namespace clm {

EmbeddedPair make_embedded_pair(std::string name, int order, int error_order, int dense_order, int stages,
                                std::span<const double> c, std::span<const TableauEntry> a,
                                std::span<const WeightEntry> b, std::span<const WeightEntry> e,
                                std::span<const InterpolantEntry> r) {
  EmbeddedPair p;
  p.name = std::move(name);
  p.order = order;
  p.error_order = error_order;
  p.dense_order = dense_order;
  p.stages = stages;
  p.dense_stages = static_cast<int>(c.size());
  const int s = p.dense_stages;
  p.c = Eigen::Map<const Vec>(c.data(), s);
  p.a = Mat::Zero(s, s);
  for (const auto& x : a) p.a(x.i - 1, x.j - 1) = x.value;
  p.b = Vec::Zero(stages);
  for (const auto& x : b) p.b[x.i - 1] = x.value;
  p.e = Vec::Zero(stages);
  for (const auto& x : e) p.e[x.i - 1] = x.value;
  int degree = 0;
  for (const auto& x : r) degree = std::max(degree, x.p);
  p.r = MatL::Zero(s, degree);
  for (const auto& x : r) p.r(x.i - 1, x.p - 1) = x.value;
  return p;
}

StageTerms nonzero_terms(const Vec& w) {
  StageTerms t;
  for (int j = 0; j < w.size(); ++j)
    if (w[j] != 0) t.emplace_back(j, w[j]);
  return t;
}

StageTerms stage_terms(const Mat& a, int i) { return nonzero_terms(a.row(i).head(i).transpose()); }

}  // namespace clm
