// The results file of `clmbench run` against docs/design.md section 5: every dataset and attribute with the
// right shape, chunked + compressed, the resolved config text that reproduces the file bit for bit,
// temp-file-then-rename semantics, and diverged runs recorded in a complete file.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>

#include "clmbench_process.hpp"
#include "core/version.hpp"
#include "runs/results_writer.hpp"

using clm::testing::ScratchDir;
using clm::testing::write_text;

namespace {

// Everything in a file, flattened: "/runs/x/q" -> dataset, "/runs/x@dt" -> attribute.
struct Value {
  H5T_class_t type_class = H5T_NO_CLASS;
  std::vector<hsize_t> dims;
  std::vector<double> d;
  std::vector<int64_t> i;
  std::vector<std::string> s;
  bool operator==(const Value& o) const {
    return type_class == o.type_class && dims == o.dims && s == o.s && i == o.i && d.size() == o.d.size() &&
           (d.empty() || std::memcmp(d.data(), o.d.data(), d.size() * sizeof(double)) == 0);  // bitwise, NaN too
  }
};

// DataSet::read and Attribute::read take (buffer, type) and (type, buffer).
void read_raw(const H5::DataSet& ds, const H5::DataType& type, void* buf) { ds.read(buf, type); }
void read_raw(const H5::Attribute& a, const H5::DataType& type, void* buf) { a.read(type, buf); }

template <class Obj>  // H5::DataSet or H5::Attribute
Value read_value(const Obj& obj) {
  Value v;
  H5::DataSpace space = obj.getSpace();
  const int rank = space.getSimpleExtentNdims();
  v.dims.resize(rank);
  if (rank > 0) space.getSimpleExtentDims(v.dims.data());
  hsize_t count = 1;
  for (hsize_t d : v.dims) count *= d;
  if (space.getSimpleExtentType() == H5S_NULL) count = 0;
  H5::DataType type = obj.getDataType();
  v.type_class = type.getClass();
  if (count == 0) return v;
  if (v.type_class == H5T_FLOAT) {
    v.d.resize(count);
    read_raw(obj, H5::PredType::NATIVE_DOUBLE, v.d.data());
  } else if (v.type_class == H5T_INTEGER) {
    v.i.resize(count);
    read_raw(obj, H5::PredType::NATIVE_INT64, v.i.data());
  } else if (v.type_class == H5T_STRING) {
    H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
    st.setCset(H5T_CSET_UTF8);
    std::vector<char*> buf(count, nullptr);
    read_raw(obj, st, buf.data());
    for (char* c : buf) v.s.emplace_back(c ? c : "");
    H5Dvlen_reclaim(st.getId(), space.getId(), H5P_DEFAULT, buf.data());
  }
  return v;
}

void read_attrs(const H5::H5Object& obj, const std::string& path, std::map<std::string, Value>& out) {
  for (int k = 0; k < obj.getNumAttrs(); ++k) {
    H5::Attribute a = obj.openAttribute(static_cast<unsigned>(k));
    out[path + "@" + a.getName()] = read_value(a);
  }
}

void flatten(const H5::Group& g, const std::string& path, std::map<std::string, Value>& out) {
  read_attrs(g, path.empty() ? "/" : path, out);
  for (hsize_t k = 0; k < g.getNumObjs(); ++k) {
    const std::string name = g.getObjnameByIdx(k);
    const std::string child = path + "/" + name;
    if (g.childObjType(name) == H5O_TYPE_GROUP) {
      flatten(g.openGroup(name), child, out);
    } else {
      H5::DataSet ds = g.openDataSet(name);
      out[child] = read_value(ds);
      read_attrs(ds, child, out);
    }
  }
}

std::map<std::string, Value> flatten_file(const std::string& path) {
  H5::Exception::dontPrint();
  H5::H5File f(path, H5F_ACC_RDONLY);
  std::map<std::string, Value> out;
  flatten(f.openGroup("/"), "", out);
  return out;
}

const Value& at(const std::map<std::string, Value>& m, const std::string& key) {
  static const Value missing;
  auto it = m.find(key);
  EXPECT_NE(it, m.end()) << "missing " << key;
  return it == m.end() ? missing : it->second;
}

double attr_d(const std::map<std::string, Value>& m, const std::string& key) {
  const Value& v = at(m, key);
  EXPECT_EQ(v.d.size(), 1u) << key;
  return v.d.empty() ? NAN : v.d[0];
}
std::string attr_s(const std::map<std::string, Value>& m, const std::string& key) {
  const Value& v = at(m, key);
  EXPECT_EQ(v.s.size(), 1u) << key;
  return v.s.empty() ? "" : v.s[0];
}

// A holonomic run with non-default parameters and given (consistent) initial data, and a Pfaffian one.
const char* kTwoRuns = R"(
[run]
integrator = rk4
t_end = 0.5
dt = 1e-3
output_every = 0.05
out = two.h5
[run.pendulum]
problem = pendulum_polar
formulation = kkt
[param.pendulum]
m = 0.7
L = 1.3
g = 9.5
[initial.pendulum]
q0 = 1.3 0.6
qd0 = 0 0.9
[run.sleigh]
problem = chaplygin_sleigh
formulation = kkt
[param.sleigh]
m = 1.5
Ic = 0.2
b = 0.25
)";

