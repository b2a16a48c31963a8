// The results file through the HDF5 C API: every call's return value is checked, and every object is
// closed explicitly, in order, with its error checked, before the file is closed. (The C++ API closes
// objects in destructors that swallow errors: a failed chunk flush then went unnoticed and a file with
// zeros in place of data was renamed into place.)
#include "experiments/hdf5_writer.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <type_traits>
#include <variant>

#include "core/version.hpp"
#include "experiments/run_options.hpp"

namespace clm {

namespace {

namespace fs = std::filesystem;

// An HDF5 call failed; the writer turns it into one OutputError line naming the output file.
struct H5Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

[[noreturn]] void fail(const std::string& what) {
  const std::string detail = hdf5_error_detail();
  throw H5Failure(detail.empty() ? what : what + " (" + detail + ")");
}

void check(herr_t status, const std::string& what) {
  if (status < 0) fail(what);
}

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

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), "cannot set the string type's size");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), "cannot set the string type's character set");
  return t;
}

// Groups and datasets are created without modification times, so two identical runs give identical
// object headers (reproducibility; created_utc and wall_time_s are the only intended differences).
Handle make_group(hid_t parent, const std::string& name) {
  Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "group property list");
  check(H5Pset_obj_track_times(gcpl.get(), 0), "cannot set group properties");
  Handle g(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose, "group '" + name + "'");
  gcpl.close();
  return g;
}

void write_attribute(hid_t obj, const std::string& name, hid_t type, hid_t space, const void* data) {
  Handle a(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, "attribute '" + name + "'");
  if (data) check(H5Awrite(a.get(), type, data), "cannot write attribute '" + name + "'");
  a.close();
}

void set_attr(hid_t obj, const std::string& name, const std::string& value) {
  Handle type = string_type();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  const char* p = value.c_str();
  write_attribute(obj, name, type.get(), space.get(), &p);
  space.close();
  type.close();
}
void set_attr(hid_t obj, const std::string& name, double value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  write_attribute(obj, name, H5T_NATIVE_DOUBLE, space.get(), &value);
  space.close();
}
void set_attr(hid_t obj, const std::string& name, long value) {
  const int64_t v = value;
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "dataspace");
  write_attribute(obj, name, H5T_NATIVE_INT64, space.get(), &v);
  space.close();
}
void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  Handle type = string_type();
  const hsize_t dims[1] = {values.size()};
  Handle space(values.empty() ? H5Screate(H5S_NULL) : H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  write_attribute(obj, name, type.get(), space.get(), values.empty() ? nullptr : ptrs.data());
  space.close();
  type.close();
}
void set_attr(hid_t obj, const std::string& name, const double* values, size_t count) {
  const hsize_t dims[1] = {count};
  Handle space(count ? H5Screate_simple(1, dims, nullptr) : H5Screate(H5S_NULL), H5Sclose, "dataspace");
  write_attribute(obj, name, H5T_NATIVE_DOUBLE, space.get(), count ? values : nullptr);
  space.close();
}

// Rows of a chunk: about 64 KiB of data per chunk (whole rows), at least one row.
hsize_t chunk_rows(hsize_t row_elements, size_t element_size) {
  return std::max<hsize_t>(1, (64 * 1024) / (std::max<hsize_t>(row_elements, 1) * element_size));
}

// A fixed-size dataset written at once: chunked (whole rows, about 64 KiB per chunk), shuffled and
// deflated; a dataset with a zero dimension cannot be chunked and is written contiguous and empty, as is
// one written with compress = false (a sweep part's one-row /summary, rewritten compressed by the merge).
void write_dataset(hid_t parent, const std::string& name, hid_t type, const std::vector<hsize_t>& dims,
                   const void* data, bool compress = true) {
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
    check(H5Pset_deflate(dcpl.get(), 6), "cannot set deflate on '" + name + "'");
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

void write_doubles(hid_t parent, const std::string& name, const std::vector<double>& data, bool compress = true) {
  write_dataset(parent, name, H5T_NATIVE_DOUBLE, {data.size()}, data.data(), compress);
}
void write_longs(hid_t parent, const std::string& name, const std::vector<long>& values, bool compress = true) {
  const std::vector<int64_t> data(values.begin(), values.end());
  write_dataset(parent, name, H5T_NATIVE_INT64, {data.size()}, data.data(), compress);
}
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values,
                   bool compress = true) {
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  Handle type = string_type();
  write_dataset(parent, name, type.get(), {values.size()}, ptrs.data(), compress);
  type.close();
}

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

  // Writes the buffered rows (HDF5: under the lock).
  void flush() {
    if (buffered_ == 0) return;
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
    check(H5Pset_deflate(dcpl.get(), 6), "cannot set deflate on '" + name_ + "'");
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
  hsize_t block_rows_ = 1, rows_ = 0, buffered_ = 0;
  std::vector<double> buffer_;
  Handle ds_;
};

