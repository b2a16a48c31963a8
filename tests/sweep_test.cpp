// clmbench sweep and clmbench merge (docs/design.md section 4): grid expansion and run ids, resolved
// configs per run, --dry-run, results independent of --jobs / --shard / MPI ranks, kill -9 and --resume,
// a diverging run inside a sweep, and one-line errors for bad input. The runs are tiny (t_end <= 1,
// coarse output) so that the suite stays fast; the data are compared by tests/support/h5_tool.py (h5py,
// independent of clmbench's HDF5 code).
#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "clmbench_process.hpp"
#include "runs/reference_cache.hpp"
#include "runs/results_writer.hpp"
#include "runs/run_config.hpp"
#include "runs/runner.hpp"
#include "studies/process_group.hpp"
#include "studies/sweep_plan.hpp"
#include "io/results_file.hpp"
#include "io/results_merge.hpp"
#include "studies/sweep_runner.hpp"
#include "studies/sweep_schedule.hpp"

namespace fs = std::filesystem;
using clm::testing::expect_one_line_error;
using clm::testing::expect_one_line_error_after_notes;
using clm::testing::ProcessResult;
using clm::testing::ScratchDir;
using clm::testing::write_text;

namespace {

// 3 x 3 x 2 = 18 runs of a pendulum, 0.5 s each.
const char* kGrid = R"([run]
problem = pendulum_polar
integrator = rk4
t_end = 0.5
dt = 1e-2
output_every = 0.1
out = grid.h5
[sweep]
formulation = kkt schur nullspace
dt = 1e-2 5e-3 2e-3
param.L = 1 2
)";

struct Tool {
  int exit_code;
  std::string out;
};

// tests/support/h5_tool.py ARGS, run in `dir`.
Tool h5_tool(const ScratchDir& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.path().string() + "' && /usr/bin/python3 '" CLMBENCH_SOURCE_DIR
                          "/tests/support/h5_tool.py' " + args + " > .tool 2>&1";
  const int status = std::system(cmd.c_str());
  Tool t{WIFEXITED(status) ? WEXITSTATUS(status) : -1, clm::testing::read_text(dir.path() / ".tool")};
  fs::remove(dir.path() / ".tool");
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

void expect_identical(const ScratchDir& dir, const std::string& a, const std::string& b) {
  const Tool t = h5_tool(dir, "compare " + a + " " + b);
  EXPECT_EQ(t.exit_code, 0) << a << " vs " << b << ":\n" << t.out;
}

std::vector<std::string> dir_names(const fs::path& p) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST(SweepPlan, GridOrderIdsZipAndNamedRuns) {
  ScratchDir dir("sweep_plan");
  write_text(dir.path() / "z.ini", R"([run]
problem = pendulum_polar
formulation = kkt
integrator = dopri5
t_end = 0.2
[run.a]
[run.b]
integrator = rk4
[sweep]
param.L = 1 2
[sweep.zip]
rtol = 1e-4 1e-6 1e-8
atol = 1e-6 1e-8 1e-10
)");
  const clm::ConfigLayer file = clm::read_config_file(dir / "z.ini");
  const clm::SweepPlan plan = clm::plan_sweep(dir / "z.ini", file, std::nullopt);
  ASSERT_EQ(plan.runs.size(), 12u);  // 2 values x 3 zipped pairs x 2 named runs
  EXPECT_EQ(plan.shape, "param.L (2) x (rtol, atol) (3) x 2 named runs");
  EXPECT_EQ(plan.runs[0].spec.run_id, "00_a_param.L=1_rtol=1e-4_atol=1e-6");
  EXPECT_EQ(plan.runs[1].spec.run_id, "01_b_param.L=1_rtol=1e-4_atol=1e-6");
  EXPECT_EQ(plan.runs[11].spec.run_id, "11_b_param.L=2_rtol=1e-8_atol=1e-10");
  EXPECT_EQ(plan.runs[11].spec.sweep_point, "run=b param.L=2 rtol=1e-8 atol=1e-10");
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const clm::RunSpec& s = plan.runs[i].spec;
    EXPECT_EQ(s.sweep_index, static_cast<long>(i));
    EXPECT_EQ(s.integrator, i % 2 ? "rk4" : "dopri5");  // [run.b] still applies
    EXPECT_EQ(s.params.at("L"), i < 6 ? 1.0 : 2.0);
    const double rtol[] = {1e-4, 1e-6, 1e-8}, atol[] = {1e-6, 1e-8, 1e-10};
    EXPECT_EQ(s.rtol, rtol[(i / 2) % 3]);
    EXPECT_EQ(s.atol, atol[(i / 2) % 3]);
    if (i) EXPECT_LT(plan.runs[i - 1].spec.run_id, s.run_id);  // sorted listing = grid order
  }
  EXPECT_EQ(plan.out, "results/z.h5");
}

