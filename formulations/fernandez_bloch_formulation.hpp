// Fernandez-Bloch formulation [seed-003, eq. 2.6 and Theorem of section 4]: integrate the Euler-Lagrange
// equations of the restricted Lagrangian L~ = L - Phi_a v^a UNCONSTRAINED,
//
//   M~ qdd + c~ = F,   M~ = M - (M X A + A^T X^T M),   c~ = M~dot qd - 1/2 d/dq(qd^T M~ qd) + dV/dq,
//
// state (q, qd), one pivoted LU of the indefinite M~ per evaluation (formulations/restricted_lagrangian.hpp).
// The nonholonomic motion is reproduced (for initial data on C) exactly when the theorem's conditions hold.
//
// Condition residuals (extras fb_condition_1, fb_condition_2), evaluated at each sample with lambda and
// qdd_nh the kkt multipliers and accelerations at the same state, and qd_D = (I - X A) qd (= qd on C):
//   [seed-003, eq. 4.1], first condition  phi_a R^a_{alpha beta} v^beta = 0,
//   second condition                   Gamma(phi_a) + phi_b R^b_{a beta} v^beta = lambda_a.
// R are the structure functions of the frame {X_a, S_alpha} ([E_i, E_j] = R^k_ij E_k), contracted with the
// D-quasi-velocities v^beta (qd_D = S v). Because A S = 0 and A X = I are constant, A_a [Y, Z] =
// -dA^a(Y, Z) for frame fields Y, Z, so the brackets we need come from the exterior derivative of the
// constraint forms, dA^a(w, e_j) = C_aj(w) = sum_k (d_k A_aj - d_j A_ak) w_k, the Model's autodiff term
// kConstraintCurvature:  phi_a R^a_{alpha beta} v^beta = (S^T C(qd_D)^T phi)_alpha and
// phi_b R^b_{a beta} v^beta = (X^T C(qd_D)^T phi)_a. This makes condition 1 independent of the choice of S:
//   fb_condition_1 = |P_D C(qd_D)^T phi|,  P_D the orthogonal projector onto D = ker A,
//   fb_condition_2 = |Gamma(phi) + X^T C(qd_D)^T phi - lambda|,  Gamma(phi) = (M X)^T qdd_nh + qd^T d/dt(M X).
// The sign of the R^b_{a beta} term follows from the proof of Proposition 2 (X^C_a(v^b) = -R^b_{ak} v^k);
// the seed prints the bracket as R^b_{alpha a}, the opposite ordering, which is a slip: the test
// "ResidualsAreTheDefectOfTheRestrictedEquations" checks our signs against the direct defect
// M~ qdd_nh + c~ - F (whose X-components are -condition 2 and whose D-part is -condition 1).
//
// Scope: Pfaffian problems only (refused: no constraints; holonomic constraints, where A = dh/dq would need
// nested automatic differentiation and the construction adds nothing: the constrained motion is already
// Euler-Lagrange in reduced coordinates). M~ singular at q0 is refused (InputError), during a run it is a
// NumericalFailure. FormulationOptions::initial_offset starts |A qd0| = offset off C along X.
//
// Exact Jacobian (jacobian = autodiff / auto): M~ dqdd = -dc~ - dM~ qdd (F is state-independent where the model
// has dynamics derivatives), with dM~, dc~/dq, dc~/dqd from RestrictedLagrangian::derivatives: M~ holds the frame
// X(q) (by default A^T (A A^T)^-1), so these are nested derivatives of A, taken by hyper-dual passes through the
// templated M~ (core/quadratic_lagrangian_second_derivatives.hpp). `auto` takes it by kkt's rule (n >= 6 with
// autodiff terms). The 2n right-hand sides are solved on an LU of M~ of the Jacobian's own (the rhs's
// fixed-size kernels keep no factor).
#pragma once

#include "core/formulation.hpp"
#include "formulations/restricted_lagrangian.hpp"
#include "formulations/saddle_point.hpp"

namespace clm {

class FernandezBlochFormulation final : public Formulation {
 public:
  FernandezBlochFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "fernandez_bloch"; }
  int dimension() const override { return 2 * n_; }
  bool state_starts_with_q_qd() const override { return true; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  std::vector<std::string> extra_names() const override { return {"fb_condition_1", "fb_condition_2"}; }

  bool has_jacobian() const override { return model_->has_dynamics_derivatives(); }
  void jacobian(double t, const Vec& y, Mat& J) override;
  bool own_jacobian_is_cheaper() const override;

  // Off the hot path. cond1 (n): P_D C^T phi; cond2 (m): Gamma(phi) + X^T C^T phi - lambda; defect (n):
  // M~ qdd_nh + c~ - F, the residual of the restricted equations along the nonholonomic motion.
  void condition_residuals(double t, const Vec& q, const Vec& qd, Vec& cond1, Vec& cond2, Vec& defect);

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // Nonholonomic accelerations and multipliers at (q, qd): kkt's saddle-point system (no Baumgarte terms)
  // on the same model; leaves the model terms at (q, qd) in nh_terms_ for the condition residuals.
  void nonholonomic(double t, const Vec& q, const Vec& qd, Vec& qdd, Vec& lambda);
  // The residuals given the nonholonomic qdd_nh and lambda at (q, qd) (nh_terms_ current).
  void condition_residuals(double t, const Vec& q, const Vec& qd, const Vec& qdd_nh, const Vec& lambda, Vec& cond1,
                           Vec& cond2, Vec& defect);

  ModelTerms nh_terms_;  // the nonholonomic reference's model terms
  Vec force_nh_;
  SaddlePointWorkspace saddle_;
  std::shared_ptr<RestrictedLagrangian> restricted_;
  RestrictedTerms rt_;
  Vec q_, qd_, qdd_, b_;
  SquareLuSolver lu_;  // M~

  // The exact Jacobian's workspace, sized by its first call (once per run).
  bool jac_sized_ = false;
  std::vector<Mat> jac_dMt_;
  Mat jac_dc_dq_, jac_dc_dqd_, jac_dF_dq_, jac_dF_dqd_, jac_rhs_, jac_x_;
  Eigen::PartialPivLU<Mat> jac_lu_;
  Vec jac_dy_;
};

}  // namespace clm
