// Counts heap allocations by interposing malloc and friends in the test executable (the definitions
// here take precedence over libc's for the whole process). Counting operator new alone would miss Eigen,
// which allocates through std::malloc.
//
// Under a sanitizer (CLMBENCH_SANITIZER_BUILD) nothing is interposed: AddressSanitizer owns malloc, and
// definitions here would run before it initialises (gtest discovery then crashed). The allocation tests
// skip themselves there, saying so (AllocationScope).
#include "allocation_counter.hpp"

#include <atomic>
#include <cstddef>

#ifdef CLMBENCH_SANITIZER_BUILD

namespace clm::testing {
bool allocation_counting_available() { return false; }
void start_counting_allocations() {}
std::size_t stop_counting_allocations() { return 0; }
}  // namespace clm::testing

#else

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {
constinit std::atomic<bool> g_counting{false};
constinit std::atomic<std::size_t> g_count{0};
inline void note() {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

namespace clm::testing {
bool allocation_counting_available() { return true; }
void start_counting_allocations() {
  g_count = 0;
  g_counting = true;
}
std::size_t stop_counting_allocations() {
  g_counting = false;
  return g_count.load();
}
}  // namespace clm::testing

extern "C" {
void* malloc(std::size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  note();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t a, std::size_t n) {
  note();
  return __libc_memalign(a, n);
}
void* aligned_alloc(std::size_t a, std::size_t n) {
  note();
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, std::size_t a, std::size_t n) {
  note();
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12;  // ENOMEM
}
}

#endif  // CLMBENCH_SANITIZER_BUILD
