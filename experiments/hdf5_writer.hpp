// Writes the results file of one invocation in the layout of DESIGN.md section 5:
//   /            attrs clmbench_version, git_commit, created_utc, command_line, config
//   /runs/<id>/  attrs problem, formulation, integrator, status, message, param.<name>, formulation.<name>,
//                run settings by key, n, m, steps, rejected_steps, rhs_evals, jacobian_evals, wall_time_s;
//                datasets t, q, qd, lambda, energy, drift_position (holonomic only), drift_velocity, extras/<name>
//   /summary/<column>  one row per run
// The file is written as "<out>.tmp-<pid>" and renamed over <out> only when complete, so an interrupted
// run never leaves a file that looks whole. Strings are variable-length UTF-8 (h5py reads them as str).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner.hpp"

namespace H5 {
class H5File;
}

namespace clm {

// The output cannot be written (exit code 2 of the CLI).
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A group of derived results (e.g. /kozlov/<study>): 1-D datasets and scalar attributes. `path` is
// relative to the root ("kozlov/friction_sleigh"); missing parent groups are created.
struct ResultGroup {
  std::string path;
  std::vector<std::pair<std::string, std::vector<double>>> numbers;
  std::vector<std::pair<std::string, std::vector<long>>> integers;
  std::vector<std::pair<std::string, std::vector<std::string>>> strings;
  std::vector<std::pair<std::string, double>> number_attributes;
  std::vector<std::pair<std::string, std::string>> text_attributes;
};

struct Provenance {
  std::string command_line;
  std::string config_text;  // the full resolved configuration (to_config_text)
};

class ResultsWriter {
 public:
  // Creates the parent directory if needed and the temporary file, so an unwritable path is reported
  // before any run starts. Throws OutputError.
  explicit ResultsWriter(std::string out_path);
  // Removes the temporary file unless commit() succeeded.
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  void write_run(const RunRecord& record);
  void write_group(const ResultGroup& group);
  // Writes /summary and the root attributes, closes the file and renames it to the output path.
  void commit(const Provenance& provenance);

  const std::string& out_path() const { return out_path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  struct SummaryRow {
    std::string run_id, problem, formulation, integrator, status, reference;
    double dt, N, t_end;
    RunSummary s;
    long samples, steps, rhs_evals;
    double wall_time_s;
  };
  std::string out_path_, temp_path_;
  H5::H5File* file_ = nullptr;
  bool committed_ = false;
  std::vector<SummaryRow> rows_;
};

// Current UTC time as ISO 8601 ("2024-05-01T12:00:00Z").
std::string utc_timestamp();

}  // namespace clm
