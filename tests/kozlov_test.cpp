// `clmbench kozlov CONFIG.ini` (issue 3, item 3): Kozlov's Theorem 1 measured end to end through the CLI,
// the /kozlov/<study> layout, the fit recomputed from the written datasets, a diverging member of the
// family recorded without stopping the study, and one-line errors for bad [kozlov] keys.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "clmbench_process.hpp"
#include "studies/kozlov_study.hpp"

using namespace clm;
using clm::testing::ProcessResult;
using clm::testing::ScratchDir;
using clm::testing::expect_one_line_error;
using clm::testing::write_text;

namespace {

std::vector<double> read_doubles(const H5::Group& g, const std::string& name) {
  H5::DataSet ds = g.openDataSet(name);
  hsize_t n = 0;
  ds.getSpace().getSimpleExtentDims(&n);
  std::vector<double> v(n);
  if (n) ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  return v;
}

std::vector<std::string> read_strings(const H5::Group& g, const std::string& name) {
  H5::DataSet ds = g.openDataSet(name);
  hsize_t n = 0;
  ds.getSpace().getSimpleExtentDims(&n);
  std::vector<char*> raw(n);
  const H5::StrType st = ds.getStrType();  // the file's own string type (variable length, UTF-8)
  ds.read(raw.data(), st);
  std::vector<std::string> out(raw.begin(), raw.end());
  H5Dvlen_reclaim(st.getId(), ds.getSpace().getId(), H5P_DEFAULT, raw.data());
  return out;
}

double number_attr(const H5::Group& g, const std::string& name) {
  double v = NAN;
  g.openAttribute(name).read(H5::PredType::NATIVE_DOUBLE, &v);
  return v;
}

std::string text_attr(const H5::Group& g, const std::string& name) {
  std::string v;
  H5::Attribute a = g.openAttribute(name);
  a.read(a.getStrType(), v);
  return v;
}

// A sleigh with non-default parameters and initial data off the constraint (projected by the command).
const char* kSleighStudy = R"([run]
problem = chaplygin_sleigh
integrator = radau5
t_end = 2
rtol = 1e-10
atol = 1e-12
dt = 1e-4
output_every = 0.02
out = study.h5
[param]
m = 1.7
Ic = 0.35
b = 0.3
[initial]
q0 = 0.2 -0.1 0.4
qd0 = 0.9 0.7 -1.1
[kozlov]
theorem = 1
study = sleigh_t1
N = 1e2 1e3 1e4 1e5
reference_rtol = 1e-12
reference_atol = 1e-14
)";

}  // namespace

// Theorem 1 [seed-004] through the CLI: penalty -> kkt with error O(1/N); the file holds /kozlov/<study>
// with every dataset and attribute, the attributes agree with a fit recomputed from the datasets, and
// every run is under /runs.
TEST(KozlovStudy, Theorem1SleighSlopeAndLayout) {
  ScratchDir dir("kozlov");
  write_text(dir / "k.ini", kSleighStudy);
  const ProcessResult r = dir.run("kozlov k.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("slope"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error_q"), std::string::npos) << r.out;
  std::printf("%s", r.out.c_str());

  H5::H5File file(dir / "study.h5", H5F_ACC_RDONLY);
  H5::Group g = file.openGroup("/kozlov/sleigh_t1");
  const auto N = read_doubles(g, "N");
  const auto eq = read_doubles(g, "error_q");
  const auto eqd = read_doubles(g, "error_qd");
  const auto cv = read_doubles(g, "constraint_violation");
  ASSERT_EQ(N, (std::vector<double>{1e2, 1e3, 1e4, 1e5}));
  ASSERT_EQ(eq.size(), 4u);
  ASSERT_EQ(eqd.size(), 4u);
  ASSERT_EQ(cv.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::isfinite(eq[i]) && eq[i] > 0) << i;
    EXPECT_TRUE(std::isfinite(eqd[i]) && eqd[i] > 0) << i;
    EXPECT_TRUE(std::isfinite(cv[i]) && cv[i] > 0) << i;
    if (i) {  // each decade of N buys about a decade of accuracy, in q, qd and A qd alike
      EXPECT_LT(eq[i], 0.2 * eq[i - 1]) << i;
      EXPECT_LT(eqd[i], 0.2 * eqd[i - 1]) << i;
      EXPECT_LT(cv[i], 0.2 * cv[i - 1]) << i;
    }
  }
  // Theorem 1 gives error O(1/N): slope -1. Measured -0.9994 with fit residual 4.3e-4 over N = 1e2..1e5
  // (the asymptotic regime: every decade gains a decade); the bands are a few times that scatter.
  const double slope = number_attr(g, "slope");
  EXPECT_NEAR(slope, -1.0, 0.01);
  EXPECT_LT(number_attr(g, "fit_residual"), 2e-3);
  EXPECT_EQ(text_attr(g, "fitted_error"), "error_q");
  EXPECT_EQ(text_attr(g, "limit_formulation"), "penalty");
  EXPECT_EQ(text_attr(g, "reference_formulation"), "kkt");
  EXPECT_EQ(number_attr(g, "fit_points"), 4.0);

  // The written slope, intercept and residual are the least-squares fit of the written errors.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double x = std::log10(N[i]), y = std::log10(eq[i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double s = (4 * sxy - sx * sy) / (4 * sxx - sx * sx), b = (sy - s * sx) / 4;
  double ss = 0;
  for (size_t i = 0; i < 4; ++i) ss += std::pow(std::log10(eq[i]) - (s * std::log10(N[i]) + b), 2);
  EXPECT_NEAR(slope, s, 1e-12);
  EXPECT_NEAR(number_attr(g, "intercept"), b, 1e-12);
  EXPECT_NEAR(number_attr(g, "fit_residual"), std::sqrt(ss / 4), 1e-12);
  EXPECT_LT(number_attr(g, "fit_residual"), 0.1);

  // Every run is under /runs (the reference and one per N), with the N it ran at.
  H5::Group runs = file.openGroup("/runs");
  EXPECT_EQ(runs.getNumObjs(), 5u);
  EXPECT_TRUE(file.nameExists("/runs/reference_kkt"));
  const auto ids = read_strings(g, "run_id");
  ASSERT_EQ(ids.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    H5::Group run = runs.openGroup(ids[i]);
    EXPECT_EQ(text_attr(run, "formulation"), "penalty");
    EXPECT_EQ(number_attr(run, "formulation.N"), N[i]);
  }
}

