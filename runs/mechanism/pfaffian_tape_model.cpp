// The pfaffian instantiations of TapeProblem (runs/mechanism/tape_models.hpp).
#include "mechanism_files/tape_problem.hpp"
#include "runs/mechanism/tape_models.hpp"
#include "runs/problem_capabilities.hpp"

namespace clm {

std::shared_ptr<const Model> make_pfaffian_tape_model(std::shared_ptr<const CompiledMechanism> mechanism,
                                                    bool use_analytic) {
  const bool time = mechanism->time_dependent, forces = mechanism->has_forces;
  if (time && forces) return make_model_with_capabilities(TapeProblem<false, true, true>{std::move(mechanism)}, use_analytic);
  if (time) return make_model_with_capabilities(TapeProblem<false, true, false>{std::move(mechanism)}, use_analytic);
  if (forces) return make_model_with_capabilities(TapeProblem<false, false, true>{std::move(mechanism)}, use_analytic);
  return make_model_with_capabilities(TapeProblem<false, false, false>{std::move(mechanism)}, use_analytic);
}

}  // namespace clm
