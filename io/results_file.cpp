// The results file through the HDF5 C API (io/hdf5_support.hpp): every call checked, every object closed
// explicitly before the file is closed, and the file renamed into place only when all of that succeeded.
#include "io/results_file.hpp"

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
#include "io/signal_cleanup.hpp"

namespace clm {

using namespace hdf5;

namespace {

namespace fs = std::filesystem;


// Removes "<name>.tmp-<pid>.<writer>" files (and "<name>.tmp-<pid>" of earlier versions) beside `out` whose process
// no longer exists (a kill -9 leaves them).
void remove_stale_temporaries(const fs::path& out) {
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string prefix = out.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    std::string digits = name.substr(prefix.size());
    if (const auto dot = digits.find('.'); dot != std::string::npos) {  // <pid>.<writer>
      const std::string writer = digits.substr(dot + 1);
      if (writer.empty() || !std::all_of(writer.begin(), writer.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      digits.resize(dot);
    }
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


// Appends `rows` to `table` column by column; the columns (names, order, kinds) must be the same.
void append_rows(SummaryTable& table, const SummaryTable& rows) {
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

}  // namespace

// The open file and its /runs group (made by the first runs_group()).
struct ResultsFile::Handles {
  Handle file, runs;
};

void ResultsFile::require_open() const {
  if (!is_open()) throw OutputError("results file '" + out_path_ + "' is already closed");
}

bool ResultsFile::is_open() const { return handles_ && !broken_; }

hid_t ResultsFile::runs_group() {
  if (!handles_->runs) handles_->runs = make_group(handles_->file.get(), "runs");
  return handles_->runs.get();
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

ResultsFile::ResultsFile(std::string out_path, const std::vector<std::string>& inputs, WriterOptions options)
    : out_path_(std::move(out_path)), options_(options) {
  Hdf5Lock lock;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported by the writer, in one line
  check_output_path(out_path_, inputs);
  // The lock creates OUT's missing parent directories and removes them, when still empty, as it goes
  // (after this file: lock_ is the first member). Without it (a sweep's part) the parts directory exists.
  if (options_.lock_output) lock_.emplace(out_path_);
  const fs::path out(out_path_);
  if (options_.remove_stale_temporaries) remove_stale_temporaries(out);
  // Unique per writer, not only per process (issue 43: two writers of one process shared a temporary name).
  static std::atomic<unsigned long> writers{0};
  temp_path_ = out_path_ + ".tmp-" + std::to_string(getpid()) + "." + std::to_string(++writers);
  // Plain open() first: its errno says why a path is unwritable, which HDF5's error stack does not.
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    const std::string why = std::strerror(errno);
    throw OutputError("cannot write output file '" + out_path_ + "': " + why);
  }
  ::close(fd);
  cleanup_slot_ = remove_on_signal(temp_path_);
  handles_ = std::make_unique<Handles>();
  try {
    Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "file creation property list");
    check(H5Pset_obj_track_times(fcpl.get(), 0), "cannot set file properties");
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access property list");
    // Closing the file closes whatever is still open, so that a failed run cannot leave objects behind.
    check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "cannot set file properties");
    // An object's metadata leaves HDF5's cache when it is closed, written once: the writer closes each object
    // of a run when the run is done and never opens it again, and otherwise each new object had the cache
    // write and free older ones to make room (a sixth of the cost of writing a short run, issue 25).
    check(H5Pset_evict_on_close(fapl.get(), 1), "cannot set file properties");
    handles_->file = Handle(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
                          "file '" + temp_path_ + "'");
    fapl.close();
    fcpl.close();
  } catch (const H5Failure& e) {
    handles_.reset();
    ::unlink(temp_path_.c_str());
    forget_on_signal(cleanup_slot_);
    throw OutputError("cannot write output file '" + out_path_ + "': " + e.what());
  }
}

ResultsFile::~ResultsFile() {
  {
    Hdf5Lock lock;
    handles_.reset();  // closes (silently) whatever is open, the file last
  }
  if (!committed_) ::unlink(temp_path_.c_str());
  forget_on_signal(cleanup_slot_);
}

// Creates the groups of `path` ("a/b/c") that do not exist yet; returns "/a/b/c".
static std::string make_groups(hid_t file, const std::string& path) {
  std::string sofar;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string part = path.substr(start, slash - start);
    start = slash + 1;
    if (part.empty()) continue;
    sofar += "/" + part;
    const htri_t exists = H5Lexists(file, sofar.c_str(), H5P_DEFAULT);
    if (exists < 0) fail("cannot look up '" + sofar + "'");
    if (!exists) make_group(file, sofar).close();
  }
  return sofar;
}

void ResultsFile::copy_group(hid_t source_file, const std::string& path) {
  guarded("group '" + path + "'", [&] {
    const auto slash = path.rfind('/');
    const std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
    const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
    const std::string parent_path = parent.empty() ? "/" : make_groups(handles_->file.get(), parent);
    Handle from(H5Gopen2(source_file, parent.empty() ? "/" : parent.c_str(), H5P_DEFAULT), H5Gclose, "group '/" + parent + "'");
    Handle to(H5Gopen2(handles_->file.get(), parent_path.c_str(), H5P_DEFAULT), H5Gclose, "group '" + parent_path + "'");
    copy_object(from.get(), leaf, to.get());
    to.close();
    from.close();
  });
}

void ResultsFile::write_group(const ResultGroup& g) {
  guarded("group '" + g.path + "'", [&] {
    const std::string sofar = make_groups(handles_->file.get(), g.path);
    if (sofar.empty()) throw H5Failure("empty group path");
    Handle group(H5Gopen2(handles_->file.get(), sofar.c_str(), H5P_DEFAULT), H5Gclose, "group '" + sofar + "'");
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

void ResultsFile::commit(const Provenance& provenance, const SummaryTable* leading) {
  guarded("closing", [&] {
    Handles& h = *handles_;
    // The runs written here first, then the rows of copied runs (a file of copied runs alone has only those).
    SummaryTable table;
    const bool own_rows = leading && !leading->empty() && leading->front().size() > 0;
    if (leading && (own_rows || appended_.empty())) {
      table = *leading;
      if (!appended_.empty()) append_rows(table, appended_);
    } else {
      table = appended_;
    }
    if (h.runs || !table.empty()) {
      Handle summary = make_group(h.file.get(), "summary");
      const hid_t sg = summary.get();
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
      for (const auto& c : table)
        if (!c.description.empty()) describe_dataset(sg, c.name, c.description);
      summary.close();
    }

    const hid_t f = h.file.get();
    set_attr(f, "clmbench_version", std::string(kVersion));
    set_attr(f, "git_commit", std::string(kGitCommit));
    set_attr(f, "created_utc", utc_timestamp());
    set_attr(f, "command_line", provenance.command_line);
    set_attr(f, "config", provenance.config_text);
    if (!provenance.sweep_config.empty()) set_attr(f, "sweep_config", provenance.sweep_config);
    if (h.runs) h.runs.close();
    check(H5Fflush(f, H5F_SCOPE_GLOBAL), "cannot flush '" + temp_path_ + "'");
    h.file.close();
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
    Hdf5Lock lock;
    handles_.reset();
  }
  forget_on_signal(cleanup_slot_);
}

void ResultsFile::copy_run(hid_t source_runs, const std::string& run_id) {
  guarded("run '" + run_id + "'", [&] { copy_object(source_runs, run_id, runs_group()); });
}

void ResultsFile::append_summary(const SummaryTable& rows) {
  guarded("summary", [&] {
    if (appended_.empty()) appended_ = rows;
    else append_rows(appended_, rows);
  });
}

}  // namespace clm
