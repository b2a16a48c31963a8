// Where a problem's typed capabilities (core/model.hpp) are built: the templated builders of the
// formulations that use them (velocity basis, substitution, restricted Lagrangian with its transversal
// frame, servo directions), of the integrators (the constraint Hessian of ALI3-P) and of `clmbench analyze`
// (constraint analysis, steady motion), instantiated for the problem type P. This header sits in runs
// because runs is the lowest layer that may see problems, formulations, integrators and analysis together;
// the registry (runs/zoo/registration.hpp) and tests with test-only problems use it.
#pragma once

#include <memory>

#include "core/autodiff_model.hpp"
#include "analysis/constraint_analysis.hpp"
#include "runs/vakonomic_closed_form.hpp"
#include "analysis/steady_motion.hpp"
#include "formulations/restricted_lagrangian.hpp"
#include "formulations/servo_direction.hpp"
#include "formulations/substitution.hpp"
#include "formulations/velocity_basis.hpp"
#include "integrators/constraint_hessian.hpp"

namespace clm {

template <Problem P>
void add_capabilities(Model& model, const P& p) {
  add_velocity_basis(model, p);
  add_substitution(model, p);
  add_restricted_lagrangian(model, p);
  add_constraint_analyzer(model, p);
  add_vakonomic_closed_form(model, p);
  add_servo_directions(model, p);
  add_steady_motion(model, p);  // problems with a steady motion only (analyze --speed)
  add_constraint_hessian(model, p);  // holonomic problems: the full ALI3-P tangent (trapezoidal)
}

// An AutoDiffModel<P> with every capability P supports, as the registry makes them (for problems that are
// not registered, e.g. test-only ones).
template <Problem P>
std::shared_ptr<const Model> make_model_with_capabilities(P p, bool use_analytic = true) {
  auto model = std::make_shared<AutoDiffModel<P>>(std::move(p), use_analytic);
  add_capabilities(*model, model->problem());
  return model;
}

}  // namespace clm
