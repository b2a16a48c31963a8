#include "experiments/hdf5_writer.hpp"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/version.hpp"

namespace clm {

namespace {

namespace fs = std::filesystem;

// The temporary file is removed when the process is interrupted (signal handlers may only use
// async-signal-safe calls, hence a fixed buffer and unlink).
char g_temp_path[4096] = {0};

extern "C" void remove_temp_and_exit(int sig) {
  if (g_temp_path[0]) unlink(g_temp_path);
  _exit(128 + sig);
}

void install_cleanup(const std::string& path) {
  std::snprintf(g_temp_path, sizeof g_temp_path, "%s", path.c_str());
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_exit);
}

void remove_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
  g_temp_path[0] = 0;
}

const H5::StrType& string_type() {
  static const H5::StrType type = [] {
    H5::StrType t(H5::PredType::C_S1, H5T_VARIABLE);
    t.setCset(H5T_CSET_UTF8);
    return t;
  }();
  return type;
}

// Groups and datasets are created without modification times, so two identical runs give identical
// object headers (reproducibility; created_utc and wall_time_s are the only intended differences).
H5::Group make_group(const H5::H5Location& parent, const std::string& name) {
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  hid_t id = H5Gcreate2(parent.getId(), name.c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (id < 0) throw OutputError("cannot create HDF5 group '" + name + "'");
  H5::Group group(id);  // takes its own reference
  H5Gclose(id);
  return group;
}

void set_attr(H5::H5Object& obj, const std::string& name, const std::string& value) {
  H5::Attribute a = obj.createAttribute(name, string_type(), H5::DataSpace(H5S_SCALAR));
  a.write(string_type(), value);
}
void set_attr(H5::H5Object& obj, const std::string& name, double value) {
  H5::Attribute a = obj.createAttribute(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(H5S_SCALAR));
  a.write(H5::PredType::NATIVE_DOUBLE, &value);
}
void set_attr(H5::H5Object& obj, const std::string& name, long value) {
  const int64_t v = value;
  H5::Attribute a = obj.createAttribute(name, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR));
  a.write(H5::PredType::NATIVE_INT64, &v);
}
void set_attr(H5::H5Object& obj, const std::string& name, const Vec& value) {
  const hsize_t dims[1] = {static_cast<hsize_t>(value.size())};
  H5::DataSpace space = dims[0] ? H5::DataSpace(1, dims) : H5::DataSpace(H5S_NULL);
  H5::Attribute a = obj.createAttribute(name, H5::PredType::NATIVE_DOUBLE, space);
  if (dims[0]) a.write(H5::PredType::NATIVE_DOUBLE, value.data());
}

// Chunked (whole rows, about 64 KiB per chunk), shuffled and deflated; a dataset with a zero dimension
// cannot be chunked and is written contiguous and empty.
H5::DSetCreatPropList dataset_properties(const std::vector<hsize_t>& dims, size_t element_size) {
  H5::DSetCreatPropList p;
  H5Pset_obj_track_times(p.getId(), 0);
  const bool empty = std::any_of(dims.begin(), dims.end(), [](hsize_t d) { return d == 0; });
  if (!empty) {
    hsize_t row = 1;
    for (size_t i = 1; i < dims.size(); ++i) row *= dims[i];
    std::vector<hsize_t> chunk(dims);
    chunk[0] = std::clamp<hsize_t>((64 * 1024) / (row * element_size), 1, dims[0]);
    p.setChunk(static_cast<int>(chunk.size()), chunk.data());
    p.setShuffle();
    p.setDeflate(6);
  }
  return p;
}

void write_doubles(H5::Group& g, const std::string& name, const std::vector<double>& data, std::vector<hsize_t> dims) {
  H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::NATIVE_DOUBLE, space, dataset_properties(dims, sizeof(double)));
  if (!data.empty()) ds.write(data.data(), H5::PredType::NATIVE_DOUBLE);
}

void write_longs(H5::Group& g, const std::string& name, const std::vector<long>& values) {
  std::vector<int64_t> data(values.begin(), values.end());
  std::vector<hsize_t> dims{data.size()};
  H5::DataSpace space(1, dims.data());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::NATIVE_INT64, space, dataset_properties(dims, sizeof(int64_t)));
  if (!data.empty()) ds.write(data.data(), H5::PredType::NATIVE_INT64);
}

void write_strings(H5::Group& g, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  std::vector<hsize_t> dims{values.size()};
  H5::DataSpace space(1, dims.data());
  H5::DataSet ds = g.createDataSet(name, string_type(), space, dataset_properties(dims, sizeof(char*)));
  if (!ptrs.empty()) ds.write(ptrs.data(), string_type());
}

