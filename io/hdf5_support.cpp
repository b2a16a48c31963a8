#include "io/hdf5_support.hpp"

#include <zlib.h>

#include <cmath>

namespace clm::hdf5 {

namespace {

// The most telling message on HDF5's error stack (the system error of a failed write when there is one).
std::string hdf5_error_detail() {
  std::vector<std::string> messages;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e && e->desc) static_cast<std::vector<std::string>*>(data)->push_back(e->desc);
        return 0;
      },
      &messages);
  H5Eclear2(H5E_DEFAULT);
  for (const auto& m : messages) {
    // "... errno = 28, error message = 'No space left on device', ..." -> the system's words.
    const auto at = m.find("error message = '");
    if (at != std::string::npos) {
      const auto from = at + 17, to = m.find('\'', from);
      return m.substr(from, to == std::string::npos ? std::string::npos : to - from);
    }
    if (m.find("errno") != std::string::npos) return m;
  }
  return messages.empty() ? std::string() : messages.back();
}

}  // namespace

[[noreturn]] void fail(const std::string& what) {
  const std::string detail = hdf5_error_detail();
  throw H5Failure(detail.empty() ? what : what + " (" + detail + ")");
}

void check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}


Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "cannot set the string type's size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "cannot set the string type's character set");
  return t;
}

// Groups and datasets are created without modification times, so two identical runs give identical
// object headers (reproducibility; created_utc and wall_time_s are the only intended differences).
Handle make_group(hid_t parent, const std::string& name) {
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, untimed_group_properties(), H5P_DEFAULT), H5Gclose,
                "group '" + name + "'");
}

// Property lists made once and kept for the process (under the HDF5 lock, as every call here): making and
// closing one per object was a tenth of the cost of writing a run's ~120 objects (issue 25).
hid_t untimed_group_properties() {
  static const hid_t gcpl = [] {
    const hid_t p = H5Pcreate(H5P_GROUP_CREATE);
    if (p < 0 || H5Pset_obj_track_times(p, 0) < 0) fail("cannot make group properties");
    return p;
  }();
  return gcpl;
}
hid_t run_group_properties(size_t header_bytes) {
  static const hid_t gcpl = [] {
    const hid_t p = H5Pcreate(H5P_GROUP_CREATE);
    // A filter on a group's creation properties (it would compress the names of links stored outside the
    // header) is what makes HDF5 1.10 store the links in the header, a "new-style" group, while the file
    // keeps its earliest format; tracking their creation order would too, but h5py then lists a group's
    // members in that order instead of by name. The phase change keeps a run's links in the header.
    if (p < 0 || H5Pset_obj_track_times(p, 0) < 0 || H5Pset_deflate(p, kDeflateLevel) < 0 ||
        H5Pset_link_phase_change(p, 64, 48) < 0)
      fail("cannot make group properties");
    return p;
  }();
  size_group_header(gcpl, header_bytes);
  return gcpl;
}

void size_group_header(hid_t gcpl, size_t header_bytes) {
  // HDF5 sizes a new-style group's header for its estimated links: `entries` links of 40-character names
  // take kLinkBytes each (HDF5 1.10.8, measured; 72 when the links' creation order is tracked); the
  // defaults (4 of 8 characters) when no size is asked. One entry more than the bytes need: a header a few
  // bytes short grows as an unsized one does (tests/hdf5_test.cpp checks that it does not).
  constexpr size_t kNameLength = 40, kLinkBytes = 64;
  const size_t entries = header_bytes == 0 ? 4 : std::min<size_t>(header_bytes / kLinkBytes + 2, 65535);
  check(H5Pset_est_link_info(gcpl, static_cast<unsigned>(entries), header_bytes == 0 ? 8 : kNameLength),
        "cannot set group properties");
}