TEST(Sweep, GridOf18RunsWithResolvedConfigsAndDryRun) {
  ScratchDir dir("sweep_grid");
  write_text(dir.path() / "g.ini", kGrid);
  const ProcessResult dry = dir.run("sweep g.ini --dry-run");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("18 runs (formulation (3) x dt (3) x param.L (2))"), std::string::npos) << dry.out;
  EXPECT_EQ(count_lines_starting(dry.out, "  "), 18u) << dry.out;
  EXPECT_TRUE(std::regex_search(
      dry.out, std::regex("\n  07_formulation=schur_dt=1e-2_param.L=2 +formulation=schur dt=1e-2 param.L=2\n")))
      << dry.out;
  EXPECT_EQ(dir_names(dir.path()), (std::vector<std::string>{"g.ini"}));  // nothing written
  // --set on an axis keeps its place in the grid: it moved to the end and every run id changed (issue 21).
  const ProcessResult set = dir.run("sweep g.ini --dry-run --set 'sweep.dt=1e-2 5e-3'");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_NE(set.out.find("12 runs (formulation (3) x dt (2) x param.L (2))"), std::string::npos) << set.out;
  EXPECT_NE(set.out.find("\n  07_formulation=schur_dt=5e-3_param.L=2 "), std::string::npos) << set.out;
  // A dry run validates every run as the sweep would (rattle on the sleigh passed it; the sweep refused it).
  write_text(dir.path() / "r.ini", "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nt_end = 0.1\n[sweep]\n"
                                   "integrator = rk4 rattle\n");
  expect_one_line_error(dir.run("sweep r.ini --dry-run"), 1, {"rattle"});
  EXPECT_EQ(dir.run("sweep r.ini --dry-run").out, "");
  fs::remove(dir.path() / "r.ini");
  expect_one_line_error(dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end 1 --dt 1e-320 "
                                "--out x.h5"),
                        1, {"run.dt = ", "constant steps to t_end = 1", "run.max_steps = 50000000"});

  const ProcessResult r = dir.run("sweep g.ini --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote grid.h5 (18 runs: 18 ok"), std::string::npos) << r.out;
  EXPECT_EQ(dir_names(dir.path()), (std::vector<std::string>{"g.ini", "grid.h5"}));  // parts removed
  const Tool runs = h5_tool(dir, "runs grid.h5 formulation dt param.L param.g sweep_index status sweep_point");
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  const auto lines = lines_of(runs.out);
  ASSERT_EQ(lines.size(), 18u) << runs.out;
  const char* formulations[] = {"kkt", "schur", "nullspace"};
  const char* dts[] = {"1e-2", "5e-3", "2e-3"};
  const char* dt_values[] = {"0.01", "0.005", "0.002"};
  for (size_t i = 0; i < 18; ++i) {
    const size_t f = i / 6, d = (i / 2) % 3, l = i % 2;
    char id[128];
    std::snprintf(id, sizeof id, "%02zu_formulation=%s_dt=%s_param.L=%zu", i, formulations[f], dts[d], l + 1);
    const std::string expected = std::string(id) + " " + formulations[f] + " " + dt_values[d] + " " +
                                 (l ? "2.0" : "1.0") + " 9.81 " + std::to_string(i) + " ok formulation=" +
                                 formulations[f] + " dt=" + dts[d] + " param.L=" + std::to_string(l + 1);
    EXPECT_EQ(lines[i], expected);
  }
}

TEST(Sweep, SameDataForAnyJobsAndShards) {
  ScratchDir dir("sweep_same");
  write_text(dir.path() / "g.ini", kGrid);
  ASSERT_EQ(dir.run("sweep g.ini --jobs 1 --out j1.h5 --progress never").exit_code, 0);
  ASSERT_EQ(dir.run("sweep g.ini --jobs 2 --out j2.h5 --progress never").exit_code, 0);
  expect_identical(dir, "j1.h5", "j2.h5");
  // More jobs than runs: the summary line says how many were used; --resume of a finished sweep (its parts
  // removed) says that it computes everything again, in one warning.
  const ProcessResult many = dir.run("sweep g.ini --shard 0/9 --jobs 64 --out j64.h5 --progress never");
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_NE(many.out.find("wrote j64.h5 (2 runs: 2 ok; computed 2, resumed 0, 64 jobs (2 used: one run each at most), "),
            std::string::npos) << many.out;
  const ProcessResult again = dir.run("sweep g.ini --shard 0/9 --out j64.h5 --resume --progress never");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err, "clmbench: warning: sweep: --resume found no parts directory j64.h5.parts (j64.h5 exists, "
                       "and is replaced): every run is computed\n");

  const ProcessResult s0 = dir.run("sweep g.ini --shard 0/2 --out s0.h5");
  const ProcessResult s1 = dir.run("sweep g.ini --shard 1/2 --jobs 2 --out s1.h5");
  ASSERT_EQ(s0.exit_code, 0) << s0.err;
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  EXPECT_NE(s0.out.find("wrote s0.h5 (9 runs"), std::string::npos) << s0.out;
  // Argument order does not matter: the runs go in grid order.
  const ProcessResult m = dir.run("merge merged.h5 s1.h5 s0.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("wrote merged.h5 (18 runs from 2 files)"), std::string::npos) << m.out;
  expect_identical(dir, "j1.h5", "merged.h5");
  // The default shard output name.
  ASSERT_EQ(dir.run("sweep g.ini --shard 1/3").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.path() / "grid.shard-1-of-3.h5"));
  // The same shard twice: identical duplicates are kept once.
  const ProcessResult dup = dir.run("merge dup.h5 s0.h5 s1.h5 s0.h5");
  ASSERT_EQ(dup.exit_code, 0) << dup.err;
  EXPECT_NE(dup.out.find("9 identical duplicates skipped"), std::string::npos) << dup.out;
  expect_identical(dir, "j1.h5", "dup.h5");
}

TEST(Sweep, SameDataUnderMpirun) {
#ifdef CLMBENCH_MPIRUN
#ifdef CLMBENCH_SANITIZER_BUILD
  GTEST_SKIP() << "mpirun under the sanitizers: not run (OpenMPI's own allocations)";
#endif
  ScratchDir dir("sweep_mpi");
  write_text(dir.path() / "g.ini", kGrid);
  ASSERT_EQ(dir.run("sweep g.ini --jobs 1 --out j1.h5 --progress never").exit_code, 0);
  const ProcessResult mpi = dir.run_shell_prefix(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 '" CLMBENCH_MPIRUN
      "' -n 2 --oversubscribe",
      "sweep g.ini --out mpi.h5 --progress always");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  EXPECT_NE(mpi.out.find("wrote mpi.h5 (18 runs: 18 ok; computed 9 on rank 0"), std::string::npos) << mpi.out;
  // Rank 0's progress counts its own share, and says so (it said "runs 9/18" at 100 %).
  EXPECT_NE(mpi.err.find("sweep (MPI rank 0 of 2): 100.0%, this rank's runs 9/9 (of 18 in the sweep), elapsed "),
            std::string::npos) << mpi.err;
  expect_identical(dir, "j1.h5", "mpi.h5");
  EXPECT_FALSE(fs::exists(dir.path() / "mpi.h5.parts"));
#else
  // Without MPI, a sweep started by mpirun with several processes is refused (each would run it all).
  ScratchDir dir("sweep_no_mpi");
  write_text(dir.path() / "g.ini", kGrid);
  expect_one_line_error(dir.run_shell_prefix("OMPI_COMM_WORLD_SIZE=2", "sweep g.ini"), 1,
                        {"mpirun", "without MPI"});
  GTEST_SKIP() << "built without MPI (CLMBENCH_WITH_MPI=OFF): the mpirun comparison is not run";
#endif
}

