// Dormand-Prince 5(4) ("dopri5"): the explicit embedded Runge-Kutta pair of Hairer, Norsett & Wanner,
// Solving ODEs I, Table II.5.2, with the step-size control and the 4th-order continuous extension of
// their code DOPRI5 (CONTD5). The seventh stage is the derivative at the new point (FSAL), so an
// accepted step costs six right-hand-side evaluations.
#pragma once

#include "core/integrator.hpp"

namespace clm {

class DormandPrince5 final : public Integrator {
 public:
  std::string name() const override { return "dopri5"; }
  int order() const override { return 5; }
  // Adaptive by nature; IntegratorSettings::fixed_step turns the error control off for a run.
  bool adaptive() const override { return true; }
  int error_estimate_order() const override { return 4; }  // the embedded 4th-order solution

  void interpolate(double t, Vec& y) const override;

  // Scaled RMS norm of the last attempted step's error estimate (<= 1: accepted).
  double last_error() const { return err_; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;

  double rtol_ = 0, atol_ = 0, dt_max_ = 0;
  bool fixed_step_ = false;
  double t_prev_ = 0, h_prev_ = 0;
  int stiff_steps_ = 0, non_stiff_ = 0;  // Hairer's stiffness test: consecutive stiff / non-stiff steps
  double err_ = 0, err_old_ = 1e-4;  // Hairer's FACOLD, the previous accepted error (PI control)
  bool last_rejected_ = false;
  // f_ (the base's derivative at t_) is the next step's first stage.
  Vec k2_, k3_, k4_, k5_, k6_, k7_, y_stage_, y_new_, est_;
  Vec r1_, r2_, r3_, r4_, r5_;  // dense output on [t_prev_, t_] (Hairer's RCONT)
};

}  // namespace clm
