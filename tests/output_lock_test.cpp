// One writer per output (issue 21, bad 2; io/output_lock.hpp). Two sweeps started 0.05 s apart into one
// output both computed everything and then both failed at the merge, and --resume failed the same way
// forever. Every writer now holds OUT.lock; a second one is refused at once, in one line naming the holder.
// Also: a run computed twice (timings differ) is one run to merge, and Ctrl-C on a sweep says how to go on.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "clmbench_process.hpp"
#include "io/output_lock.hpp"
#include "io/results_file.hpp"

namespace clm {
namespace {

namespace fs = std::filesystem;
using testing::expect_one_line_error;
using testing::ProcessResult;
using testing::read_text;
using testing::ScratchDir;
using testing::write_text;

const char* kRun = R"([run]
problem = chaplygin_sleigh
formulation = kkt
integrator = rk4
t_end = 0.5
dt = 1e-3
output_every = 0.1
out = o.h5
)";

// 27 runs of 2e4 steps: long enough (about 0.5 s) for a second writer to come while the first works.
const char* kSweep = R"([run]
problem = chaplygin_sleigh
formulation = kkt
integrator = rk4
t_end = 2
dt = 1e-4
output_every = 0.5
out = s.h5
[sweep]
param.m = 1 2 3
param.b = 0.1 0.2 0.3
dt = 1e-4 2e-4 3e-4
)";

// The lock file taken by this test process, as another clmbench would hold it.
class HeldLock {
 public:
  HeldLock(const std::string& path, const std::string& content) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::flock(fd_, LOCK_EX | LOCK_NB), 0);
    EXPECT_EQ(::write(fd_, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  }
  ~HeldLock() { ::close(fd_); }

 private:
  int fd_ = -1;
};

// `clmbench ARGS...` started in `dir` with stdout / stderr to files there; returns the child's pid.
pid_t spawn_clmbench(const ScratchDir& dir, std::vector<std::string> args, const std::string& out, const std::string& err) {
  args.insert(args.begin(), CLMBENCH_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir / out).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir / err).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string old = fs::current_path().string();
  fs::current_path(dir.path());
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  fs::current_path(old);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1);
}

