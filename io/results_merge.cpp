#include "io/results_merge.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/types.hpp"
#include "core/value_parsing.hpp"
#include "io/config_identity.hpp"
#include "io/hdf5_run_target.hpp"
#include "io/part_file.hpp"
#include "io/results_file.hpp"

namespace clm {

namespace {

// An HDF5 identifier closed when it goes out of scope (reading only: a failed close loses nothing).
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  Id(Id&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Id& operator=(Id&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(closer_, o.closer_);
    return *this;
  }
  Id(const Id&) = delete;
  ~Id() {
    if (id_ >= 0 && closer_) closer_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*closer_)(hid_t) = nullptr;
};

// Names of the links of a group, or of the attributes of an object, in name order.
std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &names);
  return names;
}
std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  H5Aiterate2(
      obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &names);
  return names;
}

// The contents of a dataset or attribute, comparable: its class, shape, and values as doubles (every
// numeric type; compared bit for bit, so NaN equals NaN) or as strings.
struct Values {
  H5T_class_t cls = H5T_NO_CLASS;
  std::vector<hsize_t> dims;
  std::vector<double> numbers;
  std::vector<std::string> strings;
  bool operator==(const Values& o) const {
    return cls == o.cls && dims == o.dims && strings == o.strings && numbers.size() == o.numbers.size() &&
           (numbers.empty() || std::memcmp(numbers.data(), o.numbers.data(), numbers.size() * sizeof(double)) == 0);
  }
};

// The most bytes of data a file of `file_bytes` can hold: deflate compresses at most about 1032:1, so a
// dataset claiming more (a 2^34-element column in a 1 KB file) is damaged, and is not allocated for.
size_t max_data_bytes(size_t file_bytes) { return 1100 * file_bytes + (size_t{1} << 20); }

