// The one saddle-point solver of the suite. kkt, vakonomic, added_mass's multiplier form and
// fernandez_bloch's nonholonomic reference all solve
//
//   [M  -A^T] [x ]   [f                                  ]
//   [A   e I] [mu] = [-Adot qd - 2 alpha A qd - beta^2 h ],
//
// with compliance e >= 0 (0: kkt, vakonomic, the fernandez_bloch reference; 1/N: added_mass multiplier
// form) and Baumgarte gains alpha, beta (beta only for holonomic problems; the caller passes 0 otherwise).
//
// Small systems do not pay for dynamic sizes: for n + m <= kMaxFixedSaddleSize the factorization and
// solve run in a kernel compiled for that size, chosen once when the workspace is made (a table of
// function pointers). The kernel performs exactly the floating-point operations, in the same order, of
// Eigen 3.4's dynamic-size PartialPivLU (unblocked for sizes <= 16; triangular solves in panels of
// EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH = 8 plus a GEMV for the rows below/above a panel), so results are
// bit-identical to the dynamic path (tests/saddle_point_test.cpp checks this against Eigen). Larger
// systems use Eigen::PartialPivLU<Mat>. No heap allocation per solve. The Cholesky factorizations of the
// other formulations get the same treatment (CholeskySolver below).
#pragma once

#include <Eigen/LU>

#include "core/model.hpp"
#include "core/types.hpp"

namespace clm {

// x = K^-1 b for K's LU factor and a matrix of right-hand sides, into a preallocated x: PartialPivLU::solve's
// steps (P b, then L^-1 and U^-1 in place) without its temporary (solve() would make one, an in-place
// permutation a mask vector). The exact Jacobians' 2n columns (kkt, servo, fernandez_bloch).
inline void lu_solve_into(const Eigen::PartialPivLU<Mat>& lu, const Mat& b, Mat& x) {
  x.noalias() = lu.permutationP() * b;
  lu.matrixLU().triangularView<Eigen::UnitLower>().solveInPlace(x);
  lu.matrixLU().triangularView<Eigen::Upper>().solveInPlace(x);
}

// Largest n + m (and largest n for SquareLuSolver) solved by a fixed-size kernel.
inline constexpr int kMaxFixedSaddleSize = 12;

// Dense LU with partial pivoting of one n x n matrix per call, fixed-size kernels for n <= 12.
class SquareLuSolver {
 public:
  explicit SquareLuSolver(int n);
  int size() const { return n_; }
  // The matrix to factor: fill it (it keeps its values between calls), then solve().
  Mat& matrix() { return K_; }
  // Factors matrix() and solves K x = b in place. Returns min |u_ii| / max |u_ii| of the LU factor
  // (0 when singular); the result may be non-finite when K is singular.
  double solve_in_place(Vec& b);

 private:
  using Kernel = double (*)(double* K, double* b);
  int n_;
  Mat K_;
  Kernel kernel_ = nullptr;            // fixed-size path, or null
  Eigen::PartialPivLU<Mat> lu_;        // dynamic path
  Vec x_;
};

// Cholesky factorization K = L L^T of one n x n symmetric positive-definite matrix per call, for vector
// right-hand sides: penalty, added_mass (direct), nullspace and substituted. For n <= kMaxFixedCholeskySize
// a kernel compiled for that size does the operations of Eigen 3.4's dynamic LLT<MatrixXd> (unblocked for
// n < 32: sequential squared norms, one GEMV per column; solves: the column-major L panel and the
// row-major L^T panel with its vectorized (2-lane SSE2) dot products) in Eigen's order, bit-identical
// (tests/saddle_point_test.cpp). Above that size (one triangular panel of 8 no longer covers the solve),
// Eigen::LLT<Mat>.
inline constexpr int kMaxFixedCholeskySize = 8;

class CholeskySolver {
 public:
  explicit CholeskySolver(int n);
  int size() const { return n_; }
  // Factors the lower triangle of K; false when K is not positive definite (Eigen's NumericalIssue).
  bool compute(const Mat& K);
  // min L_ii^2 / max L_ii^2 of the last successful factorization (0 when max = 0).
  double pivot_ratio() const;
  // b := K^-1 b.
  void solve_in_place(Vec& b) const;
  // B := K^-1 B, column by column (the exact Jacobians' 2n right-hand sides on the factor the rhs left).
  void solve_in_place(Mat& B) const;

 private:
  using Factor = bool (*)(const double* K, double* L);
  using Solve = void (*)(const double* L, double* b);
  int n_;
  Mat L_;                     // fixed path: the factor (lower triangle)
  Factor factor_ = nullptr;   // fixed path, or null
  Solve solve_ = nullptr;
  Eigen::LLT<Mat> llt_;       // dynamic path
};

// Baumgarte gains of the constraint row; both 0 for the plain index-1 system.
struct ConstraintStabilization {
  double alpha = 0;  // velocity level: -2 alpha A qd
  double beta = 0;   // position level (holonomic problems only): -beta^2 h
};

// Buffers for solve_saddle_point, sized once (n coordinates, m constraints).
class SaddlePointWorkspace {
 public:
  SaddlePointWorkspace(int n, int m);
  int n() const { return n_; }
  int m() const { return m_; }
  // min |u_ii| / max |u_ii| of the last solve's LU factor (0 when singular).
  double pivot_ratio() const { return pivot_ratio_; }

 private:
  friend bool solve_saddle_point(const ModelTerms&, const Vec&, const Vec&, double, const ConstraintStabilization&,
                                 SaddlePointWorkspace&, Vec&, Vec&);
  int n_, m_;
  SquareLuSolver lu_;
  Vec b_, gamma_;
  double pivot_ratio_ = 1;
};

// Solves the system above with M, A, Adot qd (and h when beta != 0) taken from `terms`, f the top
// right-hand side (F - c, plus C^T lambda for vakonomic), qd the velocity in the Baumgarte term.
// Writes x (n) and mu (m); returns false when the solution is not finite (singular matrix).
bool solve_saddle_point(const ModelTerms& terms, const Vec& f, const Vec& qd, double compliance,
                        const ConstraintStabilization& stabilization, SaddlePointWorkspace& ws, Vec& x, Vec& mu);

}  // namespace clm
