#include "formulations/nullspace_formulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace clm {

namespace {

double one_norm(const Mat& a) {
  double best = 0;
  for (int j = 0; j < a.cols(); ++j) {
    double sum = 0;
    for (int i = 0; i < a.rows(); ++i) sum += std::abs(a(i, j));
    best = std::max(best, sum);
  }
  return best;
}

}  // namespace

NullspaceFormulation::NullspaceFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), options),
      k_(std::max(0, n_ - m_)),  // m > n: redundant constraints, resized by initial_state()
      r_(m_),
      // A natural basis spans ker A(q) but carries no particular velocity for a moving constraint: time-dependent
      // problems use coordinate partitioning, whose u_D = -A_D^-1 b is the particular solution.
      basis_(model_->time_dependent() ? nullptr : model_->capability<VelocityBasis>()),
      natural_(basis_ != nullptr),
      reduced_llt_(std::max(0, n_ - m_)),
      lu_D_(m_),
      qr_(m_, n_) {
  // The suite's one rank tolerance (core/formulation.hpp), on the QR's pivots |R_ii| / max |R_ii|.
  qr_.setThreshold(double(std::max(n_, m_)) * kRankTolerance);
  if (basis_) basis_ws_ = basis_->make_workspace();
  for (Vec* v : {&q_, &qd_, &qdd_, &w_, &force_}) v->setZero(n_);
  size_partition(m_);
}

// The buffers of a partition with r independent constraint rows and k_ = n - r velocities, zeroed.
void NullspaceFormulation::size_partition(int r) {
  for (Vec* v : {&v_, &vd_, &reduced_f_}) v->setZero(k_);
  for (Vec* v : {&w_D_, &u_D_, &force_D_}) v->setZero(r);
  for (Mat* a : {&S_, &MS_}) a->setZero(n_, k_);
  for (Mat* a : {&reduced_M_, &MIDE_}) a->setZero(k_, k_);
  for (Mat* a : {&A_I_, &S_D_, &E_, &MDDE_}) a->setZero(r, k_);
  for (Mat* a : {&A_D_, &A_D_inverse_, &M_DD_}) a->setZero(r, r);
  M_ID_.setZero(k_, r);
  identity_m_ = Mat::Identity(r, r);
  dependent_.reserve(r);
  old_dependent_.reserve(r);
  independent_.reserve(k_);
}

// Redundant constraints (rank r < m at q0): the partition works on r independent rows R of A, chosen by a
// column-pivoted QR of A^T (its first r pivots); the other rows are combinations of them near q0, so A_R qd = 0
// gives A qd = 0 and A_R qdd = -(Adot qd)_R gives the rest. All partition buffers are resized to r here (once
// per run); k = n - r.
void NullspaceFormulation::size_for_rank(int r) {
  r_ = r;
  k_ = n_ - r;
  reduced_llt_ = CholeskySolver(k_);
  lu_D_ = Eigen::PartialPivLU<Mat>(r);
  qr_ = Eigen::ColPivHouseholderQR<Mat>(r, n_);
  qr_.setThreshold(double(std::max(n_, r)) * kRankTolerance);
  size_partition(r);
  A_R_ = Mat::Zero(r, n_);
  Adot_R_ = Vec::Zero(r);
  b_R_ = Vec::Zero(r);
  row_qr_ = Eigen::ColPivHouseholderQR<Mat>(n_, m_);
  row_qr_.setThreshold(double(std::max(n_, m_)) * kRankTolerance);
  rows_.clear();
  rows_.reserve(r);
}

void NullspaceFormulation::choose_rows() {
  row_qr_.compute(terms_.A.transpose());
  rows_.clear();
  const auto& perm = row_qr_.colsPermutation().indices();
  for (int i = 0; i < r_; ++i) rows_.push_back(perm[i]);
  std::sort(rows_.begin(), rows_.end());
}

const Mat& NullspaceFormulation::constraint_rows() {
  if (r_ == m_) return terms_.A;
  for (int i = 0; i < r_; ++i) A_R_.row(i) = terms_.A.row(rows_[i]);
  return A_R_;
}

const Vec& NullspaceFormulation::constraint_bias_rows() {
  if (r_ == m_) return terms_.Adot_qd;
  for (int i = 0; i < r_; ++i) Adot_R_[i] = terms_.Adot_qd[rows_[i]];
  return Adot_R_;
}

