// The message of the InputError a call throws, for tests of one-line errors ("" when it throws none; any other
// exception propagates and fails the test).
#pragma once

#include <string>

#include "core/types.hpp"

namespace clm::testing {

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace clm::testing
