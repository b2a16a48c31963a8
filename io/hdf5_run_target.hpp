// RunTarget into an open results file (io/run_target.hpp): each call made at once, in the file's /runs
// group, every HDF5 call checked; guarded() is the file's (the HDF5 lock held, a failure one OutputError
// naming the file). `clmbench run` writes its runs through it, and a sweep's merge replays its jobs' part
// files (io/part_file.hpp) through it into OUT.
#pragma once

#include <vector>

#include "io/results_file.hpp"
#include "io/run_target.hpp"

namespace clm {

class Hdf5RunTarget : public RunTarget {
 public:
  explicit Hdf5RunTarget(ResultsFile& file) : file_(file) {}
  // Objects left open (a failed run) are closed silently.
  ~Hdf5RunTarget() override;

  void begin_run(const std::string& run_id, long sweep_index) override;
  void end_run() override;
  Object group(Object parent, const std::string& name) override;
  Object chunked_dataset(Object parent, const std::string& name, hsize_t cols, bool matrix, hsize_t block_rows) override;
  void write_chunk(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                   const unsigned char* packed, size_t bytes) override;
  void write_rows(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                  const double* data) override;
  Object whole_dataset(Object parent, const std::string& name, hsize_t rows, hsize_t cols, bool matrix,
                       const double* data) override;
  void attribute(Object object, const std::string& name, const AttrValue& value) override;
  void close(Object object) override;
  void guarded(const std::string& what, const std::function<void()>& body) override;


 private:
  hid_t id(Object object);
  Object add(hdf5::Handle handle);

  ResultsFile& file_;
  std::vector<hdf5::Handle> objects_;  // objects_[k - 1] is object k of the run in progress
  // The run group (/runs/<id>) of the run in progress, and the header bytes the last closed one used: a run
  // group is made that large at once (hdf5::run_group_properties), since a sweep's runs have the same
  // attributes. Only an allocation size: the file's contents do not depend on it.
  Object run_group_ = 0;
  size_t run_header_bytes_ = 0;
};

}  // namespace clm
