// The Newton / Jacobian plumbing the implicit integrators (implicit_midpoint, radau5) share: the Jacobian
// J = df/dy at the start of a step, how it is obtained (IntegratorSettings::jacobian: forward differences,
// integrators/finite_difference_jacobian.hpp, or the system's own, OdeSystem::jacobian), its counters
// (StepStatistics::jacobian_evals, and rhs_evals for the n evaluations of a difference Jacobian), and the
// reuse flags of simplified Newton: J stays valid across steps (jac_valid_) until the method drops it,
// jac_fresh_ says it was evaluated at the current (t, y), and h_lu_ is the step the method's LU(s) of the
// Newton matrix belong to (0: none; a new J invalidates them).
#pragma once

#include "core/integrator.hpp"

namespace clm {

class ImplicitIntegrator : public Integrator {
 public:
  bool uses_jacobian(const IntegratorSettings&) const override { return true; }
  std::string jacobian_used() const override { return system_jacobian_ ? "exact" : "finite_difference"; }

 protected:
  // Sizes J and the difference workspace and drops every cached J / LU; call from do_initialize.
  void initialize_newton(const IntegratorSettings& s);
  // J at (t_, y_) (f_ = f(t_, y_) already current), counted; marks it valid and fresh and the LUs stale.
  void update_jacobian();

  Mat J_;
  bool jac_valid_ = false;  // J is usable (possibly from an earlier step)
  bool jac_fresh_ = false;  // J was evaluated at the current (t_, y_)
  double h_lu_ = 0;         // the step the current LU(s) belong to (0: none)

 private:
  // The state changed under the method: J stays usable for simplified Newton, but is no longer at (t_, y_).
  void do_reset_state() override { jac_fresh_ = false; }

  bool system_jacobian_ = false;
  Vec y_work_, f_work_;  // finite-difference scratch
};

}  // namespace clm
