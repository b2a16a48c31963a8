// libFuzzer target: the results reader of `clmbench info` (io/results_info.cpp) on arbitrary
// bytes written as a file. Every input must be read or refused with an InputError / OutputError.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/types.hpp"
#include "fuzz/scratch_file.hpp"
#include "io/results_file.hpp"
#include "runs/recorded_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = clm::fuzz::write_scratch_file("fuzz_results", ".h5", data, size);
  try {
    (void)clm::format_results_table(clm::read_results_info(path));
  } catch (const clm::InputError&) {
  } catch (const clm::OutputError&) {
  }
  try {
    (void)clm::format_run_options(clm::read_run_options(path, "a"));
  } catch (const clm::InputError&) {
  } catch (const clm::OutputError&) {
  }
  return 0;
}
