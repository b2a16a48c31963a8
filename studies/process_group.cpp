// Serial and MPI implementations of ProcessGroup. The MPI one uses only the C API (MPI_Init, MPI_Barrier,
// MPI_Allreduce, MPI_Abort, MPI_Finalize) from the main thread: the sweep's worker threads never call MPI,
// so no thread support level is needed.
#include "studies/process_group.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/types.hpp"

#ifdef CLMBENCH_WITH_MPI
// The C API only: the deprecated C++ bindings need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace clm {

namespace {

class SerialGroup : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void barrier() override {}
  int first_failure(bool failed) override { return failed ? 0 : -1; }
  void abort(int) override {}
  std::string description() const override { return "1 process"; }
};

#ifdef CLMBENCH_WITH_MPI
class MpiGroup : public ProcessGroup {
 public:
  MpiGroup() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      // A sweep's ranks exchange a barrier and an allreduce, nothing else: Open MPI's ob1 point-to-point
      // layer over its own process (self), shared memory (vader) and TCP does that as fast as any. Left to
      // choose, Open MPI 4.1 probes UCX and libfabric first, which took 0.2 s of MPI_Init on a node without
      // such hardware (0.23 s against 0.02, issue 25): a tenth of a 16-job sweep of 2 s. Naming the
      // transports also keeps out libfabric's (1 s more in MPI_Finalize here) and openib, which on InfiniBand
      // would only print Open MPI 4's warning that it is not used. A choice made by the user (mpirun --mca
      // pml X, OMPI_MCA_pml in the environment, the same for btl) is kept: setenv does not overwrite.
      setenv("OMPI_MCA_pml", "ob1", /*overwrite=*/0);
      setenv("OMPI_MCA_btl", "self,vader,tcp", /*overwrite=*/0);
      MPI_Init(nullptr, nullptr);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  int first_failure(bool failed) override {
    int mine = failed ? rank_ : size_, first = size_;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return first < size_ ? first : -1;
  }
  void abort(int exit_code) override { MPI_Abort(MPI_COMM_WORLD, exit_code); }
  std::string description() const override {
    return "MPI rank " + std::to_string(rank_) + " of " + std::to_string(size_);
  }

 private:
  int rank_ = 0, size_ = 1;
};
#endif

[[maybe_unused]] long env_number(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : -1;
}

}  // namespace

bool built_with_mpi() {
#ifdef CLMBENCH_WITH_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

std::unique_ptr<ProcessGroup> make_process_group() {
  if (!launched_by_mpi()) return std::make_unique<SerialGroup>();
#ifdef CLMBENCH_WITH_MPI
  return std::make_unique<MpiGroup>();
#else
  const long size = std::max(env_number("OMPI_COMM_WORLD_SIZE"), env_number("PMI_SIZE"));
  if (size > 1) {
    throw InputError("started by mpirun with " + std::to_string(size) +
                     " processes, but this clmbench was built without MPI (CLMBENCH_WITH_MPI=OFF): each process would "
                     "run the whole sweep; run it without mpirun (--jobs K) or rebuild with MPI");
  }
  return std::make_unique<SerialGroup>();
#endif
}

}  // namespace clm
