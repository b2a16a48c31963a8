// Writes runs into a results file (io/results_file.hpp), in the layout of docs/design.md section 5:
//   /runs/<id>/  attrs problem, formulation, integrator, status, message, param.<name>, every option of the
//                option table under its attribute name (docs/options.md), n, m, steps, rejected_steps,
//                rhs_evals, jacobian_evals, wall_time_s; datasets t, q, qd, lambda, energy, drift_position
//                (holonomic only), drift_velocity, extras/<name>
//   /summary/<column>  one row per run, each column with its description
// Runs of another results file are copied whole with copy_run (hdf5::copy_object), their summary rows added with
// append_summary: that is how `clmbench merge` and a sweep's final merge assemble a file.
//
// Samples are streamed to chunked, extendible datasets in blocks of about 64 KiB per dataset (a short run:
// one chunk of its own size, or a compact dataset when that is at most 4 KiB; buffering a sample takes no
// lock), so memory does not grow with the number of samples. The file is complete or absent (ResultsFile).
#pragma once

#include <hdf5.h>

#include <memory>
#include <string>
#include <vector>

#include "io/part_file.hpp"
#include "io/results_file.hpp"
#include "runs/option_table.hpp"
#include "runs/runner.hpp"

namespace clm {

// What writing runs' samples cost, for a sweep's accounting (studies/sweep_runner.hpp): the chunks written
// while a run integrates (its samples filled a chunk; counted as the run's output, not its computing), and the
// compression of every chunk, there and at the run's end (AppendableDataset::pack), in thread CPU time.
struct OutputTimes {
  double chunk_wall = 0, chunk_cpu = 0, pack_cpu = 0;
};

class ResultsWriter {
 public:
  // A results file at out_path (ResultsFile's checks and temporary file) with its /runs group.
  explicit ResultsWriter(std::string out_path, const std::vector<std::string>& inputs = {},
                         WriterOptions options = {});
  // Without a successful commit(): closes everything, removes the temporary file (ResultsFile).
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Streams the run passed to execute_run into /runs/<id> (one run at a time).
  RunObserver& run_observer();
  // Writes a whole record kept in memory (execute_run with keep_samples, no observer).
  void write_run(const RunRecord& record);
  void write_group(const ResultGroup& group);
  // Copies /runs/<run_id> of another open results file (ResultsFile::copy_run).
  void copy_run(hid_t source_runs, const std::string& run_id);
  // Rows for /summary after those of the runs written here (ResultsFile::append_summary).
  void append_summary(const SummaryTable& rows);
  // /summary (the runs written here, then the appended rows), root attributes, close, fsync, rename
  // (ResultsFile::commit).
  void commit(const Provenance& provenance);

  const std::string& out_path() const { return file_.out_path(); }
  const std::string& temp_path() const { return file_.temp_path(); }

  struct State;  // the run being streamed and the summary rows (results_writer.cpp)

 private:
  ResultsFile file_;
  std::unique_ptr<RunTarget> target_;  // file_'s /runs (io/hdf5_run_target.hpp)
  std::unique_ptr<State> state_;
};

// A sweep's part file (io/part_file.hpp): runs streamed exactly as ResultsWriter streams them into a results
// file, recorded without HDF5 (no lock: a sweep's jobs write their parts side by side); the merge replays
// them into OUT. OutputError naming the part when it cannot be written.
class PartWriter {
 public:
  explicit PartWriter(std::string path);
  ~PartWriter();
  PartWriter(const PartWriter&) = delete;
  PartWriter& operator=(const PartWriter&) = delete;

  RunObserver& run_observer();
  // The output times of the runs streamed since the last call (OutputTimes), and zero from here.
  OutputTimes take_output_times();
  // The runs' configurations (what --resume compares), their /summary rows and the provenance; fsync, rename.
  void commit(const Provenance& provenance, const std::vector<std::string>& run_configs);

 private:
  PartFileWriter file_;
  std::unique_ptr<ResultsWriter::State> state_;
};

// The attributes a results file gives /runs/<id> (one list: the writer and the Python package's Run.attrs).
using RunAttributes = std::vector<std::pair<std::string, AttributeValue>>;
RunAttributes run_attributes(const RunRecord& record);

// The /summary row a results file holds for this run, as a one-row table (the Python package's Run.summary).
SummaryTable summary_of(const RunRecord& record);

}  // namespace clm
