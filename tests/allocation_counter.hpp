// Heap-allocation counter for the "no allocation in the hot path" tests. The global operator new is
// replaced ONCE for the whole test binary in allocation_counter.cpp; do not replace it elsewhere.
//
//   clm::testing::AllocationScope scope;   // starts counting
//   ... hot path ...
//   EXPECT_EQ(scope.count(), 0);
#pragma once

#include <cstddef>

namespace clm::testing {

// False in a sanitizer build: malloc belongs to the sanitizer, nothing is counted.
bool allocation_counting_available();
// Marks the running GoogleTest test as skipped, saying why (tests/allocation_skip.cpp).
void skip_without_allocation_counting();

void start_counting_allocations();
std::size_t stop_counting_allocations();  // returns the number of allocations since start

class AllocationScope {
 public:
  AllocationScope() {
    if (!allocation_counting_available()) skip_without_allocation_counting();
    start_counting_allocations();
  }
  ~AllocationScope() {
    if (!stopped_) stop_counting_allocations();
  }
  std::size_t count() {
    stopped_ = true;
    return stop_counting_allocations();
  }

 private:
  bool stopped_ = false;
};

}  // namespace clm::testing
