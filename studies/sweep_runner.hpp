// Carries out a planned sweep: K runs at a time on worker threads, each worker recording the runs it finishes
// in its part file OUT.parts/<first run_id>.part (io/part_file.hpp, written by PartWriter without HDF5:
// temporary name, fsync, rename), committed once it is SweepOptions::commit_interval_s old (a run longer
// than that is a part of its own; short runs share one file and one fsync), then the parts replayed into OUT
// (by a merger thread while the jobs compute) and the parts directory removed. A killed sweep keeps every
// committed part; --resume skips the runs of the parts whose stored configurations (one per run, in the
// part's trailer) equal the planned ones. Under MPI the ranks share the parts directory, take
// runs dealt out by the planning (the runs that share a reference together, longest groups first to the least
// loaded rank: the same on every rank) and rank 0 merges.
//
// Scheduling (studies/sweep_schedule.hpp, issue 25): each distinct reference run is a task of its own, handed
// out before the runs, and shared read-only (ReferenceCache) by the runs measured against it; the runs are
// then taken longest estimated first, each once its reference is complete.
//
// Determinism: each run is computed by one thread from its own resolved spec, and OUT is assembled from the
// parts in grid order, so the numbers in OUT do not depend on K, on the ranks or on completion order.
// Thread safety: the jobs make no HDF5 call (their parts are plain files); every HDF5 call, the merger's,
// holds the HDF5 lock (io/hdf5_lock.hpp). prepare_run / execute_run share nothing mutable between runs.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "runs/progress_line.hpp"
#include "studies/sweep_plan.hpp"

namespace clm {

class ProcessGroup;

struct SweepOptions {
  int jobs = 1;
  bool resume = false;
  ProgressMode progress = ProgressMode::kNever;
  std::string command_line;  // provenance of the part files and of OUT
  bool print_runs = true;    // one line per finished run on `out`
  // A worker commits its part file once it is this old (seconds since its first run started): what a
  // kill -9 may lose, and how often a part file is paid for (create, fsync, rename, merge open).
  double commit_interval_s = 0.2;
};

struct SweepReport {
  size_t selected = 0;  // runs of this invocation (its shard)
  size_t resumed = 0;   // of those, found complete in the parts directory
  size_t computed = 0;  // computed by this process
  size_t failures = 0;  // computed here with status other than "ok"
  size_t parts = 0;     // part files committed here
  int threads = 0;      // worker threads this process ran: --jobs, or fewer when it had fewer runs to compute
  // Wall time, summed over the workers of this process, and the same as thread CPU time (*_cpu_*, which
  // other load on the machine does not inflate):
  double run_seconds = 0, run_cpu_seconds = 0;        // the runs themselves: prepare + integrate
  double commit_seconds = 0, commit_cpu_seconds = 0;  // part files: create, record a run (the writer's
                                                      // begin / finish, and the chunks a long run records
                                                      // while it integrates), commit
  double compress_cpu_seconds = 0;  // of commit_cpu_seconds: shuffling and deflating the samples' chunks
  // The merge (rank 0): the merger thread's time replaying parts while the jobs computed (the writer, a
  // pipeline stage beside the jobs), plus the tail after the last run (merge_tail_seconds: the rest of the
  // parts, /summary, commit; nothing else runs then). The tail's CPU is the main thread's.
  double merge_seconds = 0, merge_cpu_seconds = 0;
  double merge_tail_seconds = 0;
  size_t references = 0;                              // reference runs computed as tasks of their own
  double reference_seconds = 0, reference_cpu_seconds = 0;  // ... and their time, summed over the workers
  // Time the workers could not compute (issue 25, bench/bench_sweep.cpp): blocked in the schedule while only
  // runs waiting for a reference were left.
  double wait_seconds = 0;
  double planning_seconds = 0;  // serial, before the workers start: the parts scanned, every run prepared once
                                // (its reference and its estimated cost)
  // The HDF5 lock (io/hdf5_lock.hpp), every thread of this process: waited for, and held (the merger's
  // writing; the jobs take it no more: their part files are no HDF5 files).
  double lock_wait_seconds = 0, lock_held_seconds = 0;
  double wall_seconds = 0;    // the whole sweep
  // Each task's wall time on its worker, for bench/bench_sweep.cpp to play this process's schedule forward at
  // other job counts (simulated_wall_seconds, studies/sweep_schedule.hpp; issue 25). Per run this process
  // computes, in the schedule's list order: its estimated cost, the reference task it needs (-1: none) and its
  // seconds from taking it to asking for the next task (prepare, integrate, record, the commit of a part it
  // ended; 0 if it was never computed); per reference task, its seconds.
  std::vector<double> task_cost, task_run_seconds, task_reference_seconds;
  std::vector<long> task_reference;
  std::map<std::string, size_t> statuses;  // of OUT's runs (rank 0)
  size_t outside_conditions = 0;  // of OUT's runs, with a validity line (rank 0), and the first line
  std::string first_outside;
  bool merged = false;        // this process wrote OUT
};

// Another process of an MPI sweep failed (the lowest failing rank says why, in one line); this one ends
// with exit code 1 and no message of its own.
struct PeerFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An input of the sweep (a mechanism or shape file) changed while it ran (core/input_changed.hpp): one line
// saying what changed, that the finished runs are kept and how to go on. Not an InputError, which the command
// takes for one every process agreed on before the split: under MPI this one must end the whole job.
struct InputChangedDuringSweep : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The parts directory of an output: OUT.parts.
std::string parts_directory(const std::string& out);

// Validates every selected run (prepare_run, discarded: formulation refusals, strict_initial, sizes)
// before anything is written; warnings are printed once per distinct text on `err`.
void validate_runs(const SweepPlan& plan, const std::vector<size_t>& selection, std::ostream& err);

// Runs the runs plan.runs[selection[j]] (selection in grid order) and merges them into plan.out.
// InputError: parts of another sweep, or parts without --resume; OutputError: a file cannot be written.
SweepReport run_sweep(const SweepPlan& plan, const std::vector<size_t>& selection, const SweepOptions& options,
                      ProcessGroup& group, std::ostream& out, std::ostream& err);

}  // namespace clm
