// The one lock every HDF5 call is made under (Debian's HDF5 is the serial, not thread-safe, build), timed:
// how long threads waited for it and held it is what keeps a sweep's jobs from computing at once (issue 25:
// the serialized fraction bench/bench_sweep.cpp reports and Amdahl's law turns into a predicted speed-up).
//
//     { Hdf5Lock lock; H5Dwrite(...); }
//
// Recursive, as the HDF5 code nests (a writer's guarded() inside a merge): only the outermost lock of a thread
// is timed. Two clock reads per outermost lock, no allocation.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

namespace clm {

std::recursive_mutex& hdf5_mutex();

// Totals since the process started (nanoseconds; acquisitions counts outermost locks).
struct Hdf5LockTotals {
  long long wait_ns = 0, held_ns = 0, acquisitions = 0;
};
Hdf5LockTotals hdf5_lock_totals();

class Hdf5Lock {
 public:
  Hdf5Lock();
  ~Hdf5Lock();
  Hdf5Lock(const Hdf5Lock&) = delete;
  Hdf5Lock& operator=(const Hdf5Lock&) = delete;

 private:
  std::chrono::steady_clock::time_point acquired_;
  bool outermost_;
};

}  // namespace clm
