// Issue 24 item 3: a run's error against its reference is kept at every sample (RunRecord::reference_error,
// /runs/<id>/error_vs_reference), the series whose maxima and final values are the summary's figures.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "runs/reference_cache.hpp"
#include "runs/results_writer.hpp"
#include "runs/runner.hpp"
#include "run_spec_for.hpp"

namespace clm {
namespace {

RunSpec spec_for(const std::string& problem, const std::string& formulation, double t_end) {
  RunSpec s = testing::spec_for(problem, formulation, "dopri5");
  s.t_end = t_end;
  s.rtol = 1e-6;
  s.atol = 1e-8;
  s.output_every = 0.05;
  return s;
}

double column_max(const std::vector<double>& e, int c) {
  double m = 0;
  for (size_t k = static_cast<size_t>(c); k < e.size(); k += 3) m = std::max(m, e[k]);
  return m;
}

void expect_series_matches_summary(const RunRecord& r, bool lambda) {
  ASSERT_TRUE(r.records_reference_error);
  ASSERT_EQ(r.reference_error.size(), 3 * r.samples());
  EXPECT_EQ(r.reference_error[0], 0.0);  // the reference starts where the run does
  EXPECT_EQ(column_max(r.reference_error, 0), r.summary.q_error_max);
  EXPECT_EQ(column_max(r.reference_error, 1), r.summary.qd_error_max);
  EXPECT_EQ(r.reference_error[3 * (r.samples() - 1)], r.summary.q_error_final);
  EXPECT_EQ(r.reference_error[3 * (r.samples() - 1) + 1], r.summary.qd_error_final);
  if (lambda) {
    EXPECT_EQ(column_max(r.reference_error, 2), r.summary.lambda_error_max);
  } else {
    EXPECT_TRUE(std::isnan(r.reference_error[5]));
  }
  EXPECT_GT(r.summary.q_error_max, 0.0);
}

// Against the closed form (the sleigh) and against a reference run (the slider-crank).
TEST(ReferenceErrorSeries, EverySampleAgainstTheClosedFormAndAReferenceRun) {
  std::ostringstream log;
  {
    PreparedRun run = prepare_run(spec_for("chaplygin_sleigh", "kkt", 5), log);
    const RunRecord r = execute_run(run, nullptr, true);
    EXPECT_EQ(r.summary.reference_source, "closed_form");
    expect_series_matches_summary(r, true);
  }
  {
    RunSpec s = spec_for("slider_crank", "kkt", 2);
    PreparedRun run = prepare_run(s, log);
    ReferenceCache cache;
    const auto ref = cache.get(run);
    const RunRecord r = execute_run(run, nullptr, true, nullptr, ref.get());
    EXPECT_EQ(r.summary.reference_source, "reference_run");
    expect_series_matches_summary(r, true);
  }
  {
    // substituted has no multipliers: lambda's column is NaN, never 0.
    PreparedRun run = prepare_run(spec_for("rolling_disk", "substituted", 5), log);
    const RunRecord r = execute_run(run, nullptr, true);
    expect_series_matches_summary(r, false);
  }
}

// No reference, or a published one (one time only): nothing recorded, and no dataset written.
TEST(ReferenceErrorSeries, NoneWithoutAReferenceComparedAtEverySample) {
  std::ostringstream log;
  PreparedRun run = prepare_run(spec_for("four_bar", "kkt", 1), log);
  const RunRecord r = execute_run(run, nullptr, true);
  EXPECT_EQ(r.summary.reference_source, "none");
  EXPECT_FALSE(r.records_reference_error);
  EXPECT_TRUE(r.reference_error.empty());
}

// The dataset in the file: K x 3, columns q qd lambda, equal to the record's series.
TEST(ReferenceErrorSeries, WrittenToTheResultsFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("clm_error_series_" + std::to_string(::getpid()) + ".h5")).string();
  std::ostringstream log;
  PreparedRun run = prepare_run(spec_for("chaplygin_sleigh", "kkt", 2), log);
  RunRecord r;
  {
    ResultsWriter writer(path, {});
    r = execute_run(run, &writer.run_observer(), true);
    writer.commit({"test", "", ""});
  }
  H5::H5File f(path, H5F_ACC_RDONLY);
  H5::DataSet ds = f.openDataSet("/runs/chaplygin_sleigh_kkt/error_vs_reference");
  hsize_t dims[2];
  ds.getSpace().getSimpleExtentDims(dims);
  ASSERT_EQ(dims[0], r.samples());
  ASSERT_EQ(dims[1], 3u);
  std::vector<double> v(dims[0] * 3);
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  EXPECT_EQ(v, r.reference_error);
  f.close();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace clm
