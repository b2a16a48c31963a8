#include "formulations/kkt_formulation.hpp"

namespace clm {

KktFormulation::KktFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), saddle_(n_, m_) {
  force_.resize(n_);
  supports_redundant_constraints_ = true;
  stabilization_.alpha = options_.baumgarte_alpha;
  stabilization_.beta = model_->has_position_rows() ? options_.baumgarte_beta : 0.0;
}

void KktFormulation::solve_accelerations() {
  force_ = terms_.F - terms_.c;
  if (!solve_saddle_point(terms_, force_, qd_, 0.0, stabilization_, saddle_, qdd_, lambda_))
    throw NumericalFailure("kkt: singular KKT matrix (dependent constraints or singular M)");
}

void KktFormulation::make_sparse_solver() {
  sparse_solver_ = std::make_unique<SparseKktSolver>(sparse_terms_, model_->sparse_block_size());
}

void KktFormulation::solve_sparse() { sparse_solver_->solve(sparse_terms_, sparse_force_, sparse_gamma_, qdd_, lambda_); }

void KktFormulation::size_linearized_solver() {
  jac_K_ = Mat::Zero(n_ + m_, n_ + m_);
  jac_lu_ = Eigen::PartialPivLU<Mat>(n_ + m_);
  jac_x_ = Mat::Zero(n_ + m_, 2 * n_);
}

void KktFormulation::solve_linearized() {
  const int n = n_, m = m_;
  jac_K_.topLeftCorner(n, n) = terms_.M;
  jac_K_.topRightCorner(n, m) = -terms_.A.transpose();
  jac_K_.bottomLeftCorner(m, n) = terms_.A;  // the bottom-right block stays 0
  jac_lu_.compute(jac_K_);
  lu_solve_into(jac_lu_, jac_rhs_, jac_x_);
  if (!jac_x_.topRows(n).allFinite()) throw NumericalFailure("kkt: singular KKT matrix in the Jacobian");
  jac_rhs_.topRows(n) = jac_x_.topRows(n);
}

}  // namespace clm