// The temporary files are removed when the process is interrupted (signal handlers may only use
// async-signal-safe calls, hence fixed buffers and unlink). One slot per writer open at once: a sweep's
// workers each write their own part file. A slot is published by its first byte, written last.
constexpr int kCleanupSlots = 256;
char g_temp_paths[kCleanupSlots][4096] = {};
std::mutex g_cleanup_mutex;
int g_cleanup_open = 0;

extern "C" void remove_temp_and_exit(int sig) {
  for (auto& path : g_temp_paths)
    if (path[0]) unlink(path);
  _exit(128 + sig);
}

// Returns the slot (-1 when all are taken: that file is then left behind by a signal, as after kill -9,
// and removed by the next writer of the same output).
int install_cleanup(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_cleanup_mutex);
  for (int i = 0; i < kCleanupSlots; ++i) {
    if (g_temp_paths[i][0]) continue;
    std::snprintf(g_temp_paths[i] + 1, sizeof g_temp_paths[i] - 1, "%s", path.c_str() + (path.empty() ? 0 : 1));
    std::atomic_signal_fence(std::memory_order_release);  // the rest of the path before its first byte
    g_temp_paths[i][0] = path.empty() ? 0 : path[0];
    if (g_cleanup_open++ == 0)
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_exit);
    return i;
  }
  return -1;
}

void remove_cleanup(int& slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_cleanup_mutex);
  g_temp_paths[slot][0] = 0;
  slot = -1;
  if (--g_cleanup_open == 0)
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
}

// Removes "<name>.tmp-<pid>" files beside `out` whose process no longer exists (a kill -9 leaves them).
void remove_stale_temporaries(const fs::path& out) {
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string prefix = out.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    if (entry.is_regular_file(rm) && fs::remove(entry.path(), rm))
      std::cerr << "clmbench: note: removed stale temporary file '" << entry.path().string() << "' (process " << pid
                << " no longer exists)\n";
  }
}

void fsync_path(const std::string& path, int flags, const std::string& what) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw H5Failure("cannot open " + what + " to sync it: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw H5Failure("cannot sync " + what + ": " + std::strerror(err));
}

}  // namespace

// Appends `rows` to `table` column by column; the columns (names, order, kinds) must be the same.
static void append_rows(SummaryTable& table, const SummaryTable& rows) {
  bool same = table.size() == rows.size();
  for (size_t i = 0; same && i < table.size(); ++i)
    same = table[i].name == rows[i].name && table[i].values.index() == rows[i].values.index();
  if (!same) {
    std::string a, b;
    for (const auto& c : table) a += (a.empty() ? "" : ",") + c.name;
    for (const auto& c : rows) b += (b.empty() ? "" : ",") + c.name;
    throw H5Failure("summary rows with different columns (" + a + " and " + b + ")");
  }
  for (size_t i = 0; i < table.size(); ++i)
    std::visit(
        [&](auto& into) {
          const auto& from = std::get<std::decay_t<decltype(into)>>(rows[i].values);
          into.insert(into.end(), from.begin(), from.end());
        },
        table[i].values);
}

// The open file, its /runs group and the run being streamed.
struct ResultsWriter::State : RunObserver {
  Handle file, runs;
  bool broken = false;  // an error happened: nothing more is written
  struct SummaryRow {
    std::string run_id, problem, formulation, integrator, status, reference;
    double dt, N, t_end;
    RunSummary s;
    long samples, steps, rhs_evals;
    double wall_time_s;
    double rtol, atol, cpu_time_s;
  };
  std::vector<SummaryRow> rows;
  SummaryTable imported;  // rows of copied runs (append_summary)

  // The run in progress.
  Handle group, extras_group;
  std::vector<std::unique_ptr<AppendableDataset>> datasets;  // t, q, qd, lambda, energy, [drift_position], drift_velocity
  std::vector<std::unique_ptr<AppendableDataset>> extras;
  // work_moving_constraints, work_explicit_time, work_generalized_forces, energy_balance_residual (time-dependent
  // problems only, RunRecord::energy_balance).
  std::vector<std::unique_ptr<AppendableDataset>> balance;
  bool holonomic = false;
  bool actuated = false;  // actuator_force and actuator_power follow drift_velocity in `datasets`
  ResultsWriter* writer = nullptr;

