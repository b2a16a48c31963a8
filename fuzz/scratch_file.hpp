// The file a fuzz target writes each input to, for the readers that take a path: one per process, under
// $TMPDIR (default /tmp), removed when the process exits. libFuzzer's fork mode starts a process per job,
// and each left its file behind (hundreds of /tmp/clmbench_fuzz_* after a smoke run); a job that crashes
// or times out still does, so tools/test.sh gives each target a TMPDIR of its own and removes it.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace clm::fuzz {

// `data` written to this process's scratch file "clmbench_<target>_<pid><extension>"; its path.
inline const std::string& write_scratch_file(const char* target, const char* extension, const uint8_t* data,
                                             size_t size) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/clmbench_" + target + "_" + std::to_string(getpid()) +
           extension;
  }();
  static const bool removed_at_exit = std::atexit([] { std::remove(path.c_str()); }) == 0;
  (void)removed_at_exit;
  // An input not written whole would fuzz the reader with other bytes than libFuzzer's: stop, loudly.
  FILE* f = std::fopen(path.c_str(), "wb");
  const bool written = f && std::fwrite(data, 1, size, f) == size;
  if (!f || std::fclose(f) != 0 || !written) {
    std::fprintf(stderr, "fuzz: cannot write the scratch input %s\n", path.c_str());
    std::abort();
  }
  return path;
}

}  // namespace clm::fuzz