size_t group_header_bytes(hid_t group) {
  H5O_info_t info;
  check(H5Oget_info2(group, &info, H5O_INFO_HDR), "cannot read a group's header");
  // An empty group of run_group_properties: the header's prefix, its link info, group info and filter messages.
  constexpr hsize_t kNewGroupBytes = 112;
  const hsize_t used = info.hdr.space.total - info.hdr.space.free;
  return used > kNewGroupBytes ? static_cast<size_t>(used - kNewGroupBytes) : 0;
}
hid_t untimed_dataset_properties(H5D_layout_t layout) {
  auto make = [](H5D_layout_t l) {
    const hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    if (p < 0 || H5Pset_obj_track_times(p, 0) < 0 || H5Pset_layout(p, l) < 0) fail("cannot make dataset properties");
    return p;
  };
  static const hid_t compact = make(H5D_COMPACT), contiguous = make(H5D_CONTIGUOUS);
  if (layout == H5D_COMPACT) return compact;
  if (layout == H5D_CONTIGUOUS) return contiguous;
  throw H5Failure("no shared properties for a chunked dataset");
}

static void write_attribute(hid_t obj, const std::string& name, hid_t type, hid_t space, const void* data) {
  Handle a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attribute '" + name + "'");
  if (data) check(H5Awrite(a.get(), type, data), "cannot write attribute '" + name + "'");
  a.close();
}

// The variable-length UTF-8 string type and the scalar dataspace, made once and kept for the process: an
// attribute costs a few microseconds of HDF5, and making and closing these for each of a run's ~100
// attributes was a seventh of it (issue 25: OUT's writer, the merge, writes every run's attributes).
// Made under the HDF5 lock, as every call here.
static hid_t shared_string_type() {
  static const hid_t type = [] {
    const hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) fail("cannot make the string type");
    return t;
  }();
  return type;
}
static hid_t scalar_space() {
  static const hid_t space = [] {
    const hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) fail("cannot make a dataspace");
    return s;
  }();
  return space;
}

void set_attr(hid_t obj, const std::string& name, const std::string& value) {
  const char* p = value.c_str();
  write_attribute(obj, name, shared_string_type(), scalar_space(), &p);
}
void set_attr(hid_t obj, const std::string& name, double value) {
  write_attribute(obj, name, H5T_NATIVE_DOUBLE, scalar_space(), &value);
}
void set_attr(hid_t obj, const std::string& name, long value) {
  const int64_t v = value;
  write_attribute(obj, name, H5T_NATIVE_INT64, scalar_space(), &v);
}
void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  const hsize_t dims[1] = {values.size()};
  Handle space(values.empty() ? H5Screate(H5S_NULL) : H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  write_attribute(obj, name, shared_string_type(), space.get(), values.empty() ? nullptr : ptrs.data());
  space.close();
}
void set_attr(hid_t obj, const std::string& name, const double* values, size_t count) {
  const hsize_t dims[1] = {count};
  Handle space(count ? H5Screate_simple(1, dims, nullptr) : H5Screate(H5S_NULL), H5Sclose, "dataspace");
  write_attribute(obj, name, H5T_NATIVE_DOUBLE, space.get(), count ? values : nullptr);
  space.close();
}

size_t deflate_bound(size_t bytes, size_t planes) {
  // zlib's bound for one stream, and a block's end and a stored block's header at each change of level.
  return static_cast<size_t>(compressBound(static_cast<uLong>(bytes))) + 16 * planes;
}

// At most 5 % of the plane could be saved: its order-0 entropy, estimated from the byte counts
// with the Miller-Madow correction (the plug-in estimate is low by about (K - 1) / (2 n ln 2) bits for K
// distinct values in n bytes: 0.02 bits in a 64 KiB chunk's plane of 8 KiB, more in small chunks) is over
// 7.6 bits a byte. The low bytes of the mantissas of computed doubles are noise: deflate's Huffman codes
// cannot shorten them and its search finds no matches in them. Histogram on the stack, nothing allocated.
bool looks_like_noise(const unsigned char* p, size_t n) {
  if (n < 256) return false;  // too few bytes to tell; small, so cheap to compress
  uint32_t counts[256] = {};
  for (size_t i = 0; i < n; ++i) ++counts[p[i]];
  double h = 0;
  int distinct = 0;
  for (const uint32_t c : counts) {
    if (c == 0) continue;
    ++distinct;
    const double f = static_cast<double>(c) / static_cast<double>(n);
    h -= f * std::log2(f);
  }
  h += (distinct - 1) / (2.0 * static_cast<double>(n) * std::log(2.0));
  return h > 7.6;
}

