// Problem registry: turns a templated Problem struct into a named factory of Models with parameter
// overrides checked by name.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/autodiff_model.hpp"
#include "core/constraint_analysis.hpp"
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
  // overrides: parameter name -> value; unknown names and inadmissible values throw InputError.
  // use_analytic = false forces autodiff even where the problem has analytic overrides.
  std::function<std::shared_ptr<const Model>(const std::map<std::string, double>& overrides, bool use_analytic)>
      make;
  // Constraint analysis (rank, DOF, integrability, accessibility; core/constraint_analysis.hpp) at q, the
  // default q0 when q is empty. Same override rules as make.
  std::function<ConstraintAnalysis(const std::map<std::string, double>& overrides, const std::optional<Vec>& q)>
      analyze;
};

Registry<ProblemEntry>& problem_registry();

// Convenience: registry lookup + construction.
std::shared_ptr<const Model> make_model(const std::string& problem,
                                        const std::map<std::string, double>& overrides = {},
                                        bool use_analytic = true);

template <Problem P>
ProblemEntry problem_entry() {
  ProblemEntry e;
  e.name = P::kName;
  e.description = P::kDescription;
  const P defaults{};
  for (const auto& spec : P::kParameters)
    e.parameters.push_back({std::string(spec.name), defaults.*(spec.member), std::string(spec.description)});
  e.make = [](const std::map<std::string, double>& overrides, bool use_analytic) -> std::shared_ptr<const Model> {
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
    return std::make_shared<AutoDiffModel<P>>(std::move(p), use_analytic);
  };
  e.analyze = [make = e.make](const std::map<std::string, double>& overrides, const std::optional<Vec>& q) {
    const auto model = make(overrides, false);
    return analyze_constraints(static_cast<const AutoDiffModel<P>&>(*model).problem(), q);
  };
  return e;
}

}  // namespace clm