std::string describe(const H5::Exception& e) {
  std::string detail = e.getDetailMsg();
  return detail.empty() ? e.getFuncName() : detail;
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ResultsWriter::ResultsWriter(std::string out_path) : out_path_(std::move(out_path)) {
  H5::Exception::dontPrint();
  const fs::path out(out_path_);
  std::error_code ec;
  if (fs::is_directory(out, ec)) throw OutputError("output path '" + out_path_ + "' is a directory");
  const fs::path parent = out.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      throw OutputError("cannot write output file '" + out_path_ + "': cannot create directory '" + parent.string() +
                        "': " + ec.message());
    }
  }
  temp_path_ = out_path_ + ".tmp-" + std::to_string(getpid());
  // Plain open() first: its errno says why a path is unwritable, which HDF5's error stack does not.
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw OutputError("cannot write output file '" + out_path_ + "': " + std::strerror(errno));
  ::close(fd);
  install_cleanup(temp_path_);
  try {
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);
    H5::FileCreatPropList create(fcpl);
    H5Pclose(fcpl);
    file_ = new H5::H5File(temp_path_, H5F_ACC_TRUNC, create);
    make_group(*file_, "runs");
  } catch (const H5::Exception& e) {
    delete file_;
    file_ = nullptr;
    ::unlink(temp_path_.c_str());
    remove_cleanup();
    throw OutputError("cannot write output file '" + out_path_ + "': " + describe(e));
  }
}

ResultsWriter::~ResultsWriter() {
  if (file_) {
    try {
      file_->close();
    } catch (...) {
    }
    delete file_;
    file_ = nullptr;
  }
  if (!committed_) ::unlink(temp_path_.c_str());
  remove_cleanup();
}

void ResultsWriter::write_run(const RunRecord& r) {
  if (!file_) throw OutputError("results file '" + out_path_ + "' is already closed");
  try {
    H5::Group runs = file_->openGroup("runs");
    H5::Group g = make_group(runs, r.spec.run_id);
    const RunSpec& s = r.spec;
    set_attr(g, "problem", s.problem);
    set_attr(g, "formulation", s.formulation);
    set_attr(g, "integrator", s.integrator);
    set_attr(g, "status", r.status);
    set_attr(g, "message", r.message);
    for (const auto& [name, value] : r.parameters) set_attr(g, "param." + name, value);
    set_attr(g, "formulation.N", s.options.N);
    set_attr(g, "formulation.baumgarte_alpha", s.options.baumgarte_alpha);
    set_attr(g, "formulation.baumgarte_beta", s.options.baumgarte_beta);
    set_attr(g, "formulation.k", s.options.k);
    set_attr(g, "formulation.repartition_threshold", s.options.repartition_threshold);
    set_attr(g, "formulation.added_mass_form", s.options.added_mass_form);
    if (!s.options.lambda0.empty())
      set_attr(g, "formulation.lambda0", Vec(Eigen::Map<const Vec>(s.options.lambda0.data(), Eigen::Index(s.options.lambda0.size()))));
    set_attr(g, "t_end", s.t_end);
    set_attr(g, "dt", s.dt);
    set_attr(g, "rtol", s.rtol);
    set_attr(g, "atol", s.atol);
    set_attr(g, "output_every", s.output_every);
    set_attr(g, "divergence_threshold", s.divergence_threshold);
    set_attr(g, "strict_initial", static_cast<long>(s.strict_initial));
    set_attr(g, "q0", r.q0);
    set_attr(g, "qd0", r.qd0);
    set_attr(g, "initial_source", r.initial_source);
    set_attr(g, "initial_projection_dq", r.projection.position_distance);
    set_attr(g, "initial_projection_dqd", r.projection.velocity_distance);
    set_attr(g, "n", static_cast<long>(r.n));
    set_attr(g, "m", static_cast<long>(r.m));
    set_attr(g, "holonomic", static_cast<long>(r.holonomic));
    set_attr(g, "steps", r.stats.steps);
    set_attr(g, "rejected_steps", r.stats.rejected_steps);
    set_attr(g, "rhs_evals", r.stats.rhs_evals);
    set_attr(g, "jacobian_evals", r.stats.jacobian_evals);
    set_attr(g, "newton_iterations", r.stats.newton_iterations);
    set_attr(g, "t_reached", r.t_reached);
    set_attr(g, "wall_time_s", r.wall_time_s);

    const hsize_t K = r.samples(), n = r.n, m = r.m;
    write_doubles(g, "t", r.t, {K});
    write_doubles(g, "q", r.q, {K, n});
    write_doubles(g, "qd", r.qd, {K, n});
    write_doubles(g, "lambda", r.lambda, {K, m});
    write_doubles(g, "energy", r.energy, {K});
    if (r.holonomic) write_doubles(g, "drift_position", r.drift_position, {K});
    write_doubles(g, "drift_velocity", r.drift_velocity, {K});
    H5::Group extras = make_group(g, "extras");
    for (size_t j = 0; j < r.extra_names.size(); ++j) write_doubles(extras, r.extra_names[j], r.extras[j], {K});
  } catch (const H5::Exception& e) {
    throw OutputError("cannot write run '" + r.spec.run_id + "' to '" + temp_path_ + "': " + describe(e));
  }
  rows_.push_back({r.spec.run_id, r.spec.problem, r.spec.formulation, r.spec.integrator, r.status,
                   r.summary.reference, r.spec.dt, r.spec.options.N, r.spec.t_end, r.summary,
                   static_cast<long>(r.samples()), r.stats.steps, r.stats.rhs_evals, r.wall_time_s});
}

