// Penalty formulation: Kozlov's Theorem 1 [seed-004, "Anisotropic friction"]. The constraint is dropped
// and replaced by viscous anisotropic friction with Rayleigh function R_N = N/2 |A(q) qd|^2, i.e. the
// generalized force -dR_N/dqd = -N A^T A qd:
//
//   M qdd + c = F - N A^T A qd  (- k A^T h  with the optional position spring k/2 |h|^2, holonomic only).
//
// Sign convention: the suite writes the constrained equations as M qdd + c = F + A^T lambda, so the
// friction force -N A^T A qd = A^T (-N A qd) and the multiplier estimate is
//
//   lambda_N = -N A qd - k h   (-> the nonholonomic multiplier as N -> inf, Theorem 1).
//
// State (q, qd); one Cholesky of M per evaluation. Started on the constraint, the motion converges to the
// nonholonomic one with error O(1/N) on bounded time intervals; the system is stiff (an eigenvalue near
// -N A M^-1 A^T), so explicit steps shrink like 1/N. Extras: dissipation_rate = 2 R_N = N |A qd|^2
// (the rate at which T + V decreases when F = 0).
//
// Time-dependent constraints (A(q) qd + b(q, t) = 0, b = dh/dt for a rheonomic h(q, t); core/problem.hpp): the
// friction acts on the velocity relative to the moving constraint, R_N = N/2 |A qd + b|^2, so
// lambda_N = -N (A qd + b) - k h(q, t); as N -> inf the motion tends to the constrained one (Kozlov's argument
// holds at each t: the constraint's kernel moves, the friction still pins A qd + b to O(1/N); measured on
// ball_on_turntable, tests/time_dependent_test.cpp). dissipation_rate is then N |A qd + b|^2, the power the
// friction takes relative to the moving constraint (not the rate of change of T + V, which the moving constraint
// also feeds: core/energy_balance.hpp).
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "formulations/saddle_point.hpp"

namespace clm {

class PenaltyFormulation final : public AccelerationFormulation {
 public:
  // Throws InputError for N <= 0, k < 0, or k != 0 on a problem with Pfaffian constraints (no h).
  PenaltyFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "penalty"; }
  std::vector<std::string> extra_names() const override { return {"dissipation_rate"}; }

  // J = df/dy by automatic differentiation through the model (Model::dynamics_derivatives), for the
  // implicit integrators' IntegratorSettings::jacobian = "autodiff": with g = F - c + A^T lambda_N,
  //   d qdd = M^-1 (dg - dM qdd),  dg/dqd_l = dF/dqd_l - dc/dqd_l - N A^T A e_l,
  //   dg/dq_l = dF/dq_l - dc/dq_l + dA_l^T lambda_N - A^T (N dA_l qd + k A e_l).
  // Available when the model provides the derivatives (Model::has_dynamics_derivatives).
  bool has_jacobian() const override { return model_->has_dynamics_derivatives(); }
  void jacobian(double t, const Vec& y, Mat& J) override;
  bool own_jacobian_is_cheaper() const override { return has_jacobian() && exact_jacobian_is_cheaper(); }

 protected:
  void solve_accelerations() override;
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  bool spring_;
  Vec violation_, force_;
  CholeskySolver llt_;  // M
  // jacobian() workspace, sized at construction.
  Eigen::LLT<Mat> jacobian_llt_;  // M, for the matrix right-hand sides of jacobian()
  DynamicsDerivatives deriv_;
  Vec dy_work_, aqd_l_;
  Mat block_, ata_;
};

}  // namespace clm
