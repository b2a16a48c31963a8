#include "formulations/saddle_point.hpp"

#include "core/formulation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace clm {

namespace {

// Eigen's triangular solves work in panels of this many columns (EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH).
constexpr int kPanel = 8;

// LU with partial pivoting of the N x N column-major matrix K (copied, K is left as it is) and the solve
// K x = b in place, operation for operation as Eigen 3.4's PartialPivLU<MatrixXd> does it for N <= 16:
// partial_lu_impl::unblocked_lu, then P b, the unit-lower and upper triangular_solve_vector (axpy within
// a panel of 8 columns, one GEMV for the rows beyond it). Returns min |u_ii| / max |u_ii| (0 if max = 0).
template <int N>
double lu_solve_kernel(double* K, double* b) {
  std::array<double, N * N> a;
  std::copy(K, K + N * N, a.begin());
  auto at = [&a](int i, int j) -> double& { return a[i + j * N]; };
  std::array<int, N> transposition;
  for (int k = 0; k < N; ++k) {
    // First row of the largest |a_ik|, i >= k (Eigen's max_coeff_visitor: strict >).
    int p = k;
    double biggest = std::abs(at(k, k));
    for (int i = k + 1; i < N; ++i) {
      const double v = std::abs(at(i, k));
      if (v > biggest) {
        biggest = v;
        p = i;
      }
    }
    transposition[k] = p;
    if (biggest != 0.0) {
      if (p != k)
        for (int j = 0; j < N; ++j) std::swap(at(k, j), at(p, j));
      const double pivot = at(k, k);
      for (int i = k + 1; i < N; ++i) at(i, k) /= pivot;
    }
    for (int j = k + 1; j < N; ++j) {
      const double u = at(k, j);
      for (int i = k + 1; i < N; ++i) at(i, j) -= u * at(i, k);
    }
  }
  // b := P b.
  for (int k = 0; k < N; ++k)
    if (transposition[k] != k) std::swap(b[k], b[transposition[k]]);
  // Unit lower triangle, forward.
  for (int pi = 0; pi < N; pi += kPanel) {
    const int end = std::min(N, pi + kPanel);
    for (int i = pi; i < end; ++i) {
      if (b[i] != 0.0)
        for (int s = i + 1; s < end; ++s) b[s] -= b[i] * at(s, i);
    }
    for (int r = end; r < N; ++r) {
      double c = 0.0;
      for (int j = pi; j < end; ++j) c += at(r, j) * b[j];
      b[r] += -1.0 * c;
    }
  }
  // Upper triangle, backward.
  for (int pi = N; pi > 0; pi -= kPanel) {
    const int start = std::max(0, pi - kPanel);
    for (int i = pi - 1; i >= start; --i) {
      if (b[i] != 0.0) {
        b[i] /= at(i, i);
        for (int s = start; s < i; ++s) b[s] -= b[i] * at(s, i);
      }
    }
    for (int r = 0; r < start; ++r) {
      double c = 0.0;
      for (int j = start; j < pi; ++j) c += at(r, j) * b[j];
      b[r] += -1.0 * c;
    }
  }
  return pivot_ratio(Eigen::Map<const Eigen::Matrix<double, N, N>>(a.data()).diagonal());
}

// Eigen's vectorized sum of x_j y_j, j = 0 .. k-1, for contiguous unaligned operands (redux with
// LinearVectorizedTraversal, 2-lane packets, two accumulators; alignedStart = 0 for a product expression).
inline double eigen_dot(const double* x, const double* y, int k) {
  constexpr int ps = 2;
  const int aligned2 = (k / (2 * ps)) * (2 * ps), aligned = (k / ps) * ps;
  if (aligned == 0) {
    double res = x[0] * y[0];
    for (int i = 1; i < k; ++i) res = res + x[i] * y[i];
    return res;
  }
  double p0[2] = {x[0] * y[0], x[1] * y[1]};
  if (aligned > ps) {
    double p1[2] = {x[2] * y[2], x[3] * y[3]};
    for (int i = 2 * ps; i < aligned2; i += 2 * ps) {
      p0[0] = p0[0] + x[i] * y[i];
      p0[1] = p0[1] + x[i + 1] * y[i + 1];
      p1[0] = p1[0] + x[i + 2] * y[i + 2];
      p1[1] = p1[1] + x[i + 3] * y[i + 3];
    }
    p0[0] = p0[0] + p1[0];
    p0[1] = p0[1] + p1[1];
    if (aligned > aligned2) {
      p0[0] = p0[0] + x[aligned2] * y[aligned2];
      p0[1] = p0[1] + x[aligned2 + 1] * y[aligned2 + 1];
    }
  }
  double res = p0[0] + p0[1];
  for (int i = aligned; i < k; ++i) res = res + x[i] * y[i];
  return res;
}

// llt_inplace<double, Lower>::unblocked on the lower triangle of K (N x N, column-major) into L.
template <int N>
bool llt_factor_kernel(const double* K, double* L) {
  std::copy(K, K + N * N, L);
  auto at = [L](int i, int j) -> double& { return L[i + j * N]; };
  for (int k = 0; k < N; ++k) {
    double x = at(k, k);
    if (k > 0) {
      double sq = at(k, 0) * at(k, 0);
      for (int j = 1; j < k; ++j) sq = sq + at(k, j) * at(k, j);
      x -= sq;
    }
    if (x <= 0.0) return false;
    at(k, k) = x = std::sqrt(x);
    if (k > 0)
      for (int i = k + 1; i < N; ++i) {
        double c = 0.0;
        for (int j = 0; j < k; ++j) c += at(i, j) * at(k, j);
        at(i, k) += -1.0 * c;
      }
    for (int i = k + 1; i < N; ++i) at(i, k) /= x;
  }
  return true;
}

// L (col-major lower, one panel) then L^T (row-major upper, one panel), as LLT::solveInPlace for N <= 8.
template <int N>
void llt_solve_kernel(const double* L, double* b) {
  auto at = [L](int i, int j) { return L[i + j * N]; };
  for (int i = 0; i < N; ++i) {
    if (b[i] != 0.0) {
      b[i] /= at(i, i);
      for (int s = i + 1; s < N; ++s) b[s] -= b[i] * at(s, i);
    }
  }
  for (int k = 0; k < N; ++k) {
    const int i = N - k - 1;
    if (k > 0) b[i] -= eigen_dot(L + (i + 1) + i * N, b + i + 1, k);  // row i of L^T = column i of L
    if (b[i] != 0.0) b[i] /= at(i, i);
  }
}

using Kernel = double (*)(double*, double*);

template <int... Ns>
constexpr std::array<Kernel, sizeof...(Ns) + 1> kernel_table(std::integer_sequence<int, Ns...>) {
  return {nullptr, &lu_solve_kernel<Ns + 1>...};
}

// kKernels[N] solves an N x N system, N = 1 .. kMaxFixedSaddleSize.
constexpr auto kKernels = kernel_table(std::make_integer_sequence<int, kMaxFixedSaddleSize>{});

using FactorKernel = bool (*)(const double*, double*);
using SolveKernel = void (*)(const double*, double*);
template <int... Ns>
constexpr std::array<FactorKernel, sizeof...(Ns) + 1> factor_table(std::integer_sequence<int, Ns...>) {
  return {nullptr, &llt_factor_kernel<Ns + 1>...};
}
template <int... Ns>
constexpr std::array<SolveKernel, sizeof...(Ns) + 1> solve_table(std::integer_sequence<int, Ns...>) {
  return {nullptr, &llt_solve_kernel<Ns + 1>...};
}
constexpr auto kFactorKernels = factor_table(std::make_integer_sequence<int, kMaxFixedCholeskySize>{});
constexpr auto kSolveKernels = solve_table(std::make_integer_sequence<int, kMaxFixedCholeskySize>{});

}  // namespace

