// Test support for tests/cli_test.cpp and tests/hdf5_test.cpp: runs the built clmbench binary
// (CLMBENCH_BINARY) in a scratch directory and captures exit code, stdout and stderr.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace clm::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out, err;
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("clmbench_test_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

  // Runs `clmbench ARGS` with the scratch directory as working directory. ARGS is shell text.
  ProcessResult run(const std::string& args) const { return run_shell_prefix("", args); }

  // Same, with a command in front of the binary (e.g. "timeout -s TERM 0.5").
  ProcessResult run_shell_prefix(const std::string& prefix, const std::string& args) const {
    const auto out = path_ / ".stdout", err = path_ / ".stderr";
    const std::string cmd = "cd '" + path_.string() + "' && " + prefix + " '" + std::string(CLMBENCH_BINARY) + "' " + args + " >'" +
                            out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    ProcessResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }

 private:
  std::filesystem::path path_;
};

// Exit code `code` and exactly one stderr line "clmbench: error: ..." that mentions every `needle`.
inline void expect_one_line_error(const ProcessResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("clmbench: error: ", 0), 0u) << lines[0];
  for (const auto& n : needles) EXPECT_NE(lines[0].find(n), std::string::npos) << "'" << n << "' not in: " << lines[0];
}

// The same, for a command that may first print "clmbench: note:" lines about what it tidied (a sweep killed
// with -9 can leave a temporary part file behind, depending on when the kill landed; the next sweep removes it
// and says so): the notes are skipped, the error must still be one line.
inline void expect_one_line_error_after_notes(const ProcessResult& r, int code, const std::vector<std::string>& needles) {
  ProcessResult without_notes = r;
  without_notes.err.clear();
  for (const auto& line : r.err_lines())
    if (line.rfind("clmbench: note: ", 0) != 0) without_notes.err += line + "\n";
  expect_one_line_error(without_notes, code, needles);
}

}  // namespace clm::testing
