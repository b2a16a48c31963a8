#include "formulations/sparse_acceleration_solver.hpp"

#include "core/formulation.hpp"

namespace clm {

namespace {

using Block = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 8, 8>;  // no heap for b <= 8

std::vector<std::pair<int, int>> kkt_pattern(const SparseModelTerms& p, int n) {
  std::vector<std::pair<int, int>> entries;
  for (int c = 0; c < p.M.cols(); ++c)
    for (int s = p.M.outerIndexPtr()[c]; s < p.M.outerIndexPtr()[c + 1]; ++s) entries.emplace_back(p.M.innerIndexPtr()[s], c);
  for (int c = 0; c < p.A.cols(); ++c)
    for (int s = p.A.outerIndexPtr()[c]; s < p.A.outerIndexPtr()[c + 1]; ++s)
      entries.emplace_back(n + p.A.innerIndexPtr()[s], c);
  return entries;
}

// Coordinates first (natural order), then the constraints in the AMD order of A M^-1 A^T's pattern.
std::vector<int> kkt_order(const SparseModelTerms& p, int block_size) {
  const int n = int(p.A.cols()), m = int(p.A.rows());
  std::vector<int> order(n + m);
  for (int i = 0; i < n; ++i) order[i] = i;
  const std::vector<int> amd = FixedPatternLdlt::amd_order(m, SparseGram(p.A, block_size).pattern());
  for (int k = 0; k < m; ++k) order[n + k] = n + amd[k];
  return order;
}

}  // namespace

bool invert_block_diagonal(const SparseMat& M, int b, Vec& inverse) {
  const int n = int(M.cols());
  const double* v = M.valuePtr();
  Block block(b, b), inv(b, b);
  Eigen::LLT<Block> llt(b);
  for (int first = 0; first < n; first += b) {
    for (int c = 0; c < b; ++c)
      for (int r = 0; r < b; ++r) block(r, c) = v[(first + c) * b + r];
    llt.compute(block);
    if (llt.info() != Eigen::Success || !well_conditioned(pivot_ratio(llt.matrixLLT().diagonal().cwiseAbs2())))
      return false;
    inv.setIdentity();
    llt.solveInPlace(inv);
    for (int c = 0; c < b; ++c)
      for (int r = 0; r < b; ++r) inverse[(first + c) * b + r] = inv(r, c);
  }
  return true;
}

void multiply_block_diagonal(const Vec& w, int b, const Vec& x, Vec& y) {
  const int n = int(x.size());
  for (int first = 0; first < n; first += b)
    for (int r = 0; r < b; ++r) {
      double acc = 0;
      for (int c = 0; c < b; ++c) acc += w[(first + c) * b + r] * x[first + c];
      y[first + r] = acc;
    }
}

SparseSchurSolver::SparseSchurSolver(const SparseModelTerms& pattern, int block_size)
    : n_(int(pattern.A.cols())),
      m_(int(pattern.A.rows())),
      b_(block_size),
      gram_(pattern.A, block_size),
      S_(m_, gram_.pattern()),
      minv_(Vec::Zero(pattern.M.nonZeros())),
      free_(Vec::Zero(n_)),
      t_(Vec::Zero(n_)) {
  gram_.bind(S_);
  diagonal_slot_.reserve(m_);
  for (int i = 0; i < m_; ++i) diagonal_slot_.push_back(S_.slot(i, i));
}

bool SparseSchurSolver::factor_schur_regularized(const SparseMat& A, double ratio) {
  S_.set_zero();
  gram_.accumulate(A.valuePtr(), minv_.data(), S_.values());
  double largest = 0;
  for (int slot : diagonal_slot_) largest = std::max(largest, std::abs(S_.values()[slot]));
  for (int slot : diagonal_slot_) S_.values()[slot] += ratio * largest;
  return S_.factorize() && well_conditioned(S_.pivot_ratio());
}

bool SparseSchurSolver::invert_mass(const SparseMat& M) { return invert_block_diagonal(M, b_, minv_); }

bool SparseSchurSolver::factor_schur(const SparseMat& A) {
  S_.set_zero();
  gram_.accumulate(A.valuePtr(), minv_.data(), S_.values());
  return S_.factorize() && well_conditioned(S_.pivot_ratio());
}

void SparseSchurSolver::minv_at(const SparseMat& A, const Vec& mu, Vec& out) {
  t_.noalias() = A.transpose() * mu;
  multiply_block_diagonal(minv_, b_, t_, out);
}

void SparseSchurSolver::solve(const SparseModelTerms& t, const Vec& f, const Vec& gamma, Vec& qdd, Vec& lambda) {
  if (!invert_mass(t.M))
    throw NumericalFailure("schur: Cholesky of the mass matrix M failed (a block of M not positive definite or "
                           "numerically singular)");
  multiply_block_diagonal(minv_, b_, f, free_);  // M^-1 (F - c)
  if (m_ == 0) {
    qdd = free_;
    return;
  }
  if (!factor_schur(t.A))
    throw NumericalFailure("schur: Cholesky of the Schur matrix A M^-1 A^T failed (numerically singular; "
                           "constraints dependent at this configuration?)");
  lambda = gamma;
  lambda.noalias() -= t.A * free_;
  S_.solve_in_place(lambda);
  minv_at(t.A, lambda, qdd);
  qdd += free_;
}

bool SparseSchurSolver::solve_regularized(const SparseModelTerms& t, const Vec& f, const Vec& gamma, double ratio,
                                          Vec& qdd, Vec& lambda) {
  if (!invert_mass(t.M) || !factor_schur_regularized(t.A, ratio)) return false;
  multiply_block_diagonal(minv_, b_, f, free_);
  lambda = gamma;
  lambda.noalias() -= t.A * free_;
  S_.solve_in_place(lambda);
  minv_at(t.A, lambda, qdd);
  qdd += free_;
  return true;
}

SparseKktSolver::SparseKktSolver(const SparseModelTerms& pattern, int block_size)
    : n_(int(pattern.A.cols())),
      m_(int(pattern.A.rows())),
      K_(n_ + m_, kkt_pattern(pattern, n_), kkt_order(pattern, block_size)),
      x_(Vec::Zero(n_ + m_)) {
  m_slot_ = K_.upper_slots(pattern.M);
  for (int c = 0; c < n_; ++c)
    for (int s = pattern.A.outerIndexPtr()[c]; s < pattern.A.outerIndexPtr()[c + 1]; ++s)
      a_slot_.push_back(K_.slot(n_ + pattern.A.innerIndexPtr()[s], c));
}

void SparseKktSolver::solve(const SparseModelTerms& t, const Vec& f, const Vec& gamma, Vec& qdd, Vec& lambda) {
  K_.set_zero();
  K_.set_values(m_slot_, t.M.valuePtr());  // M is symmetric and stored full: its upper triangle
  double* k = K_.values();
  const double* av = t.A.valuePtr();
  for (size_t s = 0; s < a_slot_.size(); ++s) k[a_slot_[s]] += av[s];
  if (!K_.factorize() || !well_conditioned(K_.pivot_ratio()))
    throw NumericalFailure("kkt: singular KKT matrix (dependent constraints or singular M)");
  x_.head(n_) = f;
  x_.tail(m_) = gamma;
  K_.solve_in_place(x_);
  if (!x_.allFinite()) throw NumericalFailure("kkt: singular KKT matrix (dependent constraints or singular M)");
  qdd = x_.head(n_);
  lambda = -x_.tail(m_);
}

}  // namespace clm