TEST(OutputLock, EveryWriterIsRefusedWhileAnotherHoldsTheOutput) {
  ScratchDir dir("lock_held");
  write_text(dir / "r.ini", kRun);
  write_text(dir / "s.ini", kSweep);
  ASSERT_EQ(dir.run("run r.ini --out a.h5").exit_code, 0);
  {
    HeldLock held(dir / "o.h5.lock", "424242 node17\n");
    const std::vector<std::string> holder = {"o.h5", "pid 424242 on host node17", "o.h5.lock", "another --out"};
    expect_one_line_error(dir.run("run r.ini"), 2, holder);
    expect_one_line_error(dir.run("merge o.h5 a.h5"), 2, holder);
    expect_one_line_error(dir.run("sweep s.ini --out o.h5 --progress never"), 2, holder);
    EXPECT_FALSE(fs::exists(dir / "o.h5"));
    EXPECT_FALSE(fs::exists(dir / "o.h5.parts")) << "the refused sweep started";
    EXPECT_TRUE(fs::exists(dir / "o.h5.lock")) << "a refused writer removed the holder's lock";
  }
  // Released (or its holder killed -9): the lock file left behind is taken over, and removed when done.
  const ProcessResult r = dir.run("run r.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(fs::exists(dir / "o.h5.lock"));
}

TEST(OutputLock, AHolderNotYetNamedIsWaitedForThenCalledAnotherProcess) {
  // A holder writes its pid just after it locks; a writer refused in between waited for nothing and said
  // "another process" (two sweeps started together on a loaded sanitizer build, CI).
  ScratchDir dir("lock_unnamed");
  write_text(dir / "r.ini", kRun);
  {
    const int fd = ::open((dir / "o.h5.lock").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
    std::thread late([fd] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const std::string line = "424242 node17\n";
      EXPECT_EQ(::pwrite(fd, line.data(), line.size(), 0), static_cast<ssize_t>(line.size()));
    });
    expect_one_line_error(dir.run("run r.ini"), 2, {"o.h5", "pid 424242 on host node17", "o.h5.lock"});
    late.join();
    ::close(fd);
  }
  fs::remove(dir / "o.h5.lock");
  {
    HeldLock held(dir / "o.h5.lock", "");  // a holder that never says who it is (not clmbench)
    expect_one_line_error(dir.run("run r.ini"), 2, {"o.h5", "by another clmbench (another process, lock 'o.h5.lock')"});
  }
}

TEST(OutputLock, OfTwoSweepsStartedTogetherOneRunsAndTheOtherIsRefused) {
  ScratchDir dir("lock_race");
  write_text(dir / "s.ini", kSweep);
  ASSERT_EQ(dir.run("sweep s.ini --out ref.h5 --progress never").exit_code, 0);
  const pid_t first = spawn_clmbench(dir, {"sweep", "s.ini", "--progress", "never"}, "1.out", "1.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t second = spawn_clmbench(dir, {"sweep", "s.ini", "--progress", "never"}, "2.out", "2.err");
  const int code1 = wait_exit_code(first), code2 = wait_exit_code(second);
  // Usually the first wins; either way exactly one sweep wrote s.h5 and the other did nothing.
  ASSERT_EQ(std::min(code1, code2), 0) << read_text(dir / "1.err") << read_text(dir / "2.err");
  const std::string loser = code1 == 0 ? "2" : "1";
  ProcessResult refused{std::max(code1, code2), read_text(dir / (loser + ".out")), read_text(dir / (loser + ".err"))};
  expect_one_line_error(refused, 2, {"s.h5", "is being written by another clmbench (pid ", "s.h5.lock"});
  EXPECT_EQ(refused.out, "");
  const std::string diff = "cd '" + dir.path().string() + "' && /usr/bin/python3 '" CLMBENCH_SOURCE_DIR
                           "/tests/support/h5_tool.py' compare ref.h5 s.h5 > /dev/null";
  EXPECT_EQ(std::system(diff.c_str()), 0) << "s.h5 differs from the same sweep run alone";
  EXPECT_FALSE(fs::exists(dir / "s.h5.lock"));
  EXPECT_FALSE(fs::exists(dir / "s.h5.parts"));
}

// Two writers of one output in one process (issue 43, bad 5: Run.save in one Python thread while a sweep wrote
// the same output in another both returned, and the saved run was lost; the lock was shared within a process).
// The lock is per writer: a second one is refused naming this process, whatever the path's spelling, and the
// output is free again once the first is done. Temporaries are named per writer.
TEST(OutputLock, ASecondWriterInTheSameProcessIsRefused) {
  ScratchDir dir("lock_in_process");
  const std::string out = dir / "o.h5";
  {
    OutputLock first(out);
    for (const std::string& spelling : {out, (dir.path() / "." / "o.h5").string()}) {
      std::string error;
      try {
        OutputLock second(spelling);
      } catch (const OutputError& e) {
        error = e.what();
      }
      EXPECT_NE(error.find("is being written by another writer in this process"), std::string::npos) << error;
    }
    EXPECT_THROW(ResultsFile writer(out), OutputError);
  }
  ResultsFile a(dir / "a.h5"), b(dir / "b.h5");  // free again; distinct temporaries
  std::vector<std::string> temporaries;
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) temporaries.push_back(e.path().string());
  EXPECT_EQ(temporaries.size(), 2u);
  OutputLock again(out);
}

TEST(OutputLock, ARunComputedTwiceIsOneRunToMerge) {
  // The copies differ only in their timings (cpu_time_s, wall_time_s): merge refused them as different.
  ScratchDir dir("lock_dup");
  write_text(dir / "r.ini", kRun);
  ASSERT_EQ(dir.run("run r.ini --out a.h5").exit_code, 0);
  ASSERT_EQ(dir.run("run r.ini --out b.h5").exit_code, 0);
  const ProcessResult m = dir.run("merge m.h5 a.h5 b.h5");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("wrote m.h5 (1 run from 2 files; 1 identical duplicate skipped"), std::string::npos) << m.out;
  // A real difference is still refused.
  ASSERT_EQ(dir.run("run r.ini --out c.h5 --set run.t_end=0.4").exit_code, 0);
  expect_one_line_error(dir.run("merge m2.h5 a.h5 c.h5"), 1, {"is in both", "refuses to choose"});
}

TEST(OutputLock, AnInterruptedSweepSaysThatResumeContinuesIt) {
  ScratchDir dir("lock_sigint");
  write_text(dir / "s.ini", kSweep);
  const pid_t sweep = spawn_clmbench(dir, {"sweep", "s.ini", "--progress", "never"}, "o", "e");
  // Interrupted once it holds the output and has a part file (runs finished and kept).
  auto has_part = [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "s.h5.parts", ec))
      if (e.path().extension() == ".part") return true;
    return false;
  };
  for (int i = 0; i < 5000 && !has_part() && !fs::exists(dir / "s.h5"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(fs::exists(dir / "s.h5.parts")) << "the sweep ended before it could be interrupted";
  kill(sweep, SIGINT);
  EXPECT_EQ(wait_exit_code(sweep), 128 + SIGINT);
  EXPECT_EQ(read_text(dir / "e"),
            "clmbench: interrupted; the runs finished so far are kept in s.h5.parts: run the same sweep again with "
            "--resume to continue\n");
  EXPECT_FALSE(fs::exists(dir / "s.h5.lock"));
  EXPECT_FALSE(fs::exists(dir / "s.h5"));
  const ProcessResult resumed = dir.run("sweep s.ini --resume --progress never");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("of 27 runs already complete"), std::string::npos) << resumed.out;
}

}  // namespace
}  // namespace clm
