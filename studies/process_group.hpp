// The processes a sweep is spread over: this process alone, or the ranks of an MPI job started by
// `mpirun -n K clmbench sweep ...`. Everything MPI is behind this interface (studies/process_group.cpp,
// compiled with MPI only under the CMake option CLMBENCH_WITH_MPI), so the rest of the program and a build
// without MPI see only the serial implementation.
#pragma once

#include <memory>
#include <string>

namespace clm {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Waits for every process.
  virtual void barrier() = 0;
  // Collective: the lowest rank whose `failed` is true, or -1 on every process when none failed. A process
  // that found bad input says so here instead of leaving the others waiting at the next barrier, and only
  // that rank reports it (one line, not one per rank).
  virtual int first_failure(bool failed) = 0;
  // Ends every process of the job (an unexpected error after the work was split: the others may be
  // waiting for this one). Returns only for the serial group.
  virtual void abort(int exit_code) = 0;
  virtual std::string description() const = 0;  // "1 process", "MPI rank 0 of 4"
};

// True when this process was started by mpirun / srun with MPI (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK in the environment); a plain invocation never initializes MPI.
bool launched_by_mpi();

// The MPI group (MPI_Init here, MPI_Finalize in the destructor) when launched by mpirun and built with MPI;
// the serial group otherwise. InputError when mpirun started several processes but this build has no MPI
// (each would run the whole sweep into the same files).
std::unique_ptr<ProcessGroup> make_process_group();

// Whether this build can use MPI (CLMBENCH_WITH_MPI).
bool built_with_mpi();

}  // namespace clm
