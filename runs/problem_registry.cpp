// The problem registry (docs/design.md section 3): the entries of runs/zoo/zoo.def, each defined in its own
// translation unit runs/zoo/<problem>.cpp, so that this file includes no problem and compiles in a moment.
// Registration lives in runs, not problems: it instantiates each problem's capability builders
// (runs/problem_capabilities.hpp), which come from formulations, integrators and analysis, and problems/
// stays free of them (problems, formulations and integrators are siblings).
#include "core/problem_registry.hpp"

#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/tape_models.hpp"

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

ProblemEntry find_problem(const std::string& problem) {
  if (!is_mechanism_file(problem)) return problem_registry().get(problem);
  const MechanismFile file = read_named_mechanism_file(problem);
  ProblemEntry e;
  e.name = file.name;  // the run ids' prefix (a path would make a group name with slashes)
  e.description = file.description;
  e.identity = file.path + "@sha256:" + file.sha256;
  for (const auto& p : file.parameters)
    e.parameters.push_back({p.name, p.value, p.description + (p.unit.empty() ? "" : " [" + p.unit + "]")});
  e.make = [file](const std::map<std::string, double>& overrides, bool use_analytic) -> std::shared_ptr<const Model> {
    auto mechanism = compile_mechanism(file, overrides);
    if (mechanism->holonomic) return make_holonomic_tape_model(std::move(mechanism), use_analytic);
    if (mechanism->position_rows > 0) return make_mixed_tape_model(std::move(mechanism), use_analytic);
    return make_pfaffian_tape_model(std::move(mechanism), use_analytic);
  };
  return e;
}

std::shared_ptr<const Model> make_model(const std::string& problem, const std::map<std::string, double>& overrides,
                                        bool use_analytic) {
  return find_problem(problem).make(overrides, use_analytic);
}

}  // namespace clm
