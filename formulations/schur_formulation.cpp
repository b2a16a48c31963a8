#include "formulations/schur_formulation.hpp"

#include <sstream>

namespace clm {

namespace {

// Empty when the factorization is usable; otherwise why not.
std::string cholesky_problem(const Eigen::LLT<Mat>& llt) {
  if (llt.info() != Eigen::Success) return "not positive definite";
  // The suite's conditioning floor on the pivots L_ii^2 (core/formulation.hpp).
  if (llt.rows() > 0 && !well_conditioned(pivot_ratio(llt.matrixLLT().diagonal().cwiseAbs2())))
    return "numerically singular";
  return {};
}

std::string cholesky_problem(bool factored, const CholeskySolver& llt) {
  if (!factored) return "not positive definite";
  if (llt.size() > 0 && !well_conditioned(llt.pivot_ratio())) return "numerically singular";
  return {};
}

}  // namespace

SchurFormulation::SchurFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), llt_M_(n_), llt_S_(m_) {
  supports_redundant_constraints_ = true;
  Y_ = Mat::Zero(n_, m_);
  S_ = Mat::Zero(m_, m_);
  free_acceleration_ = Vec::Zero(n_);
  gamma_ = Vec::Zero(m_);
}

void SchurFormulation::solve_accelerations() {
  llt_M_.compute(terms_.M);
  if (const std::string why = cholesky_problem(llt_M_); !why.empty())
    throw NumericalFailure("schur: Cholesky of the mass matrix M failed (M " + why + ")");

  // No constraints (charged_particle): qdd = M^-1 (F - c). (Eigen's triangular solve of an n x 0 right-hand
  // side binds a reference to its null data pointer: undefined behaviour that UBSan reports.)
  if (m_ == 0) {
    qdd_ = terms_.F - terms_.c;
    llt_M_.solveInPlace(qdd_);
    return;
  }

  // Y = M^-1 A^T and S = A Y [seed-000, eq. 2.9], solved in place into preallocated buffers.
  Y_ = terms_.A.transpose();
  llt_M_.solveInPlace(Y_);
  S_.noalias() = terms_.A * Y_;
  const bool factored = llt_S_.compute(S_);
  if (const std::string why = cholesky_problem(factored, llt_S_); !why.empty())
    throw NumericalFailure("schur: Cholesky of the Schur matrix A M^-1 A^T failed (" + why +
                           "; constraints dependent at this configuration?)");

  free_acceleration_ = terms_.F - terms_.c;
  llt_M_.solveInPlace(free_acceleration_);

  // lambda = S^-1 (gamma - A M^-1 (F - c)), gamma = -Adot qd - 2 alpha A qd - beta^2 h.
  constraint_acceleration_rhs(gamma_);
  lambda_ = gamma_;
  lambda_.noalias() -= terms_.A * free_acceleration_;
  llt_S_.solve_in_place(lambda_);

  // qdd = M^-1 (F - c) + M^-1 A^T lambda.
  qdd_ = free_acceleration_;
  qdd_.noalias() += Y_ * lambda_;
}

void SchurFormulation::make_sparse_solver() {
  sparse_solver_ = std::make_unique<SparseSchurSolver>(sparse_terms_, model_->sparse_block_size());
}

void SchurFormulation::solve_sparse() {
  sparse_solver_->solve(sparse_terms_, sparse_force_, sparse_gamma_, qdd_, lambda_);
}

void SchurFormulation::size_linearized_solver() {
  jac_x_ = Mat::Zero(n_, 2 * n_);
  jac_w_ = Mat::Zero(m_, 2 * n_);
  jac_col_ = Vec::Zero(m_);
}

// [M -A^T; A 0][dqdd; dlambda] = [r1; r2] by the same elimination as the rhs:
// dlambda = S^-1 (r2 - A M^-1 r1), dqdd = M^-1 r1 + Y dlambda (Y = M^-1 A^T, S = A Y, both kept by rhs()).
void SchurFormulation::solve_linearized() {
  const int n = n_, m = m_;
  jac_x_ = jac_rhs_.topRows(n);
  llt_M_.solveInPlace(jac_x_);
  if (m > 0) {
    jac_w_ = jac_rhs_.bottomRows(m);
    jac_w_.noalias() -= terms_.A * jac_x_;
    for (int j = 0; j < 2 * n; ++j) {
      jac_col_ = jac_w_.col(j);
      llt_S_.solve_in_place(jac_col_);
      jac_w_.col(j) = jac_col_;
    }
    jac_x_.noalias() += Y_ * jac_w_;
  }
  jac_rhs_.topRows(n) = jac_x_;
}

}  // namespace clm
