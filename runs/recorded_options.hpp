// The options of one run of a results file, read back through the option table (`clmbench info --run`):
// every row of the table that has an attribute, in table order (io/results_info.hpp reads them).
#pragma once

#include <string>

#include "io/results_info.hpp"

namespace clm {

RunOptions read_run_options(const std::string& path, const std::string& run_id);

}  // namespace clm
