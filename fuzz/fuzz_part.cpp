// libFuzzer target: the reader of a sweep's part files (io/part_file.hpp), which `clmbench sweep --resume`
// scans and the merge replays, on arbitrary bytes written as a file. Every input must be read whole (its
// trailer, then every run replayed into a target that checks the calls it gets, and compared with itself)
// or refused: nullopt from read_part, OutputError from replay_run.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/types.hpp"
#include "fuzz/scratch_file.hpp"
#include "io/part_file.hpp"

namespace {

// Takes the replayed calls as HDF5 would, checking what the reader promises: objects that exist, data of the
// size the call says.
struct CheckingTarget : clm::RunTarget {
  Object objects = 0;
  void check(Object o) const {
    if (o > objects) std::abort();
  }
  void begin_run(const std::string&, long) override { objects = 0; }
  void end_run() override {}
  Object group(Object parent, const std::string&) override {
    check(parent);
    return ++objects;
  }
  Object chunked_dataset(Object parent, const std::string&, hsize_t, bool, hsize_t) override {
    check(parent);
    return ++objects;
  }
  void write_chunk(Object ds, hsize_t, hsize_t, hsize_t, bool, const unsigned char* packed, size_t bytes) override {
    check(ds);
    volatile unsigned char sum = 0;
    for (size_t i = 0; i < bytes; ++i) sum = static_cast<unsigned char>(sum + packed[i]);
  }
  void write_rows(Object ds, hsize_t, hsize_t rows, hsize_t cols, bool, const double* data) override {
    check(ds);
    volatile double sum = 0;
    for (hsize_t i = 0; i < rows * (cols ? cols : 1); ++i) sum = sum + data[i];
  }
  Object whole_dataset(Object parent, const std::string&, hsize_t rows, hsize_t cols, bool matrix,
                       const double* data) override {
    check(parent);
    volatile double sum = 0;
    if (!(matrix && cols == 0))
      for (hsize_t i = 0; i < rows * (cols ? cols : 1); ++i) sum = sum + data[i];
    return ++objects;
  }
  void attribute(Object o, const std::string&, const clm::AttrValue&) override { check(o); }
  void close(Object o) override { check(o); }
  void guarded(const std::string&, const std::function<void()>& body) override { body(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = clm::fuzz::write_scratch_file("fuzz_part", ".part", data, size);
  const auto contents = clm::read_part(path);
  if (!contents) return 0;
  CheckingTarget target;
  for (size_t r = 0; r < contents->run_ids.size(); ++r) {
    try {
      target.begin_run(contents->run_ids[r], contents->sweep_index[r]);
      clm::replay_run(path, *contents, r, target);
      (void)clm::run_difference(path, *contents, r, path, *contents, r);
    } catch (const clm::OutputError&) {
    }
  }
  return 0;
}