  void begin(const RunRecord& header) override;
  void sample(double t, const Observation& obs) override;
  void finish(const RunRecord& record) override;

  void open_run(const RunRecord& header);
  void close_run(const RunRecord& record);
};

// /summary of the runs written here, one column per figure (a new column is one line here; merge copies
// columns generically).
static SummaryTable summary_table(const std::vector<ResultsWriter::State::SummaryRow>& rows) {
  using Row = ResultsWriter::State::SummaryRow;
  SummaryTable t;
  auto column = [&](const char* name, auto field) {
    std::vector<std::decay_t<decltype(field(std::declval<const Row&>()))>> out;
    for (const auto& row : rows) out.push_back(field(row));
    t.push_back({name, std::move(out)});
  };
  column("run_id", [](const Row& r) { return r.run_id; });
  column("problem", [](const Row& r) { return r.problem; });
  column("formulation", [](const Row& r) { return r.formulation; });
  column("integrator", [](const Row& r) { return r.integrator; });
  column("status", [](const Row& r) { return r.status; });
  column("dt", [](const Row& r) { return r.dt; });
  column("N", [](const Row& r) { return r.N; });
  column("t_end", [](const Row& r) { return r.t_end; });
  column("samples", [](const Row& r) { return r.samples; });
  column("steps", [](const Row& r) { return r.steps; });
  column("rhs_evals", [](const Row& r) { return r.rhs_evals; });
  column("final_drift_position", [](const Row& r) { return r.s.final_drift_position; });
  column("max_drift_position", [](const Row& r) { return r.s.max_drift_position; });
  column("final_drift_velocity", [](const Row& r) { return r.s.final_drift_velocity; });
  column("max_drift_velocity", [](const Row& r) { return r.s.max_drift_velocity; });
  column("max_rel_energy_error", [](const Row& r) { return r.s.max_rel_energy_error; });
  column("q_error_vs_reference", [](const Row& r) { return r.s.q_error_vs_reference; });
  column("lambda_consistency", [](const Row& r) { return r.s.lambda_consistency; });
  column("error_vs_reference", [](const Row& r) { return r.s.error_vs_reference; });
  column("reference", [](const Row& r) { return r.s.reference; });
  column("wall_time_s", [](const Row& r) { return r.wall_time_s; });
  // Work-precision columns (issue 10 item 6): tolerances, cost, and errors against the reference.
  column("rtol", [](const Row& r) { return r.rtol; });
  column("atol", [](const Row& r) { return r.atol; });
  column("cpu_time_s", [](const Row& r) { return r.cpu_time_s; });
  column("reference_source", [](const Row& r) { return r.s.reference_source; });
  column("q_error_max", [](const Row& r) { return r.s.q_error_max; });
  column("q_error_final", [](const Row& r) { return r.s.q_error_final; });
  column("qd_error_max", [](const Row& r) { return r.s.qd_error_max; });
  column("qd_error_final", [](const Row& r) { return r.s.qd_error_final; });
  column("lambda_error_max", [](const Row& r) { return r.s.lambda_error_max; });
  column("lambda_error_final", [](const Row& r) { return r.s.lambda_error_final; });
  column("scd", [](const Row& r) { return r.s.scd; });
  column("mescd", [](const Row& r) { return r.s.mescd; });
  column("energy_error_growth", [](const Row& r) { return r.s.energy_error_growth; });
  column("drift_growth", [](const Row& r) { return r.s.drift_growth; });
  column("reference_point_error_max", [](const Row& r) { return r.s.reference_point_error_max; });
  column("max_energy_balance_residual", [](const Row& r) { return r.s.max_energy_balance_residual; });
  return t;
}

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex m;
  return m;
}

template <class F>
void ResultsWriter::guarded(const std::string& what, F&& body, bool lock_hdf5) {
  std::unique_lock<std::recursive_mutex> lock(hdf5_mutex(), std::defer_lock);
  if (lock_hdf5) lock.lock();
  if (!state_ || state_->broken) throw OutputError("results file '" + out_path_ + "' is already closed");
  try {
    body();
  } catch (const H5Failure& e) {
    state_->broken = true;
    throw OutputError("cannot write output file '" + out_path_ + "': " + what + ": " + e.what());
  }
}

void ResultsWriter::State::begin(const RunRecord& header) {
  writer->guarded("run '" + header.spec.run_id + "'", [&] { open_run(header); });
}

