#include "formulations/minimum_norm_multipliers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace clm {

MinimumNormMultipliers::MinimumNormMultipliers(int n, int m, int r)
    : n_(n),
      m_(m),
      max_rank_(r),
      llt_M_(n),
      B_(Mat::Zero(n, m)),
      Y_(Mat::Zero(n, m)),
      svd_(n, m, Eigen::ComputeFullV),
      free_(Vec::Zero(n)),
      b_(Vec::Zero(m)),
      c_(Vec::Zero(m)) {}

void MinimumNormMultipliers::solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who,
                                   Vec& qdd, Vec& lambda) {
  llt_M_.compute(terms.M);
  if (llt_M_.info() != Eigen::Success ||
      (n_ > 0 && !well_conditioned(pivot_ratio(llt_M_.matrixLLT().diagonal().cwiseAbs2()))))
    throw NumericalFailure(who + ": Cholesky of the mass matrix M failed (M not positive definite); the minimum-norm "
                                 "path for redundant constraints needs it");
  // B = L^-1 A^T; Y = M^-1 A^T = L^-T B.
  B_ = terms.A.transpose();
  llt_M_.matrixL().solveInPlace(B_);
  Y_ = B_;
  llt_M_.matrixU().solveInPlace(Y_);
  free_ = f;
  llt_M_.solveInPlace(free_);
  b_ = gamma;
  b_.noalias() -= terms.A * free_;

  svd_.compute(B_, Eigen::ComputeFullV);
  const auto& s = svd_.singularValues();  // descending, min(n, m) of them
  const Mat& V = svd_.matrixV();
  const int k = static_cast<int>(s.size());
  rank_ = 0;
  if (k > 0 && s[0] > 0) {
    const double tol = std::max(rank_threshold(B_.rows(), B_.cols(), s[0]), truncation_ * s[0]);
    while (rank_ < k && rank_ < max_rank_ && s[rank_] > tol) ++rank_;
  }
  // c = V^T b; the rank-kept part scaled by 1/s^2, the rest is b's part outside the range of S.
  c_.noalias() = V.transpose() * b_;
  double perp2 = 0;
  for (int i = rank_; i < m_; ++i) {
    perp2 += c_[i] * c_[i];
    c_[i] = 0;
  }
  for (int i = 0; i < rank_; ++i) c_[i] /= s[i] * s[i];
  lambda.noalias() = V * c_;
  const double scale = b_.norm() + (k > 0 ? s[0] * s[0] : 0.0) * lambda.norm();
  residual_ = scale > 0 ? std::sqrt(perp2) / scale : 0.0;
  if (!lambda.allFinite() || (truncation_ == 0 && !(residual_ <= kConsistencyTolerance)))
    throw_inconsistent(who, rank_, m_, residual_);
  qdd = free_;
  qdd.noalias() += Y_ * lambda;
}

void throw_inconsistent(const std::string& who, int rank, int rows, double residual) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s: inconsistent constraints: the acceleration-level system A qdd = gamma has no solution (rank "
                "%d found, %d rows, residual %.1e relative > %.0e)",
                who.c_str(), rank, rows, residual, kConsistencyTolerance);
  throw NumericalFailure(buf);
}

MinimumNormSaddlePoint::MinimumNormSaddlePoint(int n, int m, int r)
    : n_(n),
      m_(m),
      max_rank_(n + r),
      K_(Mat::Zero(n + m, n + m)),
      eig_(n + m),
      Q_(Mat::Zero(n + m, n + m)),
      V_(Mat::Zero(n + m, n + m)),
      hcoeffs_(Vec::Zero(std::max(n + m - 1, 1))),
      diag_(Vec::Zero(n + m)),
      subdiag_(Vec::Zero(std::max(n + m - 1, 1))),
      work_(Vec::Zero(n + m)),
      order_(n + m),
      rhs_(Vec::Zero(n + m)),
      c_(Vec::Zero(n + m)),
      z_(Vec::Zero(n + m)) {}

void MinimumNormSaddlePoint::solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who,
                                   Vec& qdd, Vec& lambda) {
  const int N = n_ + m_;
  K_.topLeftCorner(n_, n_) = terms.M;
  K_.topRightCorner(n_, m_) = terms.A.transpose();
  K_.bottomLeftCorner(m_, n_) = terms.A;
  K_.bottomRightCorner(m_, m_).setZero();  // overwritten by the tridiagonalization of the last solve
  rhs_.head(n_) = f;
  rhs_.tail(m_) = gamma;
  // K is symmetric: K = V diag(mu) V^T, and its singular values are |mu_i| (with U = V sign(mu)); the
  // pseudo-inverse keeps the largest |mu_i| under the same rank rules as an SVD of K.
  // Householder tridiagonalization Q^T K Q = T and the implicit QR of T, by hand so that nothing is allocated
  // (SelfAdjointEigenSolver::compute forms Q through temporaries): V = Q W for T = W diag(mu) W^T.
  Eigen::internal::tridiagonalization_inplace(K_, hcoeffs_);
  diag_ = K_.diagonal();
  subdiag_ = K_.template diagonal<-1>();
  Eigen::HouseholderSequence<Mat, Vec>(K_, hcoeffs_).setLength(N - 1).setShift(1).evalTo(Q_, work_);
  eig_.computeFromTridiagonal(diag_, subdiag_, Eigen::ComputeEigenvectors);
  if (eig_.info() != Eigen::Success) throw NumericalFailure(who + ": eigen-decomposition of the KKT matrix failed");
  V_.noalias() = Q_ * eig_.eigenvectors();
  const auto& mu = eig_.eigenvalues();
  for (int i = 0; i < N; ++i) order_[i] = i;
  std::sort(order_.begin(), order_.end(), [&](int a, int b) { return std::abs(mu[a]) > std::abs(mu[b]); });
  const double s0 = std::abs(mu[order_[0]]);
  rank_ = 0;
  if (s0 > 0) {
    const double tol = rank_threshold(N, N, s0);
    while (rank_ < N && rank_ < max_rank_ && std::abs(mu[order_[rank_]]) > tol) ++rank_;
  }
  const Mat& V = V_;
  c_.noalias() = V.transpose() * rhs_;
  double perp2 = 0;
  for (int k = rank_; k < N; ++k) {
    perp2 += c_[order_[k]] * c_[order_[k]];
    c_[order_[k]] = 0;
  }
  for (int k = 0; k < rank_; ++k) c_[order_[k]] /= mu[order_[k]];
  z_.noalias() = V * c_;
  const double scale = rhs_.norm() + s0 * z_.norm();
  residual_ = scale > 0 ? std::sqrt(perp2) / scale : 0.0;
  if (!(residual_ <= kConsistencyTolerance) || !z_.allFinite()) throw_inconsistent(who, rank_ - n_, m_, residual_);
  qdd = z_.head(n_);
  lambda = -z_.tail(m_);
}

}  // namespace clm
