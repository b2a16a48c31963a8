// Edge inputs found by the fault campaign of issue 8: each is refused in one line naming the key (or
// handled as a user would expect), where before it was accepted, misreported or dropped.
#include <gtest/gtest.h>

#include <filesystem>

#include "clmbench_process.hpp"

namespace clm {
namespace {

using testing::expect_one_line_error;
using testing::ProcessResult;
using testing::read_text;
using testing::ScratchDir;
using testing::write_text;

const std::string kRun = "run --problem pendulum_polar --formulation kkt --integrator rk4 --out x.h5 ";

TEST(InputEdges, SampleCountsThatCannotExistAreRefused) {
  ScratchDir dir("samples");
  // t_end / output_every overflowed a long: the run said "ok" with one sample.
  expect_one_line_error(dir.run(kRun + "--output-every 1e-310"), 1, {"output_every", "samples"});
  expect_one_line_error(dir.run(kRun + "--output-every 1e-19"), 1, {"output_every", "samples"});
  // A run whose samples would not fit the output limit is refused before it starts; the limit can be set.
  expect_one_line_error(dir.run(kRun + "--t-end 1e4 --output-every 1e-6"), 1, {"GB", "max_output_gb"});
  expect_one_line_error(dir.run(kRun + "--t-end 10 --output-every 1e-5 --max-output-gb 0.01"), 1, {"max_output_gb = 0.01"});
  EXPECT_FALSE(std::filesystem::exists(dir / "x.h5"));
}

TEST(InputEdges, StepLargerThanTheRunIsRefused) {
  ScratchDir dir("dt");
  expect_one_line_error(dir.run(kRun + "--t-end 1 --dt 2"), 1, {"run.dt = 2", "run.t_end = 1"});
}

TEST(InputEdges, OutOfRangeOptionsAreRefused) {
  ScratchDir dir("ranges");
  expect_one_line_error(dir.run(kRun + "--rtol 1e6"), 1, {"--rtol", "< 1", "1e+06"});
  expect_one_line_error(dir.run(kRun + "--repartition-threshold -1"), 1, {"--repartition-threshold", "> 1"});
  // N: one rule and one message whether the value is negative or zero.
  const ProcessResult negative = dir.run(kRun + "--N -1"), zero = dir.run(kRun + "--N 0");
  expect_one_line_error(negative, 1, {"--N must be > 0"});
  expect_one_line_error(zero, 1, {"--N must be > 0"});
}

TEST(InputEdges, AnEmptyRunSectionIsARun) {
  ScratchDir dir("empty");
  write_text(dir / "c.ini",
             "[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = rk4\nt_end = 0.1\n"
             "[run.first]\n[run.second]\nt_end = 0.2\n[run.third]\n");
  const ProcessResult r = dir.run("run c.ini --out c.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("run first: ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run second: ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run third: ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(3 runs)"), std::string::npos) << r.out;
  // Declaration order is kept for empty sections too.
  EXPECT_LT(r.out.find("run first"), r.out.find("run second"));
  EXPECT_LT(r.out.find("run second"), r.out.find("run third"));
}

TEST(InputEdges, EchoedValuesAreShortAndVisible) {
  ScratchDir dir("echo");
  const std::string huge(10'000'000, '7');
  write_text(dir / "big.ini", "[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = rk4\ndt = 1e-3x" + huge + "\n");
  const ProcessResult big = dir.run("run big.ini");
  expect_one_line_error(big, 1, {"run.dt", "characters)"});
  EXPECT_LT(big.err.size(), 300u);
  write_text(dir / "nul.ini", std::string("[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = rk4\ndt = 1e-3") +
                                  '\0' + "x\n");
  expect_one_line_error(dir.run("run nul.ini"), 1, {"\\x00x", "run.dt"});
}

// A line that is neither a [section] nor key = value is named by file, line and column. Boost's own message had
// no line, and a line holding its placeholder "%invalid_line%" made it loop without end (fuzz_config); an
// option holding one (--%canonical_option%) did the same on the command line.
TEST(InputEdges, MalformedConfigLinesAreNamedByLineAndColumn) {
  ScratchDir dir("lines");
  const std::string head = "[run]\nproblem = pendulum_polar\nformulation = kkt\n";
  write_text(dir / "a.ini", head + "  %invalid_line%\n");
  expect_one_line_error(dir.run_shell_prefix("timeout 20", "run a.ini"), 1,
                        {"a.ini:4:3: not a 'key = value' line: '%invalid_line%'"});
  write_text(dir / "b.ini", "[run\nproblem = pendulum_polar\n");
  expect_one_line_error(dir.run("run b.ini"), 1, {"b.ini:1:1: a section header needs its closing ']': '[run'"});
  write_text(dir / "c.ini", head + "= 5 ; a comment\n");
  expect_one_line_error(dir.run("run c.ini"), 1, {"c.ini:4:1: a key is missing before '=': '= 5'"});
  write_text(dir / "d.ini", head + "integrator rk4\n");
  expect_one_line_error(dir.run("run d.ini"), 1, {"d.ini:4:1: not a 'key = value' line: 'integrator rk4'"});
  for (const char* option : {"--%canonical_option%", "-%canonical_option%", "--%original_token%", "--%option%"})
    expect_one_line_error(dir.run_shell_prefix("timeout 20", std::string("run ") + option), 1,
                          {std::string("unrecognised option '") + option + "'"});
}

TEST(InputEdges, AByteOrderMarkIsAccepted) {
  ScratchDir dir("bom");
  write_text(dir / "bom.ini", "\xEF\xBB\xBF[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = rk4\nt_end = 0.1\n");
  const ProcessResult r = dir.run("run bom.ini --out b.h5");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(InputEdges, AKozlovFitRangeWithoutAnyNIsRefused) {
  ScratchDir dir("fitrange");
  write_text(dir / "k.ini", "[run]\nproblem = chaplygin_sleigh\nintegrator = dopri5\nt_end = 0.1\n"
                            "[kozlov]\ntheorem = 1\nN = 1e2 1e3\nfit_N_min = 1e4\n");
  expect_one_line_error(dir.run("kozlov k.ini"), 1, {"fit_N_min", "holds none"});
}

TEST(InputEdges, InfoShowsAMissingColumnAsADash) {
  ScratchDir dir("dash");
  ASSERT_EQ(dir.run(kRun + "--t-end 0.1").exit_code, 0);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && /usr/bin/python3 -c \"import h5py; f = h5py.File('x.h5', 'a'); del f['summary/samples']\"")
                            .c_str()),
            0);
  const ProcessResult r = dir.run("info x.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = r.out.substr(r.out.find("pendulum_polar_kkt_rk4"));
  EXPECT_NE(row.find(" ok      -  "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Issue 9, defect 3: a Cartesian pendulum under rk4 with a large step drifts far from the true motion;
// "error vs reference" must not say 0 (it compared lambda with the closed-form multiplier at the computed
// state, zero by construction under kkt). The pendulum has no closed-form motion here: "-".
TEST(HonestFigures, ErrorVsReferenceIsADistanceFromTheTrueMotionOrADash) {
  testing::ScratchDir dir("honest");
  const auto r = dir.run("run --problem pendulum_cartesian --formulation kkt --integrator rk4 --dt 0.1 --t-end 200 "
                         "--out p.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = dir.run("info p.h5");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const std::string row = info.out.substr(info.out.find("pendulum_cartesian_kkt_rk4"));
  // columns: ... max_rel_dE err_vs_ref ref wall_s
  std::istringstream cells(row);
  std::vector<std::string> c;
  for (std::string x; cells >> x;) c.push_back(x);
  ASSERT_GE(c.size(), 12u) << row;
  EXPECT_EQ(c[9], "-") << row;   // err_vs_ref
  EXPECT_EQ(c[10], "-") << row;  // ref
  EXPECT_GT(std::stod(c[8]), 0.1) << row;  // the energy error shows how wrong the run is
  // The sleigh has a closed form: its error is a real distance.
  const auto s = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator dopri5 --t-end 2 --out s.h5");
  ASSERT_EQ(s.exit_code, 0);
  const auto sinfo = dir.run("info s.h5");
  EXPECT_NE(sinfo.out.find("  q  "), std::string::npos) << sinfo.out;
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Issue 9, defect 5: options that do nothing for a run are named once, with the reason, and recorded.
TEST(UnusedOptions, AreNamedOnceWithTheReasonAndRecorded) {
  testing::ScratchDir dir("unused");
  const auto r = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --t-end 0.1 --rtol 1e-6 "
                         "--N 5 --baumgarte-beta 2 --repartition-threshold 20 --out w.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_NE(r.err.find("run.rtol = 1e-06 has no effect: integrator rk4 takes fixed steps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("formulation.N = 5 has no effect: formulation kkt does not read it (read by penalty, added_mass)"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("formulation.baumgarte_beta = 2 has no effect: problem chaplygin_sleigh has no position"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("formulation.repartition_threshold = 20 has no effect"), std::string::npos) << r.err;
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && /usr/bin/python3 -c \"import h5py; print(h5py.File('w.h5')['runs/chaplygin_sleigh_kkt_rk4']"
                         ".attrs['warnings'])\" > w.txt").c_str()),
            0);
  const std::string recorded = testing::read_text(dir / "w.txt");
  EXPECT_NE(recorded.find("formulation.N = 5 has no effect"), std::string::npos) << recorded;
  // Options that act say nothing.
  const auto quiet = dir.run("run --problem pendulum_polar --formulation penalty --integrator radau5 --t-end 0.1 "
                             "--rtol 1e-6 --N 1e7 --k 2 --out q.h5");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// Issue 9, defect 6: a flag missing its value is named, not mistaken for a config file.
TEST(Messages, AFlagMissingItsValueIsNamed) {
  testing::ScratchDir dir("flagvalue");
  testing::expect_one_line_error(dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end --out x.h5"),
                                 1, {"--t-end lacks its value"});
  testing::expect_one_line_error(dir.run("analyze --problem --q0 1,2"), 1, {"--problem lacks its value"});
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Issue 8 (minor): g = 1e300 overflows the model terms; the run says so instead of "singular KKT matrix".
TEST(InputEdges, OverflowedTermsAreNamedAsSuch) {
  testing::ScratchDir dir("overflow");
  const auto r = dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --param g=1e300 --t-end 0.1 "
                         "--out g.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("failed (kkt: non-finite model terms"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("singular"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Issue 9, defect 2: the commit stamped into the binary (and every file) is the source tree's current one,
// taken on every build, marked -dirty when tracked files have uncommitted changes.
TEST(Provenance, TheBinaryCarriesTheCurrentCommit) {
  testing::ScratchDir dir("commit");
  const std::string src = CLMBENCH_SOURCE_DIR;
  if (std::system(("git -C '" + src + "' rev-parse HEAD > /dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "the source tree is not a git checkout";
  ASSERT_EQ(std::system(("git -C '" + src + "' rev-parse --short=12 HEAD > '" + (dir / "head.txt") + "'").c_str()), 0);
  ASSERT_EQ(std::system(("git -C '" + src + "' status --porcelain --untracked-files=no > '" + (dir / "dirty.txt") + "'")
                            .c_str()),
            0);
  std::string head = testing::read_text(dir / "head.txt");
  head = head.substr(0, head.find('\n'));
  if (!testing::read_text(dir / "dirty.txt").empty()) head += "-dirty";
  const auto r = dir.run("--version");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("(" + head + ")"), std::string::npos)
      << r.out << " vs " << head << " (rebuild: tools/build.sh takes the commit on every build)";
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Issue 9, defect 4: an explicit method on a stiff problem says so once, and the step limit ends a run that
// cannot finish, naming the limit.
TEST(RunsThatCannotFinish, StiffnessIsDetectedAndTheStepLimitNamed) {
  testing::ScratchDir dir("stiff");
  const auto r = dir.run("run --problem chaplygin_sleigh --formulation penalty --N 1e6 --integrator dopri5 --rtol 1e-6 "
                         "--t-end 0.5 --out s.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("became stiff at t = "), std::string::npos) << r.err;
  EXPECT_NE(lines[0].find("radau5"), std::string::npos) << r.err;
  // The same problem under radau5 is not stiff for radau5: no warning.
  const auto implicit = dir.run("run --problem chaplygin_sleigh --formulation penalty --N 1e6 --integrator radau5 "
                                "--rtol 1e-6 --t-end 0.5 --out i.h5");
  ASSERT_EQ(implicit.exit_code, 0);
  EXPECT_EQ(implicit.err, "");
  // A non-stiff run under dopri5: no warning.
  const auto plain = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator dopri5 --t-end 5 --out p.h5");
  EXPECT_EQ(plain.err, "");
  const auto limited = dir.run("run --problem chaplygin_sleigh --formulation penalty --N 1e6 --integrator dopri5 "
                               "--t-end 5 --max-steps 1000 --out l.h5");
  ASSERT_EQ(limited.exit_code, 0);
  EXPECT_NE(limited.out.find("failed (step limit (max_steps = 1000) reached"), std::string::npos) << limited.out;
}

// dt_max below dt_min is refused before anything runs (issue 21: it was accepted and the run crawled).
TEST(RunSpecChecks, DtMaxBelowDtMinIsRefused) {
  ScratchDir dir("dt_max_below_dt_min");
  expect_one_line_error(dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 1 "
                                "--dt-min 1e-3 --dt-max 1e-4 --out x.h5"),
                        1, {"run.dt_max = 0.0001 is below run.dt_min = 0.001"});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.h5"));
  const ProcessResult ok = dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 0.1 "
                                   "--dt-min 1e-6 --dt-max 1e-3 --out y.h5");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace clm

// A mass whose scale leaves double precision (issue 43 item 3: --param m=1e-320 ran "ok", 6.1e-5 off the m = 1 run,
// and `mechanism check` found no problem): refused before the run in one line, for a zoo problem and for a file.
namespace clm {
namespace {

TEST(InputEdges, AVanishingMassIsRefusedInOneLine) {
  testing::ScratchDir dir("vanishing_mass");
  testing::expect_one_line_error(
      dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 0.1 --param m=1e-320 "
              "--out z.h5 --progress never"),
      1, {"the mass matrix M(q0) of problem pendulum_polar has largest entry", "below 1e-150"});
  const std::string file = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/pendulum_polar.toml";
  testing::expect_one_line_error(dir.run("mechanism check " + file + " --param m=1e-320"), 1,
                                 {"pendulum_polar.toml:", "below 1e-150: its inverse and the solves' products"});
  EXPECT_FALSE(std::filesystem::exists(dir / "z.h5"));
  // A small mass that double precision carries is a mass like any other.
  const auto small = dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 0.1 "
                             "--param m=1e-100 --out s.h5 --progress never --timing-budget 0");
  EXPECT_EQ(small.exit_code, 0) << small.err;
}

}  // namespace
}  // namespace clm
