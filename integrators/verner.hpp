// Verner's "most efficient" explicit Runge-Kutta pairs with their interpolants [Verner-2010]: vern9, the 9(8)
// pair of 16 stages with an interpolant of order 9, and vern7, the 7(6) pair of 10 stages with an interpolant
// of order 7. The last stage of each is at c = 1 but is not the new point, so a step also evaluates f at the
// new point (the next step's first stage): an accepted step costs 16 (vern9) or 10 (vern7) right-hand-side
// evaluations, a rejected one 15 or 9. The interpolant needs 9 (vern9) or 5 (vern7) more stages (its first
// extra stage is that derivative at the new point); they are evaluated on the first interpolate() within a step
// and counted in rhs_evals. Step control: the error of the embedded pair, e = h sum (b_i - b_hat_i) k_i, in the
// scaled RMS norm of the suite (core/integrator.hpp), the new step h err^(-1/(q+1)) with q the embedded order
// (exponent 1/9, 1/7), safety 0.9, between 1/3 and 6 times the old step (DOP853's bounds), no growth after a
// rejection; Hairer's stiffness test with the method's own stability boundary.
#pragma once

#include <vector>

#include "core/integrator.hpp"
#include "integrators/embedded_pair.hpp"

namespace clm {

class Verner final : public Integrator {
 public:
  // pair: vern7_pair() or vern9_pair(); stiff_h_lambda: the threshold of the stiffness test.
  Verner(const EmbeddedPair& pair, double stiff_h_lambda);

  std::string name() const override { return pair_.name; }
  int order() const override { return pair_.order; }
  // Adaptive by nature; IntegratorSettings::fixed_step turns the error control off for a run.
  bool adaptive() const override { return true; }
  int error_estimate_order() const override { return pair_.error_order; }

  void interpolate(double t, Vec& y) const override;

  // Scaled RMS norm of the last attempted step's error estimate (<= 1: accepted).
  double last_error() const { return err_; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  // The interpolant's extra stages on [t_prev_, t_].
  void prepare_dense_output() const;

  const EmbeddedPair& pair_;
  double stiff_h_lambda_;
  int stages_;                     // of a step
  std::vector<StageTerms> rows_;   // stage i's terms (stages from 0)
  StageTerms b_, e_;
  // The interpolant: the stages it weights (from 0) and their r_i1 .. r_id in long double.
  std::vector<int> dense_stage_;
  std::vector<std::vector<long double>> dense_r_;

  double rtol_ = 0, atol_ = 0, dt_max_ = 0;
  bool fixed_step_ = false;
  double t_prev_ = 0, h_prev_ = 0;
  int stiff_steps_ = 0, non_stiff_ = 0;
  double err_ = 0;
  bool last_rejected_ = false;
  // Stages of the step being attempted (k_[0] is a copy of f_); the dense output's copy of the last accepted
  // step's stages (swapped in on acceptance), f at its end (stage stages_ + 1) and the extra stages once computed.
  std::vector<Vec> k_;
  mutable std::vector<Vec> kd_;
  Vec y_stage_, y_new_, f_new_, est_, y_old_;
  mutable Vec y_dense_stage_;
  mutable std::vector<double> dense_w_;  // b_i(theta) of the last interpolate()
  mutable bool dense_ready_ = false;
};

// The coefficients as data (tests/high_order_integrator_test.cpp checks their order conditions).
const EmbeddedPair& vern7_pair();
const EmbeddedPair& vern9_pair();

}  // namespace clm
