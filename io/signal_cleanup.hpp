// Files a process must not leave behind when it is interrupted (SIGINT, SIGTERM, SIGHUP): the temporary
// files of results being written (io/results_file.hpp) and the lock files of outputs being written
// (io/output_lock.hpp). While at least one path is registered, those signals remove every registered path
// (and print the signal message, if one is set) and end the process with 128 + the signal (kill -9 cannot be caught: its leftovers are removed by the
// next writer of the same output). When the last path is unregistered, the handlers the process had before are
// back (the Python package's interpreter keeps its Ctrl-C).
#pragma once

#include <string>

#include "core/types.hpp"

namespace clm {

// Registers `path`; returns its slot, or -1 when all slots are taken (the file is then left behind by a
// signal, as after kill -9).
int remove_on_signal(const std::string& path);
// Unregisters the slot (and sets it to -1); a no-op for -1.
void forget_on_signal(int& slot);

// A line printed on stderr when such a signal ends the process (what the user can do next, e.g. that a
// sweep's finished runs are kept and --resume continues); empty: none. Set it while the
// work it speaks of runs, and clear it after.
void set_signal_message(const std::string& line);

// Cooperative interruption, for a host that must survive Ctrl-C (the Python package): while on, SIGINT neither
// removes the registered files nor ends the process; it sets a flag that long work polls (the runner at every
// sample, a sweep between runs), which then stops by throwing Interrupted and unwinds (a writer's temporary file
// is removed by its destructor, a sweep's committed parts are kept for --resume). The host's SIGINT handler is
// set aside while on and put back when turned off. Off (the command): the behaviour above.
void set_cooperative_interrupt(bool on);
bool interrupt_requested();
struct Interrupted : AbortRun {
  using AbortRun::AbortRun;
};

}  // namespace clm
