// Reading a results file back for `clmbench info`: the root provenance and one row per run from /summary.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace clm {

struct ResultsRow {
  std::string run_id, problem, formulation, integrator, status, reference;
  std::string validity;  // empty, or why the run left its formulation's validity conditions (older files: empty)
  double samples = 0;  // NaN (shown "-") when the file has no such column
  double max_drift_position = 0, max_drift_velocity = 0, max_rel_energy_error = 0, error_vs_reference = 0,
         wall_time_s = 0;
  // Work-precision columns (NaN when the file predates them or the figure does not apply).
  std::string reference_source = "none";
  double cpu_time_s = 0, rhs_evals = 0, q_error_max = 0, qd_error_max = 0, lambda_error_max = 0, scd = 0, mescd = 0;
  // The relative energy-balance residual of a time-dependent problem (NaN for the others).
  double max_energy_balance_residual = 0;
};

struct ResultsInfo {
  std::string path, clmbench_version, git_commit, created_utc;
  std::vector<ResultsRow> rows;
  // An `analyze --out` file: /analysis and no runs (no /runs, no /summary); the table is then one line.
  bool analysis_only = false;
};

// Throws InputError when the file does not exist, OutputError (I/O, exit code 2) with one line when it is
// not a regular file, not HDF5, or not a clmbench results file (any object of the wrong kind, type, rank or
// length); never reads past what a dataset holds.
ResultsInfo read_results_info(const std::string& path);

// A header line and an aligned table, one line per run; NaN shown as "-".
std::string format_results_table(const ResultsInfo& info);

// The options of one run as recorded in its attributes: (section.key, value as config text) for every row
// of the option table that has an attribute, in table order, then param.<name>. A row whose attribute is
// absent (older files, unset lists) is shown as "-". Then the run's results as recorded: status, steps,
// rhs_evals, cpu_time_s, reference_source, the errors against the reference, scd, mescd (NaN as "-").
struct RunOptions {
  std::string path, run_id;
  std::vector<std::pair<std::string, std::string>> values;
};
// An option as a run records it: its key (section.key), its attribute, and whether an integer attribute is
// a boolean (printed true / false). runs/recorded_options.hpp lists them from the option table.
struct RecordedOption {
  std::string key, attribute;
  bool boolean = false;
};
// The run's `options` as recorded ("-" where the attribute is missing), then its param.* attributes and what
// it measured against its reference and what it cost. InputError when the file has no such run.
RunOptions read_run_attributes(const std::string& path, const std::string& run_id,
                               const std::vector<RecordedOption>& options);
std::string format_run_options(const RunOptions& options);

}  // namespace clm
