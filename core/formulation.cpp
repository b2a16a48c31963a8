#include "core/formulation.hpp"

#include "core/singular_position.hpp"

#include <cmath>
#include <sstream>

namespace clm {

int numerical_rank(const Mat& A) {
  if (A.size() == 0) return 0;
  Eigen::JacobiSVD<Mat> svd(A);
  const Vec& s = svd.singularValues();
  if (s[0] == 0) return 0;
  const double tol = rank_threshold(A.rows(), A.cols(), s[0]);
  int rank = 0;
  for (int i = 0; i < s.size(); ++i) rank += s[i] > tol;
  return rank;
}

double reciprocal_condition(const Mat& K) {
  if (K.size() == 0) return 1.0;
  const Eigen::PartialPivLU<Mat> lu(K);
  // Eigen's estimator divides by the pivots: with an exactly zero pivot it returns garbage (1 for
  // diag(1, 1, 0)), so a zero or non-finite pivot means rcond = 0.
  if (!(pivot_ratio(lu.matrixLU().diagonal()) > 0) || !lu.matrixLU().allFinite()) return 0.0;
  const double rcond = lu.rcond();
  return std::isfinite(rcond) ? rcond : 0.0;
}


Formulation::Formulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : model_(std::move(model)),
      options_(options),
      ws_(model_->make_workspace()),
      terms_(model_->make_terms()),
      n_(model_->n()),
      m_(model_->m()),
      velocity_residual_(Vec::Zero(model_->m())) {}

Formulation::~Formulation() = default;

bool wants_sparse_linear_algebra(const FormulationOptions& options, const Model& model, const std::string& who,
                                 bool has_sparse_path) {
  const std::string& mode = options.linear_algebra;
  if (mode == "dense") return false;
  if (mode != "auto" && mode != "sparse")
    throw InputError("formulation.linear_algebra must be auto, sparse or dense (got \"" + mode + "\")");
  if (mode == "sparse") {
    if (!has_sparse_path)
      throw InputError(who + ": linear_algebra = sparse: only kkt, schur, augmented_lagrangian and trapezoidal "
                             "(ALI3-P) have a sparse path");
    if (!model.has_sparse_terms())
      throw InputError(who + ": linear_algebra = sparse: problem " + model.name() +
                       " is not built from bodies and joints (no sparse terms); use auto or dense");
    return true;
  }
  return has_sparse_path && model.has_sparse_terms() && model.n() >= kSparseCrossoverCoordinates;
}

void Formulation::observe(double t, const Vec& y, Observation& obs) {
  read_state(t, y, obs);
  model_->evaluate(t, obs.q, obs.qd, kEnergy | kConstraintJacobian | kConstraintValue | kConstraintRate, *ws_,
                   terms_);
  obs.energy = terms_.energy();
  // |A qd + b| for time-dependent problems (b = dh/dt, or the affine term), |A qd| otherwise.
  // Into a member buffer: observe() runs once per quadrature node of the energy balance (core/energy_balance.hpp),
  // which must not allocate.
  velocity_residual_.noalias() = terms_.A * obs.qd;
  if (terms_.b.size() > 0) velocity_residual_ += terms_.b;
  obs.drift_velocity = velocity_residual_.norm();
  obs.drift_position = model_->has_position_rows() ? terms_.h.norm() : 0.0;  // |h(q, t)| of the position rows
}

int Formulation::constraint_rank(const Vec& q) const {
  if (m_ == 0) return 0;
  ModelTerms t = model_->make_terms();
  auto ws = model_->make_workspace();
  model_->evaluate(0.0, q, Vec::Zero(n_), kConstraintJacobian, *ws, t);
  return numerical_rank(t.A);
}

void Formulation::require_full_rank(const Vec& q) const {
  if (m_ == 0) return;
  const int rank = constraint_rank(q);
  if (rank < m_) {
    std::ostringstream msg;
    msg << "problem " << model_->name() << ": constraint Jacobian A has rank " << rank << " < " << m_
        << " rows at the initial configuration (redundant or singular constraints); " << name()
        << " needs independent constraints (redundant ones are supported by kkt, schur, nullspace and augmented_lagrangian)";
    throw InputError(msg.str());
  }
}

}  // namespace clm

namespace clm {

std::string Formulation::singular_position(const Eigen::Ref<const Vec>& q) {
  if (m_ == 0 || q.size() != n_) return {};
  // Made on the first call (only problems with singular positions, or a failed run, get here), then reused:
  // the test allocates nothing per step unless it finds a singular position (core/singular_position.hpp).
  if (!singular_position_test_) singular_position_test_ = std::make_unique<SingularPositionTest>(*model_);
  return singular_position_test_->check(q);
}

std::string Formulation::failure_context(double /*t*/, const Vec& y) {
  if (y.size() < n_ || !y.head(n_).allFinite()) return {};
  const std::string where = singular_position(y.head(n_));
  return where.empty() ? where : " (" + where + ")";
}

void Formulation::guard_singular_position(const Eigen::Ref<const Vec>& q) {
  if (positions_projected_ || m_ == 0 || !model_->has_singular_positions()) return;
  const std::string where = singular_position(q);
  if (!where.empty())
    throw NumericalFailure(name() + ": " + where +
                           "; without position projection the formulation follows h(q) = its drift, on which the "
                           "branches meeting there reconnect, and cannot tell which one the motion continues on "
                           "(use projection = position or both)");
}

bool Formulation::after_step(double /*t*/, Vec& y) {
  if (y.size() >= n_) guard_singular_position(y.head(n_));
  return false;
}

}  // namespace clm
