// Reading a results file back for `clmbench info`: the root provenance and one row per run from /summary.
#pragma once

#include <string>
#include <vector>

namespace clm {

struct ResultsRow {
  std::string run_id, problem, formulation, integrator, status, reference;
  long samples = 0;
  double max_drift_position = 0, max_drift_velocity = 0, max_rel_energy_error = 0, error_vs_reference = 0,
         wall_time_s = 0;
};

struct ResultsInfo {
  std::string path, clmbench_version, git_commit, created_utc;
  std::vector<ResultsRow> rows;
};

// Throws InputError when the file does not exist, OutputError (I/O) when it is not a clmbench results file.
ResultsInfo read_results_info(const std::string& path);

// A header line and an aligned table, one line per run; NaN shown as "-".
std::string format_results_table(const ResultsInfo& info);

}  // namespace clm
