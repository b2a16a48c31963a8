// Kinematic systems [seed-000, eq. 2.13-2.14]: the constraints W(q) qd = W_p qd_p + W_a qd_a = 0 split by the
// problem's actuated coordinates (kActuatedCoordinates) into passive columns W_p (m x n_p) and actuated ones
// W_a (m x n_a). When m = n_p and W_p is invertible, prescribing the actuated coordinates q_a(t) (the run's
// [shape], core/shape_schedule.hpp) fixes the motion through the first-order system
//
//   qd_p = -W_p(q)^-1 W_a(q) qd_a(t),   q_a = q_a(t)                       ([seed-000] eq. 2.14 prints qd_a on
//                                                                            the left; it is qd_p)
//
// No masses enter: the state is y = q_p, q is assembled from y and the schedule's value at t, and qd from the
// solve and the schedule's rate. The mechanism's masses only give the reported energy T + V; lambda is not
// defined (the actuators' forces and the reactions are not computed) and is written as NaN.
//
// Singular W_p: the velocity qd_p grows like 1 / sigma_min(W_p) as W_p loses rank (the kinematic car at
// psi -> pi/2: theta_d = r phid tan(psi) / L), so the rank of W_p is counted with singular values above
// kKinematicRankRatio (the suite's singular-position ratio, 1e-3) of the largest: below it the solution is
// blowing up. At q0 a W_p of lower rank is refused (InputError naming the rank and the tolerance); after every
// accepted step the same test ends the run "failed" (NumericalFailure naming the time and the rank), and so does
// a sign change of det W_p between two accepted steps (a step that jumped over the singular configuration). In
// rhs, the LU's pivot ratio below kConditionFloor is a NumericalFailure too. No heap allocation in rhs or
// after_step.
#pragma once

#include <Eigen/LU>
#include <Eigen/SVD>

#include "core/formulation.hpp"

namespace clm {

// Singular values of W_p below this fraction of the largest do not count toward its rank (header comment).
inline constexpr double kKinematicRankRatio = kSingularPositionRatio;

class KinematicFormulation final : public Formulation {
 public:
  KinematicFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "kinematic"; }
  int dimension() const override { return n_p_; }
  // "" when the model can be run kinematically (actuated coordinates declared, m = n_p), else the reason.
  static std::string refuses(const Model& model);

  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  bool after_step(double t, Vec& y) override;
  std::string failure_context(double t, const Vec& y) override;
  // sigma_min / sigma_max of W_p along the run (1 for an orthogonal W_p, 0 where it is singular).
  std::vector<std::string> extra_names() const override { return {"wp_singular_ratio"}; }

  const std::vector<int>& passive() const { return passive_; }
  const std::vector<int>& actuated() const { return actuated_; }
  // The input vector fields at (t, q_p): G (n x n_a) with qd = G qd_a, column j = g_j = [-W_p^-1 W_a e_j; e_j]
  // in q's order. Off the hot path.
  Mat input_fields(double t, const Vec& y);

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // q_ from y (passive) and the schedule at t (actuated), then W_p_, W_a_ from A(q_); qa_, qda_ filled.
  void assemble(double t, const Eigen::Ref<const Vec>& y);
  // Rank of W_p_ (singular values above kKinematicRankRatio of the largest) and sigma_min / sigma_max, by the
  // preallocated SVD; no allocation.
  int wp_rank(double& ratio);
  std::string rank_text(int rank, double ratio) const;

  std::vector<int> actuated_, passive_;
  std::vector<int> schedule_index_;  // schedule_index_[j]: the schedule entry of actuated_[j]
  int n_p_ = 0, n_a_ = 0;
  Vec q_, qd_zero_, qa_, qda_, qdda_, qa_sched_, qda_sched_, qdda_sched_, rhs_, qdp_;
  Mat W_p_, W_a_;
  Eigen::PartialPivLU<Mat> lu_;
  Eigen::JacobiSVD<Mat> svd_;
  double last_det_sign_ = 0;
  bool reported_ = false;     // after_step threw with the rank in its message  // sign of det W_p at the last accepted step (0 before the first)
};

}  // namespace clm