// Reads a dataset (is_attribute false) or an attribute; nullopt when it cannot be read or claims more
// than `max_bytes` of data.
std::optional<Values> read_values(hid_t obj, bool is_attribute, size_t max_bytes = size_t{1} << 40) {
  Values v;
  Id type(is_attribute ? H5Aget_type(obj) : H5Dget_type(obj), H5Tclose);
  Id space(is_attribute ? H5Aget_space(obj) : H5Dget_space(obj), H5Sclose);
  if (!type.ok() || !space.ok()) return std::nullopt;
  v.cls = H5Tget_class(type.get());
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return std::nullopt;
  v.dims.resize(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), v.dims.data(), nullptr);
  const hssize_t points = H5Sget_simple_extent_type(space.get()) == H5S_NULL ? 0 : H5Sget_select_npoints(space.get());
  if (points < 0) return std::nullopt;
  const size_t n = static_cast<size_t>(points);
  if (n == 0) return v;
  if (n > max_bytes / 8) return std::nullopt;
  auto read = [&](hid_t mem, void* buf) {
    return is_attribute ? H5Aread(obj, mem, buf) : H5Dread(obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  };
  if (v.cls == H5T_FLOAT || v.cls == H5T_INTEGER) {
    v.numbers.resize(n);
    if (read(H5T_NATIVE_DOUBLE, v.numbers.data()) < 0) return std::nullopt;
  } else if (v.cls == H5T_STRING && H5Tis_variable_str(type.get()) > 0) {
    std::vector<char*> buf(n, nullptr);
    Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    const herr_t rc = read(mem.get(), buf.data());
    for (char* s : buf) v.strings.emplace_back(s ? s : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
    if (rc < 0) return std::nullopt;
  } else {
    // Other types (clmbench writes none): compare the raw bytes.
    const size_t size = H5Tget_size(type.get());
    std::vector<unsigned char> raw(size * n);
    if (read(type.get(), raw.data()) < 0) return std::nullopt;
    v.strings.emplace_back(raw.begin(), raw.end());
  }
  return v;
}


// Whether two datasets hold the same values. Numbers are compared in blocks of rows (about 1 MiB each):
// a run's samples are never read whole, so comparing two copies of a long run (a duplicate in merge) takes
// memory independent of its length. Other types (text) through read_values.
bool same_dataset(hid_t a, hid_t b) {
  Id type_a(H5Dget_type(a), H5Tclose), type_b(H5Dget_type(b), H5Tclose);
  Id space_a(H5Dget_space(a), H5Sclose), space_b(H5Dget_space(b), H5Sclose);
  if (!type_a.ok() || !type_b.ok() || !space_a.ok() || !space_b.ok()) return false;
  const H5T_class_t cls = H5Tget_class(type_a.get());
  if (cls != H5Tget_class(type_b.get())) return false;
  const int rank = H5Sget_simple_extent_ndims(space_a.get());
  if (rank < 0 || rank != H5Sget_simple_extent_ndims(space_b.get())) return false;
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), dims_b(static_cast<size_t>(rank));
  if (rank > 0) {
    H5Sget_simple_extent_dims(space_a.get(), dims.data(), nullptr);
    H5Sget_simple_extent_dims(space_b.get(), dims_b.data(), nullptr);
  }
  if (dims != dims_b) return false;
  const bool empty = H5Sget_simple_extent_type(space_a.get()) == H5S_NULL ||
                     std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; });
  if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || rank == 0 || empty) {
    const auto va = read_values(a, false), vb = read_values(b, false);
    return va && vb && *va == *vb;
  }
  hsize_t row = 1;
  for (size_t d = 1; d < dims.size(); ++d) row *= dims[d];
  const hsize_t rows = std::max<hsize_t>(1, (hsize_t{1} << 17) / std::max<hsize_t>(row, 1));  // 2^17 doubles
  std::vector<double> xa, xb;
  for (hsize_t start = 0; start < dims[0]; start += rows) {
    std::vector<hsize_t> offset(dims.size(), 0), count(dims);
    offset[0] = start;
    count[0] = std::min(rows, dims[0] - start);
    hsize_t n = 1;
    for (hsize_t c : count) n *= c;
    xa.resize(n);
    xb.resize(n);
    Id memory(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
    for (auto [ds, space, buffer] : {std::tuple{a, space_a.get(), xa.data()}, std::tuple{b, space_b.get(), xb.data()}}) {
      if (!memory.ok() || H5Sselect_hyperslab(space, H5S_SELECT_SET, offset.data(), nullptr, count.data(), nullptr) < 0 ||
          H5Dread(ds, H5T_NATIVE_DOUBLE, memory.get(), space, H5P_DEFAULT, buffer) < 0)
        return false;
    }
    if (std::memcmp(xa.data(), xb.data(), n * sizeof(double)) != 0) return false;  // bit for bit: NaN equals NaN
  }
  return true;
}

// "" when the two objects (groups recursively, or datasets) hold the same data and attributes, timings
// aside; otherwise where they first differ.
std::string difference(hid_t a, hid_t b, const std::string& where) {
  const auto attrs_a = attribute_names(a), attrs_b = attribute_names(b);
  if (attrs_a != attrs_b) return where + " (different attributes)";
  for (const auto& name : attrs_a) {
    if (is_timing_attribute(name)) continue;
    Id x(H5Aopen(a, name.c_str(), H5P_DEFAULT), H5Aclose), y(H5Aopen(b, name.c_str(), H5P_DEFAULT), H5Aclose);
    const auto vx = x.ok() ? read_values(x.get(), true) : std::nullopt;
    const auto vy = y.ok() ? read_values(y.get(), true) : std::nullopt;
    if (!vx || !vy || !(*vx == *vy)) return where + " attribute " + name;
  }
  const H5I_type_t kind = H5Iget_type(a);
  if (kind != H5Iget_type(b)) return where + " (different kinds)";
  if (kind == H5I_DATASET) return same_dataset(a, b) ? "" : where;
  const auto links_a = link_names(a), links_b = link_names(b);
  if (links_a != links_b) return where + " (different members)";
  for (const auto& name : links_a) {
    Id x(H5Oopen(a, name.c_str(), H5P_DEFAULT), H5Oclose), y(H5Oopen(b, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!x.ok() || !y.ok()) return where + "/" + name + " (unreadable)";
    const std::string d = difference(x.get(), y.get(), where + "/" + name);
    if (!d.empty()) return d;
  }
  return "";
}

struct Input {
  std::string path;
  std::optional<std::string> config, sweep_config;
  SummaryTable table;
  std::vector<std::string> run_ids;
  std::vector<long> sweep_index;  // per /summary row, -1 without
};

// A file that is not a readable results file: exit code 2, as `clmbench info` on the same file (a missing
// one is bad input, exit code 1, as for info).
[[noreturn]] void not_results(const std::string& path, const std::string& why) {
  H5Eclear2(H5E_DEFAULT);
  throw OutputError("'" + path + "' is not a clmbench results file: " + why);
}

std::optional<std::string> text_attribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  Id a(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.ok()) return std::nullopt;
  const auto v = read_values(a.get(), true);
  if (!v || v->cls != H5T_STRING || v->strings.size() != 1 || !v->dims.empty()) return std::nullopt;
  return v->strings.front();
}

