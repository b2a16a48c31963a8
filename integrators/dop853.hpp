// Hairer's DOP853 ("dop853"): the explicit Runge-Kutta method of order 8 of Dormand and Prince with the error
// estimate (orders 5 and 3 combined), step-size control, stiffness test and 7th-order continuous extension of
// Hairer's code DOP853 [HNW-I, II.10]. Twelve stages; the thirteenth is the derivative at the new point (FSAL),
// so an accepted step costs 12 right-hand-side evaluations and a rejected one 11 (the error estimate does not
// need the 13th). The dense output needs three more stages: they are evaluated on the first interpolate()
// within a step, so that runs that sample rarely (or only on step ends) do not pay, and counted in rhs_evals.
#pragma once

#include <array>
#include <vector>

#include "core/integrator.hpp"
#include "integrators/embedded_pair.hpp"

namespace clm {

class Dop853 final : public Integrator {
 public:
  Dop853();

  std::string name() const override { return "dop853"; }
  int order() const override { return 8; }
  // Adaptive by nature; IntegratorSettings::fixed_step turns the error control off for a run.
  bool adaptive() const override { return true; }
  // The 5th-order estimate (its 3rd-order companion only damps it where the two disagree: Hairer's
  // err5^2 / sqrt(err5^2 + 0.01 err3^2)); the controller treats the result as O(h^8), exponent 1/8.
  int error_estimate_order() const override { return 5; }

  void interpolate(double t, Vec& y) const override;

  // Scaled norm of the last attempted step's error estimate (<= 1: accepted).
  double last_error() const { return err_; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  // The three extra stages and the coefficients r1..r8 of the continuous extension (CONTD8) on [t_prev_, t_].
  void prepare_dense_output() const;

  const EmbeddedPair& pair_;
  std::vector<StageTerms> rows_;  // stage i's terms (stages from 0): rows_[1..15]
  StageTerms b_, e5_, bhh_;
  std::array<StageTerms, 4> d_;   // dense-output rows D4..D7

  double rtol_ = 0, atol_ = 0, dt_max_ = 0;
  bool fixed_step_ = false;
  double t_prev_ = 0, h_prev_ = 0;
  int stiff_steps_ = 0, non_stiff_ = 0;  // Hairer's stiffness test: consecutive stiff / non-stiff steps
  double err_ = 0, err_old_ = 1e-4;      // FACOLD, the previous accepted error (PI control; beta = 0 by default)
  bool last_rejected_ = false;
  // Stages of the step being attempted (k_[0] is a copy of f_), and what the dense output keeps of the last
  // accepted one: its stages 1 and 6..13 (swapped in on acceptance; 2..5 are not needed), the extra stages
  // 14..16 once computed, and the step's end points.
  std::vector<Vec> k_;
  mutable std::vector<Vec> kd_;
  Vec y_stage_, y_new_, bsum_, y_old_, y_end_;
  mutable Vec y_dense_stage_;
  mutable std::array<Vec, 8> r_;  // Hairer's CONT: y(t_prev + s h) = r1 + s (r2 + (1-s) (r3 + s (r4 + ...)))
  mutable bool dense_ready_ = false;
};

// The coefficients of DOP853 as data (tests/high_order_integrator_test.cpp checks their order conditions).
const EmbeddedPair& dop853_pair();

}  // namespace clm
