// The machinery shared by the two integrators of nonholonomic (Pfaffian) mechanics built on the midpoint
// discrete Lagrangian [Marsden-West-2001]
//   L_d(q0, q1) = h L(q_m, v_m),   q_m = (q0 + q1)/2,   v_m = (q1 - q0)/h,
//   D1 L_d = h/2 dL/dq(q_m, v_m) - p(q_m, v_m),   D2 L_d = h/2 dL/dq(q_m, v_m) + p(q_m, v_m),
// with dL/dq and p = dL/dqd from the Model (ModelTerms::dL_dq, ::p, by autodiff), the generalized force as
// midpoint discrete forcing f_d^- = f_d^+ = h/2 F(t_m, q_m, v_m) [Marsden-West-2001, section 3.2], and the
// constraint forces A^T lambda of the suite's convention M qdd + c = F + A^T lambda.
//
// One step from (q_k, qd_k), with p_k = p(q_k, qd_k):
//   (1) the forced discrete Euler-Lagrange equation for q_{k+1} with a kick at q_k,
//         p_k + h/2 A(q_k)^T lambda_k + D1 L_d(q_k, q_{k+1}) + f_d^- = 0,
//       where the subclass says what fixes lambda_k: dla adds the discrete constraint
//       A(q_{k+1/2}) (q_{k+1} - q_k) = 0 and solves for (q_{k+1}, lambda_k) together (n + m unknowns);
//       nh_rattle carries lambda_k from the end of the previous step (n unknowns);
//   (2) the discrete Legendre transform p^- = D2 L_d(q_k, q_{k+1}) + f_d^+ and a second half kick onto the
//       velocity constraint: p_{k+1} = p^- + h/2 A(q_{k+1})^T lambda_{k+1} with A(q_{k+1}) qd_{k+1} = 0,
//       qd_{k+1} = M(q_{k+1})^-1 (p_{k+1} - p(q_{k+1}, 0)): one linear KKT solve [M A^T; A 0].
// So the written velocity satisfies A(q_k) qd_k = 0 to round-off for both methods, and the state is kkt's
// y = (q, qd). Without constraints both reduce to the implicit variational midpoint rule.
//
// The equations of (1), scaled by h to read like a KKT system (the Newton matrix is about [-M A^T; A 0]),
// in the displacement dq = q_{k+1} - q_k (so that v_m = dq/h carries no cancellation error eps |q| / h):
//   R1 = h (p_k + h/2 A_k^T lambda) + h^2/2 (dL/dq + F)(t_m, q_m, v_m) - h p(q_m, v_m),   R2 = A(q_m) dq,
// are solved by simplified Newton with the Jacobian in dq by forward differences of R (n model
// evaluations; the lambda columns are exact), from the predictor dq = h qd + h^2/2 qdd. As in
// implicit_midpoint, the Jacobian and its LU are kept across steps while Newton contracts fast, retried
// once fresh on failure, and a step that still fails is rejected and halved (later steps double back up to
// dt); a step that fails at h < dt / 2^20 ends the run "failed" (NumericalFailure) saying why Newton
// failed. A dla Jacobian kept across steps gets its exact multiplier columns and the A(q_m) part of its
// constraint rows brought up to date every step. Newton runs to round-off (increment below 8 eps |dq|, or
// no longer shrinking below 1e3 eps |dq|): a structure-preserving method that stopped at a tolerance
// would let its invariants drift by that tolerance per step. So rtol and atol do not apply (the command
// line says so); the accepted q_{k+1} is the one the last residual was evaluated at.
//
// Every model evaluation counts as one rhs evaluation in the statistics (plus one kkt rhs per step, the
// end-point derivative (qd, qdd) for the cubic Hermite dense output and the next predictor).
#pragma once

#include <memory>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "integrators/hermite.hpp"

namespace clm {

class MidpointDiscreteMechanics : public Integrator {
 public:
  int order() const override { return 2; }
  bool adaptive() const override { return false; }
  // Newton on the discrete equations with a difference matrix, where the step needs one.
  std::string jacobian_used() const override { return statistics().jacobian_evals > 0 ? "finite_difference" : "none"; }
  std::string refuses_formulation(const Formulation& f) const override;
  bool integrates_constrained_system() const override { return true; }
  std::string accepts() const override {
    return "formulation kkt without Baumgarte gains; Pfaffian, holonomic and mixed problems (every row in the "
           "nonholonomic discrete form: position rows held at velocity level)";
  }
  const Vec* step_multipliers() const override { return &lambda_out_; }
  void interpolate(double t, Vec& y) const override { prev_.interpolate(t_, y_, f_, t, y); }

  // Largest |A(q_k) qd_k|_inf over the run's states (the initial one included).
  double max_velocity_residual() const { return max_velocity_residual_; }
  // Largest |A(q_{k+1/2}) (q_{k+1} - q_k)|_inf over the run's accepted steps (the discrete constraint of dla;
  // nh_rattle does not impose it, so its value there shows how far that method is from it).
  double max_discrete_residual() const { return max_discrete_residual_; }

 protected:
  // dla: lambda_k is an unknown of the Newton system, fixed by the discrete constraint.
  virtual bool solves_for_kick_multiplier() const = 0;
  // The multiplier written for the samples of the accepted step [t_k, t_{k+1}], from lambda_kick_
  // (lambda_k) and lambda_end_ (lambda_{k+1}).
  virtual void written_multiplier(double t_k, double t_k1, Vec& out) = 0;
  // The last (time, value) a subclass extrapolates lambda from; initialize sets (t0, the continuous lambda).
  Vec lambda_anchor_;
  double t_anchor_ = 0;

  Vec lambda_kick_;  // lambda_k of the last accepted step (the first half kick)
  // lambda_{k+1} of the last accepted step (the second half kick); at t0 the continuous multiplier of the
  // KKT system at (q0, qd0). nh_rattle's next first half kick uses it; dla starts Newton from it.
  Vec lambda_end_;

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  void do_reset_state() override;

  // Residual (R1, R2) at the unknowns z = (dq, lambda_k) (dla) or z = dq (nh_rattle) for the step (t_k, h);
  // also leaves the model terms at (t_m, q_m, v_m) in terms_.
  void residual(double h, const Vec& z, Vec& r);
  void update_jacobian(double h);
  bool solve_step(double h);
  // p(q, 0), M(q) and A(q) at q, then qd with A qd = 0 and the multiplier of the half kick onto it.
  void legendre_onto_constraint(const Vec& q, const Vec& p_minus, double h, Vec& qd, Vec& lambda);

  const Model* model_ = nullptr;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  int n_ = 0, m_ = 0, nz_ = 0;
  double dt_ = 0;
  const char* failure_ = "";  // why the last Newton solve failed
  double theta_ = 1;
  bool jac_valid_ = false, jac_fresh_ = false;
  double h_jac_ = 0;
  double max_velocity_residual_ = 0, max_discrete_residual_ = 0;

  StepStart prev_;  // the last step's start (dense output)
  Vec q_, qd_, p_k_, kick_, zero_;  // q_k, qd_k, p_k, p_k + h/2 A_k^T lambda_k (without the unknown part)
  Mat A_k_, A_jac_;  // A(q_k); A(q_m) where the constraint rows of J_ were last brought up to date
  Vec z_, dz_, r_, r_work_, z_work_, qm_, vm_, dq_, res_m_, lambda_out_, p_minus_, rhs_kkt_, sol_kkt_;
  Mat J_, kkt_;
  Eigen::PartialPivLU<Mat> lu_, kkt_lu_;
};

}  // namespace clm