TEST(Sweep, KilledSweepResumesWithoutRecomputing) {
  ScratchDir dir("sweep_resume");
  // 24 runs of about 50 ms each: long enough to be killed in the middle.
  write_text(dir.path() / "k.ini", R"([run]
problem = chaplygin_sleigh
formulation = kkt
integrator = rk4
t_end = 1
output_every = 0.25
out = k.h5
[sweep]
dt = 1e-5 1.25e-5 1.5e-5 2e-5
param.b = 0.1 0.2 0.3 0.4 0.5 0.6
)");
  ASSERT_EQ(dir.run("sweep k.ini --out ref.h5 --progress never").exit_code, 0);

  const std::string launch = "cd '" + dir.path().string() + "' && { '" CLMBENCH_BINARY
                             "' sweep k.ini --progress never > first.out 2> first.err & echo $! > pid; }";
  ASSERT_EQ(std::system(launch.c_str()), 0);
  const pid_t pid = static_cast<pid_t>(std::stol(clm::testing::read_text(dir.path() / "pid")));
  const fs::path parts = dir.path() / "k.h5.parts";
  auto complete_parts = [&] {
    size_t n = 0;
    for (const auto& name : dir_names(parts)) n += name.size() > 5 && name.substr(name.size() - 5) == ".part";
    return n;
  };
  // A part holds the runs its worker finished in about 0.2 s (SweepOptions::commit_interval_s): two
  // committed parts are a few runs.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (complete_parts() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // reaped by the shell's init
  const size_t parts_done = complete_parts();
  ASSERT_GE(parts_done, 2u);
  EXPECT_FALSE(fs::exists(dir.path() / "k.h5"));
  // The runs the committed parts hold: their trailers' lists (io/part_file.hpp).
  size_t done = 0;
  for (const auto& name : dir_names(parts)) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".part") continue;
    const auto runs = clm::stored_part_runs((parts / name).string());
    ASSERT_TRUE(runs.has_value()) << name;
    done += runs->size();
  }
  ASSERT_GE(done, parts_done);
  ASSERT_LT(done, 24u) << "the sweep finished before it was killed";

  // Without --resume the parts are not mixed into a new sweep; with it, parts of another configuration
  // and files that are no part of this grid are refused, naming them.
  expect_one_line_error_after_notes(dir.run("sweep k.ini"), 1, {"k.h5.parts", "--resume"});
  expect_one_line_error_after_notes(dir.run("sweep k.ini --resume --set run.t_end=0.9"), 1,
                        {"k.h5.parts/", "different configuration", "t_end = 1", "t_end = 0.9"});
  write_text(parts / "stray.h5", "x");
  expect_one_line_error_after_notes(dir.run("sweep k.ini --resume"), 1, {"stray.h5", "no part of this sweep"});
  fs::remove(parts / "stray.h5");
  // A part of an older clmbench (an HDF5 file named after a planned run) is named as such.
  const std::string old_part = "23_dt=2e-5_param.b=0.6.h5";
  write_text(parts / old_part, "x");
  expect_one_line_error_after_notes(dir.run("sweep k.ini --resume"), 1, {old_part, "older clmbench", "remove"});
  fs::remove(parts / old_part);
  // A part file cut short (a file system without atomic rename): refused by name, not trusted.
  {
    std::string first;
    for (const auto& name : dir_names(parts))
      if (first.empty() && name.size() > 5 && name.substr(name.size() - 5) == ".part") first = name;
    const std::string bytes = clm::testing::read_text(parts / first);
    write_text(parts / first, bytes.substr(0, bytes.size() - 3));
    expect_one_line_error_after_notes(dir.run("sweep k.ini --resume"), 1, {first, "not a complete part file", "remove it"});
    write_text(parts / first, bytes);
  }
  EXPECT_EQ(complete_parts(), parts_done);

  const ProcessResult resumed = dir.run("sweep k.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("sweep: " + std::to_string(done) + " of 24 runs already complete"), std::string::npos)
      << resumed.out;
  // Exactly the missing runs were computed (each prints one line).
  EXPECT_EQ(count_lines_starting(resumed.out, "run "), 24 - done) << resumed.out;
  EXPECT_NE(resumed.out.find("computed " + std::to_string(24 - done) + ", resumed " + std::to_string(done)),
            std::string::npos)
      << resumed.out;
  EXPECT_FALSE(fs::exists(parts));
  expect_identical(dir, "ref.h5", "k.h5");
}

