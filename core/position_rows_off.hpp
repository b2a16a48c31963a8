// The position rows a configuration violates: each row r with |h_r(q, t)| above a tolerance, its name (the model's
// constraint_names(), empty when the rows are unnamed) and its value. What a start off h = 0 is refused or
// reported with: `run --strict-initial` (runs/runner.cpp) and `mechanism check` (app/mechanism_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/model.hpp"

namespace clm {

struct PositionRowOff {
  int row = 0;       // 0-based, among the position rows (the first rows of A)
  std::string name;  // "" for an unnamed row
  double h = 0;      // h_r(q, t)
  // "position row 2 (hitch)": 1-based, with the name where there is one.
  std::string label() const { return "position row " + std::to_string(row + 1) + (name.empty() ? "" : " (" + name + ")"); }
};

// Empty when the model has no position rows or q violates none.
std::vector<PositionRowOff> position_rows_off(const Model& model, const Vec& q, double t, double tol);

}  // namespace clm