size_t deflate(const unsigned char* in, size_t bytes, size_t planes, unsigned char* out, size_t capacity,
               const std::string& what) {
  // One zlib stream per thread, reset for each chunk: deflateInit allocates some 270 KB each time.
  struct Stream {
    z_stream z{};
    bool ready = false;
    int level = kDeflateLevel;
    ~Stream() {
      if (ready) deflateEnd(&z);
    }
  };
  thread_local Stream stream;
  const auto fail = [&] { return H5Failure("cannot compress a chunk of '" + what + "' (zlib)"); };
  if (!stream.ready) {
    if (deflateInit2(&stream.z, kDeflateLevel, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw fail();
    stream.ready = true;
  } else if (deflateReset(&stream.z) != Z_OK) {  // keeps the level last set
    throw fail();
  }
  stream.z.next_out = out;
  stream.z.avail_out = static_cast<uInt>(capacity);
  // One stream, plane by plane: a plane of noise (looks_like_noise) is stored (level 0, a copy), the others
  // deflated at level 1; deflateParams ends the block at each change. Measured on bench/scale_long.ini's
  // chunks (346 KB of samples a run, timed outside the sweep): 1.62 ms a run, stored in 0.828 of the raw
  // bytes. Deflating every plane: 4.9 ms and 0.824 at level 1, 2.5 ms and 0.873 with run-length matching
  // only (Z_RLE, the previous choice), 0.818 at level 6. Any inflate reads it (HDF5's filter, h5py).
  const size_t plane = planes > 1 ? bytes / planes : bytes;
  for (size_t p = 0; p < std::max<size_t>(planes, 1); ++p) {
    const bool last = p + 1 >= planes;
    const unsigned char* from = in + p * plane;
    const size_t n = last ? bytes - p * plane : plane;
    if (n == 0 && !last) continue;  // fewer bytes than planes: all in the last
    const int level = looks_like_noise(from, n) ? 0 : kDeflateLevel;
    if (level != stream.level) {
      if (deflateParams(&stream.z, level, Z_DEFAULT_STRATEGY) != Z_OK) throw fail();
      stream.level = level;
    }
    stream.z.next_in = const_cast<unsigned char*>(from);
    stream.z.avail_in = static_cast<uInt>(n);
    const int rc = ::deflate(&stream.z, last ? Z_FINISH : Z_NO_FLUSH);
    if (last ? rc != Z_STREAM_END : (rc != Z_OK || stream.z.avail_in != 0)) throw fail();
  }
  return capacity - stream.z.avail_out;
}

// Rows of a chunk: about 64 KiB of data per chunk (whole rows), at least one row.
hsize_t chunk_rows(hsize_t row_elements, size_t element_size) {
  return std::max<hsize_t>(1, (64 * 1024) / (std::max<hsize_t>(row_elements, 1) * element_size));
}

// A fixed-size dataset written at once: chunked (whole rows, about 64 KiB per chunk), shuffled and
// deflated; a dataset with a zero dimension cannot be chunked and is written contiguous and empty, as is
// one written with compress = false (a sweep part's one-row /summary, rewritten compressed by the merge).
void write_dataset(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& dims,
                   const void* data, bool compress) {
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset property list");
  check(H5Pset_obj_track_times(dcpl.get(), 0), "cannot set dataset properties");
  const bool empty = std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; });
  if (!empty && compress) {
    hsize_t row = 1;
    for (size_t i = 1; i < dims.size(); ++i) row *= dims[i];
    std::vector<hsize_t> chunk(dims);
    chunk[0] = std::min(chunk_rows(row, H5Tget_size(type)), dims[0]);
    check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), "cannot chunk '" + name + "'");
    check(H5Pset_shuffle(dcpl.get()), "cannot set shuffle on '" + name + "'");
    check(H5Pset_deflate(dcpl.get(), kDeflateLevel), "cannot set deflate on '" + name + "'");
  }
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, "dataspace");
  Handle ds(H5Dcreate2(parent, name.c_str(), type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose,
            "dataset '" + name + "'");
  if (!empty) {
    // Variable-length strings go through HDF5's type-conversion buffer, which by default is 1 MiB, calloc'ed
    // on every write: measured, the summary's few string columns then cost more than a short run itself
    // (a sweep writes one summary per part file). A buffer sized to the data gives the same bytes on disk.
    hsize_t elements = 1;
    for (hsize_t d : dims) elements *= d;
    const size_t buffer = std::clamp<size_t>(static_cast<size_t>(elements) * 64, 4096, 1 << 20);
    Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "dataset transfer property list");
    check(H5Pset_buffer(dxpl.get(), buffer, nullptr, nullptr), "cannot size the conversion buffer of '" + name + "'");
    check(H5Dwrite(ds.get(), type, H5S_ALL, H5S_ALL, dxpl.get(), data), "cannot write dataset '" + name + "'");
    dxpl.close();
  }
  ds.close();  // flushes the chunks: a failed write surfaces here
  space.close();
  dcpl.close();
}

