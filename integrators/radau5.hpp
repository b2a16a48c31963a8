// RADAU5: the 3-stage Radau IIA collocation method (order 5, stiffly accurate, L-stable) with the
// implementation of Hairer & Wanner, Solving ODEs II, section IV.8, and their Fortran code RADAU5:
//  - the stage equations are solved by simplified Newton in the variables transformed by T^-1 (the
//    eigenbasis of A^-1), so one iteration needs one real LU of (gamma/h) I - J and one complex LU of
//    ((alpha + i beta)/h) I - J instead of one 3n x 3n LU (IV.8, eq. 8.16-8.19);
//  - the error estimate is the embedded one, filtered by (I - h gamma0 J)^-1 so that it stays bounded for
//    stiff components (IV.8, eq. 8.20-8.22), with the extra filtering step after a rejection;
//  - step sizes by the standard controller with the Newton-dependent safety factor, combined with
//    Gustafsson's predictive controller (IV.8, eq. 8.25), step ratio in [1/8, 5];
//  - J and the LUs are reused: J is kept when Newton contracted with rate <= 1e-3 (RADAU5's THET), the LUs
//    when the proposed step is within [1, 1.2] of the current one;
//  - tolerances are transformed as in RADAU5 (rtol' = 0.1 rtol^(2/3), atol' = rtol' atol / rtol), because
//    the estimate is that of an embedded order-3 method; measured global errors then track the given rtol;
//  - dense output is the collocation polynomial of the last step (CONTR5).
// Two deviations from RADAU5, both measured on the penalty sleigh (N = 1e6; see radau5.cpp): Newton takes
// at least two iterations (RADAU5 may stop after one on the previous steps' rate), and after a Newton
// failure the step that converged caps the controller's proposals, the cap growing 1.2x per accepted step.
// J = df/dy by forward differences of the rhs (integrators/finite_difference_jacobian.hpp, RADAU5's
// increment): n rhs evaluations per Jacobian, counted in StepStatistics::rhs_evals and jacobian_evals; or
// the system's own (IntegratorSettings::jacobian = "autodiff"; integrators/implicit_integrator.hpp).
//
// IntegratorSettings::fixed_step: constant steps of dt without error control (step-halving studies); Newton
// is then solved to max(1e-2, 10 eps / rtol) in the norm scaled by atol + rtol |y| with the untransformed
// tolerances. A step whose Newton iteration fails is rejected and halved in both modes.
#pragma once

#include <complex>

#include "integrators/implicit_integrator.hpp"

namespace clm {

class Radau5 final : public ImplicitIntegrator {
 public:
  std::string name() const override { return "radau5"; }
  int order() const override { return 5; }
  bool adaptive() const override { return true; }
  // The embedded estimate is that of an order-3 method (hence the tolerance transformation above).
  int error_estimate_order() const override { return 3; }

  void interpolate(double t, Vec& y) const override;

  // Scaled error of the last attempted step (adaptive mode; <= 1: accepted).
  double last_error() const { return err_; }

 private:
  enum class Newton { kConverged, kFailed };
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kPositiveRtol; }
  void decompose(double h);
  Newton solve_stages(double h);
  double error_estimate(double h);
  void solve_real(Vec& x);               // x <- (fac1 I - J)^-1 x
  void solve_complex(Vec& re, Vec& im);  // re + i im <- ((alphn + i betan) I - J)^-1 (re + i im)

  bool fixed_step_ = false;
  int nit_ = 7;  // maximum Newton iterations
  double rtol_ = 0, atol_ = 0, fnewt_ = 0, dt_ = 0, dt_max_ = 0;
  double h_old_ = 0;  // h_old_: the last accepted step (dense output, predictor)
  double fac1_ = 0, alphn_ = 0, betan_ = 0;
  bool first_ = true, reject_ = false;
  double faccon_ = 1, theta_ = 0, err_ = 0;
  double h_acc_ = 0, err_acc_ = 0;  // Gustafsson: last accepted step and its error
  double h_cap_ = 0;
  int newton_last_ = 0;             // iterations of the last Newton solve (safety factor)
  double newton_fail_factor_ = 0.5; // step reduction after a Newton failure
  Vec scal_;
  Vec z1_, z2_, z3_, w1_, w2_, w3_, k1_, k2_, k3_, ystage_;
  Vec cont0_, cont1_, cont2_, cont3_;  // dense output of the last accepted step (CONT)
  Vec err_v_, err_f_, err_rhs_;
  Mat e1_;
  Eigen::MatrixXcd e2_;
  Eigen::VectorXcd c_rhs_, c_sol_;
  Eigen::PartialPivLU<Mat> lu1_;
  Eigen::PartialPivLU<Eigen::MatrixXcd> lu2_;
};

}  // namespace clm
