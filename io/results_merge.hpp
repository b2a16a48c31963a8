// Joins results files into one (`clmbench merge`; a sweep's part files are replayed by IncrementalMerge,
// also when given to `clmbench merge`). Runs are copied whole (hdf5::copy_object: datasets, attributes,
// extras), in grid order when every run carries a sweep_index, else in argument order (within a file, its /summary order). /summary is rebuilt
// as the concatenation of the inputs' rows in that order, copying whatever columns they have (numbers,
// integers or text; the inputs must agree on them), so columns added later need no change here.
// A run id found twice is kept once when both copies are identical (datasets and attributes, timings
// aside) and refused otherwise. The output is written like every results file: complete or absent.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace clm {

struct MergeReport {
  size_t runs = 0;
  size_t duplicates = 0;  // identical copies skipped
  std::map<std::string, size_t> statuses;  // "ok" -> count, ...
  // Runs with a non-empty /summary validity (outside their formulation's conditions), and the first one's text.
  size_t outside_conditions = 0;
  std::string first_outside;
  std::vector<std::string> groups;         // groups copied beside /runs and /summary ("/kozlov/<study>")
};

// Root attributes of the output: clmbench_version, git_commit (of this binary), created_utc,
// command_line, and config: the inputs' common sweep_config when they all come from one sweep (also kept
// as sweep_config), else their common config, else each input's config under a "# from FILE" line.
// Groups beside /runs and /summary (/kozlov/<study>, /analysis) are copied from the first input holding
// each. InputError for a missing input, inputs of different sweeps or with different /summary columns, and
// a run id or group twice with different contents; OutputError (exit code 2, as `info`) for an input that
// is not a readable clmbench results file.
// expected_runs > 0 (a sweep merging its parts): OutputError, before OUT is touched, when the inputs
// hold another number of distinct runs.
MergeReport merge_results(const std::vector<std::string>& inputs, const std::string& out,
                          const std::string& command_line, size_t expected_runs = 0);

// The merge of one sweep's part files (io/part_file.hpp) fed part by part (issue 25): rank 0 of `clmbench sweep`
// replays each part into the output as soon as it is committed, while the jobs go on computing, so that the
// merge is not a serial step after the last run. Each run is made by the calls it was recorded from
// (Hdf5RunTarget: what writing it directly makes); /summary is in grid order whatever the order the parts come
// in (HDF5 keeps a group's links by name, so that order changes nothing a reader sees). A run found twice is
// kept once when both records are the same, timings aside, and refused otherwise. The HDF5 lock is taken per
// run (the jobs take it no more). InputError for parts of different sweeps or columns; OutputError for a part
// that is not whole or fails a run's checksum; OUT is written only by finish().
class IncrementalMerge {
 public:
  // caller_holds_lock: the caller (a sweep) holds OUT's lock (io/output_lock.hpp) for all of the merge, which
  // then writes under it instead of taking it (a second writer of OUT in one process is refused).
  IncrementalMerge(const std::string& out, const std::string& command_line, bool caller_holds_lock = false);
  ~IncrementalMerge();
  IncrementalMerge(const IncrementalMerge&) = delete;
  IncrementalMerge& operator=(const IncrementalMerge&) = delete;

  // Replays the runs of one part file of this sweep into the output's temporary file.
  void add(const std::string& part);
  // /summary in grid order, the root attributes, commit (temporary name, fsync, rename). expected_runs > 0:
  // OutputError when the parts held another number of distinct runs (OUT is then not written).
  MergeReport finish(size_t expected_runs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The runs of a sweep's part file (OUT.parts/*.part, io/part_file.hpp) with the resolved configuration each
// was computed from, from its trailer. nullopt when the file is not a
// readable results file holding every run its /summary lists, or has no configuration for each.
struct PartRun {
  std::string run_id, config;
};
std::optional<std::vector<PartRun>> stored_part_runs(const std::string& path);

}  // namespace clm
