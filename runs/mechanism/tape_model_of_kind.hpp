// The four instantiations of TapeProblem of one constraint kind (explicit time dependence, forces), chosen at run
// time from what the file holds; included by the one translation unit of each kind (runs/mechanism/*.cpp), so the
// twelve instantiations compile in three units side by side.
#pragma once

#include <memory>

#include "mechanism_files/tape_problem.hpp"
#include "runs/problem_capabilities.hpp"

namespace clm {

template <ConstraintKind kKind>
std::shared_ptr<const Model> make_tape_model_of_kind(std::shared_ptr<const CompiledMechanism> mechanism,
                                                     bool use_analytic) {
  const bool time = mechanism->time_dependent, forces = mechanism->has_forces;
  if (time && forces) return make_model_with_capabilities(TapeProblem<kKind, true, true>{std::move(mechanism)}, use_analytic);
  if (time) return make_model_with_capabilities(TapeProblem<kKind, true, false>{std::move(mechanism)}, use_analytic);
  if (forces) return make_model_with_capabilities(TapeProblem<kKind, false, true>{std::move(mechanism)}, use_analytic);
  return make_model_with_capabilities(TapeProblem<kKind, false, false>{std::move(mechanism)}, use_analytic);
}

}  // namespace clm
