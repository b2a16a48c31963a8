// Reading a file a run depends on (a shape's samples; the mechanism files to come), whole, once: the bytes
// parsed are the bytes hashed into the result's identity (core/sha256.hpp), with no window in which the file
// could change in between. Refuses, in one line naming the file, what cannot be such a file: a missing or
// unreadable one, a directory, a FIFO, device or socket (reading /dev/zero or a FIFO never ends) and a file
// larger than `max_bytes`.
#pragma once

#include <cstddef>
#include <string>

namespace clm {

// InputError "<what> '<path>' ...".
std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes);

}  // namespace clm
