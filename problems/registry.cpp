// One line per problem (DESIGN.md section 3).
#include "core/problem_registry.hpp"
#include "problems/chaplygin_sleigh.hpp"
#include "problems/pendulum_polar.hpp"

namespace clm {

Registry<ProblemEntry>& problem_registry() {
  static Registry<ProblemEntry> registry = [] {
    Registry<ProblemEntry> r("problem");
    r.add(problem_entry<PendulumPolar>());
    r.add(problem_entry<ChaplyginSleigh>());
    return r;
  }();
  return registry;
}

std::shared_ptr<const Model> make_model(const std::string& problem, const std::map<std::string, double>& overrides,
                                        bool use_analytic) {
  return problem_registry().get(problem).make(overrides, use_analytic);
}

}  // namespace clm
