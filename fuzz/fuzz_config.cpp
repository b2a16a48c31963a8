// libFuzzer target: the config reader (runs/run_config.cpp) on arbitrary bytes. Every input must end
// in a resolved config or an InputError; anything else (a crash, a sanitizer finding, another exception)
// is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/types.hpp"
#include "fuzz/scratch_file.hpp"
#include "runs/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = clm::fuzz::write_scratch_file("fuzz_config", ".ini", data, size);
  try {
    clm::ConfigLayer flags;
    const clm::RunConfig config = clm::load_run_config(path, {}, flags, std::nullopt);
    (void)clm::to_config_text(config);
  } catch (const clm::InputError&) {
  }
  return 0;
}
