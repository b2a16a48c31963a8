// `clmbench analyze --speed` (analysis/speed_analysis.hpp): the printed table and stability-change lines,
// the /analysis datasets of --out, the speed-list forms, and one-line refusals.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "clmbench_process.hpp"
#include "analysis/speed_analysis.hpp"

namespace {

std::vector<double> read_doubles(const H5::H5File& f, const std::string& name, std::vector<hsize_t>& dims) {
  H5::DataSet ds = f.openDataSet(name);
  H5::DataSpace space = ds.getSpace();
  dims.assign(static_cast<size_t>(space.getSimpleExtentNdims()), 0);
  space.getSimpleExtentDims(dims.data());
  hsize_t count = 1;
  for (hsize_t d : dims) count *= d;
  std::vector<double> v(count);
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  return v;
}

TEST(SpeedAnalysisCli, PrintsEigenvaluesAndTheWeaveAndCapsizeSpeeds) {
  clm::testing::ScratchDir dir("speed_analysis");
  const auto r = dir.run("analyze --problem bicycle --speed 0:10:2 --out speeds.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("weave speed = 4.29238253634"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("capsize speed = 6.02426201538"), std::string::npos) << r.out;
  // The published speeds beside them, with the digits matched (at least 12: measured 13.8 and 12.7).
  for (const char* published : {"published 4.29238253634111 m/s [Meijaard-2007]: ", "published 6.02426201538837 m/s [Meijaard-2007]: "}) {
    const size_t at = r.out.find(published);
    ASSERT_NE(at, std::string::npos) << published << "\n" << r.out;
    EXPECT_GT(std::stod(r.out.substr(at + std::string(published).size())), 12.0) << r.out.substr(at, 80);
  }
  // Other parameters: another bicycle, so no published speeds.
  const auto other = dir.run("analyze --problem bicycle --param mB=80 --speed 0:10:2");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out.find("published"), std::string::npos) << other.out;
  // The v = 10 row of [Meijaard-2007] Table 2 (caster mode) as printed.
  EXPECT_NE(r.out.find("-24.62459635017"), std::string::npos) << r.out;

  H5::H5File f(dir / "speeds.h5", H5F_ACC_RDONLY);
  // An analysis file holds the analysis (issue 20, debt 3: it had an empty /runs and a /summary of 37 empty
  // columns beside /analysis), and the provenance of every results file.
  ASSERT_EQ(f.getNumObjs(), 1u);
  EXPECT_EQ(f.getObjnameByIdx(0), "analysis");
  EXPECT_TRUE(f.attrExists("clmbench_version"));
  EXPECT_TRUE(f.attrExists("command_line"));
  // ... which `clmbench info` reads as such (it refused it, "no /summary group", exit 2).
  const auto info = dir.run("info speeds.h5");
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("speeds.h5: no runs, /analysis of clmbench analyze"), std::string::npos) << info.out;
  std::vector<hsize_t> dims;
  const auto speed = read_doubles(f, "/analysis/speed", dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{6}));
  EXPECT_EQ(speed[5], 10.0);
  const auto re = read_doubles(f, "/analysis/eigenvalues_real", dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{6, 4}));
  const auto im = read_doubles(f, "/analysis/eigenvalues_imag", dims);
  ASSERT_EQ(dims, (std::vector<hsize_t>{6, 4}));
  // v = 10: weave pair first (re -3.72016840437287, +-10.90681139476287 i), then capsize 0.161... sorted by
  // real part descending: capsize, weave +, weave -, caster.
  EXPECT_NEAR(re[5 * 4 + 0], 0.16105338653172, 1e-13);
  EXPECT_NEAR(re[5 * 4 + 1], -3.72016840437287, 1e-13);
  EXPECT_NEAR(im[5 * 4 + 1], 10.90681139476287, 1e-13);
  EXPECT_NEAR(im[5 * 4 + 2], -10.90681139476287, 1e-13);
  EXPECT_NEAR(re[5 * 4 + 3], -24.62459635017404, 1e-12);
  H5::Group g = f.openGroup("/analysis");
  double vw = 0;
  g.openAttribute("weave_speed").read(H5::PredType::NATIVE_DOUBLE, &vw);
  EXPECT_NEAR(vw, 4.29238253634111, 1e-10);
  // The published value is recorded beside the computed one (at the default parameters only).
  double pw = 0;
  g.openAttribute("published_weave_speed").read(H5::PredType::NATIVE_DOUBLE, &pw);
  EXPECT_EQ(pw, 4.29238253634111);
  EXPECT_TRUE(g.attrExists("published_weave_speed_source"));
}

TEST(SpeedAnalysisCli, SpeedListForms) {
  EXPECT_EQ(clm::parse_speed_list("0,0.5, 1", "--speed"), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(clm::parse_speed_list("1:2:0.5", "--speed"), (std::vector<double>{1, 1.5, 2}));
  EXPECT_EQ(clm::parse_speed_list("0:1:0.1", "--speed").size(), 11u);  // the stop is reached within rounding
  for (const char* bad : {"1:2", "1:2:0", "2:1:0.5", "a,b", "", "0:1e9:1e-9"})
    EXPECT_THROW(clm::parse_speed_list(bad, "--speed"), clm::InputError) << bad;
}

TEST(SpeedAnalysisCli, RefusesBadInputWithOneLine) {
  clm::testing::ScratchDir dir("speed_analysis_bad");
  for (const std::string& args :
       {std::string("analyze --problem four_bar --speed 1,2"), std::string("analyze --problem bicycle --speed 1:x:1"),
        std::string("analyze --problem bicycle --speed 1 --q0 0,0,0,0,0,0,0"),
        std::string("analyze --problem bicycle --qd0 1,2"), std::string("analyze --problem bicycle --speed 1 --param w=-1")}) {
    const auto r = dir.run(args);
    SCOPED_TRACE(args);
    clm::testing::expect_one_line_error(r, 1, {});
  }
  const auto r = dir.run("analyze --problem four_bar --speed 1,2");
  EXPECT_NE(r.err.find("declares no steady motion"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bicycle"), std::string::npos) << r.err;
}

}  // namespace
