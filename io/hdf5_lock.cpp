#include "io/hdf5_lock.hpp"

#include <hdf5.h>

namespace clm {

namespace {

std::atomic<long long> g_wait_ns{0}, g_held_ns{0}, g_acquisitions{0};
thread_local int t_depth = 0;  // this thread's nesting of Hdf5Lock
// HDF5 keeps its error stack, and whether it prints it, per thread: every thread that calls HDF5 (a sweep's
// merger, its main thread) turns the printing off once, with the lock held, as errors are reported in one
// line by the caller (io/hdf5_support.hpp's fail()).
thread_local bool t_quiet = false;

long long ns(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

}  // namespace

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex m;
  return m;
}

Hdf5LockTotals hdf5_lock_totals() {
  return {g_wait_ns.load(std::memory_order_relaxed), g_held_ns.load(std::memory_order_relaxed),
          g_acquisitions.load(std::memory_order_relaxed)};
}

Hdf5Lock::Hdf5Lock() : outermost_(t_depth == 0) {
  if (!outermost_) {
    hdf5_mutex().lock();
    ++t_depth;
    return;
  }
  const auto asked = std::chrono::steady_clock::now();
  hdf5_mutex().lock();
  acquired_ = std::chrono::steady_clock::now();
  ++t_depth;
  if (!t_quiet) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    t_quiet = true;
  }
  g_wait_ns.fetch_add(ns(acquired_ - asked), std::memory_order_relaxed);
  g_acquisitions.fetch_add(1, std::memory_order_relaxed);
}

Hdf5Lock::~Hdf5Lock() {
  --t_depth;
  if (outermost_) g_held_ns.fetch_add(ns(std::chrono::steady_clock::now() - acquired_), std::memory_order_relaxed);
  hdf5_mutex().unlock();
}

}  // namespace clm