Id open_results(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) not_results(path, "not a regular file");
  if (H5Fis_hdf5(path.c_str()) <= 0) not_results(path, "not an HDF5 file");
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.ok()) not_results(path, "HDF5 cannot open it");
  return f;
}

Input read_input(const std::string& path) {
  Input in;
  in.path = path;
  Id f = open_results(path);
  if (!text_attribute(f.get(), "clmbench_version")) not_results(path, "no clmbench_version attribute");
  in.config = text_attribute(f.get(), "config");
  in.sweep_config = text_attribute(f.get(), "sweep_config");
  std::error_code size_error;
  const auto file_bytes = std::filesystem::file_size(path, size_error);
  const size_t max_bytes = max_data_bytes(size_error ? 0 : static_cast<size_t>(file_bytes));
  if (H5Lexists(f.get(), "runs", H5P_DEFAULT) <= 0 || H5Lexists(f.get(), "summary", H5P_DEFAULT) <= 0)
    not_results(path, "no /runs or /summary group");
  Id summary(H5Gopen2(f.get(), "summary", H5P_DEFAULT), H5Gclose);
  Id runs(H5Gopen2(f.get(), "runs", H5P_DEFAULT), H5Gclose);
  if (!summary.ok() || !runs.ok()) not_results(path, "/runs or /summary is not a group");
  for (const auto& name : link_names(summary.get())) {
    Id ds(H5Dopen2(summary.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.ok()) not_results(path, "/summary/" + name + " is not a dataset");
    const auto v = read_values(ds.get(), false, max_bytes);
    if (!v || v->dims.size() != 1)
      not_results(path, "/summary/" + name + " is not a readable 1-D dataset (or claims more data than the file can hold)");
    Id type(H5Dget_type(ds.get()), H5Tclose);
    SummaryColumn c{name, {}};
    c.description = text_attribute(ds.get(), "description").value_or("");  // carried into the merged file
    if (v->cls == H5T_FLOAT) {
      c.values = v->numbers;
    } else if (v->cls == H5T_INTEGER) {
      c.values = std::vector<long>(v->numbers.begin(), v->numbers.end());
    } else if (v->cls == H5T_STRING && H5Tis_variable_str(type.get()) > 0) {
      c.values = v->strings;
    } else {
      not_results(path, "/summary/" + name + " is neither numbers nor text");
    }
    in.table.push_back(std::move(c));
  }
  const auto id_column = std::find_if(in.table.begin(), in.table.end(), [](const auto& c) { return c.name == "run_id"; });
  if (id_column == in.table.end() || id_column->values.index() != 2) not_results(path, "no /summary/run_id");
  in.run_ids = std::get<std::vector<std::string>>(id_column->values);
  for (const auto& c : in.table)
    if (c.size() != in.run_ids.size())
      not_results(path, "/summary/" + c.name + " has " + std::to_string(c.size()) + " rows for " +
                            std::to_string(in.run_ids.size()) + " runs");
  for (const auto& id : in.run_ids) {
    if (id.empty() || id.find('/') != std::string::npos || H5Lexists(runs.get(), id.c_str(), H5P_DEFAULT) <= 0)
      not_results(path, "/summary lists run '" + id + "' but /runs has no such group");
    Id g(H5Gopen2(runs.get(), id.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.ok()) not_results(path, "/runs/" + id + " is not a group");
    long index = -1;
    if (H5Aexists(g.get(), "sweep_index") > 0) {
      Id a(H5Aopen(g.get(), "sweep_index", H5P_DEFAULT), H5Aclose);
      const auto v = a.ok() ? read_values(a.get(), true) : std::nullopt;
      if (!v || v->numbers.size() != 1) not_results(path, "/runs/" + id + " has an unreadable sweep_index");
      // A grid index: a whole number >= 0 (a NaN was accepted and cast, undefined behaviour; issue 21).
      const double x = v->numbers.front();
      if (!std::isfinite(x) || x < 0 || x > 1e15 || x != std::floor(x))
        not_results(path, "/runs/" + id + " has sweep_index " + format_number(x) + ", not a whole number >= 0");
      index = static_cast<long>(x);
    }
    in.sweep_index.push_back(index);
  }
  return in;
}

std::string column_list(const SummaryTable& t) {
  std::string s;
  for (const auto& c : t) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

}  // namespace

std::optional<std::vector<PartRun>> stored_part_runs(const std::string& path) {
  const std::optional<PartContents> contents = read_part(path);
  if (!contents) return std::nullopt;
  std::vector<PartRun> runs;
  for (size_t i = 0; i < contents->run_ids.size(); ++i) runs.push_back({contents->run_ids[i], contents->run_configs[i]});
  return runs;
}

namespace {

// The same /summary columns: names and kinds (numbers, integers, text), in the same order.
bool same_columns(const SummaryTable& a, const SummaryTable& b) {
  bool same = a.size() == b.size();
  for (size_t c = 0; same && c < a.size(); ++c) same = a[c].name == b[c].name && a[c].values.index() == b[c].values.index();
  return same;
}

// Row `row` of `from` appended to `rows` (the same columns).
void append_row(SummaryTable& rows, const SummaryTable& from, size_t row) {
  for (size_t c = 0; c < rows.size(); ++c)
    std::visit([&](auto& into) { into.push_back(std::get<std::decay_t<decltype(into)>>(from[c].values)[row]); },
               rows[c].values);
}

// A run id found in two inputs: kept once when both copies are identical (datasets and attributes, timings
// aside), refused otherwise.
void refuse_unless_identical(const std::string& id, const std::string& a, const std::string& b) {
  Id fa = open_results(a), fb = open_results(b);
  const std::string path = "runs/" + id;
  Id ga(H5Gopen2(fa.get(), path.c_str(), H5P_DEFAULT), H5Gclose), gb(H5Gopen2(fb.get(), path.c_str(), H5P_DEFAULT), H5Gclose);
  const std::string d = ga.ok() && gb.ok() ? difference(ga.get(), gb.get(), "/" + path) : "/" + path;
  if (!d.empty())
    throw InputError("run '" + id + "' is in both '" + a + "' and '" + b + "' with different contents (" + d +
                     "); merge refuses to choose");
}

// The merged /summary's statuses and validity lines, for the command's closing line.
void count_rows(const SummaryTable& rows, MergeReport& report) {
  for (const auto& c : rows)
    if (c.name == "status" && c.values.index() == 2)
      for (const auto& s : std::get<std::vector<std::string>>(c.values)) ++report.statuses[s];
  for (const auto& c : rows)
    if (c.name == "validity" && c.values.index() == 2)
      for (const auto& v : std::get<std::vector<std::string>>(c.values))
        if (!v.empty() && report.outside_conditions++ == 0) report.first_outside = v;
}

}  // namespace

struct IncrementalMerge::State {
  std::string out, command_line;
  bool caller_holds_lock = false;
  std::unique_ptr<ResultsFile> writer;
  std::optional<std::string> sweep_config;
  SummaryTable columns;  // the first part's /summary columns (names, kinds, descriptions), no rows
  struct Row {
    long sweep_index;
    size_t part, row;
  };
  std::unique_ptr<Hdf5RunTarget> target;  // the writer's /runs, where the parts' runs are replayed
  // The parts taken: their paths and trailers (the /summary rows of their runs; their index, against which a
  // duplicate run is compared), the runs' configurations dropped.
  std::vector<std::pair<std::string, PartContents>> parts;
  std::vector<Row> rows;
  std::map<std::string, std::pair<size_t, size_t>> seen;  // run id -> (part, row)
  size_t duplicates = 0;
};

IncrementalMerge::IncrementalMerge(const std::string& out, const std::string& command_line, bool caller_holds_lock)
    : state_(std::make_unique<State>()) {
  state_->out = out;
  state_->command_line = command_line;
  state_->caller_holds_lock = caller_holds_lock;
}

IncrementalMerge::~IncrementalMerge() {
  Hdf5Lock lock;
  state_.reset();  // an unfinished output's temporary file is removed by its ResultsFile
}

void IncrementalMerge::add(const std::string& part) {
  State& st = *state_;
  // The part's trailer (no HDF5: a part file is no HDF5 file, io/part_file.hpp).
  std::optional<PartContents> contents = read_part(part);
  if (!contents)
    throw OutputError("'" + part + "' is not a complete part file of a sweep; remove it and --resume to compute its runs again");
  contents->run_configs.clear();  // what --resume compares, not the merge
  std::optional<std::string> sweep_config;
  if (!contents->provenance.sweep_config.empty()) sweep_config = contents->provenance.sweep_config;
  if (!st.writer) {
    Hdf5Lock lock;
    check_output_path(st.out, {part});
    st.sweep_config = sweep_config;
    st.columns = contents->summary;
    for (auto& c : st.columns) std::visit([](auto& v) { v.clear(); }, c.values);
    WriterOptions options;
    options.lock_output = !st.caller_holds_lock;
    st.writer = std::make_unique<ResultsFile>(st.out, std::vector<std::string>{part}, options);
    st.writer->guarded("runs", [&] { st.writer->runs_group(); });  // a file of runs, even of none
    st.target = std::make_unique<Hdf5RunTarget>(*st.writer);
  }
  if (!same_columns(contents->summary, st.columns))
    throw InputError("'" + part + "' has /summary columns (" + column_list(contents->summary) +
                     ") different from the sweep's other parts (" + column_list(st.columns) + ")");
  if (sweep_config.has_value() != st.sweep_config.has_value() ||
      (sweep_config && *sweep_config != *st.sweep_config &&  // the same text: the same sweep (the usual case, and
                                                             // normalizing costs about 1 ms a part)
       comparable_config(*sweep_config) != comparable_config(*st.sweep_config)))
    throw InputError("'" + part + "' comes from a different sweep (its sweep_config differs); merge the parts of one sweep");
  const size_t index = st.parts.size();
  for (size_t r = 0; r < contents->run_ids.size(); ++r) {
    const std::string& id = contents->run_ids[r];
    const long sweep_index = contents->sweep_index[r];
    if (const auto it = st.seen.find(id); it != st.seen.end()) {
      // Kept once when identical (a part computed again after an interrupted commit), refused otherwise.
      const auto [p, row] = it->second;
      const auto& [first_path, first] = st.parts[p];
      const std::string d = run_difference(first_path, first, row, part, *contents, r);
      if (!d.empty())
        throw InputError("run '" + id + "' is in both '" + first_path + "' and '" + part + "' with different contents (" +
                         d + "); merge refuses to choose");
      ++st.duplicates;
      continue;
    }
    {
      Hdf5Lock lock;  // per run: HDF5 is written by this thread alone, the jobs never wait for it
      st.writer->guarded("run '" + id + "'", [&] {
        st.target->begin_run(id, sweep_index);
        replay_run(part, *contents, r, *st.target);
        st.target->end_run();
      });
    }
    st.seen[id] = {index, r};
    st.rows.push_back({sweep_index >= 0 ? sweep_index : static_cast<long>(st.rows.size()), index, r});
  }
  st.parts.emplace_back(part, std::move(*contents));
}

MergeReport IncrementalMerge::finish(size_t expected_runs) {
  State& st = *state_;
  Hdf5Lock lock;
  if (!st.writer) throw OutputError("no part file to merge into " + st.out);
  if (expected_runs > 0 && st.rows.size() != expected_runs)
    throw OutputError("the inputs hold " + std::to_string(st.rows.size()) + " runs of the " +
                      std::to_string(expected_runs) + " expected");
  std::stable_sort(st.rows.begin(), st.rows.end(), [](const State::Row& a, const State::Row& b) {
    return a.sweep_index < b.sweep_index;
  });
  SummaryTable rows = st.columns;
  for (const State::Row& e : st.rows) append_row(rows, st.parts[e.part].second.summary, e.row);
  MergeReport report;
  st.writer->append_summary(rows);
  count_rows(rows, report);
  Provenance provenance{st.command_line, "", ""};
  if (st.sweep_config) provenance.config_text = provenance.sweep_config = *st.sweep_config;
  else if (!st.parts.empty()) provenance.config_text = st.parts.front().second.provenance.config_text;
  st.writer->commit(provenance);
  report.runs = st.rows.size();
  report.duplicates = st.duplicates;
  return report;
}

MergeReport merge_results(const std::vector<std::string>& inputs, const std::string& out,
                          const std::string& command_line, size_t expected_runs) {
  // A sweep's part files (io/part_file.hpp, no HDF5 files): replayed as the sweep's own merge does.
  const auto part = std::find_if(inputs.begin(), inputs.end(), [](const std::string& p) { return is_part_file(p); });
  if (part != inputs.end()) {
    for (const auto& path : inputs)
      if (!is_part_file(path))
        throw InputError("'" + *part + "' is a sweep's part file and '" + path +
                         "' is not: merge a sweep's part files alone (or run the sweep again with --resume), then "
                         "merge the result with other results files");
    IncrementalMerge merge(out, command_line);
    for (const auto& path : inputs) merge.add(path);
    return merge.finish(expected_runs);
  }
  Hdf5Lock lock;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (inputs.empty()) throw InputError("merge needs at least one input file");
  check_output_path(out, inputs);

  std::vector<Input> in;
  for (const auto& path : inputs) in.push_back(read_input(path));

  // Columns: every input the same, in the same kinds.
  for (const auto& x : in) {
    if (!same_columns(x.table, in.front().table))
      throw InputError("'" + x.path + "' has /summary columns (" + column_list(x.table) + ") different from '" +
                       in.front().path + "' (" + column_list(in.front().table) + ")");
  }
  // Provenance: one sweep, one config, or each input's.
  const bool one_sweep = std::all_of(in.begin(), in.end(), [](const Input& x) { return x.sweep_config.has_value(); });
  if (one_sweep) {
    for (const auto& x : in)
      if (const auto a = comparable_config(*in.front().sweep_config), b = comparable_config(*x.sweep_config); a != b)
        throw InputError("'" + x.path + "' and '" + in.front().path +
                         "' come from different sweeps (their sweep_config attributes differ: " + in.front().path +
                         " has " + first_difference(a, b, x.path + " has") +
                         "); merge the outputs of one sweep");
  }
  Provenance provenance{command_line, "", ""};
  if (one_sweep) {
    provenance.config_text = provenance.sweep_config = *in.front().sweep_config;
  } else if (std::all_of(in.begin(), in.end(), [&](const Input& x) { return x.config == in.front().config; })) {
    provenance.config_text = in.front().config.value_or("");
  } else {
    for (const auto& x : in) provenance.config_text += "# from " + x.path + "\n" + x.config.value_or("") + "\n";
  }

  // The runs in output order: grid order when every run has a sweep_index, else argument order.
  struct Entry {
    size_t input, row;
    long sweep_index;
  };
  std::vector<Entry> entries;
  bool all_indexed = true;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t r = 0; r < in[i].run_ids.size(); ++r) {
      entries.push_back({i, r, in[i].sweep_index[r]});
      all_indexed = all_indexed && in[i].sweep_index[r] >= 0;
    }
  if (all_indexed)
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.sweep_index < b.sweep_index; });

  MergeReport report;
  std::map<std::string, size_t> first;  // run id -> entry kept
  std::vector<Entry> kept;
  for (const Entry& e : entries) {
    const std::string& id = in[e.input].run_ids[e.row];
    const auto seen = first.find(id);
    if (seen == first.end()) {
      first[id] = kept.size();
      kept.push_back(e);
      continue;
    }
    refuse_unless_identical(id, in[kept[seen->second].input].path, in[e.input].path);
    ++report.duplicates;
  }

  // Groups beside /runs and /summary (a Kozlov study's /kozlov/<study>, an analysis's /analysis): copied
  // from the first input that has each, in argument order; the same path with different contents in two
  // inputs is refused (merging a Kozlov file dropped its /kozlov/<study>; issue 21).
  std::vector<std::pair<std::string, size_t>> extras;  // path below the root, input
  for (size_t i = 0; i < in.size(); ++i) {
    Id f = open_results(in[i].path);
    for (const auto& name : link_names(f.get())) {
      if (name == "runs" || name == "summary") continue;
      std::vector<std::string> paths;
      H5O_info_t info{};
      if (name == "kozlov" && H5Oget_info_by_name(f.get(), name.c_str(), &info, H5P_DEFAULT) >= 0 &&
          info.type == H5O_TYPE_GROUP) {
        Id g(H5Gopen2(f.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
        if (!g.ok()) not_results(in[i].path, "/kozlov is not a readable group");
        for (const auto& study : link_names(g.get())) paths.push_back(name + "/" + study);
      } else {
        paths.push_back(name);
      }
      for (const auto& path : paths) {
        const auto seen = std::find_if(extras.begin(), extras.end(), [&](const auto& e) { return e.first == path; });
        if (seen == extras.end()) {
          extras.push_back({path, i});
          continue;
        }
        Id other = open_results(in[seen->second].path);
        Id a(H5Oopen(other.get(), path.c_str(), H5P_DEFAULT), H5Oclose), b(H5Oopen(f.get(), path.c_str(), H5P_DEFAULT), H5Oclose);
        const std::string d = a.ok() && b.ok() ? difference(a.get(), b.get(), "/" + path) : "/" + path;
        if (!d.empty())
          throw InputError("'/" + path + "' is in both '" + in[seen->second].path + "' and '" + in[i].path +
                           "' with different contents (" + d + "); merge refuses to choose");
      }
    }
  }

  if (expected_runs > 0 && kept.size() != expected_runs)
    throw OutputError("the inputs hold " + std::to_string(kept.size()) + " runs of the " +
                      std::to_string(expected_runs) + " expected");
  ResultsFile writer(out, inputs);
  writer.guarded("runs", [&] { writer.runs_group(); });  // a file of runs, even of none
  SummaryTable rows = in.front().table;
  for (auto& c : rows) std::visit([](auto& v) { v.clear(); }, c.values);
  std::optional<size_t> open_input;
  Id file, runs;
  for (const Entry& e : kept) {
    if (open_input != e.input) {
      runs = Id();
      file = open_results(in[e.input].path);
      runs = Id(H5Gopen2(file.get(), "runs", H5P_DEFAULT), H5Gclose);
      if (!runs.ok()) not_results(in[e.input].path, "cannot open /runs");
      open_input = e.input;
    }
    writer.copy_run(runs.get(), in[e.input].run_ids[e.row]);
    append_row(rows, in[e.input].table, e.row);
  }
  runs = Id();
  file = Id();
  for (const auto& [path, i] : extras) {
    Id source = open_results(in[i].path);
    writer.copy_group(source.get(), path);
    report.groups.push_back("/" + path);
  }
  writer.append_summary(rows);
  count_rows(rows, report);
  writer.commit(provenance);
  report.runs = kept.size();
  return report;
}

}  // namespace clm
