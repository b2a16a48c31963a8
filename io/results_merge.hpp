// Joins results files into one (`clmbench merge`, and the last step of `clmbench sweep`, which merges its
// part files). Runs are copied whole (hdf5::copy_object: datasets, attributes, extras), in grid order when every run
// carries a sweep_index, else in argument order (within a file, its /summary order). /summary is rebuilt
// as the concatenation of the inputs' rows in that order, copying whatever columns they have (numbers,
// integers or text; the inputs must agree on them), so columns added later need no change here.
// A run id found twice is kept once when both copies are identical (datasets and attributes, timings
// aside) and refused otherwise. The output is written like every results file: complete or absent.
#pragma once

#include <map>
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

// The runs of a sweep's part file (OUT.parts/*.h5) with the resolved configuration each was computed
// from: the rows of /summary/run_id and the root attribute run_configs. nullopt when the file is not a
// readable results file holding every run its /summary lists, or has no configuration for each.
struct PartRun {
  std::string run_id, config;
};
std::optional<std::vector<PartRun>> stored_part_runs(const std::string& path);

}  // namespace clm
