// Reading results files back, defensively: the file may be anything a user points `info` at (another
// program's HDF5 file, a truncated copy, a FIFO). Every object's kind, type class, rank and extent is
// checked before anything is read into a buffer, and every failure is one InputError line.
#include "io/results_info.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/types.hpp"
#include "io/results_file.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An HDF5 identifier closed when it goes out of scope.
class Id {
 public:
  Id(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

struct Reader {
  std::string path;
  [[noreturn]] void refuse(const std::string& why) const {
    H5Eclear2(H5E_DEFAULT);
    throw OutputError("'" + path + "' is not a readable clmbench results file: " + why);
  }

  bool exists(hid_t loc, const std::string& name) const {
    const htri_t e = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
    if (e < 0) refuse("cannot look up '" + name + "'");
    if (!e) return false;
    const htri_t o = H5Oexists_by_name(loc, name.c_str(), H5P_DEFAULT);
    return o > 0;
  }

  // A 1-D dataset's length; refuses another rank.
  hsize_t length(hid_t ds, const std::string& name) const {
    Id space(H5Dget_space(ds), H5Sclose);
    if (!space.ok()) refuse("cannot read the shape of '" + name + "'");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank != 1) refuse("'" + name + "' has rank " + std::to_string(rank) + " (expected a 1-D dataset)");
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    return n;
  }

  std::vector<std::string> strings(hid_t group, const std::string& name, const std::string& where) const {
    Id ds(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.ok()) refuse("cannot open dataset '" + where + "'");
    Id type(H5Dget_type(ds.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
      refuse("'" + where + "' is not a dataset of variable-length strings");
    const hsize_t n = length(ds.get(), where);
    if (n > (1u << 24)) refuse("'" + where + "' has " + std::to_string(n) + " entries");
    std::vector<char*> buf(n, nullptr);
    Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    const herr_t read = n ? H5Dread(ds.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) : 0;
    std::vector<std::string> out;
    for (char* s : buf) out.emplace_back(s ? s : "");
    if (n) {
      // Also after a failed read: the strings read before the failure were allocated (a leak otherwise,
      // found by fuzz_results).
      Id space(H5Dget_space(ds.get()), H5Sclose);
      H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
    }
    if (read < 0) refuse("cannot read '" + where + "'");
    return out;
  }

  // A numeric column of `rows` entries; missing: all NaN ("-" in the table).
  std::vector<double> numbers(hid_t group, const std::string& name, const std::string& where, size_t rows) const {
    std::vector<double> out(rows, kNaN);
    if (!exists(group, name)) return out;
    Id ds(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.ok()) refuse("cannot open dataset '" + where + "'");
    Id type(H5Dget_type(ds.get()), H5Tclose);
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) refuse("'" + where + "' is not numeric");
    const hsize_t n = length(ds.get(), where);
    if (n != rows)
      refuse("'" + where + "' has " + std::to_string(n) + " entries for " + std::to_string(rows) + " runs");
    if (n && H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      refuse("cannot read '" + where + "'");
    return out;
  }

  std::string text_attribute(hid_t obj, const std::string& name) const {
    if (H5Aexists(obj, name.c_str()) <= 0) return "?";
    Id a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
    Id type(H5Aget_type(a.get()), H5Tclose);
    Id space(H5Aget_space(a.get()), H5Sclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0 ||
        H5Sget_simple_extent_type(space.get()) != H5S_SCALAR)
      return "?";
    char* s = nullptr;
    Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    const herr_t read = H5Aread(a.get(), mem.get(), &s);
    std::string out = s ? s : "";
    if (s) H5free_memory(s);
    return read < 0 ? std::string("?") : out;
  }
};

// Opens `path` read-only after checking that it is a regular HDF5 file with the clmbench root attribute.
hid_t open_results(const Reader& r) {
  struct stat st {};
  if (::stat(r.path.c_str(), &st) != 0) throw InputError("no such results file '" + r.path + "'");
  if (!S_ISREG(st.st_mode)) throw OutputError("'" + r.path + "' is not a regular file (a directory, FIFO or device)");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (H5Fis_hdf5(r.path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw OutputError("'" + r.path + "' is not an HDF5 file");
  }
  const hid_t file = H5Fopen(r.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) r.refuse("HDF5 cannot open it (truncated or damaged?)");
  if (H5Aexists(file, "clmbench_version") <= 0) {
    H5Fclose(file);
    r.refuse("no clmbench_version attribute (written by another program?)");
  }
  return file;
}

std::string number(double v) { return format_figure(v, "%.2e", "-"); }

// An attribute as config text: numbers round-trip exactly, integer attributes of bool options as true/false.
std::string attribute_text(const Reader& r, hid_t obj, const std::string& name, bool boolean = false) {
  Id a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!a.ok()) r.refuse("cannot open attribute '" + name + "'");
  Id type(H5Aget_type(a.get()), H5Tclose);
  Id space(H5Aget_space(a.get()), H5Sclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls == H5T_STRING) return r.text_attribute(obj, name);
  const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
  if (shape == H5S_NULL) return "(unset)";  // an empty list (formulation.lambda0 left at its default)
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (H5Sget_simple_extent_ndims(space.get()) > 1 || count < 0 || count > (1 << 20))
    r.refuse("attribute '" + name + "' has an unexpected shape");
  if (cls == H5T_INTEGER) {
    if (count != 1) r.refuse("attribute '" + name + "' is not a scalar");
    long long v = 0;
    if (H5Aread(a.get(), H5T_NATIVE_LLONG, &v) < 0) r.refuse("cannot read attribute '" + name + "'");
    if (boolean) return v ? "true" : "false";
    return std::to_string(v);
  }
  if (cls == H5T_FLOAT) {
    std::vector<double> v(static_cast<size_t>(count));
    if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0) r.refuse("cannot read attribute '" + name + "'");
    std::string s;
    for (double x : v) {
      if (!s.empty()) s += ' ';  // (not "" : " " + ...: GCC 12's false -Wrestrict, PR 105329)
      s += format_number(x);
    }
    return s;
  }
  r.refuse("attribute '" + name + "' has an unexpected type");
}

}  // namespace

ResultsInfo read_results_info(const std::string& path) {
  const Reader r{path};
  Id file(open_results(r), H5Fclose);
  ResultsInfo info;
  info.path = path;
  info.clmbench_version = r.text_attribute(file.get(), "clmbench_version");
  info.git_commit = r.text_attribute(file.get(), "git_commit");
  info.created_utc = r.text_attribute(file.get(), "created_utc");
  if (!r.exists(file.get(), "summary") && !r.exists(file.get(), "runs") && r.exists(file.get(), "analysis")) {
    info.analysis_only = true;
    return info;
  }
  if (!r.exists(file.get(), "summary")) r.refuse("no /summary group");
  H5O_info_t object{};
  if (H5Oget_info_by_name(file.get(), "summary", &object, H5P_DEFAULT) < 0 ||
      object.type != H5O_TYPE_GROUP)
    r.refuse("/summary is not a group");
  Id summary(H5Gopen2(file.get(), "summary", H5P_DEFAULT), H5Gclose);
  if (!r.exists(summary.get(), "run_id")) r.refuse("no /summary/run_id");
  const auto ids = r.strings(summary.get(), "run_id", "/summary/run_id");
  const size_t R = ids.size();
  auto text_column = [&](const char* name, const char* missing) {
    std::vector<std::string> out(R, missing);
    if (!r.exists(summary.get(), name)) return out;
    out = r.strings(summary.get(), name, std::string("/summary/") + name);
    if (out.size() != R)
      r.refuse("'/summary/" + std::string(name) + "' has " + std::to_string(out.size()) + " entries for " +
               std::to_string(R) + " runs");
    return out;
  };
  auto number_column = [&](const char* name) {
    return r.numbers(summary.get(), name, std::string("/summary/") + name, R);
  };
  const auto problems = text_column("problem", "?"), formulations = text_column("formulation", "?"),
             integrators = text_column("integrator", "?"), statuses = text_column("status", "?"),
             references = text_column("reference", "none"), sources = text_column("reference_source", "none"),
             validity = text_column("validity", "");
  const auto samples = number_column("samples"), mdp = number_column("max_drift_position"),
             mdv = number_column("max_drift_velocity"), energy = number_column("max_rel_energy_error"),
             err = number_column("error_vs_reference"), wall = number_column("wall_time_s"),
             cpu = number_column("cpu_time_s"), rhs = number_column("rhs_evals"), eq = number_column("q_error_max"),
             eqd = number_column("qd_error_max"), el = number_column("lambda_error_max"), scd = number_column("scd"),
             mescd = number_column("mescd"), balance = number_column("max_energy_balance_residual");
  for (size_t i = 0; i < R; ++i) {
    ResultsRow row;
    row.run_id = ids[i];
    // A mechanism file's identity PATH@sha256:HEX shortened to 12 hex digits for the table (git's habit; the
    // attribute keeps all 64, `info --run` shows them).
    row.problem = problems[i];
    if (const auto mark = row.problem.rfind("@sha256:"); mark != std::string::npos && row.problem.size() > mark + 20)
      row.problem = row.problem.substr(0, mark + 20);
    row.formulation = formulations[i];
    row.integrator = integrators[i];
    row.status = statuses[i];
    row.validity = validity[i];
    row.reference = references[i];
    row.samples = samples[i];
    row.max_drift_position = mdp[i];
    row.max_drift_velocity = mdv[i];
    row.max_rel_energy_error = energy[i];
    row.error_vs_reference = err[i];
    row.wall_time_s = wall[i];
    row.reference_source = sources[i];
    row.cpu_time_s = cpu[i];
    row.rhs_evals = rhs[i];
    row.q_error_max = eq[i];
    row.qd_error_max = eqd[i];
    row.lambda_error_max = el[i];
    row.scd = scd[i];
    row.mescd = mescd[i];
    row.max_energy_balance_residual = balance[i];
    info.rows.push_back(row);
  }
  return info;
}

std::string format_results_table(const ResultsInfo& info) {
  std::vector<std::vector<std::string>> table;
  table.push_back({"run_id", "problem", "formulation", "integrator", "status", "samples", "max_drift_pos",
                   "max_drift_vel", "max_rel_dE", "err_vs_ref", "ref", "wall_s", "cpu_s", "rhs_evals",
                   "q_err_max", "qd_err_max", "lam_err_max", "scd", "mescd", "ref_source", "balance"});
  auto fixed = [](double v, const char* format) -> std::string {
    if (std::isnan(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
  };
  for (const auto& r : info.rows) {
    table.push_back({r.run_id, r.problem, r.formulation, r.integrator, r.status, fixed(r.samples, "%.0f"),
                     number(r.max_drift_position), number(r.max_drift_velocity), number(r.max_rel_energy_error),
                     number(r.error_vs_reference), r.reference == "none" ? "-" : r.reference,
                     fixed(r.wall_time_s, "%.3f"), fixed(r.cpu_time_s, "%.4f"), fixed(r.rhs_evals, "%.0f"),
                     number(r.q_error_max), number(r.qd_error_max), number(r.lambda_error_max),
                     fixed(r.scd, "%.2f"), fixed(r.mescd, "%.2f"), r.reference_source == "none" ? "-" : r.reference_source,
                     number(r.max_energy_balance_residual)});
  }
  std::vector<size_t> width(table.front().size(), 0);
  for (const auto& row : table)
    for (size_t j = 0; j < row.size(); ++j) width[j] = std::max(width[j], row[j].size());
  std::ostringstream out;
  if (info.analysis_only) {
    out << "# " << info.path << ": no runs, /analysis of clmbench analyze (tools/plot.py draws it), clmbench "
        << info.clmbench_version << " (" << info.git_commit << "), created " << info.created_utc << "\n";
    return out.str();
  }
  out << "# " << info.path << ": " << info.rows.size() << " run" << (info.rows.size() == 1 ? "" : "s")
      << ", clmbench " << info.clmbench_version << " (" << info.git_commit << "), created " << info.created_utc
      << "\n";
  for (const auto& row : table) {
    std::string line;
    for (size_t j = 0; j < row.size(); ++j) {
      line += row[j];
      if (j + 1 < row.size()) line += std::string(width[j] - row[j].size() + 2, ' ');
    }
    out << line << "\n";
  }
  // Runs that followed other equations than their formulation's theorem or limit assumes (status stays "ok").
  std::string outside;
  size_t count = 0;
  for (const auto& r : info.rows)
    if (!r.validity.empty() && ++count <= 5) outside += (outside.empty() ? "" : ", ") + r.run_id;
  if (count)
    out << "# " << count << " run" << (count == 1 ? "" : "s")
        << " flagged (outside the formulation's validity conditions, or failing the run's own checks): " << outside
        << (count > 5 ? ", ..." : "") << " (clmbench info FILE --run ID says which)\n";
  return out.str();
}

RunOptions read_run_attributes(const std::string& path, const std::string& run_id,
                               const std::vector<RecordedOption>& options) {
  const Reader r{path};
  Id file(open_results(r), H5Fclose);
  RunOptions out;
  out.path = path;
  out.run_id = run_id;
  const std::string group_path = "runs/" + run_id;
  if (run_id.empty() || run_id.find('/') != std::string::npos || !r.exists(file.get(), "runs") ||
      !r.exists(file.get(), group_path))
    throw InputError("no run '" + run_id + "' in results file '" + path + "' (clmbench info " + path + " lists them)");
  Id g(H5Gopen2(file.get(), group_path.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.ok()) r.refuse("/" + group_path + " is not a group");
  for (const auto& o : options) {
    out.values.push_back({o.key, H5Aexists(g.get(), o.attribute.c_str()) > 0
                                     ? attribute_text(r, g.get(), o.attribute, o.boolean)
                                     : "-"});
  }
  H5O_info_t object{};
  if (H5Oget_info(g.get(), &object) < 0) r.refuse("cannot list the attributes of /" + group_path);
  for (hsize_t i = 0; i < object.num_attrs; ++i) {
    char name[256] = {0};
    if (H5Aget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0) continue;
    const std::string n = name;
    if (n.rfind("param.", 0) == 0) out.values.push_back({n, attribute_text(r, g.get(), n)});
  }
  // The prescribed [shape] (samples from a file with the hash of their contents; the samples themselves,
  // recorded when few, are data, not an option: h5py reads them).
  for (hsize_t i = 0; i < object.num_attrs; ++i) {
    char name[256] = {0};
    if (H5Aget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0) continue;
    const std::string n = name;
    const bool samples = n.size() > 8 && n.compare(n.size() - 8, 8, ".samples") == 0;
    if (n.rfind("shape.", 0) == 0 && !samples) out.values.push_back({n, attribute_text(r, g.get(), n)});
  }
  // What the run measured against its reference and what it cost (issue 10 item 6); NaN shown as "-".
  for (const char* n : {"status", "constraint_kind", "position_rows", "constraint_rank", "initial_source", "initial_projection_dq", "initial_projection_dqd", "steps", "rhs_evals", "jacobian_used", "cpu_time_s", "cpu_time_repeats", "cpu_time_spread", "output_cpu_time_s", "validity", "reference_source",
                        "reference_message", "reference_cpu_time_s", "q_error_max", "q_error_final", "qd_error_max",
                        "qd_error_final", "lambda_error_max", "lambda_error_final", "scd", "mescd"}) {
    if (H5Aexists(g.get(), n) <= 0) continue;
    const std::string text = attribute_text(r, g.get(), n);
    out.values.push_back({n, text == "nan" || text == "-nan" ? std::string("-") : text});
  }
  return out;
}

std::string format_run_options(const RunOptions& options) {
  std::string s = "# " + options.path + ": run " + options.run_id + "\n";
  for (const auto& [key, value] : options.values) s += key + " = " + value + "\n";
  return s;
}

}  // namespace clm
