#include "integrators/mechanical_system.hpp"

namespace clm {

std::string kkt_only_refusal(const std::string& method, const Formulation& f) {
  if (f.name() == "kkt") return {};
  return "integrator " + method + " integrates the constrained system itself and runs with formulation kkt, "
         "which names that system (its multipliers are the ones written as lambda); not with " + f.name();
}

std::string time_dependence_refusal(const std::string& method, const Model& model) {
  if (!model.time_dependent()) return {};
  return "integrator " + method + " does not support time-dependent constraints or potentials (problem " +
         model.name() + " has h(q, t), A qd + b(q, t) = 0 or V(q, t)); use formulation kkt or schur with dopri5, "
         "radau5 or cvode";
}

const Formulation& mechanical_system(const std::string& method, const OdeSystem& sys) {
  const Formulation* f = sys.formulation();
  if (!f || f != &sys) throw InputError("integrator " + method + " integrates the constrained system itself and needs formulation "
                           "kkt (without coordinate projection), not a bare ODE");
  if (const std::string why = kkt_only_refusal(method, *f); !why.empty()) throw InputError(why);
  return *f;
}

}  // namespace clm
