// Where the objects of a run group go (issue 25). A results file's /runs/<id> is a group, its datasets and
// their attributes; the writer (runs/results_writer.hpp) makes them through RunTarget, which either makes
// them in an open HDF5 file at once (Hdf5RunTarget, io/hdf5_run_target.hpp: `clmbench run`, and OUT of a
// sweep) or records the same calls in a sweep's part file (PartFileWriter, io/part_file.hpp: a job's runs,
// written without HDF5 and so without the HDF5 lock; the merge replays them into OUT). A replay makes the
// calls a direct write makes, in the same order: the datasets, chunks and attributes in OUT are the ones
// writing the run there directly gives.
//
// Objects are numbered per run in order of creation: 0 is the file's /runs group, each group or dataset
// made gets the next number, so a recorded run names its objects as its replay does.
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "io/hdf5_support.hpp"

namespace clm {

// An attribute's value: the kinds a results file holds (scalars, and lists of numbers or of text).
using AttrValue = std::variant<double, long, std::string, std::vector<double>, std::vector<std::string>>;

class RunTarget {
 public:
  using Object = unsigned;  // 0: /runs
  virtual ~RunTarget() = default;

  // The calls between begin_run and end_run make the run `run_id` (its objects numbered from 1); sweep_index:
  // its place in its sweep's grid (-1: none), which orders a merge's /summary.
  virtual void begin_run(const std::string& run_id, long sweep_index) = 0;
  virtual void end_run() = 0;

  // A group `name` in `parent`.
  virtual Object group(Object parent, const std::string& name) = 0;
  // An extendible dataset of rows of `cols` doubles (matrix: [rows, cols]; else [rows]), 0 rows yet, chunked
  // in blocks of `block_rows`, shuffled and deflated (hdf5::kDeflateLevel).
  virtual Object chunked_dataset(Object parent, const std::string& name, hsize_t cols, bool matrix,
                                 hsize_t block_rows) = 0;
  // Rows [rows_before, rows_before + rows) of a chunked dataset: one chunk, already shuffled and deflated
  // (AppendableDataset::pack), or the doubles themselves.
  virtual void write_chunk(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                           const unsigned char* packed, size_t bytes) = 0;
  virtual void write_rows(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                          const double* data) = 0;
  // A dataset written whole: compact (its rows in its object header) when it has rows and columns, else
  // contiguous and empty ([rows, 0] or [0, cols]).
  virtual Object whole_dataset(Object parent, const std::string& name, hsize_t rows, hsize_t cols, bool matrix,
                               const double* data) = 0;
  virtual void attribute(Object object, const std::string& name, const AttrValue& value) = 0;
  virtual void close(Object object) = 0;

  // Runs `body` (calls of this target), turning a failure into one OutputError naming the file: an HDF5 target
  // holds the HDF5 lock for it, a part file needs none.
  virtual void guarded(const std::string& what, const std::function<void()>& body) = 0;
};

// A dataset of rows of `cols` doubles (cols = 0: one number per row) that grows as rows are appended;
// rows are buffered one chunk at a time, so its memory is fixed. A chunk holds at most about 64 KiB of rows;
// when the run has at most `max_rows` samples (0: unknown), the fewest such chunks of equal rows that hold
// them: a short run's datasets are then one chunk of its own size instead of a 64 KiB chunk mostly of fill,
// which HDF5 would fill, shuffle and deflate whole on every write (measured: most of the cost of writing a
// run of 11 samples), and a longer run's last chunk is not mostly fill either.
// A dataset whose max_rows rows take at most kCompactBytes is compact instead (its data in its object
// header, written at close): no chunk index, no filter, which cost more than such data (deflating 100
// numbers does not make them smaller) when it is written, copied by a merge and read.
// Calls of the target: the constructor (a chunked dataset), flush() and close(), inside target.guarded().
class AppendableDataset {
 public:
  static constexpr hsize_t kCompactBytes = 4096;

  AppendableDataset(RunTarget& target, RunTarget::Object parent, std::string name, hsize_t cols, bool matrix,
                    hsize_t max_rows);

  // Buffers a row (no call of the target, so no lock: another writer may be writing meanwhile); true when a
  // whole chunk is buffered and flush() is due before the next push.
  bool push(const double* row) {
    if (matrix_ && cols_ == 0) {
      ++rows_;
      return false;
    }
    buffer_.insert(buffer_.end(), row, row + std::max<hsize_t>(cols_, 1));
    ++buffered_;
    return buffered_ == block_rows_;
  }

  // Attributes of the dataset (names and units of its columns), written at close(): a 1-D dataset's
  // one-element list as one string.
  std::vector<std::pair<std::string, std::vector<std::string>>> labels;

  void close();
  bool full() const { return buffered_ == block_rows_; }

  // Shuffles and deflates the buffered rows as HDF5's filters would (the chunk padded with the fill value 0,
  // as HDF5 pads an edge chunk), with no HDF5 call: outside the lock, so that a sweep's jobs compress side by
  // side (issue 25) and flush() only hands the target the finished chunk (H5Dwrite_chunk). Compact datasets,
  // which are not filtered, are left to flush(). Buffers are reused: no allocation once the first chunk is
  // packed.
  void pack();
  // Writes the buffered rows: the packed chunk when pack() made one.
  void flush();

 private:
  RunTarget& target_;
  RunTarget::Object parent_, ds_ = 0;
  bool open_ = false;
  std::string name_;
  hsize_t cols_;
  bool matrix_;
  bool compact_ = false;
  hsize_t block_rows_ = 1, rows_ = 0, buffered_ = 0, packed_rows_ = 0;
  std::vector<double> buffer_;
  std::vector<unsigned char> shuffled_, packed_;  // pack(): the chunk shuffled, then deflated
};

}  // namespace clm