void ResultsWriter::State::sample(double t, const Observation& obs) {
  // Buffering a sample is no HDF5 call: the lock is taken only when a chunk is full (for a short run,
  // never before finish()), so a sweep's workers do not wait on each other's writing for every sample.
  if (broken) throw OutputError("results file '" + writer->out_path() + "' is already closed");
  bool full = datasets[0]->push(&t);
  full = datasets[1]->push(obs.q.data()) || full;
  full = datasets[2]->push(obs.qd.data()) || full;
  full = datasets[3]->push(obs.lambda.data()) || full;
  full = datasets[4]->push(&obs.energy) || full;
  size_t next = 5;
  if (holonomic) full = datasets[next++]->push(&obs.drift_position) || full;
  full = datasets[next++]->push(&obs.drift_velocity) || full;
  if (actuated) {
    full = datasets[next++]->push(obs.actuator_force.data()) || full;
    full = datasets[next++]->push(&obs.actuator_power) || full;
  }
  for (size_t j = 0; j < extras.size(); ++j) full = extras[j]->push(&obs.extras[j]) || full;
  if (!balance.empty()) {
    full = balance[0]->push(&obs.work_constraints) || full;
    full = balance[1]->push(&obs.work_explicit_time) || full;
    full = balance[2]->push(&obs.work_forces) || full;
    full = balance[3]->push(&obs.energy_balance_residual) || full;
  }
  if (full) {
    writer->guarded("run samples", [&] {
      for (auto& d : datasets)
        if (d->full()) d->flush();
      for (auto& d : extras)
        if (d->full()) d->flush();
      for (auto& d : balance)
        if (d->full()) d->flush();
    });
  }
}

void ResultsWriter::State::finish(const RunRecord& record) {
  writer->guarded("run '" + record.spec.run_id + "'", [&] { close_run(record); });
}

void ResultsWriter::State::open_run(const RunRecord& r) {
  group = make_group(runs.get(), r.spec.run_id);
  holonomic = r.holonomic;
  const hid_t g = group.get();
  const hsize_t n = static_cast<hsize_t>(r.n), m = static_cast<hsize_t>(r.m);
  const hsize_t max_rows = static_cast<hsize_t>(std::min(sample_bound(r.spec), 1e15));
  datasets.clear();
  // Units and column names travel with the data (a reader needs no table of the problem's coordinates).
  std::vector<std::string> qd_units, lambda_names;
  for (const auto& u : r.coordinate_units) qd_units.push_back(u == "-" ? "1/s" : u + "/s");
  for (int i = 1; i <= r.m; ++i) lambda_names.push_back("lambda" + std::to_string(i));
  auto add = [&](const char* name, hsize_t cols, bool matrix,
                 std::vector<std::pair<std::string, std::vector<std::string>>> labels) {
    datasets.push_back(std::make_unique<AppendableDataset>(g, name, cols, matrix, max_rows));
    datasets.back()->labels = std::move(labels);
  };
  add("t", 0, false, {{"units", {"s"}}});
  add("q", n, true, {{"columns", r.coordinate_names}, {"units", r.coordinate_units}});
  add("qd", n, true, {{"columns", r.coordinate_names}, {"units", qd_units}});
  // Multipliers are generalized forces per unit of constraint (A^T lambda enters M qdd + c = F + A^T lambda).
  add("lambda", m, true, {{"columns", lambda_names}});
  add("energy", 0, false, {{"units", {"J"}}});
  if (holonomic) add("drift_position", 0, false, {{"description", {"|h(q)|, in the constraint's units"}}});
  add("drift_velocity", 0, false, {{"description", {"|A(q) qd|, in the constraint's units per second"}}});
  balance.clear();
  if (r.energy_balance) {
    // The energy balance of a time-dependent problem (core/energy_balance.hpp); E - E0 - W is zero for the exact
    // motion of the formulation's equations.
    for (const auto& [name, description] : std::vector<std::pair<const char*, const char*>>{
             {"work_moving_constraints", "work since t0 of the constraint forces A^T lambda, integral of lambda . (A qd) "
                                         "(= -lambda . b on the constraint)"},
             {"work_explicit_time", "work since t0 of the explicit time dependence of V(q, t), integral of dV/dt at fixed q"},
             {"work_generalized_forces", "work since t0 of the generalized forces, integral of qd . F"},
             {"energy_balance_residual", "E - E0 - (sum of the three works): zero for the exact motion"}}) {
      balance.push_back(std::make_unique<AppendableDataset>(g, name, 0, false, max_rows));
      balance.back()->labels = {{"units", {"J"}}, {"description", {description}}};
    }
  }
  // Prescribed shape (prescribed_shape): the actuators' generalized forces and the power they spend.
  actuated = !r.actuator_names.empty();
  if (actuated) {
    add("actuator_force", static_cast<hsize_t>(r.actuator_names.size()), true,
        {{"columns", r.actuator_names},
         {"description", {"generalized force F_a on each actuated coordinate (N for a length, N m for an angle)"}}});
    add("actuator_power", 0, false, {{"units", {"W"}}, {"description", {"F_a . qd_a, the power the actuators spend"}}});
  }
  extras_group = make_group(g, "extras");
  extras.clear();
  for (const auto& name : r.extra_names)
    extras.push_back(std::make_unique<AppendableDataset>(extras_group.get(), name, 0, false, max_rows));
}