// A `description` attribute on an existing dataset (what a column means and its unit).
void describe_dataset(hid_t parent, const std::string& name, const std::string& text) {
  Handle ds(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "dataset '" + name + "'");
  set_attr(ds.get(), "description", text);
  ds.close();
}

void write_doubles(hid_t parent, const std::string& name, const std::vector<double>& data, bool compress) {
  write_dataset(parent, name, H5T_NATIVE_DOUBLE, {data.size()}, data.data(), compress);
}
void write_longs(hid_t parent, const std::string& name, const std::vector<long>& values, bool compress) {
  const std::vector<int64_t> data(values.begin(), values.end());
  write_dataset(parent, name, H5T_NATIVE_INT64, {data.size()}, data.data(), compress);
}
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values,
                   bool compress) {
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  Handle type = string_type();
  write_dataset(parent, name, type.get(), {values.size()}, ptrs.data(), compress);
  type.close();
}

namespace {

// A buffer of elements of `type` read from HDF5; frees what HDF5 allocated for variable-length members
// (strings) when it goes, on error paths too (the buffer starts zeroed, so unread members are null).
class ReadBuffer {
 public:
  ReadBuffer(hid_t type, size_t elements)
      : type_(type),
        bytes_(elements * H5Tget_size(type), 0),
        variable_(H5Tdetect_class(type, H5T_VLEN) > 0 ||
                  (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0)),
        elements_(elements) {}
  ~ReadBuffer() { release(); }
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;
  void* data() { return bytes_.data(); }
  void release() {
    if (!variable_ || elements_ == 0) return;
    const hsize_t n = elements_;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    if (space >= 0) {
      H5Dvlen_reclaim(type_, space, H5P_DEFAULT, bytes_.data());
      H5Sclose(space);
    }
    std::fill(bytes_.begin(), bytes_.end(), 0);
  }

