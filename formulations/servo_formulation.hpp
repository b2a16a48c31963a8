// Servo constraints (Beghin) [Beghin-1922], [seed-004, "Servo constraints (by H. Beghin)"]: the constraint
// A(q) qd = 0 realized by a control force B(q)^T lambda along a chosen covector field B (m x n) instead of
// the ideal reaction A^T lambda:
//
//   M qdd + c = F + B^T lambda,   A qdd = gamma   (gamma = -Adot qd, minus Baumgarte terms as in kkt).
//
// The saddle-point matrix [M -B^T; A 0] is not symmetric. Solved through the m x m realizability matrix
// A M^-1 B^T with M = L L^T: X = L^-1 A^T, Y = L^-1 B^T, z = L^-1 (F - c),
//   (X^T Y) lambda = gamma - X^T z,   qdd = L^-T (z + Y lambda).
// lambda is in the suite's convention (the force is B^T lambda; with B = A it is kkt's multiplier).
//
// Realizability [seed-004, condition (*)]: A M^-1 B^T nonsingular. Logged along the run as the scale-free
//   servo_realizability = |det(A M^-1 B^T)| / sqrt(det(A M^-1 A^T) det(B M^-1 B^T)) = prod_i cos(theta_i),
// theta_i the principal angles between the row spaces of A and B in the M^-1 metric: 1 when B spans the
// rows of A (B = A: the nonholonomic motion), 0 when the control force cannot act on the constraint. It does
// not change when A or B is scaled or its rows are recombined. Below kServoRealizabilityFloor at q0 the run
// is refused (InputError, one line); during a run it ends "failed" naming the condition. B is the
// problem's field `servo_direction` (formulations/servo_direction.hpp); "constraint" is B = A.
//
// Exact Jacobian (jacobian = autodiff / auto; AccelerationFormulation::saddle_jacobian): the implicit derivative
// of [M -B^T; A 0][qdd; lambda] = [F - c; gamma], whose first block row carries dB^T lambda (dB/dq by dual-number
// passes through the problem's templated servo_direction; B = A takes kkt's dA). Its 2n right-hand sides are
// solved as the rhs solves, on the factors the rhs at y left: z = L^-1 r1, dlambda = R^-1 (r2 - X^T z),
// dqdd = L^-T (z + Y dlambda), R = X^T Y = A M^-1 B^T.
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "formulations/servo_direction.hpp"

namespace clm {

// Below this the normalized realizability is treated as zero: lambda = (A M^-1 B^T)^-1 (...) then loses
// more than 8 of the 16 digits (relative error ~ eps / servo_realizability).
inline constexpr double kServoRealizabilityFloor = 1e-8;

class ServoFormulation final : public AccelerationFormulation {
 public:
  ServoFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "servo"; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  std::vector<std::string> extra_names() const override { return {"servo_realizability"}; }
  // The normalized realizability at the last evaluation (header comment).
  double realizability() const { return realizability_; }
  static std::string refuses(const Model& model);

  bool has_jacobian() const override { return saddle_jacobian_available(); }
  void jacobian(double t, const Vec& y, Mat& J) override { saddle_jacobian(t, y, J); }
  bool own_jacobian_is_cheaper() const override { return has_jacobian() && exact_jacobian_is_cheaper(); }

 protected:
  void solve_accelerations() override;
  void read_state(double t, const Vec& y, Observation& obs) override;
  const std::vector<Mat>& reaction_derivatives(const DynamicsDerivatives& d) override;
  void size_linearized_solver() override;
  void solve_linearized() override;

 private:
  // Factors M, fills B_, X_, Y_, R_ and realizability_ from terms_ (M, A) at q_. False when M is not
  // positive definite.
  bool factor();
  std::string failure_text() const;

  int which_ = -1;  // -1: B = A; otherwise the index into the problem's ServoDirections
  const ServoDirections* directions_ = nullptr;
  std::unique_ptr<ServoDirections::Workspace> directions_ws_;
  Eigen::LLT<Mat> llt_M_, llt_SA_, llt_SB_;
  Eigen::PartialPivLU<Mat> lu_R_;
  Mat B_, X_, Y_, R_, SA_, SB_;
  Vec z_, gamma_;
  double realizability_ = 0;
  // The exact Jacobian's workspace (size_linearized_solver, once per run): dB/dq_l, L^-1 r1 (n x 2n), the
  // multiplier rows (m x 2n) before and after R^-1.
  std::vector<Mat> dB_;
  Mat jac_z_, jac_w_, jac_v_;
};

}  // namespace clm
