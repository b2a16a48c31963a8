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
  t.dL_dq = Vec::Zero(n());
  t.p = Vec::Zero(n());
  t.h = position_rows() > 0 ? Vec::Zero(position_rows()) : Vec();
  t.b = time_dependent() ? Vec::Zero(m()) : Vec();
  return t;
}

}  // namespace clm

namespace clm {

std::vector<std::string> Model::coordinate_names() const {
  std::vector<std::string> names;
  for (int i = 1; i <= n(); ++i) names.push_back("q" + std::to_string(i));
  return names;
}

std::vector<std::string> Model::coordinate_units() const { return std::vector<std::string>(n(), "-"); }

}  // namespace clm
