// A cheap clock for splitting a run's CPU time between integration and output (runs/runner.cpp): the processor's
// time-stamp counter, read without a system call. Reading the thread's CPU clock around every sample cost two
// system calls per sample (clock_gettime(CLOCK_THREAD_CPUTIME_ID) is not served by the vDSO): 48 % of a sleigh
// run's time at 100,000 samples (perf). The run's CPU time is still read from the thread clock, once at each end;
// the counter only apportions it (output share = output cycles / all cycles of the run).
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace clm {

inline std::uint64_t cycle_count() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

}  // namespace clm