TEST(Sweep, AFailedMergeKeepsTheGoodFileAndTheParts) {
  ScratchDir dir("sweep_merge_fault");
  write_text(dir.path() / "g.ini", kGrid);
  ASSERT_EQ(dir.run("sweep g.ini --set sweep.param.L=1").exit_code, 0);  // a good grid.h5 (9 runs)
  ASSERT_EQ(dir.run("sweep g.ini --out ref.h5").exit_code, 0);
  const std::string before = clm::testing::read_text(dir.path() / "grid.h5");
  // A full disk while the merged file is written: only OUT's temporary fails, not the parts. At its
  // creation, and inside the copy of a run (which crashed inside HDF5's H5Ocopy, exit 139; issue 21).
  for (const char* after : {"0", "3000", "12000"}) {
    SCOPED_TRACE(std::string("full after ") + after + " bytes");
    const ProcessResult full = dir.run_shell_prefix(std::string("LD_PRELOAD='" CLMBENCH_WRITE_FAULT_LIB
                                                                "' CLM_FAULT_PATH=grid.h5.tmp- CLM_FAULT_AFTER_BYTES=") +
                                                        after,
                                                    std::string("sweep g.ini --progress never") +
                                                        (after[0] == '0' ? "" : " --resume"));
    expect_one_line_error(full, 2, {"grid.h5", "kept in grid.h5.parts", "--resume", "No space left on device"});
    EXPECT_EQ(clm::testing::read_text(dir.path() / "grid.h5"), before);  // the good file is untouched
  }
  // The failed merges stopped the jobs (Sweep.AMergeThatFailsStopsTheRuns): the runs finished were kept, the
  // rest is computed now, and the file is the one an uninterrupted sweep writes.
  const ProcessResult resumed = dir.run("sweep g.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  std::smatch counts;
  ASSERT_TRUE(std::regex_search(resumed.out, counts, std::regex("computed (\\d+), resumed (\\d+)"))) << resumed.out;
  EXPECT_EQ(std::stoi(counts[1]) + std::stoi(counts[2]), 18) << resumed.out;
  EXPECT_GT(std::stoi(counts[2]), 0) << resumed.out;
  expect_identical(dir, "ref.h5", "grid.h5");
  EXPECT_EQ(dir_names(dir.path()), (std::vector<std::string>{"g.ini", "grid.h5", "ref.h5"}));
}

// When OUT cannot be written while the jobs compute (here a full disk; a damaged part is the other case),
// the jobs stop after the runs they are computing instead of computing the whole grid first: the error comes
// at once, the runs finished are kept, and --resume merges them and computes the rest.
TEST(Sweep, AMergeThatFailsStopsTheRuns) {
  ScratchDir dir("sweep_merge_stop");
  std::string values;
  for (int k = 0; k < 40; ++k) values += " " + std::to_string(0.1 + 0.005 * k);
  write_text(dir.path() / "s.ini", "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\ndt = 1e-3\n"
                                   "t_end = 40\noutput_every = 0.1\ntiming_budget = 0\nout = s.h5\n[sweep]\nparam.b =" +
                                       values + "\n");
  const ProcessResult full = dir.run_shell_prefix(
      "LD_PRELOAD='" CLMBENCH_WRITE_FAULT_LIB "' CLM_FAULT_PATH=s.h5.tmp- CLM_FAULT_AFTER_BYTES=3000",
      "sweep s.ini --progress never");
  expect_one_line_error(full, 2, {"s.h5", "kept in s.h5.parts", "--resume", "No space left on device"});
  size_t computed = 0;
  for (size_t at = full.out.find("run "); at != std::string::npos; at = full.out.find("\nrun ", at + 1)) ++computed;
  EXPECT_GT(computed, 0u);
  EXPECT_LT(computed, 30u) << "40 runs of ~40 ms; the merger fails on its first part, within ~0.3 s";
  const ProcessResult resumed = dir.run("sweep s.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("computed " + std::to_string(40 - computed) + ", resumed " + std::to_string(computed)),
            std::string::npos)
      << resumed.out;
}

TEST(Sweep, DivergingRunIsRecordedAndTheSweepGoesOn) {
  ScratchDir dir("sweep_fail");
  write_text(dir.path() / "f.ini", R"([run]
problem = chaplygin_sleigh
integrator = euler
t_end = 1
output_every = 0.1
out = f.h5
[formulation]
N = 1e4
[sweep]
dt = 1e-4 1e-1
formulation = kkt penalty
)");
  const ProcessResult r = dir.run("sweep f.ini --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote f.h5 (4 runs: 1 diverged, 3 ok"), std::string::npos) << r.out;
  const Tool runs = h5_tool(dir, "runs f.h5 status");
  EXPECT_EQ(runs.out,
            "0_dt=1e-4_formulation=kkt ok\n1_dt=1e-4_formulation=penalty ok\n2_dt=1e-1_formulation=kkt ok\n"
            "3_dt=1e-1_formulation=penalty diverged\n");
}

TEST(Sweep, BadInputIsOneLine) {
  ScratchDir dir("sweep_errors");
  write_text(dir.path() / "g.ini", kGrid);
  auto with = [&](const std::string& name, const std::string& extra) {
    write_text(dir.path() / name, std::string(kGrid) + extra);
    return name;
  };
  expect_one_line_error(dir.run("sweep " + with("zip.ini", "[sweep.zip]\nrtol = 1e-4 1e-6\natol = 1e-6\n")), 1,
                        {"[sweep.zip]", "same length", "rtol", "atol"});
  expect_one_line_error(dir.run("sweep " + with("key.ini", "bogus = 1 2\n")), 1, {"bogus", "sweep"});
  expect_one_line_error(dir.run("sweep " + with("bare.ini", "N = 1 2\n")), 1, {"'N'", "formulation.N"});
  expect_one_line_error(dir.run("sweep " + with("value.ini", "rtol = 1e-4 abc\n")), 1, {"abc", "rtol", "[sweep]"});
  expect_one_line_error(dir.run("sweep " + with("param.ini", "param.nope = 1\n")), 1, {"nope", "[sweep]"});
  expect_one_line_error(dir.run("sweep " + with("range.ini", "t_end = 0.001\n")), 1,
                        {"[sweep]", "t_end=0.001", "dt"});
  expect_one_line_error(dir.run("sweep g.ini --shard 1of2"), 1, {"--shard", "i/n", "1of2"});
  expect_one_line_error(dir.run("sweep g.ini --shard 2/2"), 1, {"--shard 2/2", "0 .. 1"});
  expect_one_line_error(dir.run("sweep g.ini --jobs 0"), 1, {"--jobs", "at least 1", "'0'"});
  expect_one_line_error(dir.run("sweep g.ini --jobs x"), 1, {"--jobs"});
  expect_one_line_error(dir.run("sweep"), 1, {"config"});
  write_text(dir.path() / "not.h5", "plain text\n");
  // A file that is not a results file is an unreadable input: exit code 2, as `info` on it (it was 1).
  expect_one_line_error(dir.run("merge out.h5 not.h5"), 2, {"not.h5", "not a clmbench results file"});
  expect_one_line_error(dir.run("info not.h5"), 2, {"not.h5"});
  expect_one_line_error(dir.run("merge out.h5"), 1, {"at least one input"});
  expect_one_line_error(dir.run("merge out.h5 missing.h5"), 1, {"missing.h5"});
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && /usr/bin/python3 -c \"import h5py; h5py.File('other.h5', 'w')['x'] = [1]\"")
                            .c_str()),
            0);
  expect_one_line_error(dir.run("merge out.h5 other.h5"), 2, {"other.h5", "not a clmbench results file"});
  // A /summary column claiming 2^34 rows in a file of a few KB (unwritten chunks) was allocated: exit 3,
  // "std::bad_alloc".
  ASSERT_EQ(dir.run("sweep g.ini --set sweep.param.L=1 --out small.h5 --progress never").exit_code, 0);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && /usr/bin/python3 -c \"import h5py; f = h5py.File('small.h5', 'a'); del f['summary/dt']; "
                         "f['summary'].create_dataset('dt', shape=(2**34,), dtype='f8', chunks=(1024,))\"")
                            .c_str()),
            0);
  ASSERT_LT(fs::file_size(dir.path() / "small.h5"), 400000u);  // 2^34 doubles are 128 GiB
  expect_one_line_error(dir.run("merge out.h5 small.h5"), 2, {"small.h5", "/summary/dt", "more data than the file can hold"});
  EXPECT_FALSE(fs::exists(dir.path() / "out.h5"));
  EXPECT_FALSE(fs::exists(dir.path() / "grid.h5"));
}