const Vec& NullspaceFormulation::constraint_rate_rows() {
  if (r_ == m_) return terms_.b;
  for (int i = 0; i < r_; ++i) b_R_[i] = terms_.b[rows_[i]];
  return b_R_;
}

void NullspaceFormulation::add_particular_velocity() {
  if (terms_.b.size() == 0 || r_ == 0) return;
  u_D_.noalias() = lu_D_.solve(constraint_rate_rows());
  for (int r = 0; r < r_; ++r) qd_[dependent_[r]] -= u_D_[r];
}

void NullspaceFormulation::choose_partition() {
  dependent_.clear();
  independent_.clear();
  if (r_ < m_) choose_rows();
  if (r_ > 0) {
    qr_.compute(constraint_rows());
    if (qr_.rank() < r_) {
      std::ostringstream msg;
      msg << "nullspace: constraint Jacobian has rank " << qr_.rank() << " < " << r_
          << "; no invertible dependent block exists";
      throw NumericalFailure(msg.str());
    }
    const auto& perm = qr_.colsPermutation().indices();
    for (int i = 0; i < r_; ++i) dependent_.push_back(perm[i]);
  }
  std::sort(dependent_.begin(), dependent_.end());
  for (int j = 0, d = 0; j < n_; ++j) {
    if (d < r_ && dependent_[d] == j) {
      ++d;
    } else {
      independent_.push_back(j);
    }
  }
}

bool NullspaceFormulation::factor_dependent_block() {
  if (r_ == 0) return true;
  const Mat& A = constraint_rows();
  for (int r = 0; r < r_; ++r) {
    for (int i = 0; i < r_; ++i) A_D_(r, i) = A(r, dependent_[i]);
    for (int i = 0; i < k_; ++i) A_I_(r, i) = A(r, independent_[i]);
  }
  lu_D_.compute(A_D_);
  const auto u = lu_D_.matrixLU().diagonal();
  for (int i = 0; i < r_; ++i)
    if (!(std::abs(u[i]) > 0) || !std::isfinite(u[i])) return false;
  return true;
}

double NullspaceFormulation::dependent_block_condition() {
  if (r_ == 0) return 1.0;
  A_D_inverse_.noalias() = lu_D_.solve(identity_m_);
  return one_norm(constraint_rows()) * one_norm(A_D_inverse_);
}

void NullspaceFormulation::velocity_map(double t) {
  if (natural_) {
    basis_->evaluate(q_, v_, *basis_ws_, S_, w_);
    qd_.noalias() = S_ * v_;
    model_->evaluate(t, q_, qd_, kMassMatrix | kBias | kForce, *ws_, terms_);
    return;
  }
  // A depends on q only; qd_ is a placeholder here. b(q, t) of a moving constraint comes with it (kConstraintRate
  // is ignored for other problems).
  model_->evaluate(t, q_, qd_, kConstraintJacobian | kConstraintRate, *ws_, terms_);
  if (!factor_dependent_block())
    throw NumericalFailure("nullspace: dependent block A_D of the coordinate partition is singular");
  // S_D = -A_D^-1 A_I; rows of S in I are the identity.
  S_D_.noalias() = lu_D_.solve(A_I_);
  S_.setZero();
  for (int i = 0; i < k_; ++i) S_(independent_[i], i) = 1.0;
  for (int r = 0; r < r_; ++r)
    for (int i = 0; i < k_; ++i) S_(dependent_[r], i) = -S_D_(r, i);
  qd_.noalias() = S_ * v_;
  add_particular_velocity();  // qd = S v + u, u_I = 0, A_D u_D = -b: A qd + b = 0
  model_->evaluate(t, q_, qd_, kMassMatrix | kBias | kForce | kConstraintBias, *ws_, terms_);
  // w: w_I = 0, A_D w_D = -Adot qd, so that A (S vd + w) = -Adot qd (for a moving constraint Adot_qd is the
  // whole bias, time derivatives included: the acceleration constraint holds as it stands).
  w_D_.noalias() = lu_D_.solve(constraint_bias_rows());
  w_.setZero();
  for (int r = 0; r < r_; ++r) w_[dependent_[r]] = -w_D_[r];
}

