// An input named with the hash of its contents (a mechanism file or a shape file, PATH@sha256:HEX) whose contents
// are no longer those: the input's fault (exit code 1), but found when the input is read again, which may be after
// the work was split (issue 43: a .toml edited during a sweep ended "internal error", exit 3). `file` names the
// input as the message does ("mechanism file P"); `found` and `recorded` are the two hashes as it shows them.
#pragma once

#include <string>
#include <utility>

#include "core/types.hpp"

namespace clm {

struct InputChanged : InputError {
  InputChanged(const std::string& message, std::string file, std::string found, std::string recorded)
      : InputError(message), file(std::move(file)), found(std::move(found)), recorded(std::move(recorded)) {}
  std::string file, found, recorded;
};

}  // namespace clm
