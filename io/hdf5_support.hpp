// The HDF5 C API as the results files use it (io/results_file.cpp, runs/results_writer.cpp): every call's
// return value checked, every object closed explicitly, in order, with its error checked, before the file is
// closed. (The C++ API closes objects in destructors that swallow errors: a failed chunk flush then went
// unnoticed and a file with zeros in place of data was renamed into place.) A failure throws H5Failure, which
// the file's guarded() turns into one OutputError line naming the output file.
// Every HDF5 call here must be made under the HDF5 lock (io/hdf5_lock.hpp): Debian's HDF5 is not thread-safe;
// deflate() and AppendableDataset::pack() make none, and run outside it.
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace clm::hdf5 {

// An HDF5 call failed (the message says which and, where HDF5 knows it, the system's error).
struct H5Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws H5Failure with `what` and the most telling message of HDF5's error stack.
[[noreturn]] void fail(const std::string& what);
void check(herr_t status, const std::string& what);

// An HDF5 identifier, closed exactly once: by close(), which checks, or silently by the destructor (only
// on error paths, where the file is abandoned anyway).
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*closer)(hid_t), std::string what) : id_(id), closer_(closer), what_(std::move(what)) {
    if (id_ < 0) fail("cannot create " + what_);
  }
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_), what_(std::move(o.what_)) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      abandon();
      id_ = o.id_;
      closer_ = o.closer_;
      what_ = std::move(o.what_);
      o.id_ = -1;
    }
    return *this;
  }
  ~Handle() { abandon(); }
  hid_t get() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  void close() {
    if (id_ < 0) return;
    const hid_t id = id_;
    id_ = -1;
    check(closer_(id), "cannot close " + what_);
  }

 private:
  void abandon() {
    if (id_ >= 0) closer_(id_);
    id_ = -1;
  }
  hid_t id_ = -1;
  herr_t (*closer_)(hid_t) = nullptr;
  std::string what_;
};

Handle string_type();
// Groups and datasets are created without modification times, so two identical runs give identical
// object headers (reproducibility; created_utc and wall_time_s are the only intended differences).
Handle make_group(hid_t parent, const std::string& name);

// Scalar attributes; a list of strings or of doubles (an empty one has a null dataspace).
void set_attr(hid_t obj, const std::string& name, const std::string& value);
void set_attr(hid_t obj, const std::string& name, double value);
void set_attr(hid_t obj, const std::string& name, long value);
void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values);
void set_attr(hid_t obj, const std::string& name, const double* values, size_t count);

// Copies the object `name` of `src_parent` (a dataset, or a group with everything in it) with its
// attributes into `dst_parent` under the same name: each dataset created with the source's type, shape and
// creation properties (layout, chunks, filters) and its data read and written in blocks of whole chunks
// (about 4 MiB), so memory does not grow with the size of a run. Not H5Ocopy: in HDF5 1.10.8 a write error
// inside H5Ocopy (a full disk) crashes the process in its own clean-up (H5T_close_real, issue 21); the
// calls used here fail with an error like every other write.
void copy_object(hid_t src_parent, const std::string& name, hid_t dst_parent);

// Rows of a chunk: about 64 KiB of data per chunk (whole rows), at least one row.
hsize_t chunk_rows(hsize_t row_elements, size_t element_size);

// The deflate filter of the results files (level kDeflateLevel, after the shuffle filter), as HDF5 applies it,
// for chunks compressed outside the HDF5 lock: the most bytes deflate() may write for `bytes` of input, and
// deflate() itself (the compressed size; H5Failure when zlib fails). No HDF5 call: no lock needed.
constexpr int kDeflateLevel = 6;
size_t deflate_bound(size_t bytes);
size_t deflate(const unsigned char* in, size_t bytes, unsigned char* out, size_t capacity, const std::string& what);

// A fixed-size dataset written at once: chunked (whole rows, about 64 KiB per chunk), shuffled and
// deflated; a dataset with a zero dimension cannot be chunked and is written contiguous and empty, as is
// one written with compress = false (a sweep part's one-row /summary, rewritten compressed by the merge).
void write_dataset(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& dims,
                   const void* data, bool compress = true);
// A `description` attribute on an existing dataset (what a column means and its unit).
void describe_dataset(hid_t parent, const std::string& name, const std::string& text);
void write_doubles(hid_t parent, const std::string& name, const std::vector<double>& data, bool compress = true);
void write_longs(hid_t parent, const std::string& name, const std::vector<long>& values, bool compress = true);
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values,
                   bool compress = true);

