// A sweep's part file, OUT.parts/<first run_id>.part (issue 25): the runs a job finished, recorded as the
// RunTarget calls (io/run_target.hpp) that write them, with no HDF5 call. A job writes its part without
// the HDF5 lock, side by side with the other jobs; the merge (io/results_merge.hpp, IncrementalMerge) replays
// each run into OUT's /runs, one HDF5 write per object instead of the read and write of a copy. Samples are
// recorded as their chunks (already shuffled and deflated by the job), so the replay hands HDF5 finished
// chunks and the memory of either side is one chunk, whatever the length of a run.
//
// Layout (native byte order and sizes; a part is read back by the machine or cluster that wrote it):
//   "CLMPART1"
//   per run:  'R' run_id, then one record per call ('G' group, 'C' chunked dataset, 'K' chunk, 'W' rows,
//             'D' whole dataset, 'A' attribute, 'X' close), then 'E'
//   trailer:  'T' number of runs, each run's id, configuration, sweep index, offset and CRC-32 (of its records,
//             'R' to 'E': a run damaged on disk is refused when replayed, not written into OUT); the /summary rows of the runs
//             (a SummaryTable); the provenance (command line, config, sweep_config)
//   footer:   the trailer's offset (8 bytes), "CLMPEND1"
// Strings and byte runs carry their length (8 bytes) first. Written to "<path>.tmp-<pid>", fsynced and renamed
// by commit(): a part is complete or absent. A reader checks every length against the file's size and every
// object number against the run's objects, so a damaged or foreign file is refused, never trusted.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "io/results_file.hpp"
#include "io/run_target.hpp"

namespace clm {

class PartFileWriter : public RunTarget {
 public:
  // Creates the temporary file (OutputError when it cannot).
  explicit PartFileWriter(std::string path);
  // Without a successful commit(): the temporary file removed.
  ~PartFileWriter() override;
  PartFileWriter(const PartFileWriter&) = delete;
  PartFileWriter& operator=(const PartFileWriter&) = delete;

  void begin_run(const std::string& run_id, long sweep_index) override;
  void end_run() override;
  // The trailer (each run's configuration, in the order written; the runs' /summary rows), fsync, rename.
  void commit(const SummaryTable& summary, const std::vector<std::string>& run_configs, const Provenance& provenance);

  Object group(Object parent, const std::string& name) override;
  Object chunked_dataset(Object parent, const std::string& name, hsize_t cols, bool matrix, hsize_t block_rows) override;
  void write_chunk(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                   const unsigned char* packed, size_t bytes) override;
  void write_rows(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                  const double* data) override;
  Object whole_dataset(Object parent, const std::string& name, hsize_t rows, hsize_t cols, bool matrix,
                       const double* data) override;
  void attribute(Object object, const std::string& name, const AttrValue& value) override;
  void close(Object object) override;
  // Turns a failed write (a full disk) into one OutputError naming the part file.
  void guarded(const std::string& what, const std::function<void()>& body) override;

  const std::string& path() const { return path_; }

 private:
  void put(const void* data, size_t bytes);
  void put_u64(uint64_t v) { put(&v, sizeof v); }
  void put_string(const std::string& s);
  void tag(char t) { put(&t, 1); }
  void fail(const std::string& what);

  std::string path_, temp_path_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  Object objects_ = 0;  // of the run in progress
  bool in_run_ = false;
  unsigned long crc_ = 0;  // CRC-32 of the run in progress, from its 'R' to its 'E'
  struct Run {
    std::string id;
    long sweep_index;
    uint64_t offset;
    uint32_t crc;
  };
  std::vector<Run> runs_;
  bool committed_ = false;
  int cleanup_slot_ = -1;
};

// What a part holds besides its runs' objects: read from its trailer. nullopt: not a complete part file.
struct PartContents {
  std::vector<std::string> run_ids, run_configs;
  std::vector<long> sweep_index;  // -1: none
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> checksums;  // CRC-32 of each run's records
  SummaryTable summary;
  Provenance provenance;
};
std::optional<PartContents> read_part(const std::string& path);
// Whether the file starts as a part file does (no other check: read_part says whether it is complete).
bool is_part_file(const std::string& path);

// Makes run `run` of the part through `target` (the calls it was recorded from, in order). OutputError
// naming the part when it cannot be read or is damaged.
void replay_run(const std::string& path, const PartContents& contents, size_t run, RunTarget& target);

// "" when run a of part_a and run b of part_b hold the same objects, data and attributes, timings aside
// (is_timing_attribute), else the first difference ("attribute NAME", "dataset NAME", ...).
std::string run_difference(const std::string& part_a, const PartContents& a, size_t run_a, const std::string& part_b,
                           const PartContents& b, size_t run_b);

// Attributes that hold timings, not results (wall_time_s, cpu_time_s, every *_time_s, and the statistics of
// the repeated timings, cpu_time_repeats and cpu_time_spread): they differ between identical runs.
bool is_timing_attribute(const std::string& name);

}  // namespace clm
