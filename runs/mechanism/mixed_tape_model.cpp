// The mixed (position rows and velocity rows) instantiations of TapeProblem (runs/mechanism/tape_models.hpp).
#include "runs/mechanism/tape_model_of_kind.hpp"
#include "runs/mechanism/tape_models.hpp"

namespace clm {

std::shared_ptr<const Model> make_mixed_tape_model(std::shared_ptr<const CompiledMechanism> mechanism, bool use_analytic,
                                                 std::shared_ptr<const NativeFunctions> native) {
  return make_tape_model_of_kind<ConstraintKind::kMixed>(std::move(mechanism), use_analytic, std::move(native));
}

}  // namespace clm