// A dataset of rows of `cols` doubles (cols = 0: one number per row) that grows as rows are appended;
// rows are buffered one chunk at a time, so its memory is fixed. A chunk holds about 64 KiB of rows, or
// fewer when the run has at most `max_rows` samples (0: unknown): a short run's datasets are then one
// chunk of its own size instead of a 64 KiB chunk mostly of fill, which HDF5 would fill, shuffle and
// deflate whole on every write (measured: most of the cost of writing a run of 11 samples).
// A dataset whose max_rows rows take at most kCompactBytes is compact instead (its data in its object
// header, written at close): no chunk index, no filter, which cost more than such data (deflating 100
// numbers does not make them smaller) when it is written, copied by a merge and read.
class AppendableDataset {
 public:
  static constexpr hsize_t kCompactBytes = 4096;

  AppendableDataset(hid_t parent, std::string name, hsize_t cols, bool matrix, hsize_t max_rows)
      : parent_(parent), name_(std::move(name)), cols_(cols), matrix_(matrix) {
    block_rows_ = chunk_rows(cols_, sizeof(double));
    if (max_rows > 0) block_rows_ = std::min(block_rows_, max_rows);
    if (matrix_ && cols_ == 0) return;  // a K x 0 dataset cannot be chunked: written contiguous at close()
    const hsize_t row = std::max<hsize_t>(cols_, 1);
    if (max_rows > 0 && max_rows * row * sizeof(double) <= kCompactBytes) {
      compact_ = true;
      block_rows_ = max_rows + 1;  // never full while the bound holds
      buffer_.reserve(max_rows * row);
      return;
    }
    create_chunked();
    buffer_.reserve(block_rows_ * row);
  }

  // Buffers a row (no HDF5 call, so no lock: another writer may be writing meanwhile); true when a whole
  // chunk is buffered and flush() is due before the next push.
  bool push(const double* row) {
    if (matrix_ && cols_ == 0) {
      ++rows_;
      return false;
    }
    buffer_.insert(buffer_.end(), row, row + std::max<hsize_t>(cols_, 1));
    ++buffered_;
    return buffered_ == block_rows_;
  }

  // Attributes of the dataset (names and units of its columns), written at close().
  std::vector<std::pair<std::string, std::vector<std::string>>> labels;

  void close() {
    if (matrix_ && cols_ == 0) {
      write_dataset(parent_, name_, H5T_NATIVE_DOUBLE, {rows_, 0}, nullptr);
      return;
    }
    if (compact_ && !ds_) {
      create_whole();
    } else {
      flush();
    }
    for (const auto& [name, values] : labels) {
      if (!matrix_ && values.size() == 1) set_attr(ds_.get(), name, values.front());  // a 1-D dataset: one string
      else set_attr(ds_.get(), name, values);
    }
    ds_.close();
  }

  bool full() const { return buffered_ == block_rows_; }

  // Shuffles and deflates the buffered rows as HDF5's filters would (the chunk padded with the fill value 0,
  // as HDF5 pads an edge chunk), with no HDF5 call: outside the lock, so that a sweep's jobs compress side by
  // side (issue 25) and flush() only hands HDF5 the finished chunk (H5Dwrite_chunk). Compact datasets, which
  // are not filtered, are left to flush(). Buffers are reused: no allocation once the first chunk is packed.
  void pack() {
    if (compact_ || (matrix_ && cols_ == 0) || buffered_ == 0) return;
    const size_t row = static_cast<size_t>(std::max<hsize_t>(cols_, 1));
    const size_t elements = static_cast<size_t>(block_rows_) * row, bytes = elements * sizeof(double);
    shuffled_.assign(bytes, 0);
    const auto* raw = reinterpret_cast<const unsigned char*>(buffer_.data());
    const size_t filled = buffer_.size();  // elements buffered; the rest of the chunk is the fill value 0
    for (size_t i = 0; i < filled; ++i)
      for (size_t b = 0; b < sizeof(double); ++b) shuffled_[b * elements + i] = raw[i * sizeof(double) + b];
    packed_.resize(deflate_bound(bytes));
    packed_.resize(deflate(shuffled_.data(), bytes, packed_.data(), packed_.size(), name_));
    packed_rows_ = buffered_;
  }

