#include "core/model.hpp"

namespace clm {

ModelTerms Model::make_terms() const {
  ModelTerms t;
  t.M = Mat::Zero(n(), n());
  t.c = Vec::Zero(n());
  t.F = Vec::Zero(n());
  t.A = Mat::Zero(m(), n());
  t.Adot_qd = Vec::Zero(m());
  t.C = Mat::Zero(m(), n());
  t.h = holonomic() ? Vec::Zero(m()) : Vec();
  return t;
}

void Model::velocity_basis(const Vec&, const Vec&, ModelWorkspace&, Mat&, Vec&) const {
  throw std::logic_error(name() + " has no natural velocity basis");
}

}  // namespace clm