// With a coordinate partition S is a permuted [I; E], E = -A_D^-1 A_I (m x k), so
//   S^T M S = M_II + M_ID E + E^T M_DI + E^T M_DD E,   S^T f = f_I + E^T f_D,   M w = M(:, D) w_D:
// O(k^2 m) work instead of the O(n^2 k) of the dense products (measured: closed_chain n = 64 rhs
// about 4x faster, see docs/guide/performance.md).
void NullspaceFormulation::reduce_partitioned() {
  for (int r = 0; r < r_; ++r)
    for (int i = 0; i < k_; ++i) E_(r, i) = -S_D_(r, i);
  for (int j = 0; j < k_; ++j)
    for (int i = 0; i < k_; ++i) reduced_M_(i, j) = terms_.M(independent_[i], independent_[j]);
  for (int r = 0; r < r_; ++r) {
    for (int i = 0; i < k_; ++i) M_ID_(i, r) = terms_.M(independent_[i], dependent_[r]);
    for (int s = 0; s < r_; ++s) M_DD_(r, s) = terms_.M(dependent_[r], dependent_[s]);
  }
  MIDE_.noalias() = M_ID_ * E_;
  reduced_M_ += MIDE_;
  reduced_M_ += MIDE_.transpose();
  MDDE_.noalias() = M_DD_ * E_;
  reduced_M_.noalias() += E_.transpose() * MDDE_;

  force_ = terms_.F - terms_.c;
  for (int r = 0; r < r_; ++r) force_.noalias() -= w_[dependent_[r]] * terms_.M.col(dependent_[r]);
  for (int r = 0; r < r_; ++r) force_D_[r] = force_[dependent_[r]];
  for (int i = 0; i < k_; ++i) reduced_f_[i] = force_[independent_[i]];
  reduced_f_.noalias() += E_.transpose() * force_D_;
}

void NullspaceFormulation::rhs(double t, const Vec& y, Vec& dy) {
  q_ = y.head(n_);
  v_ = y.tail(k_);
  velocity_map(t);

  // (S^T M S) vd = S^T (F - c - M w)   [seed-000, eq. 2.18].
  if (natural_) {
    MS_.noalias() = terms_.M * S_;
    reduced_M_.noalias() = S_.transpose() * MS_;
    force_ = terms_.F - terms_.c;
    force_.noalias() -= terms_.M * w_;
    reduced_f_.noalias() = S_.transpose() * force_;
  } else {
    reduce_partitioned();
  }
  bool ok = reduced_llt_.compute(reduced_M_);
  // The suite's conditioning floor on the pivots L_ii^2 (core/formulation.hpp).
  if (ok && k_ > 0) ok = well_conditioned(reduced_llt_.pivot_ratio());
  if (!ok) throw NumericalFailure("nullspace: reduced mass matrix S^T M S is not positive definite");
  vd_ = reduced_f_;
  reduced_llt_.solve_in_place(vd_);

  dy.head(n_) = qd_;
  dy.tail(k_) = vd_;
}

bool NullspaceFormulation::after_step(double t, Vec& y) {
  guard_singular_position(y.head(n_));  // core/formulation.hpp: singular positions
  if (natural_ || r_ == 0) return false;
  q_ = y.head(n_);
  v_ = y.tail(k_);
  model_->evaluate(t, q_, qd_, kConstraintJacobian | kConstraintRate, *ws_, terms_);
  if (!factor_dependent_block())
    throw NumericalFailure("nullspace: dependent block A_D became singular within a step; lower the "
                           "repartition_threshold or the step size");
  // Re-pick when cond(A_D) exceeds the threshold now, or would by the end of a step like the last one:
  // 1/cond goes to zero linearly at a singular partition, so extrapolating it catches a singularity the
  // next step would otherwise jump across (S_D is 0/0 there and the step returns garbage).
  const double rcond = 1.0 / dependent_block_condition();
  const double predicted = std::isfinite(last_rcond_) ? 2 * rcond - last_rcond_ : rcond;
  last_rcond_ = rcond;
  if (std::min(rcond, predicted) * options_.repartition_threshold >= 1.0) return false;

  // qd in the old partition, then the best-conditioned partition here.
  S_D_.noalias() = lu_D_.solve(A_I_);
  for (int i = 0; i < k_; ++i) qd_[independent_[i]] = v_[i];
  for (int r = 0; r < r_; ++r) qd_[dependent_[r]] = -S_D_.row(r).dot(v_);
  add_particular_velocity();
  old_dependent_ = dependent_;
  choose_partition();
  if (dependent_ == old_dependent_) return false;  // already the best split available; keep going
  for (int i = 0; i < k_; ++i) y[n_ + i] = qd_[independent_[i]];
  last_rcond_ = std::numeric_limits<double>::quiet_NaN();
  ++repartitions_;
  return true;
}

void NullspaceFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  // Redundant constraints: the partition works on r independent rows (size_for_rank); a natural basis has
  // n - m columns by construction, too few for the n - r admissible velocities.
  const int rank = constraint_rank(q);
  if (rank < m_ && natural_) {
    std::ostringstream msg;
    msg << "problem " << model_->name() << ": constraint Jacobian A has rank " << rank << " < " << m_
        << " rows at the initial configuration (redundant constraints), and nullspace's natural velocity basis of "
           "this problem has n - m columns, too few for the n - rank admissible velocities (run kkt or schur)";
    throw InputError(msg.str());
  }
  if (rank != r_) size_for_rank(rank);
  q_ = q;
  repartitions_ = 0;
  last_rcond_ = std::numeric_limits<double>::quiet_NaN();
  if (natural_) {
    // v = S^+ qd (least squares; exact for consistent qd).
    v_.setZero();
    basis_->evaluate(q_, v_, *basis_ws_, S_, w_);
    v_ = S_.colPivHouseholderQr().solve(qd);
  } else {
    model_->evaluate(0.0, q_, qd, kConstraintJacobian, *ws_, terms_);
    choose_partition();
    for (int i = 0; i < k_; ++i) v_[i] = qd[independent_[i]];
  }
  y.resize(n_ + k_);
  y << q_, v_;
  // read_state's buffers, sized here (k is known now) so that no observation allocates.
  observed_rate_.resize(n_ + k_);
  residual_.resize(n_);
  normal_rhs_.resize(m_);
  normal_matrix_.resize(m_, m_);
  normal_ldlt_ = Eigen::LDLT<Mat>(m_);
}

void NullspaceFormulation::read_state(double t, const Vec& y, Observation& obs) {
  // Member buffers (sized by initial_state): observe() must not allocate for independent constraints (the energy
  // balance observes at every quadrature node, core/energy_balance.hpp).
  observed_rate_.resize(n_ + k_);  // a no-op after initial_state
  rhs(t, y, observed_rate_);
  qdd_.noalias() = S_ * vd_;
  qdd_ += w_;
  // lambda from the unreduced equations: A^T lambda = M qdd + c - F, least squares via A A^T.
  residual_.noalias() = terms_.M * qdd_;
  residual_ += terms_.c - terms_.F;
  const Vec& residual = residual_;
  model_->evaluate(t, q_, qd_, kConstraintJacobian, *ws_, terms_);
  const Mat& A = terms_.A;
  obs.q = q_;
  obs.qd = qd_;
  if (r_ == m_) {
    normal_matrix_.noalias() = A * A.transpose();
    normal_rhs_.noalias() = A * residual;
    normal_ldlt_.compute(normal_matrix_);
    obs.lambda.resize(m_);
    obs.lambda = normal_ldlt_.solve(normal_rhs_);
  } else {
    // Redundant constraints: the minimum-norm least-squares solution of A^T lambda = residual, the multipliers
    // kkt and schur report, by the SVD of A^T keeping at most r singular values above the suite's threshold
    // (off the manifold the vanishing one grows like the drift; formulations/minimum_norm_multipliers.hpp).
    Eigen::JacobiSVD<Mat> svd(A.transpose(), Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Vec& s = svd.singularValues();
    int rank = 0;
    if (s.size() > 0 && s[0] > 0)
      while (rank < s.size() && rank < r_ && s[rank] > rank_threshold(A.cols(), A.rows(), s[0])) ++rank;
    Vec c = svd.matrixU().leftCols(rank).transpose() * residual;
    for (int i = 0; i < rank; ++i) c[i] /= s[i];
    obs.lambda = svd.matrixV().leftCols(rank) * c;
  }
  obs.extras.assign(1, static_cast<double>(repartitions_));
}

}  // namespace clm
