// Consistent initial data: projection of (q, qd) onto h(q) = 0 and A(q) qd = 0 by minimal-norm
// Gauss-Newton (the least-squares problem of docs/design.md section 1).
#pragma once

#include <vector>

#include "core/model.hpp"

namespace clm {

struct ProjectionReport {
  double position_distance = 0;  // |q_projected - q_given|
  double velocity_distance = 0;  // |qd_projected - qd_given|
  int iterations = 0;
};

// Projects in place. Throws InputError when Gauss-Newton does not reach |h| <= tol (no nearby consistent
// configuration) or A loses rank on the way.
// Time-dependent problems are projected onto h(q, t0) = 0 and A(q) qd + b(q, t0) = 0.
// `held` lists coordinates the projection must not move (the prescribed actuated coordinates of a run with a
// [shape], core/shape_schedule.hpp): the correction is then the minimum-norm one in the other coordinates.
ProjectionReport project_onto_constraints(const Model& model, Vec& q, Vec& qd, double tol = 1e-13,
                                          int max_iterations = 50, double t0 = 0.0,
                                          const std::vector<int>& held = {});

}  // namespace clm