TEST(Sweep, ProgressOnStderr) {
  ScratchDir dir("sweep_progress");
  write_text(dir.path() / "g.ini", kGrid);
  const ProcessResult r = dir.run("sweep g.ini --progress always --set sweep.param.L=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // --progress always: a line from the first update and a closing line with the count of runs.
  EXPECT_NE(r.err.find("sweep:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("runs 9/9"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("elapsed"), std::string::npos) << r.err;
  const ProcessResult quiet = dir.run("sweep g.ini --progress never --out q.h5");
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.err, "");
}

TEST(Merge, PlainFilesInArgumentOrderAndConflictingDuplicatesRefused) {
  ScratchDir dir("merge_plain");
  const std::string base = "run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end 0.2 ";
  ASSERT_EQ(dir.run(base + "--dt 1e-2 --out a.h5").exit_code, 0);
  ASSERT_EQ(dir.run(base + "--dt 1e-3 --out b.h5").exit_code, 0);
  ASSERT_EQ(dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --t-end 0.2 --out c.h5").exit_code, 0);
  // Same run id, different data: refused, naming the run and both files.
  expect_one_line_error(dir.run("merge ab.h5 a.h5 b.h5"), 1,
                        {"pendulum_polar_kkt_rk4", "a.h5", "b.h5", "different contents"});
  EXPECT_FALSE(fs::exists(dir.path() / "ab.h5"));
  const ProcessResult m = dir.run("merge ca.h5 c.h5 a.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const Tool runs = h5_tool(dir, "runs ca.h5 dt");
  EXPECT_EQ(runs.out, "chaplygin_sleigh_kkt_rk4 0.001\npendulum_polar_kkt_rk4 0.01\n");
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && /usr/bin/python3 -c \"import h5py; f = h5py.File('ca.h5'); "
                         "print([x.decode() for x in f['summary/run_id'][:]], f['summary/dt'][:].tolist(), "
                         "'from a.h5' in f.attrs['config'])\" > order.txt")
                            .c_str()),
            0);
  // /summary in argument order, whatever the names; the differing configs kept with their file names.
  EXPECT_EQ(clm::testing::read_text(dir.path() / "order.txt"),
            "['chaplygin_sleigh_kkt_rk4', 'pendulum_polar_kkt_rk4'] [0.001, 0.01] True\n");
}

// Merging a Kozlov study's file dropped its /kozlov/<study> (issue 21): groups beside /runs and /summary are
// copied, once when identical, and refused when two inputs hold different ones.
TEST(Merge, GroupsBesideTheRunsAreKept) {
  ScratchDir dir("merge_groups");
  const std::string study = "[run]\nproblem = chaplygin_sleigh\nintegrator = dopri5\nt_end = 0.5\n[kozlov]\ntheorem = 1\nN = ";
  write_text(dir.path() / "k.ini", study + "1e2 1e3 1e4\n");
  write_text(dir.path() / "k2.ini", study + "1e2 1e3\n");
  ASSERT_EQ(dir.run("kozlov k.ini --out k.h5").exit_code, 0);
  ASSERT_EQ(dir.run("kozlov k2.ini --out k2.h5").exit_code, 0);
  const ProcessResult m = dir.run("merge m.h5 k.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("wrote m.h5 (4 runs from 1 file; /kozlov/k)"), std::string::npos) << m.out;
  expect_identical(dir, "k.h5", "m.h5");
  ASSERT_EQ(dir.run("merge m2.h5 k.h5 m.h5").exit_code, 0);  // the same study twice: kept once
  expect_identical(dir, "k.h5", "m2.h5");
  // Studies of other names sit side by side; one name with other contents is refused.
  const ProcessResult both = dir.run("merge m3.h5 k.h5 k2.h5");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("/kozlov/k, /kozlov/k2)"), std::string::npos) << both.out;
  ASSERT_EQ(dir.run("kozlov k2.ini --out k3.h5 --set kozlov.study=k").exit_code, 0);
  expect_one_line_error(dir.run("merge m4.h5 k.h5 k3.h5"), 1, {"'/kozlov/k'", "k.h5", "k3.h5", "refuses to choose"});
}

// A long run (150001 samples: q is compared in three blocks of rows, its chunks copied as stored): merged
// whole, its duplicate recognized, and a change of 1e-15 in its third-last sample found.
TEST(Merge, LongRunsAreCopiedAndComparedInBlocks) {
  ScratchDir dir("merge_long");
  ASSERT_EQ(dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --dt 1e-4 --t-end 15 "
                    "--output-every 1e-4 --out a.h5")
                .exit_code,
            0);
  const ProcessResult m = dir.run("merge m.h5 a.h5 a.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("1 identical duplicate skipped"), std::string::npos) << m.out;
  expect_identical(dir, "a.h5", "m.h5");
  ASSERT_EQ(std::system(("cd '" + dir.path().string() +
                         "' && cp a.h5 b.h5 && /usr/bin/python3 -c \"import h5py; f = h5py.File('b.h5', 'a'); "
                         "q = f['runs/pendulum_polar_kkt_rk4/q']; assert q.shape[0] == 150001; q[-3, 0] += 1e-15\"")
                            .c_str()),
            0);
  expect_one_line_error(dir.run("merge m2.h5 a.h5 b.h5"), 1, {"/runs/pendulum_polar_kkt_rk4/q)", "refuses to choose"});
}

TEST(Sweep, HelpDescribesEveryFlag) {
  ScratchDir dir("sweep_help");
  const ProcessResult s = dir.run("sweep --help");
  ASSERT_EQ(s.exit_code, 0);
  for (const char* flag : {"--jobs", "--out", "--resume", "--shard", "--dry-run", "--set", "--progress", "[sweep.zip]",
                           "mpirun", "OUT.parts"})
    EXPECT_NE(s.out.find(flag), std::string::npos) << flag;
  const ProcessResult m = dir.run("merge --help");
  ASSERT_EQ(m.exit_code, 0);
  for (const char* word : {"grid order", "/summary", "found twice", "sweep_config"})
    EXPECT_NE(m.out.find(word), std::string::npos) << word;
}

// A setting a run does not read is named once for the grid, not once per value: rk4 ignores a tolerance
// axis, so "run.rtol ... has no effect" is one line counting the runs and the values. And a sweep measures
// every run against the reference: four_bar has no closed form, so each run's errors come from the one
// reference run (scd is a number, not "-").
TEST(Sweep, WarningsSummarizedAndErrorsAgainstTheReference) {
  ScratchDir dir("sweep_wp");
  write_text(dir.path() / "w.ini", R"([run]
problem = four_bar
formulation = kkt
t_end = 0.2
output_every = 0.05
out = w.h5
[sweep]
integrator = dopri5 rk4
[sweep.zip]
rtol = 1e-4 1e-6 1e-8
dt = 1e-2 5e-3 2.5e-3
)");
  const ProcessResult r = dir.run("sweep w.ini --progress never");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("clmbench: warning: sweep: run.rtol has no effect: integrator rk4 takes fixed steps of dt "
                       "(3 values) (3 of 6 runs)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("run.rtol = 1e-4 has no effect"), std::string::npos) << r.err;
  const Tool runs = h5_tool(dir, "runs w.h5 reference_source");
  EXPECT_EQ(std::count(runs.out.begin(), runs.out.end(), '\n'), 6) << runs.out;
  EXPECT_EQ(runs.out.find("none"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("reference_run"), std::string::npos) << runs.out;
  const ProcessResult info = dir.run("info w.h5");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  // The rtol 1e-8 dopri5 run is accurate to about 8 digits against the reference (scd near 8).
  EXPECT_NE(info.out.find("reference_run"), std::string::npos) << info.out;
}

// The merge a sweep runs while its jobs compute (clm::IncrementalMerge, issue 25): parts fed in any order give
// the file merge_results gives (runs, datasets, attributes, /summary in grid order); a part of another sweep is
// refused in one line; too few runs leave no output.
TEST(Merge, PartByPartEqualsTheWholeMerge) {
  ScratchDir dir("merge_incremental");
  write_text(dir.path() / "g.ini", kGrid);
  ASSERT_EQ(dir.run("sweep g.ini --jobs 1 --out whole.h5 --progress never").exit_code, 0);
  // Three part files (io/part_file.hpp), the runs dealt out k mod 3 as three jobs would write them.
  const std::string ini = (dir.path() / "g.ini").string();
  const clm::SweepPlan plan = clm::plan_sweep(ini, clm::read_config_file(ini), (dir.path() / "unused.h5").string());
  ASSERT_EQ(plan.runs.size(), 18u);
  clm::ReferenceCache references;
  auto part = [&](int p) { return (dir.path() / ("p" + std::to_string(p) + ".part")).string(); };
  for (int p = 0; p < 3; ++p) {
    clm::PartWriter writer(part(p));
    std::vector<std::string> configs;
    for (size_t k = static_cast<size_t>(p); k < plan.runs.size(); k += 3) {
      std::ostringstream log;
      clm::PreparedRun prepared = clm::prepare_run(plan.runs[k].spec, log, false);
      std::shared_ptr<const clm::ReferenceTrajectory> reference;
      if (prepared.spec.reference.compute) reference = references.get(prepared);
      clm::execute_run(prepared, &writer.run_observer(), false, nullptr, reference.get());
      configs.push_back(clm::part_config(plan, plan.runs[k].spec));
    }
    writer.commit({"test", plan.sweep_config, plan.sweep_config}, configs);
  }
  const auto stored = clm::stored_part_runs(part(1));
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->size(), 6u);
  EXPECT_EQ(stored->front().run_id, plan.runs[1].spec.run_id);
  EXPECT_EQ(stored->front().config, clm::part_config(plan, plan.runs[1].spec));
  {
    clm::IncrementalMerge merge((dir.path() / "parts.h5").string(), "test");
    for (int p : {2, 0, 1}) merge.add(part(p));
    const clm::MergeReport r = merge.finish(18);
    EXPECT_EQ(r.runs, 18u);
    EXPECT_EQ(r.statuses.at("ok"), 18u);
  }
  expect_identical(dir, "whole.h5", "parts.h5");
  // `clmbench merge` takes a sweep's part files too (alone: with a results file they are refused by name).
  const ProcessResult merged = dir.run("merge cli.h5 p1.part p0.part p2.part");
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  expect_identical(dir, "whole.h5", "cli.h5");
  expect_one_line_error(dir.run("merge mixed.h5 p0.part whole.h5"), 1, {"p0.part", "whole.h5", "part files alone"});
  {
    // A part given twice: its runs kept once (identical copies), and too few runs for the sweep refused.
    clm::IncrementalMerge short_of_runs((dir.path() / "short.h5").string(), "test");
    short_of_runs.add(part(0));
    fs::copy_file(part(0), dir.path() / "again.part");
    short_of_runs.add((dir.path() / "again.part").string());
    try {
      short_of_runs.finish(18);
      ADD_FAILURE() << "finish with 6 of 18 runs";
    } catch (const clm::OutputError& e) {
      EXPECT_NE(std::string(e.what()).find("the inputs hold 6 runs of the 18 expected"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(dir.path() / "short.h5"));
  {
    // The same run id with other contents (another t_end): refused, naming the first difference, which the two
    // runs' records show call by call (the group's attributes come before its compact datasets).
    clm::RunSpec other = plan.runs[0].spec;
    other.t_end = 0.4;
    {
      clm::PartWriter writer((dir.path() / "other.part").string());
      std::ostringstream log;
      clm::PreparedRun prepared = clm::prepare_run(other, log, false);
      clm::execute_run(prepared, &writer.run_observer(), false, nullptr);
      writer.commit({"test", plan.sweep_config, plan.sweep_config}, {clm::part_config(plan, other)});
    }
    clm::IncrementalMerge merge((dir.path() / "o.h5").string(), "test");
    merge.add(part(0));
    try {
      merge.add((dir.path() / "other.part").string());
      ADD_FAILURE() << "two different runs of one id were merged";
    } catch (const clm::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("run '" + plan.runs[0].spec.run_id + "' is in both"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("with different contents (attribute t_end)"), std::string::npos) << e.what();
    }
  }
  // A damaged part (cut short, or one byte of its trailer changed) is no part: refused by name, never read.
  const std::string bytes = clm::testing::read_text(part(2));
  for (const std::string& damaged : {bytes.substr(0, bytes.size() / 2), bytes.substr(0, bytes.size() - 1),
                                     bytes.substr(0, bytes.size() - 9) + "X" + bytes.substr(bytes.size() - 8)}) {
    write_text(dir.path() / "damaged.part", damaged);
    EXPECT_FALSE(clm::stored_part_runs((dir.path() / "damaged.part").string()).has_value());
    clm::IncrementalMerge merge((dir.path() / "d.h5").string(), "test");
    try {
      merge.add((dir.path() / "damaged.part").string());
      ADD_FAILURE() << "a damaged part was merged";
    } catch (const clm::OutputError& e) {
      EXPECT_NE(std::string(e.what()).find("damaged.part' is not a complete part file"), std::string::npos) << e.what();
    }
  }
  // A run damaged on disk with its structure intact (one letter of its problem attribute) fails its checksum:
  // refused, not written into OUT.
  {
    std::string damaged = bytes;
    const size_t at = damaged.find("pendulum_polar");
    ASSERT_NE(at, std::string::npos);
    damaged[at + 13] = 'R';
    write_text(dir.path() / "damaged.part", damaged);
    ASSERT_TRUE(clm::stored_part_runs((dir.path() / "damaged.part").string()).has_value());  // the trailer is whole
    clm::IncrementalMerge merge((dir.path() / "d.h5").string(), "test");
    try {
      merge.add((dir.path() / "damaged.part").string());
      ADD_FAILURE() << "a damaged run was merged";
    } catch (const clm::OutputError& e) {
      EXPECT_NE(std::string(e.what()).find("fails its checksum"), std::string::npos) << e.what();
    }
  }
}

// Reference runs are tasks of their own (issue 25): a grid over two parameter values and three tolerances
// computes two references, once each, whatever the job count, and the files are the same for one job and
// two; the sweep accounts for the time its jobs could not compute (the HDF5 lock, waits).
TEST(Sweep, ReferencesAreTasksOfTheirOwnAndTheDataDoNotDependOnJobs) {
  ScratchDir dir("sweep_refs");
  write_text(dir.path() / "r.ini", R"([run]
problem = four_bar
formulation = kkt
integrator = dopri5
t_end = 0.3
output_every = 0.05
[sweep]
param.L2 = 1.0 1.1
rtol = 1e-4 1e-6 1e-8
)");
  const std::string ini = (dir.path() / "r.ini").string();
  for (const int jobs : {1, 2}) {
    const clm::SweepPlan plan = clm::plan_sweep(ini, clm::read_config_file(ini), (dir.path() / ("api" + std::to_string(jobs) + ".h5")).string());
    std::vector<size_t> all(plan.runs.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    clm::SweepOptions options;
    options.jobs = jobs;
    options.print_runs = false;
    std::ostringstream out, err;
    const clm::SweepReport r = clm::run_sweep(plan, all, options, *clm::make_process_group(), out, err);
    EXPECT_EQ(r.computed, 6u);
    EXPECT_EQ(r.references, 2u) << "one reference per parameter value, computed once";
    EXPECT_GT(r.reference_seconds, 0.0);
    EXPECT_GT(r.lock_held_seconds, 0.0);  // the merge (the jobs' part files are no HDF5 files)
    EXPECT_LT(r.lock_held_seconds, r.wall_seconds);
    EXPECT_GE(r.wait_seconds, 0.0);
    if (jobs == 1) EXPECT_EQ(r.wait_seconds, 0.0) << "one job computes its references itself: it never waits";
    EXPECT_GT(r.planning_seconds, 0.0);
    // The merge: the writer's time while the jobs computed, then its tail (the rest, /summary, the commit).
    EXPECT_GT(r.merge_tail_seconds, 0.0);
    EXPECT_LE(r.merge_tail_seconds, r.merge_seconds);
    EXPECT_LT(r.merge_seconds, r.wall_seconds);
    EXPECT_GT(r.commit_seconds, 0.0);  // the part files
    // Each task's time, for bench_sweep to play the schedule forward at other job counts: 6 runs, each
    // needing one of the 2 references (3 runs each), every task timed; a task's time holds its run's own
    // (prepare, integrate; with its recording), and at one job the tasks follow each other between the
    // planning and the merge's tail.
    ASSERT_EQ(r.task_run_seconds.size(), 6u);
    ASSERT_EQ(r.task_cost.size(), 6u);
    ASSERT_EQ(r.task_reference.size(), 6u);
    ASSERT_EQ(r.task_reference_seconds.size(), 2u);
    EXPECT_EQ(std::count(r.task_reference.begin(), r.task_reference.end(), 0L), 3);
    EXPECT_EQ(std::count(r.task_reference.begin(), r.task_reference.end(), 1L), 3);
    double tasks = 0;
    for (const auto* times : {&r.task_run_seconds, &r.task_reference_seconds}) {
      for (double t : *times) {
        EXPECT_GT(t, 0.0);
        tasks += t;
      }
    }
    EXPECT_GE(tasks, r.run_seconds + r.reference_seconds);
    if (jobs == 1) {
      EXPECT_LE(tasks + r.planning_seconds + r.merge_tail_seconds, r.wall_seconds);
      EXPECT_NEAR(clm::simulated_wall_seconds(r.task_cost, r.task_reference, r.task_run_seconds,
                                              r.task_reference_seconds, 1),
                  tasks, 1e-12);
    }
  }
  expect_identical(dir, "api1.h5", "api2.h5");

  // Runs whose samples fill chunks while they integrate (20001 samples: a chunk of t holds 8192): those
  // chunks' compression and writing count as output (commit), not as the runs' computing, and the compression
  // is reported on its own, a part of it.
  write_text(dir.path() / "long.ini", R"([run]
problem = chaplygin_sleigh
formulation = kkt
integrator = rk4
dt = 1e-3
t_end = 20
output_every = 1e-3
timing_budget = 0
[sweep]
param.b = 0.1 0.2
)");
  const std::string long_ini = (dir.path() / "long.ini").string();
  const clm::SweepPlan plan =
      clm::plan_sweep(long_ini, clm::read_config_file(long_ini), (dir.path() / "long.h5").string());
  clm::SweepOptions options;
  options.print_runs = false;
  std::ostringstream out, err;
  const clm::SweepReport r = clm::run_sweep(plan, {0, 1}, options, *clm::make_process_group(), out, err);
  EXPECT_EQ(r.computed, 2u);
  EXPECT_GT(r.compress_cpu_seconds, 0.0);
  EXPECT_LT(r.compress_cpu_seconds, r.commit_cpu_seconds);
}

// The output path is not part of a sweep's identity (issue 20, debt 2): shards run from copies of one config
// that each name their own `out` merge, into the same data as the whole sweep.
TEST(Merge, ShardsOfCopiesThatNameTheirOwnOutMerge) {
  ScratchDir dir("sweep_out_copies");
  write_text(dir.path() / "g.ini", kGrid);
  std::string copy0 = kGrid, copy1 = kGrid;
  copy0.replace(copy0.find("out = grid.h5"), 13, "out = part0.h5");
  copy1.replace(copy1.find("out = grid.h5"), 13, "out = elsewhere/part1.h5");
  write_text(dir.path() / "g0.ini", copy0);
  write_text(dir.path() / "g1.ini", copy1);
  ASSERT_EQ(dir.run("sweep g.ini --jobs 2 --progress never").exit_code, 0);
  const ProcessResult s0 = dir.run("sweep g0.ini --shard 0/2 --progress never");
  const ProcessResult s1 = dir.run("sweep g1.ini --shard 1/2 --progress never");
  ASSERT_EQ(s0.exit_code, 0) << s0.err;
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  const ProcessResult m = dir.run("merge merged.h5 part0.shard-0-of-2.h5 elsewhere/part1.shard-1-of-2.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("wrote merged.h5 (18 runs from 2 files)"), std::string::npos) << m.out;
  expect_identical(dir, "grid.h5", "merged.h5");
  // A sweep that differs in anything else is still another sweep.
  std::string other = kGrid;
  other.replace(other.find("t_end = 0.5"), 11, "t_end = 0.4");
  write_text(dir.path() / "other.ini", other);
  ASSERT_EQ(dir.run("sweep other.ini --shard 1/2 --out other.h5 --progress never").exit_code, 0);
  expect_one_line_error(dir.run("merge mixed.h5 part0.shard-0-of-2.h5 other.h5"), 1, {"different sweeps"});
}

// A grid whose size overflows 64 bits is refused, not planned as the wrapped count (issue 21: 8 axes x 256
// values = 2^64 points planned "0 runs" and exited 0).
TEST(SweepPlan, AGridLargerThan64BitsIsRefused) {
  ScratchDir dir("sweep_overflow");
  std::string values;
  for (int i = 1; i <= 256; ++i) values += " " + std::to_string(i) + "e-4";  // admissible for every key below
  std::string config = "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\nt_end = 0.1\n[sweep]\n";
  for (const char* key : {"param.b", "param.m", "param.Ic", "dt", "t_end", "rtol", "atol", "output_every"})
    config += std::string(key) + " =" + values + "\n";
  write_text(dir.path() / "huge.ini", config);
  expect_one_line_error(dir.run("sweep huge.ini --dry-run"), 1, {"1.8446744073709552e+19 points", "at most 1e6"});
  // 2^64 + 6464 points wrapped to 6464 runs: refused as well.
  std::string more = config + "formulation.k = 1 2\n";
  write_text(dir.path() / "more.ini", more);
  expect_one_line_error(dir.run("sweep more.ini --dry-run"), 1, {"points", "at most 1e6"});
}

// A list written with commas ("0.1, 0.2" reads as the values "0.1," and "0.2") is refused with how to write it.
TEST(SweepPlan, AListWithCommasIsRefusedWithTheListAsItShouldBe) {
  ScratchDir dir("sweep_commas");
  const std::string head = "[run]\nproblem = chaplygin_sleigh\nintegrator = rk4\nt_end = 0.1\n[sweep]\n";
  write_text(dir.path() / "a.ini", head + "formulation = kkt\nparam.b = 0.1, 0.2,0.3\n");
  expect_one_line_error(dir.run("sweep a.ini --dry-run"), 1,
                        {"malformed number '0.1,'", "a sweep list separates its values by spaces: param.b = 0.1 0.2 0.3"});
  write_text(dir.path() / "b.ini", head + "formulation = kkt, schur\n");
  expect_one_line_error(dir.run("sweep b.ini --dry-run"), 1,
                        {"unknown formulation 'kkt,'", "separates its values by spaces: formulation = kkt schur"});
}

// merge refuses a sweep_index that is not a whole number >= 0 in one line (issue 21: a NaN was accepted).
TEST(Merge, ANonIntegerSweepIndexIsRefused) {
  ScratchDir dir("merge_nan_index");
  write_text(dir.path() / "g.ini", kGrid);
  ASSERT_EQ(dir.run("sweep g.ini --shard 0/9 --out s.h5 --progress never").exit_code, 0);
  for (const char* value : {"float('nan')", "-1.0", "2.5"}) {
    fs::copy_file(dir.path() / "s.h5", dir.path() / "bad.h5", fs::copy_options::overwrite_existing);
    const std::string cmd = "cd '" + dir.path().string() + "' && /usr/bin/python3 -c \"import h5py\nwith h5py.File('bad.h5', 'r+') as f:\n    r = f['runs'][sorted(f['runs'])[0]]\n    r.attrs['sweep_index'] = " + value + "\"";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    expect_one_line_error(dir.run("merge m.h5 bad.h5"), 2, {"bad.h5", "sweep_index", "not a whole number"});
  }
}

// `clmbench run` on a config with [sweep.zip] runs the configured run, as with [sweep] alone (issue 21: it said
// the config "has no [run.zip] section").
TEST(Sweep, RunOnAConfigWithZippedListsRunsTheBaseRun) {
  ScratchDir dir("sweep_zip_run");
  write_text(dir.path() / "z.ini",
             "[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = rk4\nt_end = 0.1\n[sweep]\n"
             "dt = 1e-2 1e-3\n[sweep.zip]\nrtol = 1e-6 1e-8\natol = 1e-8 1e-10\n");
  const ProcessResult r = dir.run("run z.ini --out z.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("expanded by `clmbench sweep`"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[run.zip]"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "z.h5"));
}