void ResultsWriter::write_group(const ResultGroup& g) {
  if (!file_) throw OutputError("results file '" + out_path_ + "' is already closed");
  try {
    std::string sofar;
    size_t start = 0;
    while (start <= g.path.size()) {
      const size_t slash = std::min(g.path.find('/', start), g.path.size());
      const std::string part = g.path.substr(start, slash - start);
      start = slash + 1;
      if (part.empty()) continue;
      sofar += "/" + part;
      if (!file_->nameExists(sofar)) make_group(*file_, sofar);
    }
    if (sofar.empty()) throw OutputError("empty group path");
    H5::Group group = file_->openGroup(sofar);
    for (const auto& [name, values] : g.numbers) write_doubles(group, name, values, {values.size()});
    for (const auto& [name, values] : g.integers) write_longs(group, name, values);
    for (const auto& [name, values] : g.strings) write_strings(group, name, values);
    for (const auto& [name, value] : g.number_attributes) set_attr(group, name, value);
    for (const auto& [name, value] : g.text_attributes) set_attr(group, name, value);
  } catch (const H5::Exception& e) {
    throw OutputError("cannot write group '" + g.path + "' to '" + temp_path_ + "': " + describe(e));
  }
}

void ResultsWriter::commit(const Provenance& provenance) {
  if (!file_) throw OutputError("results file '" + out_path_ + "' is already closed");
  try {
    H5::Group summary = make_group(*file_, "summary");
    std::vector<std::string> ids, problems, formulations, integrators, statuses, references;
    std::vector<double> dt, N, t_end, fdp, mdp, fdv, mdv, energy, qerr, lerr, err, wall;
    std::vector<long> samples, steps, rhs;
    for (const auto& row : rows_) {
      ids.push_back(row.run_id);
      problems.push_back(row.problem);
      formulations.push_back(row.formulation);
      integrators.push_back(row.integrator);
      statuses.push_back(row.status);
      references.push_back(row.reference);
      dt.push_back(row.dt);
      N.push_back(row.N);
      t_end.push_back(row.t_end);
      fdp.push_back(row.s.final_drift_position);
      mdp.push_back(row.s.max_drift_position);
      fdv.push_back(row.s.final_drift_velocity);
      mdv.push_back(row.s.max_drift_velocity);
      energy.push_back(row.s.max_rel_energy_error);
      qerr.push_back(row.s.q_error_vs_reference);
      lerr.push_back(row.s.lambda_rel_error_vs_reference);
      err.push_back(row.s.error_vs_reference);
      wall.push_back(row.wall_time_s);
      samples.push_back(row.samples);
      steps.push_back(row.steps);
      rhs.push_back(row.rhs_evals);
    }
    const hsize_t R = rows_.size();
    write_strings(summary, "run_id", ids);
    write_strings(summary, "problem", problems);
    write_strings(summary, "formulation", formulations);
    write_strings(summary, "integrator", integrators);
    write_strings(summary, "status", statuses);
    write_doubles(summary, "dt", dt, {R});
    write_doubles(summary, "N", N, {R});
    write_doubles(summary, "t_end", t_end, {R});
    write_longs(summary, "samples", samples);
    write_longs(summary, "steps", steps);
    write_longs(summary, "rhs_evals", rhs);
    write_doubles(summary, "final_drift_position", fdp, {R});
    write_doubles(summary, "max_drift_position", mdp, {R});
    write_doubles(summary, "final_drift_velocity", fdv, {R});
    write_doubles(summary, "max_drift_velocity", mdv, {R});
    write_doubles(summary, "max_rel_energy_error", energy, {R});
    write_doubles(summary, "q_error_vs_reference", qerr, {R});
    write_doubles(summary, "lambda_rel_error_vs_reference", lerr, {R});
    write_doubles(summary, "error_vs_reference", err, {R});
    write_strings(summary, "reference", references);
    write_doubles(summary, "wall_time_s", wall, {R});

    set_attr(*file_, "clmbench_version", std::string(kVersion));
    set_attr(*file_, "git_commit", std::string(kGitCommit));
    set_attr(*file_, "created_utc", utc_timestamp());
    set_attr(*file_, "command_line", provenance.command_line);
    set_attr(*file_, "config", provenance.config_text);
    file_->close();
  } catch (const H5::Exception& e) {
    throw OutputError("cannot write '" + temp_path_ + "': " + describe(e));
  }
  delete file_;
  file_ = nullptr;
  std::error_code ec;
  fs::rename(temp_path_, out_path_, ec);
  if (ec) throw OutputError("cannot rename '" + temp_path_ + "' to '" + out_path_ + "': " + ec.message());
  committed_ = true;
  remove_cleanup();
}

}  // namespace clm
