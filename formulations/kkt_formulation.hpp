// Full KKT system [seed-000, eq. 2.6]: [M -A^T; A 0] [qdd; lambda] = [F - c; -Adot qd], one (n+m) LU
// solve per evaluation (formulations/saddle_point.hpp). Sign convention: M qdd + c = F + A^T lambda.
// Redundant constraints (rank A(q0) < m, consistent): the KKT matrix is singular, so the run solves it for
// the minimum-norm solution by an SVD instead (MinimumNormSaddlePoint, formulations/minimum_norm_multipliers.hpp)
// for every evaluation.
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "formulations/saddle_point.hpp"
#include "formulations/sparse_acceleration_solver.hpp"

namespace clm {

class KktFormulation final : public AccelerationFormulation {
 public:
  KktFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "kkt"; }

  // The exact Jacobian (jacobian = autodiff; AccelerationFormulation::saddle_jacobian).
  bool has_jacobian() const override { return saddle_jacobian_available(); }
  void jacobian(double t, const Vec& y, Mat& J) override { saddle_jacobian(t, y, J); }
  bool own_jacobian_is_cheaper() const override { return has_jacobian() && exact_jacobian_is_cheaper(); }

 protected:
  void solve_accelerations() override;
  std::unique_ptr<RedundantConstraintSolver> make_redundant_solver(int r) const override {
    return std::make_unique<MinimumNormSaddlePoint>(n_, m_, r);
  }
  bool has_sparse_path() const override { return true; }
  void make_sparse_solver() override;
  void solve_sparse() override;
  void size_linearized_solver() override;
  void solve_linearized() override;
  double last_pivot_ratio() const override {
    return sparse_ ? sparse_solver_->pivot_ratio() : saddle_.pivot_ratio();
  }

 private:
  SaddlePointWorkspace saddle_;
  ConstraintStabilization stabilization_;
  Vec force_;  // F - c
  std::unique_ptr<SparseKktSolver> sparse_solver_;
  // The Jacobian's solve with 2n right-hand sides: the fixed-size kernels of the rhs path
  // (SaddlePointWorkspace) factor and solve one vector without keeping the factor, so the same KKT matrix is
  // factored once more here, an (n+m)^3/3 that is small next to the 2n rhs evaluations a difference Jacobian
  // costs.
  Mat jac_K_, jac_x_;
  Eigen::PartialPivLU<Mat> jac_lu_;
};

}  // namespace clm