bool no_temp_files(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST(Hdf5Layout, EveryDatasetAndAttributeWithShapes) {
  ScratchDir dir("layout");
  write_text(dir / "two.ini", kTwoRuns);
  const auto r = dir.run("run two.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto f = flatten_file(dir / "two.h5");

  EXPECT_EQ(attr_s(f, "/@clmbench_version"), clm::kVersion);
  EXPECT_EQ(attr_s(f, "/@git_commit"), clm::kGitCommit);
  EXPECT_TRUE(std::regex_match(attr_s(f, "/@created_utc"), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_NE(attr_s(f, "/@command_line").find("run two.ini"), std::string::npos);
  EXPECT_NE(attr_s(f, "/@config").find("[run.pendulum]"), std::string::npos);

  const hsize_t K = 11;  // t = 0, 0.05, ..., 0.5
  struct Expect {
    std::string id, problem;
    hsize_t n, m;
    bool holonomic;
  };
  for (const Expect& e : {Expect{"pendulum", "pendulum_polar", 2, 1, true}, Expect{"sleigh", "chaplygin_sleigh", 3, 1, false}}) {
    const std::string g = "/runs/" + e.id;
    SCOPED_TRACE(g);
    EXPECT_EQ(attr_s(f, g + "@problem"), e.problem);
    EXPECT_EQ(attr_s(f, g + "@formulation"), "kkt");
    EXPECT_EQ(attr_s(f, g + "@integrator"), "rk4");
    EXPECT_EQ(attr_s(f, g + "@status"), "ok");
    EXPECT_EQ(attr_s(f, g + "@message"), "");
    for (const char* key : {"n_coordinates", "n_constraints", "steps", "rejected_steps", "rhs_evals", "jacobian_evals"})
      EXPECT_EQ(at(f, g + "@" + key).i.size(), 1u) << key;
    EXPECT_EQ(at(f, g + "@n_coordinates").i.at(0), static_cast<int64_t>(e.n));
    EXPECT_EQ(at(f, g + "@n_constraints").i.at(0), static_cast<int64_t>(e.m));
    EXPECT_EQ(at(f, g + "@steps").i.at(0), 500);
    EXPECT_GE(at(f, g + "@rhs_evals").i.at(0), 4 * 500);  // rk4: four stages per step
    EXPECT_LE(at(f, g + "@rhs_evals").i.at(0), 4 * 500 + 2);
    EXPECT_GE(attr_d(f, g + "@wall_time_s"), 0.0);
    EXPECT_EQ(attr_d(f, g + "@t_end"), 0.5);
    EXPECT_EQ(attr_d(f, g + "@dt"), 1e-3);
    EXPECT_EQ(attr_d(f, g + "@output_every"), 0.05);
    for (const char* key : {"rtol", "atol", "divergence_threshold", "formulation.N", "formulation.baumgarte_alpha",
                            "formulation.baumgarte_beta"})
      EXPECT_TRUE(std::isfinite(attr_d(f, g + "@" + key))) << key;

    EXPECT_EQ(at(f, g + "/t").dims, (std::vector<hsize_t>{K}));
    EXPECT_EQ(at(f, g + "/q").dims, (std::vector<hsize_t>{K, e.n}));
    EXPECT_EQ(at(f, g + "/qd").dims, (std::vector<hsize_t>{K, e.n}));
    EXPECT_EQ(at(f, g + "/lambda").dims, (std::vector<hsize_t>{K, e.m}));
    EXPECT_EQ(at(f, g + "/energy").dims, (std::vector<hsize_t>{K}));
    EXPECT_EQ(at(f, g + "/drift_velocity").dims, (std::vector<hsize_t>{K}));
    EXPECT_EQ(f.count(g + "/drift_position"), e.holonomic ? 1u : 0u);
    for (hsize_t k = 0; k < K; ++k) EXPECT_NEAR(at(f, g + "/t").d[k], 0.05 * k, 1e-15);
  }
  EXPECT_EQ(attr_d(f, "/runs/pendulum@param.L"), 1.3);
  EXPECT_EQ(attr_d(f, "/runs/pendulum@param.g"), 9.5);
  EXPECT_EQ(attr_d(f, "/runs/pendulum@param.fx"), 0.0);  // defaults are recorded too
  EXPECT_EQ(attr_d(f, "/runs/sleigh@param.Ic"), 0.2);

  // The numbers are the physics: pendulum on r = L, energy and the closed-form multiplier
  // lambda = -m L thetad^2 - m g cos(theta) [seed-000] at every sample.
  const auto& q = at(f, "/runs/pendulum/q").d;
  const auto& qd = at(f, "/runs/pendulum/qd").d;
  const auto& lambda = at(f, "/runs/pendulum/lambda").d;
  const auto& energy = at(f, "/runs/pendulum/energy").d;
  const double m = 0.7, L = 1.3, g = 9.5;
  EXPECT_NEAR(energy[0], 0.5 * m * L * L * 0.81 - m * g * L * std::cos(0.6), 1e-14);
  for (hsize_t k = 0; k < K; ++k) {
    EXPECT_NEAR(q[2 * k], L, 1e-12);
    EXPECT_NEAR(lambda[k], -m * L * qd[2 * k + 1] * qd[2 * k + 1] - m * g * std::cos(q[2 * k + 1]), 1e-10);
    EXPECT_NEAR(energy[k], energy[0], 1e-11);
    EXPECT_LT(at(f, "/runs/pendulum/drift_position").d[k], 1e-12);
    EXPECT_LT(at(f, "/runs/sleigh/drift_velocity").d[k], 1e-12);
  }

  // /summary: one row per run, in file order.
  const std::vector<std::string> columns{"run_id", "problem", "formulation", "integrator", "status", "dt", "N",
                                         "final_drift_position", "max_drift_position", "final_drift_velocity",
                                         "max_drift_velocity", "max_rel_energy_error", "error_vs_reference",
                                         "wall_time_s"};
  for (const auto& c : columns) EXPECT_EQ(at(f, "/summary/" + c).dims, (std::vector<hsize_t>{2})) << c;
  EXPECT_EQ(at(f, "/summary/run_id").s, (std::vector<std::string>{"pendulum", "sleigh"}));
  EXPECT_TRUE(std::isnan(at(f, "/summary/max_drift_position").d[1]));  // Pfaffian: no position drift
  EXPECT_LT(at(f, "/summary/max_rel_energy_error").d[0], 1e-10);
  EXPECT_LT(at(f, "/summary/max_rel_energy_error").d[1], 1e-12);
  // The pendulum has no closed-form motion: no error figure ("-"), and its multipliers are consistent
  // with the computed states (kkt) to round-off (issue 9: that consistency is not an error).
  EXPECT_EQ(at(f, "/summary/reference").s[0], "none");
  EXPECT_TRUE(std::isnan(at(f, "/summary/error_vs_reference").d[0]));
  EXPECT_LT(at(f, "/summary/lambda_consistency").d[0], 1e-10);
  EXPECT_EQ(at(f, "/summary/reference").s[1], "q");
  EXPECT_LT(at(f, "/summary/error_vs_reference").d[1], 1e-8);

  // Chunked and deflate-compressed; a run's datasets of at most 4 KiB (at most t_end / output_every + 2
  // samples: here 12) compact, unfiltered; a run whose samples are not bounded (output_every = 0) chunked.
  ASSERT_EQ(dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end 0.05 --dt 1e-3 "
                    "--output-every 0 --out every_step.h5").exit_code, 0);
  H5::H5File small(dir / "two.h5", H5F_ACC_RDONLY);
  for (const char* path : {"/runs/pendulum/q", "/runs/sleigh/t"}) {
    H5::DataSet ds = small.openDataSet(path);
    EXPECT_EQ(ds.getCreatePlist().getLayout(), H5D_COMPACT) << path;
    EXPECT_EQ(ds.getCreatePlist().getNfilters(), 0) << path;
  }
  H5::H5File file(dir / "every_step.h5", H5F_ACC_RDONLY);
  for (const char* path : {"/runs/pendulum_polar_kkt_rk4/q", "/runs/pendulum_polar_kkt_rk4/t", "/summary/max_drift_velocity", "/summary/run_id"}) {
    H5::DSetCreatPropList p = file.openDataSet(path).getCreatePlist();
    EXPECT_EQ(p.getLayout(), H5D_CHUNKED) << path;
    bool deflate = false;
    for (int k = 0; k < p.getNfilters(); ++k) {
      unsigned flags = 0, info = 0;
      size_t nelem = 4;
      unsigned values[4];
      char name[64];
      deflate |= p.getFilter(k, flags, nelem, values, sizeof name, name, info) == H5Z_FILTER_DEFLATE;
    }
    EXPECT_TRUE(deflate) << path;
  }
}

// A run's datasets are sized by its sample bound, floor(t_end / output_every) + 2 (compact when that is at
// most 4 KiB): a run that records more samples than its bound (the bound is an estimate of the output
// grid) still has every sample written, the dataset turning chunked when the bound is passed.
TEST(Hdf5Layout, SamplesBeyondTheBoundAreWrittenWhole) {
  ScratchDir dir("bound");
  clm::RunRecord r;
  r.spec.run_id = "r";
  r.spec.t_end = 1;
  r.spec.output_every = 1;  // bound 3
  r.n = 2;
  r.m = 1;
  r.coordinate_names = {"x", "y"};
  r.coordinate_units = {"m", "m"};
  r.q0 = r.qd0 = clm::Vec::Zero(2);
  const size_t K = 40;
  for (size_t k = 0; k < K; ++k) {
    const double v = static_cast<double>(k);
    r.t.push_back(v / K);
    r.q.insert(r.q.end(), {v, -v});
    r.qd.insert(r.qd.end(), {2 * v, 0.5});
    r.lambda.push_back(v * v);
    r.energy.push_back(1 + v);
    r.drift_velocity.push_back(1e-3 * v);
  }
  r.sample_count = K;
  {
    clm::ResultsWriter writer(dir / "bound.h5");
    writer.write_run(r);
    clm::RunRecord two = r;  // within its bound: compact
    two.spec.run_id = "two";
    two.sample_count = 2;
    writer.write_run(two);
    writer.commit({"test", "", ""});
  }
  const auto f = flatten_file(dir / "bound.h5");
  EXPECT_EQ(at(f, "/runs/r/t").d, r.t);
  EXPECT_EQ(at(f, "/runs/r/q").d, r.q);
  EXPECT_EQ(at(f, "/runs/r/q").dims, (std::vector<hsize_t>{K, 2}));
  EXPECT_EQ(at(f, "/runs/r/lambda").d, r.lambda);
  EXPECT_EQ(at(f, "/runs/r/drift_velocity").d, r.drift_velocity);
  EXPECT_EQ(at(f, "/runs/two/q").d, std::vector<double>(r.q.begin(), r.q.begin() + 4));
  EXPECT_EQ(at(f, "/runs/r/q@units").s, (std::vector<std::string>{"m", "m"}));  // labels of a dataset turned chunked
  H5::H5File file(dir / "bound.h5", H5F_ACC_RDONLY);
  EXPECT_EQ(file.openDataSet("/runs/r/q").getCreatePlist().getLayout(), H5D_CHUNKED);
  EXPECT_EQ(file.openDataSet("/runs/two/q").getCreatePlist().getLayout(), H5D_COMPACT);
}

// Issue 25: a run group's ~100 attributes grew its object header one attribute at a time (a dozen
// reallocations and extensions in the file, a third of the cost of writing a short run). A run group after
// the first is made as large as the last one used, in one block, with little left over; its members list
// by name (h5py's order) as before; a merge's copy is sized the same way.
TEST(Hdf5Layout, RunGroupHeadersAreMadeWholeAndListByName) {
  ScratchDir dir("headers");
  clm::RunRecord r;
  r.spec.t_end = 1;
  r.spec.output_every = 0.5;
  r.n = 2;
  r.m = 1;
  r.coordinate_names = {"x", "y"};
  r.coordinate_units = {"m", "m"};
  r.q0 = r.qd0 = clm::Vec::Zero(2);
  for (int k = 0; k < 3; ++k) {
    r.t.push_back(0.5 * k);
    r.q.insert(r.q.end(), {1.0 * k, 2.0 * k});
    r.qd.insert(r.qd.end(), {1.0, 2.0});
    r.lambda.push_back(k);
    r.energy.push_back(1);
    r.drift_velocity.push_back(0);
  }
  r.sample_count = 3;
  {
    clm::ResultsWriter writer(dir / "h.h5");
    for (const char* id : {"first", "second", "third"}) {
      r.spec.run_id = id;
      writer.write_run(r);
    }
    writer.commit({"test", "", ""});
  }
  ASSERT_EQ(dir.run("merge copy.h5 h.h5").exit_code, 0);
  for (const char* name : {"h.h5", "copy.h5"}) {
    SCOPED_TRACE(name);
    const hid_t file = H5Fopen((dir / name).c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    for (const char* id : {"/runs/second", "/runs/third"}) {
      SCOPED_TRACE(id);
      const hid_t g = H5Oopen(file, id, H5P_DEFAULT);
      ASSERT_GE(g, 0);
      H5O_info_t info;
      ASSERT_GE(H5Oget_info2(g, &info, H5O_INFO_HDR | H5O_INFO_NUM_ATTRS), 0);
      EXPECT_GT(info.num_attrs, 60u);
      EXPECT_EQ(info.hdr.nchunks, 1u);
      EXPECT_LT(info.hdr.space.free, info.hdr.space.total / 20);  // ~1.6 %: at most two links' worth spare
      H5Oclose(g);
    }
    H5Fclose(file);
  }
  H5::H5File file(dir / "h.h5", H5F_ACC_RDONLY);
  std::vector<std::string> members;
  const H5::Group g = file.openGroup("/runs/third");
  for (hsize_t i = 0; i < g.getNumObjs(); ++i) members.push_back(g.getObjnameByIdx(i));
  EXPECT_EQ(members, (std::vector<std::string>{"drift_velocity", "energy", "extras", "lambda", "q", "qd", "t"}));
}

TEST(Hdf5Reproducibility, ConfigTextRoundTripsAndRerunsBitForBit) {
  ScratchDir a("repro_a"), b("repro_b"), c("repro_c");
  write_text(a / "two.ini", kTwoRuns);
  write_text(b / "two.ini", kTwoRuns);
  ASSERT_EQ(a.run("run two.ini --set run.pendulum.dt=2e-3").exit_code, 0);
  ASSERT_EQ(b.run("run two.ini --set run.pendulum.dt=2e-3").exit_code, 0);
  const auto fa = flatten_file(a / "two.h5");
  const auto fb = flatten_file(b / "two.h5");
  ASSERT_EQ(fa.size(), fb.size());
  size_t compared = 0;
  for (const auto& [key, value] : fa) {
    // Timings differ from run to run: wall_time_s and the thread CPU times (cpu_time_s, output_cpu_time_s,
    // the repeats' cpu_time_repeats and cpu_time_spread).
    if (key == "/@created_utc" || key.find("wall_time_s") != std::string::npos ||
        key.find("cpu_time_") != std::string::npos)
      continue;
    EXPECT_TRUE(value == at(fb, key)) << key;
    ++compared;
  }
  EXPECT_GT(compared, 60u);

  // The stored config is a complete config: run from it alone, the same numbers come out.
  const std::string config = attr_s(fa, "/@config");
  EXPECT_NE(config.find("dt = 0.002"), std::string::npos);  // the --set is part of the resolved config
  write_text(c / "resolved.ini", config);
  const auto r = c.run("run resolved.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fc = flatten_file(c / "two.h5");
  for (const auto& [key, value] : fa) {
    if (key.rfind("/runs/", 0) != 0 && key.rfind("/summary/", 0) != 0) continue;
    if (key.find("wall_time_s") != std::string::npos || key.find("cpu_time_") != std::string::npos) continue;
    EXPECT_TRUE(value == at(fc, key)) << key;
  }
  const std::string again = attr_s(fc, "/@config");
  EXPECT_EQ(again.substr(again.find('\n')), config.substr(config.find('\n')));  // line 1 names the source file
}

TEST(Hdf5Atomicity, NothingLeftAtAnUnwritableOutputPath) {
  ScratchDir dir("atomic");
  const std::string run = "run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end 0.1 ";
  write_text(dir / "file", "x");
  EXPECT_EQ(dir.run(run + "--out file/out.h5").exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "file/out.h5"));
  std::filesystem::create_directory(dir.path() / "dir.h5");
  EXPECT_EQ(dir.run(run + "--out dir.h5").exit_code, 2);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "dir.h5"));
  EXPECT_TRUE(no_temp_files(dir.path()));

  // Bad input discovered after the output was opened (second run of a config): the temp file goes, and a
  // previous results file at the output path is left exactly as it was.
  ASSERT_EQ(dir.run(run + "--out keep.h5").exit_code, 0);
  const std::string before = clm::testing::read_text(dir / "keep.h5");
  write_text(dir / "bad.ini", "[run]\nintegrator = rk4\nout = keep.h5\n[run.a]\nproblem = pendulum_polar\n"
                              "formulation = kkt\n[run.b]\nproblem = chaplygin_sleigh\nformulation = kkt\n"
                              "[initial.b]\nq0 = 0 0 0\nqd0 = 1 1 1\nstrict_initial = true\n");
  EXPECT_EQ(dir.run("run bad.ini").exit_code, 1);  // strict_initial is a [run] key, not [initial]
  write_text(dir / "bad2.ini", "[run]\nintegrator = rk4\nout = keep.h5\nstrict_initial = true\n[run.a]\n"
                               "problem = pendulum_polar\nformulation = kkt\n[run.b]\nproblem = chaplygin_sleigh\n"
                               "formulation = kkt\n[initial.b]\nq0 = 0 0 0\nqd0 = 1 1 1\n");
  const auto r = dir.run("run bad2.ini");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("run b"), std::string::npos) << r.err;
  EXPECT_EQ(clm::testing::read_text(dir / "keep.h5"), before);
  EXPECT_TRUE(no_temp_files(dir.path()));
}

TEST(Hdf5Atomicity, InterruptedRunLeavesNoFile) {
  ScratchDir dir("interrupt");
  // About 1e8 Euler steps: far longer than the 0.5 s before SIGTERM.
  const auto r = dir.run_shell_prefix("timeout -s TERM 0.5",
                                      "run --problem pendulum_polar --formulation kkt --integrator euler --dt 1e-4 "
                                      "--t-end 1e4 --output-every 10 --max-steps 200000000 --out long.h5");
  EXPECT_EQ(r.exit_code, 124);  // timeout's code: the run was still going
  EXPECT_FALSE(std::filesystem::exists(dir / "long.h5"));
  EXPECT_TRUE(no_temp_files(dir.path()));
}

TEST(Hdf5Divergence, DivergedRunIsRecordedAndTheFileIsComplete) {
  ScratchDir dir("diverge");
  // Explicit Euler at dt = 0.1 pumps energy into the pendulum; |y| passes 100 at t = 16.2 (the
  // divergence threshold is lowered so the test is fast). The second run still happens.
  write_text(dir / "d.ini", R"([run]
problem = pendulum_polar
formulation = kkt
t_end = 20
output_every = 0.1
out = d.h5
[run.blowup]
integrator = euler
dt = 0.1
divergence_threshold = 100
[run.fine]
integrator = rk4
dt = 1e-2
)");
  const auto r = dir.run("run d.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("run blowup: diverged"), std::string::npos) << r.out;
  const auto f = flatten_file(dir / "d.h5");
  EXPECT_EQ(attr_s(f, "/runs/blowup@status"), "diverged");
  EXPECT_NE(attr_s(f, "/runs/blowup@message").find("exceeded 100"), std::string::npos);
  const auto& t = at(f, "/runs/blowup/t").d;
  ASSERT_GT(t.size(), 10u);
  EXPECT_LT(t.size(), 201u);
  EXPECT_LT(t.back(), 20.0);
  EXPECT_LE(attr_d(f, "/runs/blowup@t_reached"), 20.0);
  const hsize_t K = t.size();
  for (const char* d : {"q", "qd"}) EXPECT_EQ(at(f, std::string("/runs/blowup/") + d).dims, (std::vector<hsize_t>{K, 2}));
  EXPECT_EQ(at(f, "/runs/blowup/lambda").dims, (std::vector<hsize_t>{K, 1}));
  EXPECT_EQ(at(f, "/runs/blowup/energy").dims, (std::vector<hsize_t>{K}));
  EXPECT_EQ(attr_s(f, "/runs/fine@status"), "ok");
  EXPECT_EQ(at(f, "/runs/fine/t").dims, (std::vector<hsize_t>{201}));
  EXPECT_EQ(at(f, "/summary/status").s, (std::vector<std::string>{"diverged", "ok"}));
  EXPECT_GT(at(f, "/summary/max_rel_energy_error").d[0], 1.0);  // Euler's energy gain is visible
  EXPECT_LT(at(f, "/summary/max_rel_energy_error").d[1], 1e-6);
  const auto info = dir.run("info d.h5");
  EXPECT_NE(info.out.find("diverged"), std::string::npos) << info.out;
}