// fit_N_min restricts the fit; a member of the family that diverges (explicit Euler on the stiff penalty
// system, unstable once dt N / m exceeds 2) is recorded with its status and NaN errors, left out of the
// fit, and the study still writes its file.
TEST(KozlovStudy, DivergedRunIsRecordedAndExcluded) {
  ScratchDir dir("kozlov_div");
  write_text(dir / "k.ini", R"([run]
problem = chaplygin_sleigh
integrator = euler
dt = 1e-3
t_end = 1
output_every = 0.05
divergence_threshold = 1e6
out = div.h5
[kozlov]
theorem = 1
study = euler
N = 1e1 3e1 1e2 1e5
fit_N_min = 2e1
)");
  const ProcessResult r = dir.run("kozlov k.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("excluded from the fit"), std::string::npos) << r.out;
  H5::H5File file(dir / "div.h5", H5F_ACC_RDONLY);
  H5::Group g = file.openGroup("/kozlov/euler");
  const auto status = read_strings(g, "status");
  ASSERT_EQ(status.size(), 4u);
  EXPECT_EQ(status[0], "ok");
  EXPECT_EQ(status[3], "diverged");
  const auto eq = read_doubles(g, "error_q");
  EXPECT_TRUE(std::isfinite(eq[0]));
  EXPECT_TRUE(std::isnan(eq[3]));
  EXPECT_EQ(number_attr(g, "fit_points"), 2.0);  // 3e1 and 1e2: 1e1 is below fit_N_min, 1e5 diverged
  EXPECT_TRUE(std::isfinite(number_attr(g, "slope")));
  EXPECT_EQ(text_attr(file.openGroup("/runs/penalty_N1e5"), "status"), "diverged");

  // One point in the fit range: no slope, said as such (issue 21: it printed "slope nan"); the attribute stays NaN.
  const ProcessResult one = dir.run("kozlov k.ini --set kozlov.fit_N_min=5e1 --out one.h5");
  ASSERT_EQ(one.exit_code, 0) << one.err << one.out;
  EXPECT_EQ(one.out.find("slope nan"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("slope - (no fit: 1 finite error in the fit range"), std::string::npos) << one.out;
  H5::H5File one_file(dir / "one.h5", H5F_ACC_RDONLY);
  EXPECT_TRUE(std::isnan(number_attr(one_file.openGroup("/kozlov/euler"), "slope")));
}

TEST(KozlovStudy, BadKeysGiveOneLineErrors) {
  ScratchDir dir("kozlov_bad");
  const std::string base = "[run]\nproblem = chaplygin_sleigh\nintegrator = radau5\nt_end = 0.1\n";
  write_text(dir / "a.ini", base + "[kozlov]\ntheorem = 1\nN = 1e2 1e3\nslop = 2\n");
  expect_one_line_error(dir.run("kozlov a.ini"), 1, {"kozlov.slop", "a.ini", "known keys"});
  write_text(dir / "b.ini", base + "[kozlov]\ntheorem = 3\nN = 1e2\n");
  expect_one_line_error(dir.run("kozlov b.ini"), 1, {"'3'", "kozlov.theorem", "expected 1 or 2"});
  write_text(dir / "c.ini", base + "[kozlov]\ntheorem = 1\nN = 1e2 -5\n");
  expect_one_line_error(dir.run("kozlov c.ini"), 1, {"kozlov.N", "> 0", "-5"});
  write_text(dir / "d.ini", base + "[kozlov]\ntheorem = 1\n");
  expect_one_line_error(dir.run("kozlov d.ini"), 1, {"no kozlov.N"});
  write_text(dir / "e.ini", base + "[kozlov]\ntheorem = 2\nN = 1e2\nfit_error = lambda\n");
  expect_one_line_error(dir.run("kozlov e.ini"), 1, {"'lambda'", "kozlov.fit_error"});
  write_text(dir / "f.ini", base + "formulation = kkt\n[kozlov]\ntheorem = 1\nN = 1e2\n");
  expect_one_line_error(dir.run("kozlov f.ini"), 1, {"run.formulation", "penalty"});
  expect_one_line_error(dir.run("kozlov a.ini --set kozlov.slop=1"), 1, {"kozlov.slop"});
  expect_one_line_error(dir.run("kozlov missing.ini"), 1, {"missing.ini"});
  write_text(dir / "g.ini", base + "[kozlov]\ntheorem = 1\nN = 1e2\n");
  expect_one_line_error(dir.run("kozlov g.ini --set kozlov.fit_N_min=1e4 --set kozlov.fit_N_max=1e3"), 1,
                        {"fit_N_min", "fit_N_max"});
  EXPECT_FALSE(std::filesystem::exists(dir / "results"));  // nothing ran, nothing was written
  const ProcessResult help = dir.run("kozlov --help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* key : {"theorem", "reference_rtol", "fit_N_min", "fit_error", "/kozlov/<study>"})
    EXPECT_NE(help.out.find(key), std::string::npos) << key;
}