 private:
  hid_t type_;
  std::vector<unsigned char> bytes_;
  bool variable_;
  size_t elements_;
};

void copy_attributes(hid_t src, hid_t dst) {
  std::vector<std::string> names;
  check(H5Aiterate2(
            src, H5_INDEX_NAME, H5_ITER_INC, nullptr,
            [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
              static_cast<std::vector<std::string>*>(data)->push_back(name);
              return 0;
            },
            &names),
        "cannot list attributes");
  for (const auto& name : names) {
    Handle in(H5Aopen(src, name.c_str(), H5P_DEFAULT), H5Aclose, "attribute '" + name + "'");
    Handle type(H5Aget_type(in.get()), H5Tclose, "type of attribute '" + name + "'");
    Handle space(H5Aget_space(in.get()), H5Sclose, "dataspace of attribute '" + name + "'");
    const hssize_t points =
        H5Sget_simple_extent_type(space.get()) == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(space.get());
    if (points < 0) fail("cannot size attribute '" + name + "'");
    Handle out(H5Acreate2(dst, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
               "attribute '" + name + "'");
    if (points > 0) {
      // Read and written in the file's own type: no conversion (variable-length strings as char*).
      ReadBuffer buffer(type.get(), static_cast<size_t>(points));
      check(H5Aread(in.get(), type.get(), buffer.data()), "cannot read attribute '" + name + "'");
      check(H5Awrite(out.get(), type.get(), buffer.data()), "cannot write attribute '" + name + "'");
    }
    out.close();
    space.close();
    type.close();
    in.close();
  }
}

// The stored chunks of `in` into `out` (created with the same type, shape and filters) as they are on
// disk: no decompression and recompression, one chunk in memory at a time (H5Ocopy's speed: re-deflating a
// run of 1e6 samples took 4 s, this 0.1 s). Only for fixed-size types: a chunk of variable-length strings
// holds references into its own file's heap. Unallocated chunks (fill values) stay unallocated; the
// count of chunks copied is checked against the source's, so none is skipped silently.
void copy_raw_chunks(hid_t in, hid_t out, hid_t dcpl, const std::vector<hsize_t>& dims, const std::string& name) {
  const int rank = static_cast<int>(dims.size());
  std::vector<hsize_t> chunk(dims.size()), offset(dims.size(), 0);
  if (H5Pget_chunk(dcpl, rank, chunk.data()) < 0) fail("cannot read the chunks of '" + name + "'");
  hsize_t expected = 0, copied = 0;
  Handle space(H5Dget_space(in), H5Sclose, "dataspace of '" + name + "'");
  check(H5Dget_num_chunks(in, space.get(), &expected), "cannot count the chunks of '" + name + "'");
  space.close();
  std::vector<unsigned char> buffer;
  if (rank == 0 || std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; })) return;
  for (;;) {
    hsize_t bytes = 0;
    if (H5Dget_chunk_storage_size(in, offset.data(), &bytes) >= 0 && bytes > 0) {
      buffer.resize(static_cast<size_t>(bytes));
      uint32_t filters = 0;
      check(H5Dread_chunk(in, H5P_DEFAULT, offset.data(), &filters, buffer.data()), "cannot read a chunk of '" + name + "'");
      check(H5Dwrite_chunk(out, H5P_DEFAULT, filters, offset.data(), buffer.size(), buffer.data()),
            "cannot write '" + name + "'");
      ++copied;
    } else {
      H5Eclear2(H5E_DEFAULT);  // an unallocated chunk
    }
    // The next chunk offset, last dimension fastest.
    int d = rank - 1;
    for (; d >= 0; --d) {
      offset[d] += chunk[d];
      if (offset[d] < dims[d]) break;
      offset[d] = 0;
    }
    if (d < 0) break;
  }
  if (copied != expected)
    fail("copied " + std::to_string(copied) + " of the " + std::to_string(expected) + " chunks of '" + name + "'");
}

