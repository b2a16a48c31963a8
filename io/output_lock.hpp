// One writer per output (issue 21). Two clmbench processes writing one output (two sweeps started at once,
// a run into a sweep's output) each computed everything and then refused each other's results at the
// merge, forever. Every writer of an output OUT (run, sweep, merge, kozlov, analyze --out) holds an
// exclusive flock on the file OUT.lock beside it for the whole of its work; a second writer is refused at
// once with one line naming the process that holds it (pid and host, written into the lock file).
//
// The lock file is removed by its holder when it is done (also on SIGINT / SIGTERM / SIGHUP); after a
// kill -9 it stays, unlocked, and the next writer takes it over. A holder removes it while still holding
// the lock, and a writer checks after locking that the file it locked is still the one at that path,
// so a lock file removed meanwhile is never taken as held.
//
// Within one process the lock is per writer too (issue 43: Run.save in one Python thread and a sweep into the
// same output in another both returned, and the saved run was lost): a second writer of the same output is
// refused like another process's, naming this process. flock alone cannot tell them apart (flock locks are per
// open file, and the registry below finds the same file by device and inode, whatever the spelling). A sweep
// holds the lock for its whole run; its merge writes under it (IncrementalMerge's caller_holds_lock). flock
// works across the nodes of a cluster on NFS (Linux emulates it with fcntl locks) and on Lustre mounted with
// flock.
#pragma once

#include <memory>
#include <string>

namespace clm {

class OutputLock {
 public:
  // Creates OUT's missing parent directories (removed again on release when still empty), then takes the
  // lock. OutputError (exit code 2) when another process holds it, or the lock file cannot be created.
  explicit OutputLock(const std::string& out_path);
  ~OutputLock();
  OutputLock(OutputLock&&) noexcept;
  OutputLock& operator=(OutputLock&&) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  static std::string lock_path(const std::string& out_path) { return out_path + ".lock"; }

  struct Held;  // the locked file, registered within the process (output_lock.cpp)

 private:
  std::shared_ptr<Held> held_;
};

}  // namespace clm
