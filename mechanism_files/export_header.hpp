// `clmbench mechanism export FILE`: a mechanism file as a C++ header that satisfies the Problem concept
// (core/problem.hpp), so that a file mechanism is promoted to the zoo by registering the header (runs/zoo/NAME.cpp
// and a line in runs/zoo/zoo.def) instead of being rewritten by hand.
//
// The header holds the terms the suite derives from the file (M = d2T/dqd2, V - T0, the gyroscopic a(q), h or
// A and b, the forces, the initial state), as straight-line templated code over the same graph the tapes are
// built from (symbolic_mechanism), operation by operation as the tape runs them (core/elementary_functions.hpp),
// with the parameters as double members (kParameters, validate() with the file's min and max). It equals the
// tape to round-off, and often to the bit: the tape folds the parameter values into its constants, the header
// keeps them symbolic so that they stay parameters, and the two agree exactly where folding a product of
// parameters gives the double the header computes (tests/mechanism_export_test.cpp: six of seven files
// identical, four_bar 5.8e-18 in its terms).
#pragma once

#include <string>

#include "mechanism_files/mechanism_file.hpp"

namespace clm {

// The header's text. The file is checked first, as `clmbench mechanism check` checks it (same one-line errors).
std::string export_header(const MechanismFile& file);
// The C++ struct name the header declares for a mechanism name: my_sleigh -> MySleigh.
std::string exported_struct_name(const std::string& mechanism_name);
// Text for a one-line comment (// or # or %): control characters (a newline would end the comment) as \xNN.
std::string comment_text(const std::string& s);

}  // namespace clm