void ResultsWriter::State::close_run(const RunRecord& r) {
  const hid_t g = group.get();
  const RunSpec& s = r.spec;
  // Every option of the table under its attribute name; the [initial] rows record the consistent data
  // the run started from (the given data projected, or the problem's defaults).
  for (const auto& o : run_options()) {
    if (o.attribute.empty()) continue;
    if (o.section == "initial") {
      const Vec& v = o.key == "q0" ? r.q0 : r.qd0;
      set_attr(g, o.attribute, v.data(), static_cast<size_t>(v.size()));
      continue;
    }
    const auto value = o.attribute_value(s);
    if (!value) continue;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::vector<double>>) {
            set_attr(g, o.attribute, v.data(), v.size());
          } else {
            set_attr(g, o.attribute, v);
          }
        },
        *value);
  }
  set_attr(g, "status", r.status);
  set_attr(g, "message", r.message);
  for (const auto& [name, value] : r.parameters) set_attr(g, "param." + name, value);
  // The resolved [shape]: the prescribed function of each actuated coordinate, as written (core/shape_schedule.hpp).
  for (const auto& [name, text] : r.spec.shape) set_attr(g, "shape." + name, text);
  set_attr(g, "initial_source", r.initial_source);
  {
    std::string warnings;
    for (const auto& w : r.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    set_attr(g, "warnings", warnings);
  }
  set_attr(g, "initial_projection_dq", r.projection.position_distance);
  set_attr(g, "initial_projection_dqd", r.projection.velocity_distance);
  // n_coordinates / n_constraints, not n / m: "m" is also a common parameter (a mass), param.m.
  set_attr(g, "n_coordinates", static_cast<long>(r.n));
  set_attr(g, "n_constraints", static_cast<long>(r.m));
  // Rank of A(q0) (numerical_rank): below n_constraints when the constraints are redundant (kkt, schur and
  // nullspace then work on the rank-r row space, docs/design.md section 1).
  set_attr(g, "constraint_rank", static_cast<long>(r.constraint_rank));
  set_attr(g, "holonomic", static_cast<long>(r.holonomic));
  set_attr(g, "steps", r.stats.steps);
  set_attr(g, "rejected_steps", r.stats.rejected_steps);
  set_attr(g, "rhs_evals", r.stats.rhs_evals);
  set_attr(g, "jacobian_evals", r.stats.jacobian_evals);
  set_attr(g, "newton_iterations", r.stats.newton_iterations);
  set_attr(g, "stiffness_detected_at", r.stats.stiffness_detected_at);
  // Coordinate projection ([formulation] projection): steps projected, Gauss-Newton iterations, and the
  // largest corrections |dq|_inf, |dqd|_inf (all 0 without projection).
  set_attr(g, "projection_steps", r.projection_stats.projections);
  set_attr(g, "projection_iterations", r.projection_stats.iterations);
  set_attr(g, "projection_max_position_correction", r.projection_stats.max_position_correction);
  set_attr(g, "projection_max_velocity_correction", r.projection_stats.max_velocity_correction);
  set_attr(g, "t_reached", r.t_reached);
  set_attr(g, "wall_time_s", r.wall_time_s);
  set_attr(g, "cpu_time_s", r.cpu_time_s);
  set_attr(g, "output_cpu_time_s", r.output_cpu_time_s);
  // Errors against the reference (issue 10 item 6; units: those of q, qd, lambda; scd, mescd in digits).
  set_attr(g, "reference_source", r.summary.reference_source);
  set_attr(g, "reference_message", r.reference_message);
  set_attr(g, "reference_cpu_time_s", r.reference_cpu_time_s);
  set_attr(g, "q_error_max", r.summary.q_error_max);
  set_attr(g, "q_error_final", r.summary.q_error_final);
  set_attr(g, "qd_error_max", r.summary.qd_error_max);
  set_attr(g, "qd_error_final", r.summary.qd_error_final);
  set_attr(g, "lambda_error_max", r.summary.lambda_error_max);
  set_attr(g, "lambda_error_final", r.summary.lambda_error_final);
  set_attr(g, "scd", r.summary.scd);
  set_attr(g, "mescd", r.summary.mescd);
  set_attr(g, "energy_error_growth", r.summary.energy_error_growth);
  set_attr(g, "drift_growth", r.summary.drift_growth);
  set_attr(g, "reference_point_error_max", r.summary.reference_point_error_max);
  set_attr(g, "max_energy_balance_residual", r.summary.max_energy_balance_residual);
  if (s.sweep_index >= 0) {
    set_attr(g, "sweep_index", s.sweep_index);
    set_attr(g, "sweep_point", s.sweep_point);
  }
  for (auto& d : datasets) d->close();
  for (auto& d : extras) d->close();
  for (auto& d : balance) d->close();
  datasets.clear();
  extras.clear();
  balance.clear();
  extras_group.close();
  group.close();
  rows.push_back({s.run_id, s.problem, s.formulation, s.integrator, r.status, r.summary.reference, s.dt, s.options.N,
                  s.t_end, r.summary, static_cast<long>(r.samples()), r.stats.steps, r.stats.rhs_evals,
                  r.wall_time_s, s.rtol, s.atol, r.cpu_time_s});
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void check_output_path(const std::string& out_path, const std::vector<std::string>& inputs) {
  if (out_path.empty()) throw OutputError("empty output file name (run.out / --out)");
  if (out_path.back() == '/') throw OutputError("output path '" + out_path + "' names a directory, not a file");
  std::error_code ec;
  const fs::path out(out_path);
  const auto status = fs::status(out, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status)) throw OutputError("output path '" + out_path + "' is a directory");
    if (!fs::is_regular_file(status))
      throw OutputError("output path '" + out_path + "' exists and is not a regular file (a device, FIFO or socket)");
    for (const auto& in : inputs) {
      std::error_code e2;
      if (!in.empty() && fs::equivalent(out, fs::path(in), e2))
        throw OutputError("output path '" + out_path + "' is the input file '" + in + "'; choose another --out");
    }
  }
}

