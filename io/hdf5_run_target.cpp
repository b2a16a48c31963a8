#include "io/hdf5_run_target.hpp"

#include "core/types.hpp"

namespace clm {

using namespace hdf5;

Hdf5RunTarget::~Hdf5RunTarget() {
  if (objects_.empty()) return;
  Hdf5Lock lock;
  objects_.clear();
}

void Hdf5RunTarget::begin_run(const std::string&, long) {
  Hdf5Lock lock;
  objects_.clear();  // closes (silently) what a failed run left open
  run_group_ = 0;
}

void Hdf5RunTarget::end_run() {
  Hdf5Lock lock;
  objects_.clear();
  run_group_ = 0;
  // The run's objects left HDF5's cache when they were closed (evict on close, io/results_file.cpp); what
  // stays dirty is shared (/runs' index and name heap, the heap of the string attributes). Written out here,
  // once a run: HDF5 goes through every dirty entry of its cache at each object's close, which made a run's
  // cost grow with the runs before it (measured: +20 % at 4800 runs).
  check(H5Fflush(file_.runs_group(), H5F_SCOPE_LOCAL), "cannot flush the file");
}

hid_t Hdf5RunTarget::id(Object object) {
  if (object == 0) return file_.runs_group();
  if (object > objects_.size() || !objects_[object - 1]) throw H5Failure("object " + std::to_string(object) + " is not open");
  return objects_[object - 1].get();
}

RunTarget::Object Hdf5RunTarget::add(Handle handle) {
  objects_.push_back(std::move(handle));
  return static_cast<Object>(objects_.size());
}

RunTarget::Object Hdf5RunTarget::group(Object parent, const std::string& name) {
  Handle g(H5Gcreate2(id(parent), name.c_str(), H5P_DEFAULT, run_group_properties(parent == 0 ? run_header_bytes_ : 0),
                      H5P_DEFAULT),
           H5Gclose, "group '" + name + "'");
  const Object made = add(std::move(g));
  if (parent == 0) run_group_ = made;
  return made;
}

RunTarget::Object Hdf5RunTarget::chunked_dataset(Object parent, const std::string& name, hsize_t cols, bool matrix,
                                                 hsize_t block_rows) {
  const int rank = matrix ? 2 : 1;
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "dataset property list");
  check(H5Pset_obj_track_times(dcpl.get(), 0), "cannot set dataset properties");
  const hsize_t chunk[2] = {block_rows, cols};
  check(H5Pset_chunk(dcpl.get(), rank, chunk), "cannot chunk '" + name + "'");
  check(H5Pset_shuffle(dcpl.get()), "cannot set shuffle on '" + name + "'");
  check(H5Pset_deflate(dcpl.get(), kDeflateLevel), "cannot set deflate on '" + name + "'");
  const hsize_t dims[2] = {0, cols}, max_dims[2] = {H5S_UNLIMITED, cols};
  Handle space(H5Screate_simple(rank, dims, max_dims), H5Sclose, "dataspace");
  // Whole chunks are written at once, so HDF5's chunk cache (1 MiB per open dataset by default) would only
  // hold copies: without it the memory of a run is the block buffers alone.
  static const hid_t dapl = [] {  // made once, kept for the process (as hdf5::untimed_group_properties)
    const hid_t p = H5Pcreate(H5P_DATASET_ACCESS);
    if (p < 0 || H5Pset_chunk_cache(p, 0, 0, 1.0) < 0) fail("cannot make dataset access properties");
    return p;
  }();
  Handle ds(H5Dcreate2(id(parent), name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, dcpl.get(), dapl),
            H5Dclose, "dataset '" + name + "'");
  space.close();
  dcpl.close();
  return add(std::move(ds));
}

void Hdf5RunTarget::write_chunk(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool,
                                const unsigned char* packed, size_t bytes) {
  const hid_t ds = id(dataset);
  const hsize_t dims[2] = {rows_before + rows, cols};
  check(H5Dset_extent(ds, dims), "cannot extend a dataset");
  const hsize_t offset[2] = {rows_before, 0};
  check(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset, bytes, packed), "cannot write a chunk of a dataset");
}

void Hdf5RunTarget::write_rows(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                               const double* data) {
  const hid_t ds = id(dataset);
  const int rank = matrix ? 2 : 1;
  const hsize_t dims[2] = {rows_before + rows, cols};
  check(H5Dset_extent(ds, dims), "cannot extend a dataset");
  Handle file_space(H5Dget_space(ds), H5Sclose, "dataspace");
  const hsize_t start[2] = {rows_before, 0}, count[2] = {rows, cols};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "cannot select rows");
  Handle memory_space(H5Screate_simple(rank, count, nullptr), H5Sclose, "dataspace");
  check(H5Dwrite(ds, H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
        "cannot write a dataset");
  memory_space.close();
  file_space.close();
}

RunTarget::Object Hdf5RunTarget::whole_dataset(Object parent, const std::string& name, hsize_t rows, hsize_t cols,
                                               bool matrix, const double* data) {
  const bool empty = rows == 0 || (matrix && cols == 0);
  const hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(matrix ? 2 : 1, dims, nullptr), H5Sclose, "dataspace");
  Handle ds(H5Dcreate2(id(parent), name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT,
                       untimed_dataset_properties(empty ? H5D_CONTIGUOUS : H5D_COMPACT), H5P_DEFAULT),
            H5Dclose, "dataset '" + name + "'");
  if (!empty)
    check(H5Dwrite(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "cannot write dataset '" + name + "'");
  space.close();
  return add(std::move(ds));
}

void Hdf5RunTarget::attribute(Object object, const std::string& name, const AttrValue& value) {
  const hid_t obj = id(object);
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<double>>) set_attr(obj, name, v.data(), v.size());
        else set_attr(obj, name, v);
      },
      value);
}

void Hdf5RunTarget::close(Object object) {
  const hid_t handle = id(object);
  if (object == run_group_) {
    run_header_bytes_ = group_header_bytes(handle);
    run_group_ = 0;
  }
  objects_[object - 1].close();
}

void Hdf5RunTarget::guarded(const std::string& what, const std::function<void()>& body) { file_.guarded(what, body); }

}  // namespace clm