SquareLuSolver::SquareLuSolver(int n)
    : n_(n), K_(Mat::Zero(n, n)), kernel_(n >= 1 && n <= kMaxFixedSaddleSize ? kKernels[n] : nullptr), x_(n) {
  if (!kernel_) lu_ = Eigen::PartialPivLU<Mat>(n);
}

double SquareLuSolver::solve_in_place(Vec& b) {
  if (kernel_) return kernel_(K_.data(), b.data());
  lu_.compute(K_);
  x_ = lu_.solve(b);
  b = x_;
  return pivot_ratio(lu_.matrixLU().diagonal());
}

CholeskySolver::CholeskySolver(int n) : n_(n), L_(Mat::Zero(n, n)) {
  if (n >= 1 && n <= kMaxFixedCholeskySize) {
    factor_ = kFactorKernels[n];
    solve_ = kSolveKernels[n];
  } else {
    llt_ = Eigen::LLT<Mat>(n);
  }
}

bool CholeskySolver::compute(const Mat& K) {
  if (factor_) return factor_(K.data(), L_.data());
  llt_.compute(K);
  return llt_.info() == Eigen::Success;
}

double CholeskySolver::pivot_ratio() const {
  if (factor_) return clm::pivot_ratio(L_.diagonal().cwiseAbs2());
  return clm::pivot_ratio(llt_.matrixLLT().diagonal().cwiseAbs2());
}

void CholeskySolver::solve_in_place(Vec& b) const {
  if (solve_) {
    solve_(L_.data(), b.data());
    return;
  }
  llt_.solveInPlace(b);
}

void CholeskySolver::solve_in_place(Mat& B) const {
  if (solve_) {
    for (Eigen::Index j = 0; j < B.cols(); ++j) solve_(L_.data(), B.col(j).data());  // columns are contiguous
    return;
  }
  llt_.solveInPlace(B);
}

SaddlePointWorkspace::SaddlePointWorkspace(int n, int m) : n_(n), m_(m), lu_(n + m), b_(n + m), gamma_(m) {}

bool solve_saddle_point(const ModelTerms& terms, const Vec& f, const Vec& qd, double compliance,
                        const ConstraintStabilization& stabilization, SaddlePointWorkspace& ws, Vec& x, Vec& mu) {
  const int n = ws.n_, m = ws.m_;
  Mat& K = ws.lu_.matrix();
  K.topLeftCorner(n, n) = terms.M;
  K.topRightCorner(n, m) = -terms.A.transpose();
  K.bottomLeftCorner(m, n) = terms.A;
  K.bottomRightCorner(m, m).diagonal().setConstant(compliance);  // the off-diagonal stays 0
  Vec& gamma = ws.gamma_;
  gamma.noalias() = -terms.Adot_qd;
  if (stabilization.alpha != 0) {
    gamma.noalias() -= (2 * stabilization.alpha) * (terms.A * qd);
    // The velocity constraint of a time-dependent problem is A qd + b = 0 (b empty otherwise).
    if (terms.b.size() > 0) gamma.noalias() -= (2 * stabilization.alpha) * terms.b;
  }
  // On the position rows: all of a holonomic problem's, the first of a mixed one's.
  if (stabilization.beta != 0) gamma.head(terms.h.size()).noalias() -= (stabilization.beta * stabilization.beta) * terms.h;
  ws.b_.head(n) = f;
  ws.b_.tail(m) = gamma;
  ws.pivot_ratio_ = ws.lu_.solve_in_place(ws.b_);
  if (!ws.b_.allFinite()) return false;
  x = ws.b_.head(n);
  mu = ws.b_.tail(m);
  return true;
}

}  // namespace clm
