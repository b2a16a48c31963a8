// The four instantiations of TapeProblem of one constraint kind (explicit time dependence, forces), chosen at run
// time from what the file holds; included by the one translation unit of each kind (runs/mechanism/*.cpp), so the
// twelve instantiations compile in three units side by side.
#pragma once

#include <memory>

#include "mechanism_files/tape_problem.hpp"
#include "runs/mechanism/native_model.hpp"
#include "runs/problem_capabilities.hpp"

namespace clm {

// The file's tape model of problem P, wrapped in its native evaluation when one is given (capabilities built over the
// TapeProblem either way, attached to the model a run sees).
template <class P>
std::shared_ptr<const Model> make_tape_model(P p, bool use_analytic, std::shared_ptr<const NativeFunctions> native) {
  if (!native) return make_model_with_capabilities(std::move(p), use_analytic);
  std::vector<double> parameters;
  for (const auto& [name, value] : p.mechanism->parameters) parameters.push_back(value);
  auto tape = std::make_shared<AutoDiffModel<P>>(std::move(p), use_analytic);
  auto model = std::make_shared<NativeMechanismModel>(tape, std::move(native), std::move(parameters));
  add_capabilities(*model, tape->problem());
  return model;
}

template <ConstraintKind kKind>
std::shared_ptr<const Model> make_tape_model_of_kind(std::shared_ptr<const CompiledMechanism> mechanism,
                                                     bool use_analytic,
                                                     std::shared_ptr<const NativeFunctions> native) {
  const bool time = mechanism->time_dependent, forces = mechanism->has_forces;
  if (time && forces) return make_tape_model(TapeProblem<kKind, true, true>{std::move(mechanism)}, use_analytic, std::move(native));
  if (time) return make_tape_model(TapeProblem<kKind, true, false>{std::move(mechanism)}, use_analytic, std::move(native));
  if (forces) return make_tape_model(TapeProblem<kKind, false, true>{std::move(mechanism)}, use_analytic, std::move(native));
  return make_tape_model(TapeProblem<kKind, false, false>{std::move(mechanism)}, use_analytic, std::move(native));
}

}  // namespace clm
