#include "core/position_rows_off.hpp"

#include <cmath>

namespace clm {

std::vector<PositionRowOff> position_rows_off(const Model& model, const Vec& q, double t, double tol) {
  std::vector<PositionRowOff> out;
  const int mh = model.position_rows();
  if (mh == 0) return out;
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  model.evaluate(t, q, Vec::Zero(model.n()), kConstraintValue, *ws, terms);
  const std::vector<std::string> names = model.constraint_names();
  for (int r = 0; r < mh; ++r)
    if (!(std::abs(terms.h[r]) <= tol))
      out.push_back({r, r < static_cast<int>(names.size()) ? names[r] : std::string(), terms.h[r]});
  return out;
}

}  // namespace clm