ResultsWriter::ResultsWriter(std::string out_path, const std::vector<std::string>& inputs, WriterOptions options)
    : out_path_(std::move(out_path)), options_(options) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported by the writer, in one line
  check_output_path(out_path_, inputs);
  const fs::path out(out_path_);
  std::error_code ec;
  // Create missing parents one by one, remembering them so that a failure leaves no empty directory.
  std::vector<fs::path> missing;
  for (fs::path p = out.parent_path(); !p.empty() && !fs::exists(p, ec); p = p.parent_path()) missing.push_back(p);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (!fs::create_directory(*it, ec) && ec) {
      for (auto d = created_dirs_.rbegin(); d != created_dirs_.rend(); ++d) fs::remove(*d, ec);
      throw OutputError("cannot write output file '" + out_path_ + "': cannot create directory '" + it->string() +
                        "': " + ec.message());
    }
    created_dirs_.push_back(it->string());
  }
  if (options_.remove_stale_temporaries) remove_stale_temporaries(out);
  temp_path_ = out_path_ + ".tmp-" + std::to_string(getpid());
  // Plain open() first: its errno says why a path is unwritable, which HDF5's error stack does not.
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    const std::string why = std::strerror(errno);
    for (auto d = created_dirs_.rbegin(); d != created_dirs_.rend(); ++d) fs::remove(*d, ec);
    throw OutputError("cannot write output file '" + out_path_ + "': " + why);
  }
  ::close(fd);
  cleanup_slot_ = install_cleanup(temp_path_);
  state_ = std::make_unique<State>();
  state_->writer = this;
  try {
    Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "file creation property list");
    check(H5Pset_obj_track_times(fcpl.get(), 0), "cannot set file properties");
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access property list");
    // Closing the file closes whatever is still open, so that a failed run cannot leave objects behind.
    check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "cannot set file properties");
    state_->file = Handle(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
                          "file '" + temp_path_ + "'");
    fapl.close();
    fcpl.close();
    state_->runs = make_group(state_->file.get(), "runs");
  } catch (const H5Failure& e) {
    state_.reset();
    ::unlink(temp_path_.c_str());
    remove_cleanup(cleanup_slot_);
    for (auto d = created_dirs_.rbegin(); d != created_dirs_.rend(); ++d) fs::remove(*d, ec);
    throw OutputError("cannot write output file '" + out_path_ + "': " + e.what());
  }
}

