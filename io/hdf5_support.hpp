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
// The creation properties of such groups, and of compact or contiguous datasets (H5D_COMPACT, H5D_CONTIGUOUS),
// made once and kept for the process: not to be closed.
hid_t untimed_group_properties();
// The creation properties of a run group (/runs/<id> and the groups in it), as untimed_group_properties plus:
// links stored in the group's own object header (compact storage of HDF5 1.8, up to 64 links), and the
// header made `header_bytes` large at once (0: the default). A run group holds about a hundred attributes:
// grown one attribute at a time, its header was reallocated and extended in the file about a dozen times, a
// third of the cost of writing a short run (issue 25). Kept for the process like the others; each call sets
// the size again (under the HDF5 lock).
hid_t run_group_properties(size_t header_bytes);
// Sets a new-style group's creation properties to make its header `header_bytes` large (0: HDF5's default).
void size_group_header(hid_t gcpl, size_t header_bytes);
// The header bytes an existing new-style group uses beyond those of an empty one: the size to make a group
// that will hold as much.
size_t group_header_bytes(hid_t group);
hid_t untimed_dataset_properties(H5D_layout_t layout);

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

// The deflate filter of the results files (level kDeflateLevel, after the shuffle filter), for chunks
// compressed outside the HDF5 lock: the most bytes deflate() may write for `bytes` of input in `planes`
// planes, and deflate() itself (the compressed size; H5Failure when zlib fails), a zlib stream as HDF5's
// filter reads it. A shuffled chunk of doubles is 8 planes, one per byte of the values: planes of noise
// (the low bytes of the mantissas) are stored, the others deflated (see hdf5_support.cpp). No HDF5 call: no
// lock needed; no allocation after a thread's first chunk.
constexpr int kDeflateLevel = 1;
size_t deflate_bound(size_t bytes, size_t planes);
size_t deflate(const unsigned char* in, size_t bytes, size_t planes, unsigned char* out, size_t capacity,
               const std::string& what);
// Whether deflate() stores a plane of `n` bytes rather than deflating it.
bool looks_like_noise(const unsigned char* plane, size_t n);

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

}  // namespace clm::hdf5
