// `clmbench analyze` on a registered problem: the problem's model from the registry (with parameter
// overrides, the same rules as make_model), the analysis of analysis/, and the results file of --out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/constraint_analysis.hpp"
#include "analysis/speed_analysis.hpp"

namespace clm {

// The analysis of the registered problem `problem` with parameter overrides (same rules as make_model) at q,
// the default q0 when q is empty: the public entry of `clmbench analyze`.
ConstraintAnalysis analyze_problem(const std::string& problem, const std::map<std::string, double>& overrides,
                                   const std::optional<Vec>& q);
// `clmbench analyze --out F.h5` without --equilibrium / --speed: /analysis with q, rank, dof, span_by_depth and,
// for a kinematic system, input_fields [n, k], brackets [n, pairs] (attributes bracket_names, controllability
// ranks); the file holds /analysis only.
void write_constraint_analysis(const std::string& out_path, const ConstraintAnalysis& a, const std::string& command_line);

// The analysis of the registered problem with parameter overrides; InputError when it declares no steady
// motion (naming the problems that do).
SpeedAnalysis analyze_problem_speeds(const std::string& problem, const std::map<std::string, double>& overrides,
                                     const std::vector<double>& speeds);

// Writes /analysis as above into a results file (complete or absent: io/results_file.hpp); the file holds /analysis only.
void write_speed_analysis(const std::string& out_path, const SpeedAnalysis& a, const std::string& command_line);

}  // namespace clm