ResultsWriter::~ResultsWriter() {
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    state_.reset();  // closes (silently) whatever is open, the file last
  }
  if (!committed_) {
    ::unlink(temp_path_.c_str());
    std::error_code ec;
    for (auto d = created_dirs_.rbegin(); d != created_dirs_.rend(); ++d) fs::remove(*d, ec);  // only if empty
  }
  remove_cleanup(cleanup_slot_);
}

RunObserver& ResultsWriter::run_observer() {
  if (!state_ || state_->broken) throw OutputError("results file '" + out_path_ + "' is already closed");
  return *state_;
}

void ResultsWriter::write_run(const RunRecord& r) {
  RunObserver& o = run_observer();
  o.begin(r);
  Observation obs;
  const size_t n = static_cast<size_t>(r.n), m = static_cast<size_t>(r.m);
  for (size_t k = 0; k < r.samples(); ++k) {
    obs.q = Eigen::Map<const Vec>(&r.q[k * n], r.n);
    obs.qd = Eigen::Map<const Vec>(&r.qd[k * n], r.n);
    obs.lambda = Eigen::Map<const Vec>(r.lambda.data() + k * m, r.m);
    obs.energy = r.energy[k];
    obs.drift_position = r.holonomic ? r.drift_position[k] : 0.0;
    obs.drift_velocity = r.drift_velocity[k];
    obs.extras.resize(r.extras.size());
    for (size_t j = 0; j < r.extras.size(); ++j) obs.extras[j] = r.extras[j][k];
    if (r.energy_balance) {
      obs.work_constraints = r.work_constraints[k];
      obs.work_explicit_time = r.work_explicit_time[k];
      obs.work_forces = r.work_forces[k];
      obs.energy_balance_residual = r.energy_balance_residual[k];
    }
    const size_t na = r.actuator_names.size();
    if (r.actuator_power.size() == r.samples()) {
      obs.actuator_force = Eigen::Map<const Vec>(r.actuator_force.data() + k * na, static_cast<Eigen::Index>(na));
      obs.actuator_power = r.actuator_power[k];
    } else {
      obs.actuator_force.setConstant(static_cast<Eigen::Index>(na), std::numeric_limits<double>::quiet_NaN());
    }
    o.sample(r.t[k], obs);
  }
  o.finish(r);
}

void ResultsWriter::write_group(const ResultGroup& g) {
  guarded("group '" + g.path + "'", [&] {
    std::string sofar;
    size_t start = 0;
    while (start <= g.path.size()) {
      const size_t slash = std::min(g.path.find('/', start), g.path.size());
      const std::string part = g.path.substr(start, slash - start);
      start = slash + 1;
      if (part.empty()) continue;
      sofar += "/" + part;
      const htri_t exists = H5Lexists(state_->file.get(), sofar.c_str(), H5P_DEFAULT);
      if (exists < 0) fail("cannot look up '" + sofar + "'");
      if (!exists) make_group(state_->file.get(), sofar).close();
    }
    if (sofar.empty()) throw H5Failure("empty group path");
    Handle group(H5Gopen2(state_->file.get(), sofar.c_str(), H5P_DEFAULT), H5Gclose, "group '" + sofar + "'");
    for (const auto& [name, values] : g.numbers) write_doubles(group.get(), name, values);
    for (const auto& [name, values] : g.integers) write_longs(group.get(), name, values);
    for (const auto& [name, values] : g.strings) write_strings(group.get(), name, values);
    for (const auto& mat : g.matrices)
      write_dataset(group.get(), mat.name, H5T_NATIVE_DOUBLE, {mat.rows, mat.cols}, mat.data.data());
    for (const auto& [name, value] : g.number_attributes) set_attr(group.get(), name, value);
    for (const auto& [name, value] : g.text_attributes) set_attr(group.get(), name, value);
    group.close();
  });
}

