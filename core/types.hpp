// Vocabulary types shared by every layer.
#pragma once

#include <Eigen/Dense>
#include <stdexcept>
#include <string>

namespace clm {

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;

// Fixed-or-dynamic Eigen shapes used by the templated problem structs.
template <class T, int N>
using VecN = Eigen::Matrix<T, N, 1>;
template <class T, int R, int C>
using MatN = Eigen::Matrix<T, R, C>;

// Bad input from a user (unknown name, malformed value, inconsistent data): the CLI prints the message
// on one line and exits non-zero.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A numerical failure inside a run (singular constraint matrix, chart singularity, ...): the run ends
// with status "failed" and the message; what was computed so far is kept.
struct NumericalFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by whoever consumes a run's samples when the run must stop and the error reach the caller
// unchanged (the results file cannot be written): simulate() does not turn it into a run status.
struct AbortRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace clm
