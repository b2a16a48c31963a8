// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits: the identity of an input file a
// result depends on (a shape's samples; issue 21), recorded in the resolved configuration so that --resume
// and merge refuse results computed from different contents of "the same" file.
#pragma once

#include <string>
#include <string_view>

namespace clm {

std::string sha256_hex(std::string_view bytes);

}  // namespace clm
