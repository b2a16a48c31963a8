// The allocation tests' skip under a sanitizer (see allocation_counter.cpp): the test is reported as
// skipped with the reason, and AllocationScope::count() returns 0 so that its assertions hold.
#include <gtest/gtest.h>

#include "allocation_counter.hpp"

namespace clm::testing {

void skip_without_allocation_counting() {
  GTEST_SKIP() << "heap allocations are not counted in a sanitizer build (the sanitizer owns malloc); "
                  "the allocation checks run in the normal build";
}

}  // namespace clm::testing
