// A result's identity includes every input file it read (issue 21, bad 3). With [shape] phi = file:phi.txt,
// a sweep killed after some runs, phi.txt edited, and --resume gave exit 0 with runs of both contents mixed,
// the recorded config saying only "file:phi.txt". Samples are now recorded as file:PATH@sha256:HEX (in every
// run's resolved configuration, the sweep's configuration and the run's shape.NAME attribute, with the samples
// themselves when few), and --resume, merge and a re-run of a recorded configuration compare them.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "clmbench_process.hpp"
#include "core/sha256.hpp"

namespace clm {
namespace {

namespace fs = std::filesystem;
using testing::expect_one_line_error;
using testing::ProcessResult;
using testing::read_text;
using testing::ScratchDir;
using testing::write_text;

const char* kSweep = R"([run]
problem = roller_racer
formulation = prescribed_shape
integrator = dopri5
t_end = 1
out = s.h5
[shape]
phi = file:phi.txt
[sweep]
rtol = 1e-4 1e-5 1e-6 1e-7
)";

// phi(t) = 0.3 t^2 sampled every 0.1 on [0, 1.5]; `bump` changes one sample.
std::string samples(double bump = 0) {
  std::string s;
  for (int i = 0; i <= 15; ++i) {
    const double t = 0.1 * i;
    s += std::to_string(t) + " " + std::to_string(0.3 * t * t + (i == 7 ? bump : 0)) + "\n";
  }
  return s;
}

TEST(InputIdentity, ResumeRefusesPartsComputedFromOtherContents) {
  ScratchDir dir("identity_resume");
  write_text(dir / "s.ini", kSweep);
  write_text(dir / "phi.txt", samples());
  const std::string hash = sha256_hex(samples());
  // The final file cannot be created (a full disk): the jobs stop after the runs in progress (a failed merge
  // stops them, Sweep.AMergeThatFailsStopsTheRuns), which are kept in s.h5.parts.
  const ProcessResult first = dir.run_shell_prefix(
      "LD_PRELOAD='" CLMBENCH_WRITE_FAULT_LIB "' CLM_FAULT_PATH=s.h5.tmp- CLM_FAULT_AFTER_BYTES=0", "sweep s.ini --progress never");
  ASSERT_EQ(first.exit_code, 2) << first.err;
  ASSERT_TRUE(fs::exists(dir / "s.h5.parts"));
  write_text(dir / "phi.txt", samples(1e-3));
  expect_one_line_error(dir.run("sweep s.ini --resume --progress never"), 1,
                        {"s.h5.parts/", "different configuration", "phi = file:phi.txt@sha256:" + hash,
                         "phi = file:phi.txt@sha256:" + sha256_hex(samples(1e-3)), "input files it names"});
  // Restored, the parts are the sweep's again.
  write_text(dir / "phi.txt", samples());
  const ProcessResult resumed = dir.run("sweep s.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::smatch counts;  // the parts taken as the sweep's, the runs the stop left computed now
  ASSERT_TRUE(std::regex_search(resumed.out, counts, std::regex("computed (\\d+), resumed (\\d+)"))) << resumed.out;
  EXPECT_EQ(std::stoi(counts[1]) + std::stoi(counts[2]), 4) << resumed.out;
  EXPECT_GT(std::stoi(counts[2]), 0) << resumed.out;
  // The identity is in the results: the run's attribute and its resolved configuration, and the samples.
  const ProcessResult info = dir.run("info s.h5 --run 0_rtol=1e-4");
  EXPECT_NE(info.out.find("shape.phi = file:phi.txt@sha256:" + hash), std::string::npos) << info.out;
}

// A mechanism file edited while a sweep of it runs (issue 43: exit 3, "internal error", and advice about
// "@sha256"): one line, exit 1, naming the file and the run that found it, saying that the finished runs are kept
// and that --resume continues once the file is restored; and it does.
TEST(InputIdentity, AFileEditedDuringASweepEndsItWithResumeAdvice) {
  ScratchDir dir("identity_edit");
  const std::string sleigh = read_text(std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/chaplygin_sleigh.toml");
  write_text(dir / "m.toml", sleigh);
  write_text(dir / "s.ini", "[run]\nproblem = m.toml\nformulation = kkt\nintegrator = rk4\nt_end = 8\ndt = 2e-4\n"
                            "output_every = 0.5\ntiming_budget = 0\nout = s.h5\n[sweep]\n"
                            "param.b = 0.1 0.15 0.2 0.25 0.3 0.35\nparam.m = 1 1.5 2 2.5 3 3.5 4 4.5\n");
  // The file is edited once the sweep has committed its first part (every 0.2 s: runs finished are kept), so that
  // there is something to resume however fast or slow the build runs (a sanitizer build had none at 0.1 s).
  const ProcessResult edited = dir.run_shell_prefix(
      "{ (until ls s.h5.parts/*.part > /dev/null 2>&1; do sleep 0.005; done; printf '# edited\\n' >> m.toml) & } ;",
      "sweep s.ini --jobs 1 --progress never");
  expect_one_line_error(edited, 1,
                        {"m.toml changed while the sweep ran (sha256 ", "the runs finished so far are kept in s.h5.parts",
                         "restore the file and run the same sweep again with --resume to continue"});
  EXPECT_EQ(edited.err.find("internal error"), std::string::npos) << edited.err;
  EXPECT_FALSE(fs::exists(dir / "s.h5"));
  write_text(dir / "m.toml", sleigh);
  const ProcessResult resumed = dir.run("sweep s.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::smatch counts;
  ASSERT_TRUE(std::regex_search(resumed.out, counts, std::regex("computed (\\d+), resumed (\\d+)"))) << resumed.out;
  EXPECT_EQ(std::stoi(counts[1]) + std::stoi(counts[2]), 48) << resumed.out;
  EXPECT_GT(std::stoi(counts[2]), 0) << resumed.out;
}

TEST(InputIdentity, ShardsComputedFromOtherContentsDoNotMerge) {
  ScratchDir dir("identity_shards");
  write_text(dir / "s.ini", kSweep);
  write_text(dir / "phi.txt", samples());
  ASSERT_EQ(dir.run("sweep s.ini --shard 0/2 --progress never").exit_code, 0);
  write_text(dir / "phi.txt", samples(1e-3));
  ASSERT_EQ(dir.run("sweep s.ini --shard 1/2 --progress never").exit_code, 0);
  expect_one_line_error(dir.run("merge s.h5 s.shard-0-of-2.h5 s.shard-1-of-2.h5"), 1,
                        {"different sweeps", "@sha256:" + sha256_hex(samples()), "@sha256:" + sha256_hex(samples(1e-3))});
  // With the contents of shard 0 again, shard 1 recomputed: one sweep.
  write_text(dir / "phi.txt", samples());
  ASSERT_EQ(dir.run("sweep s.ini --shard 1/2 --progress never").exit_code, 0);
  const ProcessResult merged = dir.run("merge s.h5 s.shard-0-of-2.h5 s.shard-1-of-2.h5");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
}

TEST(InputIdentity, ARecordedConfigurationRefusesAChangedFile) {
  ScratchDir dir("identity_rerun");
  write_text(dir / "phi.txt", samples());
  const std::string run = "run --problem roller_racer --formulation prescribed_shape --integrator dopri5 --t-end 1 ";
  const std::string recorded = "phi=file:phi.txt@sha256:" + sha256_hex(samples());
  ASSERT_EQ(dir.run(run + "--shape " + recorded + " --out a.h5").exit_code, 0);
  write_text(dir / "phi.txt", samples(1e-3));
  expect_one_line_error(dir.run(run + "--shape " + recorded + " --out b.h5"), 1,
                        {"phi.txt", "has changed since the configuration naming it was recorded"});
  EXPECT_FALSE(fs::exists(dir / "b.h5"));
  // Named without the hash, the file is used as it is now.
  ASSERT_EQ(dir.run(run + "--shape phi=file:phi.txt --out c.h5").exit_code, 0);
}

}  // namespace
}  // namespace clm
