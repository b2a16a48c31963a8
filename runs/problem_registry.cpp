// The problem registry (docs/design.md section 3): the entries of runs/zoo/zoo.def, each defined in its own
// translation unit runs/zoo/<problem>.cpp, so that this file includes no problem and compiles in a moment.
// Registration lives in runs, not problems: it instantiates each problem's capability builders
// (runs/problem_capabilities.hpp), which come from formulations, integrators and analysis, and problems/
// stays free of them (problems, formulations and integrators are siblings).
#include "core/problem_registry.hpp"

namespace clm {

namespace zoo {
#define CLM_ZOO(NAME) ProblemEntry NAME();
#include "runs/zoo/zoo.def"
#undef CLM_ZOO
}  // namespace zoo

Registry<ProblemEntry>& problem_registry() {
  static Registry<ProblemEntry> registry = [] {
    Registry<ProblemEntry> r("problem");
#define CLM_ZOO(NAME) r.add(zoo::NAME());
#include "runs/zoo/zoo.def"
#undef CLM_ZOO
    return r;
  }();
  return registry;
}

std::shared_ptr<const Model> make_model(const std::string& problem, const std::map<std::string, double>& overrides,
                                        bool use_analytic) {
  return problem_registry().get(problem).make(overrides, use_analytic);
}

}  // namespace clm
