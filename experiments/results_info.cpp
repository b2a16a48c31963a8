#include "experiments/results_info.hpp"

#include <H5Cpp.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/types.hpp"
#include "experiments/hdf5_writer.hpp"

namespace clm {

namespace {

std::string read_string_attr(const H5::H5Object& obj, const std::string& name) {
  if (!obj.attrExists(name)) return "?";
  H5::Attribute a = obj.openAttribute(name);
  std::string value;
  a.read(a.getStrType(), value);
  return value;
}

std::vector<std::string> read_strings(const H5::Group& g, const std::string& name) {
  H5::DataSet ds = g.openDataSet(name);
  H5::DataSpace space = ds.getSpace();
  hsize_t n = 0;
  space.getSimpleExtentDims(&n);
  std::vector<std::string> out;
  if (n == 0) return out;
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  std::vector<char*> buf(n, nullptr);
  ds.read(buf.data(), type);
  for (char* s : buf) out.emplace_back(s ? s : "");
  H5Dvlen_reclaim(type.getId(), space.getId(), H5P_DEFAULT, buf.data());
  return out;
}

template <class T>
std::vector<T> read_numbers(const H5::Group& g, const std::string& name, const H5::PredType& type, size_t rows) {
  std::vector<T> out(rows, T(NAN));
  if (!g.nameExists(name) || rows == 0) return out;
  H5::DataSet ds = g.openDataSet(name);
  ds.read(out.data(), type);
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

}  // namespace

ResultsInfo read_results_info(const std::string& path) {
  H5::Exception::dontPrint();
  if (!std::filesystem::exists(path)) throw InputError("no such results file '" + path + "'");
  ResultsInfo info;
  info.path = path;
  try {
    H5::H5File file(path, H5F_ACC_RDONLY);
    info.clmbench_version = read_string_attr(file, "clmbench_version");
    info.git_commit = read_string_attr(file, "git_commit");
    info.created_utc = read_string_attr(file, "created_utc");
    H5::Group summary = file.openGroup("summary");
    const auto ids = read_strings(summary, "run_id");
    const auto problems = read_strings(summary, "problem");
    const auto formulations = read_strings(summary, "formulation");
    const auto integrators = read_strings(summary, "integrator");
    const auto statuses = read_strings(summary, "status");
    const auto references = read_strings(summary, "reference");
    const size_t R = ids.size();
    const auto samples = read_numbers<int64_t>(summary, "samples", H5::PredType::NATIVE_INT64, R);
    const auto mdp = read_numbers<double>(summary, "max_drift_position", H5::PredType::NATIVE_DOUBLE, R);
    const auto mdv = read_numbers<double>(summary, "max_drift_velocity", H5::PredType::NATIVE_DOUBLE, R);
    const auto energy = read_numbers<double>(summary, "max_rel_energy_error", H5::PredType::NATIVE_DOUBLE, R);
    const auto err = read_numbers<double>(summary, "error_vs_reference", H5::PredType::NATIVE_DOUBLE, R);
    const auto wall = read_numbers<double>(summary, "wall_time_s", H5::PredType::NATIVE_DOUBLE, R);
    for (size_t i = 0; i < R; ++i) {
      ResultsRow row;
      row.run_id = ids[i];
      row.problem = i < problems.size() ? problems[i] : "?";
      row.formulation = i < formulations.size() ? formulations[i] : "?";
      row.integrator = i < integrators.size() ? integrators[i] : "?";
      row.status = i < statuses.size() ? statuses[i] : "?";
      row.reference = i < references.size() ? references[i] : "none";
      row.samples = samples[i];
      row.max_drift_position = mdp[i];
      row.max_drift_velocity = mdv[i];
      row.max_rel_energy_error = energy[i];
      row.error_vs_reference = err[i];
      row.wall_time_s = wall[i];
      info.rows.push_back(row);
    }
  } catch (const H5::Exception& e) {
    throw OutputError("cannot read results file '" + path + "' (not a clmbench HDF5 file?): " + e.getDetailMsg());
  }
  return info;
}

std::string format_results_table(const ResultsInfo& info) {
  std::vector<std::vector<std::string>> table;
  table.push_back({"run_id", "problem", "formulation", "integrator", "status", "samples", "max_drift_pos",
                   "max_drift_vel", "max_rel_dE", "err_vs_ref", "ref", "wall_s"});
  for (const auto& r : info.rows) {
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.3f", r.wall_time_s);
    table.push_back({r.run_id, r.problem, r.formulation, r.integrator, r.status, std::to_string(r.samples),
                     number(r.max_drift_position), number(r.max_drift_velocity), number(r.max_rel_energy_error),
                     number(r.error_vs_reference), r.reference == "none" ? "-" : r.reference, wall});
  }
  std::vector<size_t> width(table.front().size(), 0);
  for (const auto& row : table)
    for (size_t j = 0; j < row.size(); ++j) width[j] = std::max(width[j], row[j].size());
  std::ostringstream out;
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
  return out.str();
}

}  // namespace clm
