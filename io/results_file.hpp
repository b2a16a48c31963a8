// A results file of one invocation (docs/design.md section 5), as a file: where it is written, how it is
// made complete or absent, its groups of derived numbers, its /summary table and its root attributes:
//   /            attrs clmbench_version, git_commit, created_utc, command_line, config [, sweep_config]
//   /runs/<id>/  one group per run (written by runs/results_writer.hpp, or copied from another file by merge)
//   /summary/<column>  one row per run; kept as a generic column table (SummaryTable) so that merge
//                      (io/results_merge.cpp) copies whatever columns a file has, with their descriptions
//   /<path>      groups of derived numbers (ResultGroup: /kozlov/<study>, /analysis)
// io knows files, not runs: what a run is and which columns it has are the caller's (runs/results_writer.hpp).
//
// Threads: every HDF5 call takes hdf5_mutex() (Debian's HDF5 is the serial, not thread-safe, build), so
// several files (a sweep's workers, one part file each) can be written at once.
//
// The guarantee: the output file is complete or absent. The file is written as "<out>.tmp-<pid>.<n>" (n counts
// the writers of the process) and renamed over <out> only after every HDF5 write, flush and close succeeded and
// the file was fsync'ed;
// any error removes the temporary file and leaves an existing <out> untouched. Strings are variable-length
// UTF-8 (h5py reads them as str).
#pragma once

#include <hdf5.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/types.hpp"
#include "io/hdf5_lock.hpp"
#include "io/hdf5_support.hpp"
#include "io/output_lock.hpp"

namespace clm {

// The output cannot be written (exit code 2 of the CLI). An AbortRun, so that it ends a run in progress
// and reaches the command instead of becoming the run's status.
struct OutputError : AbortRun {
  using AbortRun::AbortRun;
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
  // 2-D datasets [rows, cols] of doubles, row-major (e.g. /analysis/eigenvalues_real [K, 4]).
  struct Matrix {
    std::string name;
    size_t rows = 0, cols = 0;
    std::vector<double> data;
  };
  std::vector<Matrix> matrices;
};

struct Provenance {
  std::string command_line;
  std::string config_text;  // the full resolved configuration (to_config_text)
  std::string sweep_config;  // a sweep's configuration as a whole (root attribute sweep_config); empty: none
};

// The HDF5 library of Debian is the serial build, which is not thread-safe: every HDF5 call of the program
// (writer, readers, merge) holds this one lock, hdf5_mutex() through Hdf5Lock (io/hdf5_lock.hpp, which
// times it). The file takes it itself; code that calls HDF5 directly while other threads may write (the
// sweep's workers) takes it too.

// One /summary column: its name, one value per run (numbers, integers or text), and what it means (the
// dataset's `description` attribute; empty: none).
struct SummaryColumn {
  std::string name;
  std::variant<std::vector<double>, std::vector<long>, std::vector<std::string>> values;
  std::string description = {};
  size_t size() const {
    return std::visit([](const auto& v) { return v.size(); }, values);
  }
};
using SummaryTable = std::vector<SummaryColumn>;

// Refuses, before anything runs, an output that cannot be a results file: an empty name, a name ending
// in '/', an existing directory or other non-regular file (a device, a FIFO), or one of `inputs` (the
// config file). OutputError (exit code 2) with one line.
void check_output_path(const std::string& out_path, const std::vector<std::string>& inputs);

// How a file treats its surroundings. The defaults are those of a results file a user asked for; a caller
// that looks after the output's surroundings itself (bench_sweep's replay benchmark, which writes a scratch
// file over and over) may turn off the scan for stale temporaries, the directory's fsync, the compression of
// /summary and the output's lock. (A sweep's part files are no results files since issue 25: io/part_file.hpp.)
struct WriterOptions {
  bool remove_stale_temporaries = true;
  bool sync_directory = true;    // fsync the directory after the rename
  bool compress_summary = true;  // /summary chunked and deflated like every dataset
  bool lock_output = true;       // hold OUT.lock while writing (io/output_lock.hpp); a part's sweep holds it
};

class ResultsFile {
 public:
  // check_output_path, then takes the output's lock (io/output_lock.hpp; unless options.lock_output is
  // false; the lock creates missing parent directories), removes stale temporaries of this output
  // left by processes that no longer exist (kill -9), and creates the temporary file, so an unwritable
  // path is reported before any run starts. Throws OutputError.
  explicit ResultsFile(std::string out_path, const std::vector<std::string>& inputs = {}, WriterOptions options = {});
  // Without a successful commit(): closes everything, removes the temporary file and (releasing the lock)
  // the directories created for the output (when empty).
  ~ResultsFile();
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  // The /runs group (created by the first call; a file without runs, e.g. an analysis, has none). HDF5
  // calls: inside guarded().
  hid_t runs_group();
  void write_group(const ResultGroup& group);
  // Copies /runs/<run_id> of another open results file (hdf5::copy_object: datasets, attributes, extras) into this
  // one; `source_runs` is that file's /runs group. Its /summary row is added with append_summary.
  void copy_run(hid_t source_runs, const std::string& run_id);
  // Copies the object at `path` below the root of another open results file (e.g. "kozlov/<study>") to the
  // same path here, creating missing parent groups.
  void copy_group(hid_t source_file, const std::string& path);
  // Rows for /summary, column by column (every column the same length; the same columns as the other rows,
  // else the commit fails).
  void append_summary(const SummaryTable& rows);
  // Writes /summary (when the file has runs or summary rows) and the root attributes, closes and fsyncs
  // the file, renames it to the output path and fsyncs the directory. `leading`: the /summary rows of the
  // runs written into this file, before those appended (null: none).
  void commit(const Provenance& provenance, const SummaryTable* leading = nullptr);

  // Runs `body`, turning an HDF5 or system failure into one OutputError naming the file; after one, the
  // file is broken and every further call throws. Holds hdf5_mutex() unless lock_hdf5 is false (a body
  // that makes no HDF5 call: fsync and rename, while other writers keep writing).
  template <class F>
  void guarded(const std::string& what, F&& body, bool lock_hdf5 = true) {
    std::optional<Hdf5Lock> lock;
    if (lock_hdf5) lock.emplace();
    require_open();
    try {
      body();
    } catch (const hdf5::H5Failure& e) {
      broken_ = true;
      throw OutputError("cannot write output file '" + out_path_ + "': " + what + ": " + e.what());
    }
  }
  // Throws OutputError when the file is closed or broken.
  void require_open() const;
  bool is_open() const;

  const std::string& out_path() const { return out_path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  struct Handles;  // the file and /runs (results_file.cpp)

  std::optional<OutputLock> lock_;  // first: released after everything else, then the directories it made
  std::string out_path_, temp_path_;
  bool committed_ = false, broken_ = false;
  int cleanup_slot_ = -1;  // the signal handler's entry for the temporary file
  WriterOptions options_;
  SummaryTable appended_;  // rows of copied runs (append_summary)
  std::unique_ptr<Handles> handles_;
};

// Current UTC time as ISO 8601 ("2024-05-01T12:00:00Z").
std::string utc_timestamp();

}  // namespace clm
