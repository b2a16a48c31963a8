// Schur complement (range-space) formulation [seed-000, eq. 2.8-2.9]. From M qdd + c = F + A^T lambda and
// the acceleration-level constraint A qdd = gamma (gamma = -Adot qd, minus Baumgarte terms):
//
//   (A M^-1 A^T) lambda = gamma - A M^-1 (F - c),      qdd = M^-1 (F - c + A^T lambda).
//
// Two Cholesky factorizations per evaluation: M (n x n, SPD) and the m x m Schur matrix S = A M^-1 A^T,
// which is SPD exactly when A has full row rank. Cheaper than the (n+m) KKT solve when m << n, and the
// work RBDL's ForwardDynamicsConstraintsRangeSpaceSparse does. With redundant constraints (rank A(q0) < m,
// consistent) S is only semi-definite: the run solves S lambda = b for the minimum-norm multipliers instead
// (formulations/minimum_norm_multipliers.hpp).
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "formulations/saddle_point.hpp"
#include "formulations/sparse_acceleration_solver.hpp"

namespace clm {

class SchurFormulation final : public AccelerationFormulation {
 public:
  SchurFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "schur"; }

  // The exact Jacobian (jacobian = autodiff; AccelerationFormulation::saddle_jacobian), solved with the
  // factors of M and of the Schur matrix that rhs() left at y.
  bool has_jacobian() const override { return saddle_jacobian_available(); }
  void jacobian(double t, const Vec& y, Mat& J) override { saddle_jacobian(t, y, J); }
  bool own_jacobian_is_cheaper() const override { return has_jacobian() && exact_jacobian_is_cheaper(); }

 protected:
  void solve_accelerations() override;
  bool has_sparse_path() const override { return true; }
  void make_sparse_solver() override;
  void solve_sparse() override;
  void size_linearized_solver() override;
  void solve_linearized() override;
  double last_pivot_ratio() const override {
    if (m_ == 0) return 1.0;
    return sparse_ ? sparse_solver_->pivot_ratio() : llt_S_.pivot_ratio();
  }

 private:
  Eigen::LLT<Mat> llt_M_;     // M = L L^T
  CholeskySolver llt_S_;      // S = A M^-1 A^T (m x m, vector right-hand side: fixed-size kernels)
  Mat Y_;                     // M^-1 A^T   (n x m)
  Mat S_;                     // Schur matrix (m x m)
  Vec free_acceleration_;     // M^-1 (F - c): the motion if the constraints were released
  Vec gamma_;                 // right-hand side of A qdd = gamma
  std::unique_ptr<SparseSchurSolver> sparse_solver_;
  Mat jac_x_;    // M^-1 r1 (n x 2n), then dqdd
  Mat jac_w_;    // r2 - A M^-1 r1, then dlambda (m x 2n)
  Vec jac_col_;  // one column of jac_w_ for the Schur factor's vector solve
};

}  // namespace clm