// `in`: the open source dataset.
void copy_dataset(hid_t in, const std::string& name, hid_t dst_parent) {
  Handle type(H5Dget_type(in), H5Tclose, "type of '" + name + "'");
  Handle space(H5Dget_space(in), H5Sclose, "dataspace of '" + name + "'");
  Handle dcpl(H5Dget_create_plist(in), H5Pclose, "creation properties of '" + name + "'");
  Handle memory(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose, "memory type of '" + name + "'");
  // Whole chunks are written at once: HDF5's chunk cache would only hold copies (as in AppendableDataset).
  Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, "dataset access property list");
  check(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), "cannot set the chunk cache of '" + name + "'");
  Handle out(H5Dcreate2(dst_parent, name.c_str(), type.get(), space.get(), H5P_DEFAULT, dcpl.get(), dapl.get()),
             H5Dclose, "dataset '" + name + "'");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("cannot read the shape of '" + name + "'");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "cannot read the shape of '" + name + "'");
  const hssize_t points =
      H5Sget_simple_extent_type(space.get()) == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(space.get());
  if (points < 0) fail("cannot size '" + name + "'");
  const size_t element = H5Tget_size(memory.get());
  const bool chunked = H5Pget_layout(dcpl.get()) == H5D_CHUNKED;
  const bool fixed_size = H5Tdetect_class(type.get(), H5T_VLEN) <= 0 &&
                          !(H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) > 0);
  if (points > 0 && chunked && fixed_size) {
    copy_raw_chunks(in, out.get(), dcpl.get(), dims, name);
  } else if (points > 0 && rank == 0) {
    ReadBuffer buffer(memory.get(), 1);
    check(H5Dread(in, memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), "cannot read '" + name + "'");
    check(H5Dwrite(out.get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), "cannot write '" + name + "'");
  } else if (points > 0) {
    // Blocks of whole rows, whole chunks where the dataset is chunked, about 4 MiB each.
    hsize_t row = 1;
    for (size_t d = 1; d < dims.size(); ++d) row *= dims[d];
    hsize_t step = 1;
    if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
      std::vector<hsize_t> chunk(dims.size());
      if (H5Pget_chunk(dcpl.get(), rank, chunk.data()) < 0) fail("cannot read the chunks of '" + name + "'");
      step = std::max<hsize_t>(chunk[0], 1);
    }
    const hsize_t block_bytes = 4u << 20, row_bytes = std::max<hsize_t>(row * element, 1);
    const hsize_t rows = std::min(dims[0], std::max<hsize_t>(step, block_bytes / row_bytes / step * step));
    for (hsize_t start = 0; start < dims[0]; start += rows) {
      std::vector<hsize_t> offset(dims.size(), 0), count(dims);
      offset[0] = start;
      count[0] = std::min(rows, dims[0] - start);
      Handle file_space(H5Scopy(space.get()), H5Sclose, "dataspace");
      check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, offset.data(), nullptr, count.data(), nullptr),
            "cannot select rows of '" + name + "'");
      Handle memory_space(H5Screate_simple(rank, count.data(), nullptr), H5Sclose, "dataspace");
      hsize_t elements = 1;
      for (hsize_t c : count) elements *= c;
      ReadBuffer buffer(memory.get(), static_cast<size_t>(elements));
      // HDF5's type-conversion buffer is 1 MiB, calloc'ed per call, by default: sized to the block instead
      // (as in write_dataset; measured, it was most of the cost of merging short runs).
      Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "dataset transfer property list");
      const size_t conversion = std::clamp<size_t>(static_cast<size_t>(elements) * 64, 4096, 1 << 20);
      check(H5Pset_buffer(dxpl.get(), conversion, nullptr, nullptr), "cannot size the conversion buffer of '" + name + "'");
      check(H5Dread(in, memory.get(), memory_space.get(), file_space.get(), dxpl.get(), buffer.data()),
            "cannot read '" + name + "'");
      check(H5Dwrite(out.get(), memory.get(), memory_space.get(), file_space.get(), dxpl.get(), buffer.data()),
            "cannot write '" + name + "'");
      buffer.release();
      dxpl.close();
      memory_space.close();
      file_space.close();
    }
  }
  copy_attributes(in, out.get());
  out.close();  // flushes the chunks: a failed write surfaces here
  dapl.close();
  memory.close();
  dcpl.close();
  space.close();
  type.close();
}

}  // namespace

void copy_object(hid_t src_parent, const std::string& name, hid_t dst_parent) {
  Handle in(H5Oopen(src_parent, name.c_str(), H5P_DEFAULT), H5Oclose, "object '" + name + "'");
  const H5I_type_t kind = H5Iget_type(in.get());
  if (kind == H5I_DATASET) {
    copy_dataset(in.get(), name, dst_parent);
    in.close();
    return;
  }
  if (kind != H5I_GROUP) fail("cannot copy '" + name + "': neither a group nor a dataset");
  // The source's creation properties (a run group's links in its header, run_group_properties), its header
  // made as large as the source's in one block, and its members made in the order the source lists them
  // (by creation order where it keeps one), so that the copy lists them as the source does.
  Handle gcpl(H5Gget_create_plist(in.get()), H5Pclose, "group creation properties of '" + name + "'");
  check(H5Pset_obj_track_times(gcpl.get(), 0), "cannot set group properties");
  unsigned order = 0;
  check(H5Pget_link_creation_order(gcpl.get(), &order), "cannot read group properties");
  const int filters = H5Pget_nfilters(gcpl.get());
  if (filters < 0) fail("cannot read group properties");
  if (filters > 0 || (order & H5P_CRT_ORDER_TRACKED))  // a new-style group: its header can be sized
    size_group_header(gcpl.get(), group_header_bytes(in.get()));
  Handle out(H5Gcreate2(dst_parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose,
             "group '" + name + "'");
  gcpl.close();
  copy_attributes(in.get(), out.get());
  std::vector<std::string> members;
  check(H5Literate(
            in.get(), (order & H5P_CRT_ORDER_INDEXED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, nullptr,
            [](hid_t, const char* member, const H5L_info_t*, void* data) -> herr_t {
              static_cast<std::vector<std::string>*>(data)->push_back(member);
              return 0;
            },
            &members),
        "cannot list group '" + name + "'");
  for (const auto& member : members) copy_object(in.get(), member, out.get());
  out.close();
  in.close();
}

}  // namespace clm::hdf5