  // Writes the buffered rows (HDF5: under the lock): the packed chunk when pack() made one.
  void flush() {
    if (buffered_ == 0) return;
    if (packed_rows_ == buffered_ && ds_) {
      const hsize_t dims[2] = {rows_ + buffered_, cols_};
      check(H5Dset_extent(ds_.get(), dims), "cannot extend dataset '" + name_ + "'");
      const hsize_t offset[2] = {rows_, 0};
      check(H5Dwrite_chunk(ds_.get(), H5P_DEFAULT, 0, offset, packed_.size(), packed_.data()),
            "cannot write dataset '" + name_ + "'");
      rows_ += buffered_;
      buffered_ = packed_rows_ = 0;
      buffer_.clear();
      return;
    }
    packed_rows_ = 0;
    if (!ds_) create_chunked();  // a compact dataset given more rows than its bound
    const hsize_t dims[2] = {rows_ + buffered_, cols_};
    check(H5Dset_extent(ds_.get(), dims), "cannot extend dataset '" + name_ + "'");
    Handle file_space(H5Dget_space(ds_.get()), H5Sclose, "dataspace");
    const hsize_t start[2] = {rows_, 0}, count[2] = {buffered_, cols_};
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
          "cannot select rows of '" + name_ + "'");
    Handle memory_space(H5Screate_simple(rank(), count, nullptr), H5Sclose, "dataspace");
    check(H5Dwrite(ds_.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, buffer_.data()),
          "cannot write dataset '" + name_ + "'");
    memory_space.close();
    file_space.close();
    rows_ += buffered_;
    buffered_ = 0;
    buffer_.clear();
  }

 private:
  int rank() const { return matrix_ ? 2 : 1; }

  void create_chunked() {
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset property list");
    check(H5Pset_obj_track_times(dcpl.get(), 0), "cannot set dataset properties");
    const hsize_t chunk[2] = {block_rows_, cols_};
    check(H5Pset_chunk(dcpl.get(), rank(), chunk), "cannot chunk '" + name_ + "'");
    check(H5Pset_shuffle(dcpl.get()), "cannot set shuffle on '" + name_ + "'");
    check(H5Pset_deflate(dcpl.get(), kDeflateLevel), "cannot set deflate on '" + name_ + "'");
    const hsize_t dims[2] = {0, cols_}, max_dims[2] = {H5S_UNLIMITED, cols_};
    Handle space(H5Screate_simple(rank(), dims, max_dims), H5Sclose, "dataspace");
    // Whole chunks are written at once, so HDF5's chunk cache (1 MiB per open dataset by default) would
    // only hold copies: without it the memory of a run is the block buffers alone.
    Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "dataset access property list");
    check(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), "cannot set the chunk cache of '" + name_ + "'");
    ds_ = Handle(H5Dcreate2(parent_, name_.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, dcpl.get(),
                            dapl.get()),
                 H5Dclose, "dataset '" + name_ + "'");
    dapl.close();
    space.close();
    dcpl.close();
  }

  // The compact dataset with the buffered rows (an empty one contiguous: nothing to hold).
  void create_whole() {
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset property list");
    check(H5Pset_obj_track_times(dcpl.get(), 0), "cannot set dataset properties");
    check(H5Pset_layout(dcpl.get(), buffered_ > 0 ? H5D_COMPACT : H5D_CONTIGUOUS), "cannot set the layout of '" + name_ + "'");
    const hsize_t dims[2] = {buffered_, cols_};
    Handle space(H5Screate_simple(rank(), dims, nullptr), H5Sclose, "dataspace");
    ds_ = Handle(H5Dcreate2(parent_, name_.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, dcpl.get(),
                            H5P_DEFAULT),
                 H5Dclose, "dataset '" + name_ + "'");
    if (buffered_ > 0)
      check(H5Dwrite(ds_.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer_.data()),
            "cannot write dataset '" + name_ + "'");
    space.close();
    dcpl.close();
    rows_ = buffered_;
    buffered_ = 0;
    buffer_.clear();
  }

  hid_t parent_;
  std::string name_;
  hsize_t cols_;
  bool matrix_;
  bool compact_ = false;
  hsize_t block_rows_ = 1, rows_ = 0, buffered_ = 0, packed_rows_ = 0;
  std::vector<double> buffer_;
  std::vector<unsigned char> shuffled_, packed_;  // pack(): the chunk shuffled, then deflated
  Handle ds_;
};

}  // namespace clm::hdf5
