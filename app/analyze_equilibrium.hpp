// `clmbench analyze ... --equilibrium`: the flags and the handler of the relative-equilibrium analysis
// (analysis/equilibrium_analysis.hpp), kept apart from analyze_command.cpp so that other analyses
// (--speed) add their own files.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/types.hpp"
#include "app/command.hpp"

namespace clm {

// --qd0, --equilibrium, --equilibrium-tol, --out.
void add_equilibrium_flags(po::options_description& o);
// The help paragraph.
std::string equilibrium_help();
// Runs the analysis for the parsed flags, prints it, writes /analysis to --out when given.
int run_equilibrium_analysis(const CommandInvocation& call, const po::variables_map& vm, const std::string& problem,
                             const std::map<std::string, double>& overrides, const std::optional<Vec>& q);

}  // namespace clm
