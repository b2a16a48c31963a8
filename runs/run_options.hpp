// The rows of the option table for a run ([run], [initial] and [formulation] keys; [param] keys come from
// the problem registry). See runs/option_table.hpp for what a row holds and what is made from it.
#pragma once

#include <string>
#include <vector>

#include "runs/option_table.hpp"
#include "runs/run_config.hpp"

namespace clm {

// Every option of a run, in the order of --help and docs/options.md.
const std::vector<Option<RunSpec>>& run_options();

// The row of section.key, or nullptr.
const Option<RunSpec>* find_run_option(const std::string& section, const std::string& key);

// Keys of one section ("run", "initial", "formulation"), in table order.
std::vector<std::string> run_option_keys(const std::string& section);

}  // namespace clm
