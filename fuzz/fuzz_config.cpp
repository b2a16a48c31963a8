// libFuzzer target: the config reader (runs/run_config.cpp) on arbitrary bytes. Every input must end
// in a resolved config or an InputError; anything else (a crash, a sanitizer finding, another exception)
// is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/types.hpp"
#include "runs/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/clmbench_fuzz_config_" + std::to_string(getpid()) + ".ini";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    clm::ConfigLayer flags;
    const clm::RunConfig config = clm::load_run_config(path, {}, flags, std::nullopt);
    (void)clm::to_config_text(config);
  } catch (const clm::InputError&) {
  }
  return 0;
}
