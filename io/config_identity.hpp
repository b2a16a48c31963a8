// What of a results file's recorded configuration makes its results: the text without comment lines and
// without the output path. Two runs (sweep --resume: a part's run configurations) or two sweeps (merge: the files'
// sweep_config) are the same when these agree; a resumed sweep may name its config or output by another
// path, and shards run from copies of one config may each name their own `out`.
#pragma once

#include <string>

namespace clm {

std::string comparable_config(const std::string& config_text);

// The first line where two configuration texts differ, for an error message: "'<line of a>', <b_is>
// '<line of b>'" ("(nothing)" past the end of either).
std::string first_difference(const std::string& a, const std::string& b, const std::string& b_is);

}  // namespace clm