void ResultsWriter::commit(const Provenance& provenance, const std::vector<std::string>& run_configs) {
  guarded("closing", [&] {
    State& st = *state_;
    Handle summary = make_group(st.file.get(), "summary");
    const hid_t sg = summary.get();
    SummaryTable table = summary_table(st.rows);
    if (st.rows.empty() && !st.imported.empty()) table = st.imported;
    else if (!st.imported.empty()) append_rows(table, st.imported);
    for (const auto& c : table) {
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            const bool compress = options_.compress_summary;
            if constexpr (std::is_same_v<V, std::vector<double>>) write_doubles(sg, c.name, v, compress);
            else if constexpr (std::is_same_v<V, std::vector<long>>) write_longs(sg, c.name, v, compress);
            else write_strings(sg, c.name, v, compress);
          },
          c.values);
    }
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"cpu_time_s", "s: thread CPU time integrating (sample recording excluded: run attribute output_cpu_time_s)"},
             {"reference_source", "closed_form | reference_run | published | none: what the *_error_* columns, scd and mescd compare with"},
             {"q_error_max", "max over samples of the Euclidean norm |q - q_ref| (units of q: m, rad, ...)"},
             {"q_error_final", "|q - q_ref| at t_end (NaN when the run stopped before)"},
             {"qd_error_max", "max over samples of |qd - qd_ref| (units of qd: m/s, rad/s, ...)"},
             {"qd_error_final", "|qd - qd_ref| at t_end"},
             {"lambda_error_max", "max over samples of |lambda - lambda_ref| (units of lambda)"},
             {"lambda_error_final", "|lambda - lambda_ref| at t_end"},
             {"scd", "digits: -log10 max_i |(y_i - r_i) / r_i| at t_end over y = (q, qd), r_i != 0 (Bari test set)"},
             {"mescd", "digits: -log10 max_i |y_i - r_i| / (atol/rtol + |r_i|) at t_end over y = (q, qd)"},
             {"energy_error_growth", "exponent p of max_{s<=t} |E(s) - E0| / |E0| ~ t^p over the last two decades of t "
                                     "(0 bounded, 1/2 random walk, 1 linear drift; NaN for runs under two decades)"},
             {"drift_growth", "exponent p of max_{s<=t} drift(s) ~ t^p (|h| holonomic, |A qd| otherwise), as energy_error_growth"},
             {"reference_point_error_max", "max over samples of the distance of the benchmark's reference point (IFToMM P1, "
                                           "P3, B0: coordinates of q) from the reference's; NaN without one"},
             {"max_energy_balance_residual", "max over samples of |E - E0 - W| / max over samples of max(|E|, |W|), W the "
                                             "work of the moving constraints, dV/dt and the forces; NaN for problems "
                                             "without explicit time dependence"}})
      if (H5Lexists(sg, name.c_str(), H5P_DEFAULT) > 0) describe_dataset(sg, name, text);
    summary.close();

    const hid_t f = st.file.get();
    set_attr(f, "clmbench_version", std::string(kVersion));
    set_attr(f, "git_commit", std::string(kGitCommit));
    set_attr(f, "created_utc", utc_timestamp());
    set_attr(f, "command_line", provenance.command_line);
    set_attr(f, "config", provenance.config_text);
    if (!provenance.sweep_config.empty()) set_attr(f, "sweep_config", provenance.sweep_config);
    if (!run_configs.empty()) set_attr(f, "run_configs", run_configs);
    st.runs.close();
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "cannot flush '" + temp_path_ + "'");
    st.file.close();
  });
  // The file is closed: syncing and renaming it are no HDF5 calls, so other writers are not held up by the
  // disk (an fsync takes milliseconds).
  guarded("closing", [&] {
    fsync_path(temp_path_, O_RDONLY, "'" + temp_path_ + "'");
    // The destination may have changed since the start: never rename over anything but a regular file.
    struct stat dest{};
    if (::lstat(out_path_.c_str(), &dest) == 0 && !S_ISREG(dest.st_mode))
      throw H5Failure("'" + out_path_ + "' is no longer a regular file");
    if (std::rename(temp_path_.c_str(), out_path_.c_str()) != 0)
      throw H5Failure("cannot rename '" + temp_path_ + "' to '" + out_path_ + "': " + std::strerror(errno));
    committed_ = true;
    const fs::path parent = fs::path(out_path_).parent_path();
    if (options_.sync_directory) try {
      fsync_path(parent.empty() ? std::string(".") : parent.string(), O_RDONLY | O_DIRECTORY, "the output directory");
    } catch (const H5Failure& e) {
      std::cerr << "clmbench: warning: " << e.what() << " (the file is complete)\n";
    }
  }, /*lock_hdf5=*/false);
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    state_.reset();
  }
  remove_cleanup(cleanup_slot_);
}

void ResultsWriter::copy_run(hid_t source_runs, const std::string& run_id) {
  guarded("run '" + run_id + "'", [&] {
    Handle ocpypl(H5Pcreate(H5P_OBJECT_COPY), H5Pclose, "object copy property list");
    check(H5Ocopy(source_runs, run_id.c_str(), state_->runs.get(), run_id.c_str(), ocpypl.get(), H5P_DEFAULT),
          "cannot copy run '" + run_id + "'");
    ocpypl.close();
  });
}

void ResultsWriter::append_summary(const SummaryTable& rows) {
  guarded("summary", [&] {
    if (state_->imported.empty()) state_->imported = rows;
    else append_rows(state_->imported, rows);
  });
}

}  // namespace clm
