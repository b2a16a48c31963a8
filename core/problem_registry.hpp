// Problem registry: turns a templated Problem struct into a named factory of Models with parameter
// overrides checked by name. The registry itself (the list of problems, problem_registry() and
// make_model()) is defined in runs/problem_registry.cpp, the one unit that sees the problems and the
// builders of their capabilities (runs/problem_capabilities.hpp); core only declares it, as it does
// formulation_registry() and integrator_registry().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/autodiff_model.hpp"
#include "core/registry.hpp"

namespace clm {

struct ParameterInfo {
  std::string name;
  double default_value;
  std::string description;
};

struct ProblemEntry {
  std::string name;
  std::string description;
  std::vector<ParameterInfo> parameters;
  // A mechanism file's identity, PATH@sha256:HEX of the contents read (what a run records as its problem, so
  // that a re-run or a merge sees other contents); empty for a registered problem.
  std::string identity;
  // overrides: parameter name -> value; unknown names and inadmissible values throw InputError.
  // use_analytic = false forces autodiff even where the problem has analytic overrides.
  std::function<std::shared_ptr<const Model>(const std::map<std::string, double>& overrides, bool use_analytic)>
      make;
};

Registry<ProblemEntry>& problem_registry();

// The entry of a problem name: a registered problem, or a mechanism file (a name ending in .toml, read and
// checked on every call, so that an edited file is seen; docs/mechanism-files.md). Throws InputError.
// Defined in runs/problem_registry.cpp.
ProblemEntry find_problem(const std::string& problem);

// Convenience: find_problem + construction.
std::shared_ptr<const Model> make_model(const std::string& problem,
                                        const std::map<std::string, double>& overrides = {},
                                        bool use_analytic = true);

// attach(Model&, const P&) fills in the model's capabilities (core/model.hpp) before it is shared.
template <Problem P, class Attach>
ProblemEntry problem_entry(Attach attach) {
  ProblemEntry e;
  e.name = P::kName;
  e.description = P::kDescription;
  const P defaults{};
  for (const auto& spec : P::kParameters)
    e.parameters.push_back({std::string(spec.name), defaults.*(spec.member), std::string(spec.description)});
  e.make = [attach](const std::map<std::string, double>& overrides,
                    bool use_analytic) -> std::shared_ptr<const Model> {
    P p{};
    for (const auto& [key, value] : overrides) {
      bool found = false;
      for (const auto& spec : P::kParameters) {
        if (spec.name == key) {
          p.*(spec.member) = value;
          found = true;
        }
      }
      if (!found) {
        std::string known;
        for (const auto& spec : P::kParameters) known += (known.empty() ? "" : ", ") + std::string(spec.name);
        throw InputError("unknown parameter '" + key + "' for problem " + P::kName + " (known: " + known + ")");
      }
    }
    auto model = std::make_shared<AutoDiffModel<P>>(std::move(p), use_analytic);
    attach(*model, model->problem());
    return model;
  };
  return e;
}

}  // namespace clm
