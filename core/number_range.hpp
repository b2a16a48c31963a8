// What is wrong with a number that does not fit a double (issue 43: 1e999, 1e-999 and a 401-digit integer were
// "malformed number" with every digit echoed): the config's values, the mechanism files' TOML numbers and the
// numbers inside expressions say it the same way.
#pragma once

#include <string>
#include <string_view>

namespace clm {

// For decimal text that reads as a number beyond a double's range: "number '1e999' is beyond the range of a
// double (largest 1.8e308)" or "number '1e-999' is below the smallest positive double (4.9e-324): write 0 where
// zero is meant", the text shortened as echo_value does. "" for anything else (a number in range, or not a number).
std::string number_range_problem(std::string_view text);

}  // namespace clm
