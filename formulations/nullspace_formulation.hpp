// Null-space (reduced-velocity) formulation [seed-000, eq. 2.17-2.18]. The admissible velocities are
// parametrized as qd = S(q) v with A S = 0, v in R^(n-m); premultiplying M qdd + c = F + A^T lambda by S^T
// removes the multipliers:
//
//   (S^T M S) vd = S^T (F - c - M w),    qdd = S vd + w,    w = Sdot v.
//
// The state is y = (q, v), of dimension 2n - m, and A qd = 0 holds by construction.
//
// Redundant constraints (A of rank r < m at q0, consistent): coordinate partitioning works on the rank-r
// row space, r independent rows of A chosen by a column-pivoted QR of A^T (re-chosen with each re-partition),
// so v has n - r components and dimension() is 2n - r from initial_state() on. A natural basis (n - m columns)
// cannot span the n - r admissible velocities: that combination is refused in one line.
//
// S comes from one of two places:
//  - the problem's natural basis (the VelocityBasis capability, formulations/velocity_basis.hpp), e.g. the sleigh's "along the blade" and
//    "about the blade point" velocities; then w = Sdot v exactly;
//  - otherwise coordinate partitioning (Wehage-Haug): the columns of A are split into m dependent ones
//    D, chosen by column-pivoted QR so that A_D is well conditioned, and n-m independent ones I. With
//    v = qd_I: S_I = 1, S_D = -A_D^-1 A_I; and w is the particular acceleration with w_I = 0,
//    A_D w_D = -Adot qd (so A qdd = -Adot qd). A partition is only good near where it was chosen: after
//    each accepted step cond(A_D) is measured and, when it exceeds FormulationOptions::
//    repartition_threshold (or will within one more step, extrapolating 1/cond), the partition is
//    re-picked and v re-expressed (v_new = (S_old v_old)_Inew). The count of re-picks is the extra
//    "repartitions".
//
// Time-dependent constraints (A(q) qd + b(q, t) = 0; b = dh/dt for a rheonomic h(q, t); core/problem.hpp): the
// admissible velocities are an affine space, qd = S(q) v + u(q, t) with A u = -b. With coordinate partitioning
// the particular solution is the partition's own, u_I = 0, A_D u_D = -b (so v = qd_I still, and re-partitioning
// re-expresses v as before); w keeps w_I = 0, A_D w_D = -bias with the whole acceleration bias of the model
// (time derivatives included), so A qdd + bias = 0 and S^T (M qdd + c - F) = 0 are the same reduced equations.
// A natural basis carries no particular velocity: time-dependent problems always partition.
#pragma once

#include <vector>

#include "core/formulation.hpp"
#include "formulations/saddle_point.hpp"
#include "formulations/velocity_basis.hpp"

namespace clm {

class NullspaceFormulation final : public Formulation {
 public:
  NullspaceFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "nullspace"; }
  int dimension() const override { return n_ + k_; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  bool after_step(double t, Vec& y) override;
  std::vector<std::string> extra_names() const override { return {"repartitions"}; }

  bool uses_natural_basis() const { return natural_; }
  long repartitions() const { return repartitions_; }
  // Dependent coordinates of the current partition (empty with a natural basis).
  const std::vector<int>& dependent_coordinates() const { return dependent_; }

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // Fills S_, w_ and qd_ at (q_, v_); evaluates what the chosen source of S needs.
  void velocity_map(double t);
  void reduce_partitioned();
  // Partitioning only: A_D, A_I from terms_.A and the LU of A_D; false when A_D is singular.
  bool factor_dependent_block();
  // Partitioning only: D = the first m pivot columns of a column-pivoted QR of terms_.A.
  void choose_partition();
  // ||A||_1 ||A_D^-1||_1 from the current LU: the condition of A_D measured against the scale of the whole
  // Jacobian (for m = 1 the plain cond(A_D) would always be 1). Exact 1-norms; m is small.
  double dependent_block_condition();

  // Redundant constraints (rank r < m at q0): sizes the partition for r rows; choose_rows picks r independent
  // rows of A (column-pivoted QR of A^T); constraint_rows / constraint_bias_rows return A and Adot qd, or
  // their rows R when r < m.
  void size_for_rank(int r);
  // The partition's buffers for r rows and k_ velocities, zeroed (the constructor's r = m, and size_for_rank).
  void size_partition(int r);
  void choose_rows();
  const Mat& constraint_rows();
  const Vec& constraint_bias_rows();
  // b(q, t) of a moving constraint (its rows R when r < m), and qd_D -= A_D^-1 b: the particular velocity u added
  // to qd_ = S v (a no-op for problems without b).
  const Vec& constraint_rate_rows();
  void add_particular_velocity();

  int k_;  // n - r, the degrees of freedom
  int r_;  // rank of A at q0 (m unless the constraints are redundant)
  const VelocityBasis* basis_;  // the model's natural basis, or null
  std::unique_ptr<VelocityBasis::Workspace> basis_ws_;
  bool natural_;
  Vec q_, v_, qd_, qdd_, vd_, w_;
  Mat S_;           // n x k
  Mat MS_;          // M S
  Mat reduced_M_;   // S^T M S
  Vec force_;       // F - c - M w
  Vec reduced_f_;   // S^T (F - c - M w)
  CholeskySolver reduced_llt_;  // S^T M S

  // Coordinate partitioning.
  std::vector<int> dependent_, independent_, old_dependent_;
  double last_rcond_ = 0;  // 1 / cond(A_D) after the previous step (NaN right after a re-pick)
  Mat A_D_, A_I_, S_D_, A_D_inverse_, identity_m_;
  Vec w_D_;
  Vec u_D_;  // A_D^-1 b (time-dependent problems)
  Mat E_, M_ID_, M_DD_, MIDE_, MDDE_;  // partitioned reduction (reduce_partitioned)
  Vec force_D_;
  Eigen::PartialPivLU<Mat> lu_D_;
  Eigen::ColPivHouseholderQR<Mat> qr_;
  long repartitions_ = 0;
  // Redundant constraints only.
  std::vector<int> rows_;
  Mat A_R_;
  Vec Adot_R_, b_R_;
  // read_state's buffers (no allocation per observation with independent constraints).
  Vec observed_rate_, residual_, normal_rhs_;
  Mat normal_matrix_;
  Eigen::LDLT<Mat> normal_ldlt_;
  Eigen::ColPivHouseholderQR<Mat> row_qr_;
};

}  // namespace clm
