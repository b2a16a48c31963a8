// `clmbench analyze --problem P [--param name=value ...] [--q0 a,b,c]`: the constraint analysis of
// core/constraint_analysis.hpp (n, m, rank A(q), DOF, integrability, accessibility), human-readable.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace clm {

// Help text of the command (also part of clmbench --help).
std::string analyze_help();

// Runs the command on the arguments after "analyze"; prints to out and returns the exit code (0).
// Bad input (unknown problem or parameter, malformed number, wrong-length q0) throws InputError.
int analyze_command(const std::vector<std::string>& args, std::ostream& out);

}  // namespace clm
