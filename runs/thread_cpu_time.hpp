// CPU time of the calling thread (clock_gettime(CLOCK_THREAD_CPUTIME_ID)): the cost of a run that does
// not depend on what other threads of a sweep (--jobs) or other processes on the machine are doing, as
// wall time does.
#pragma once

#include <time.h>

namespace clm {

inline double thread_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace clm
