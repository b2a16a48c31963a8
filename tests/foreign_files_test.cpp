// `clmbench info` on files it did not write: other programs' HDF5 files, truncated copies, objects of the
// wrong kind, type, rank or length, FIFOs and directories. Each answers with exit code 2 and one line (a
// file with zero runs is valid and lists none); none may crash or read past a dataset (the sanitizer build
// runs this test too). The files are made with h5py.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "clmbench_process.hpp"

namespace clm {
namespace {

using testing::ProcessResult;
using testing::ScratchDir;
using testing::write_text;

// Writes the foreign files next to good.h5 (a real results file) and prints their names.
const char* kMakeForeignFiles = R"PY(
import h5py, numpy as np, sys
good = open("good.h5", "rb").read()
def raw(name, data): open(name, "wb").write(data)
raw("empty.h5", b"")
raw("text.h5", b"hello, not hdf5\n")
raw("trunc_100.h5", good[:100])
raw("trunc_half.h5", good[:len(good) // 2])
raw("trunc_tail.h5", good[:len(good) - 100])
s = h5py.string_dtype()
def results(name, **cols):
    with h5py.File(name, "w") as f:
        f.attrs["clmbench_version"] = "0.1.0"
        g = f.create_group("summary")
        base = {"run_id": np.array(["a", "b"], dtype=object)}
        base.update(cols)
        for k, v in base.items():
            if v is None: continue
            if isinstance(v, np.ndarray) and v.dtype == object: g.create_dataset(k, data=v, dtype=s)
            else: g.create_dataset(k, data=v)
with h5py.File("plain.h5", "w") as f: f.create_dataset("x", data=np.arange(3.0))
with h5py.File("no_summary.h5", "w") as f: f.attrs["clmbench_version"] = "0.1.0"
with h5py.File("summary_dataset.h5", "w") as f:
    f.attrs["clmbench_version"] = "0.1.0"; f.create_dataset("summary", data=np.arange(3.0))
results("run_id_2d.h5", run_id=np.array([["a", "b"], ["c", "d"]], dtype=object))
results("run_id_numeric.h5", run_id=np.arange(2.0))
with h5py.File("run_id_scalar.h5", "w") as f:
    f.attrs["clmbench_version"] = "0.1.0"; f.create_group("summary").create_dataset("run_id", data="a", dtype=s)
results("run_id_fixed.h5", run_id=np.array([b"a", b"b"], dtype="S5"))
results("column_longer.h5", samples=np.arange(5))
results("column_shorter.h5", max_drift_velocity=np.arange(1.0))
results("column_2d.h5", max_drift_velocity=np.zeros((2, 3)))
results("column_strings.h5", wall_time_s=np.array(["1", "2"], dtype=object))
results("problem_numeric.h5", problem=np.arange(2.0))
results("problem_longer.h5", problem=np.array(["p", "q", "r"], dtype=object))
results("column_compound.h5", max_drift_position=np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]))
with h5py.File("version_numeric.h5", "w") as f: f.attrs["clmbench_version"] = 3.0
with h5py.File("summary_link.h5", "w") as f:
    f.attrs["clmbench_version"] = "0.1.0"; f["summary"] = h5py.SoftLink("/nowhere")
print("ok")
)PY";

const std::vector<std::string> kForeign = {
    "empty.h5",         "text.h5",           "trunc_100.h5",      "trunc_half.h5",       "trunc_tail.h5",
    "plain.h5",         "no_summary.h5",     "summary_dataset.h5", "run_id_2d.h5",       "run_id_numeric.h5",
    "run_id_scalar.h5", "run_id_fixed.h5",   "column_longer.h5",  "column_shorter.h5",   "column_2d.h5",
    "column_strings.h5", "problem_numeric.h5", "problem_longer.h5", "column_compound.h5", "version_numeric.h5",
    "summary_link.h5"};

TEST(ForeignFiles, InfoAnswersEachInOneLine) {
  ScratchDir dir("foreign");
  ASSERT_EQ(dir.run("run --problem pendulum_polar --formulation kkt --integrator rk4 --t-end 1 --out good.h5").exit_code, 0);
  write_text(dir / "make.py", kMakeForeignFiles);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() + "' && /usr/bin/python3 make.py > made.txt").c_str()), 0);
  for (const auto& name : kForeign) {
    SCOPED_TRACE(name);
    const ProcessResult r = dir.run("info " + name);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("clmbench: error: '" + name + "'", 0), 0u) << lines[0];
    EXPECT_EQ(r.out, "");
  }
  ASSERT_EQ(mkfifo((dir / "fifo.h5").c_str(), 0600), 0);
  const ProcessResult fifo = dir.run_shell_prefix("timeout 10", "info fifo.h5");
  testing::expect_one_line_error(fifo, 2, {"fifo.h5", "not a regular file"});
  std::filesystem::create_directory(dir / "dir.h5");
  testing::expect_one_line_error(dir.run("info dir.h5"), 2, {"dir.h5", "not a regular file"});
  // The good file still reads, and --run on a foreign or truncated file is refused the same way.
  EXPECT_EQ(dir.run("info good.h5").exit_code, 0);
  testing::expect_one_line_error(dir.run("info trunc_tail.h5 --run x"), 2, {"trunc_tail.h5"});
  testing::expect_one_line_error(dir.run("info plain.h5 --run x"), 2, {"plain.h5"});
  testing::expect_one_line_error(dir.run("info good.h5 --run nope"), 1, {"no run 'nope'"});
}

}  // namespace
}  // namespace clm

namespace clm {
namespace {

// Found by fuzz_results: a damaged global heap makes HDF5 1.10 itself crash (SEGV in H5HG_read) when a
// string attribute is read. `info` reads in a child process and answers in one line.
TEST(ForeignFiles, AFileThatCrashesHdf5IsAnsweredInOneLine) {
  testing::ScratchDir dir("crash");
  const std::string file = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/damaged_global_heap.h5";
  const ProcessResult r = dir.run("info '" + file + "'");
  testing::expect_one_line_error(r, 2, {"damaged_global_heap.h5"});
}

// Found by fuzz_results in CI: a damaged attribute message in an object header makes HDF5 1.10 read past a
// buffer of its own (heap-buffer-overflow in a memcpy called from H5O__msg_iterate_real, under H5Aexists).
// Without a sanitizer HDF5 reads garbage and reports a failed lookup; with one, the reader child aborts.
// Either way the user gets one line and exit code 2.
TEST(ForeignFiles, AFileThatOverrunsHdf5sBufferIsAnsweredInOneLine) {
  testing::ScratchDir dir("overrun");
  const std::string file = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/damaged_object_header.h5";
  const ProcessResult r = dir.run("info '" + file + "'");
  testing::expect_one_line_error(r, 2, {"damaged_object_header.h5"});
}

}  // namespace
}  // namespace clm
