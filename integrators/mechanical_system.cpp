#include "integrators/mechanical_system.hpp"

namespace clm {

std::string kkt_only_refusal(const std::string& method, const Formulation& f) {
  if (f.name() == "kkt") return {};
  return "integrator " + method + " integrates the constrained system itself and runs with formulation kkt, "
         "which names that system (its multipliers are the ones written as lambda); not with " + f.name();
}

const Formulation& mechanical_system(const std::string& method, const OdeSystem& sys) {
  const Formulation* f = sys.formulation();
  if (!f || f != &sys) throw InputError("integrator " + method + " integrates the constrained system itself and needs formulation "
                           "kkt (without coordinate projection), not a bare ODE");
  if (const std::string why = kkt_only_refusal(method, *f); !why.empty()) throw InputError(why);
  return *f;
}

}  // namespace clm
