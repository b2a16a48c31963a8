// Strict text -> value conversion for configs and flags. Every failure is an InputError whose one-line
// message names the offending key (or flag) and value, so the user knows exactly what to fix.
#pragma once

#include <string>
#include <vector>

namespace clm {

// A finite double written in full: "1e-3" is accepted, "1e-3x", "abc", "", "nan" and "inf" are not.
// `what` names where the text came from, e.g. "run.dt in quickstart.ini" or "--dt".
double parse_number(const std::string& text, const std::string& what);

// Numbers separated by whitespace and/or commas ("0 0.1 2" or "0,0.1,2"); at least one.
std::vector<double> parse_number_list(const std::string& text, const std::string& what);

// true/false, yes/no, on/off, 1/0 (case-insensitive).
bool parse_bool(const std::string& text, const std::string& what);

// Shortest text that reads back to exactly the same double (round-trip through parse_number).
std::string format_number(double value);

// A figure of a printed table: `v` in printf's `format` (one floating conversion, e.g. "%.3g"), or
// `nan_text` when v is NaN (a figure that cannot be computed).
std::string format_figure(double v, const char* format, const char* nan_text);

std::string trim(const std::string& s);

// A value as echoed in an error message: control characters (NUL included) as \xNN, and at most about
// 80 characters (a longer value is cut, with its length said), so a message stays one readable line.
std::string echo_value(const std::string& text);

}  // namespace clm
