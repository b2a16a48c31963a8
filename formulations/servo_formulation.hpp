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

 protected:
  void solve_accelerations() override;
  void read_state(double t, const Vec& y, Observation& obs) override;

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
};

}  // namespace clm
