// `cvode`: SUNDIALS CVODE ([sw-sundials]: Hindmarsh et al., ACM TOMS 31 (2005) 363-396; 6.4 from Debian) behind
// the suite's Integrator interface, the library solver a user would otherwise reach for:
//   cvode_method = bdf    variable-order (1-5) BDF with Newton iterations on a dense linear solver: stiff
//                         systems (penalty, added_mass at large N). The Jacobian is CVODE's own difference
//                         quotient, or the system's (jacobian = autodiff, OdeSystem::jacobian).
//   cvode_method = adams  variable-order (1-12) Adams-Moulton with fixed-point iteration: non-stiff work.
// CVODE chooses its steps: each do_step is one CVODE internal step (CV_ONE_STEP) with the stop time at the
// caller's limit, which may end before that limit (Integrator::end_step_early). Dense output is CVODE's own
// interpolant (CVodeGetDky) on the last step. The BDF Jacobian is the suite's forward differences
// (integrators/finite_difference_jacobian.hpp) or the system's own; statistics are CVODE's counters: steps, rhs evaluations
// (including those of its difference-quotient Jacobian), Jacobian evaluations, nonlinear iterations, and as
// rejected steps the error-test and convergence failures. A failure return ends the run "failed" with the
// return code's name and CVODE's own message.
// Coordinate projection ([formulation] projection): with BDF, the system hands its projection to CVODE
// (OdeSystem::set_projection_in_step), which applies it to every corrected step through CVodeSetProjFn
// ([sw-sundials]; projection methods: [HLW-GNI, IV.4]): the error estimate is projected too and the history
// stays, so the order and step size grow as without projection (four_bar, rtol 1e-6, 1 s: 288
// steps against 337 unprojected; re-initializing after every projected step, as before, took 25273).
// Adams (which CVodeSetProjFn does not support) keeps the driver's after_step projection and re-initializes
// CVODE at the projected state (reset_state), restarting it at order 1. Buffers are allocated in
// initialize; CVODE allocates nothing per step (its vectors wrap the integrator's memory).
#pragma once

#include <memory>
#include <string>

#include "core/integrator.hpp"

namespace clm {

class CvodeIntegrator final : public Integrator {
 public:
  CvodeIntegrator();
  ~CvodeIntegrator() override;
  std::string name() const override { return "cvode"; }
  int order() const override { return 5; }  // BDF's highest order (Adams goes to 12)
  bool adaptive() const override { return true; }
  bool uses_jacobian(const IntegratorSettings& s) const override { return s.cvode_method == "bdf"; }
  std::string jacobian_used() const override;
  void interpolate(double t, Vec& y) const override;
  std::string refuses(const IntegratorSettings& s) const override;

  struct Sundials;  // CVODE memory, context, vectors, matrix, solvers (cvode_integrator.cpp)

 protected:
  ToleranceUse tolerance_use(const IntegratorSettings&) const override { return ToleranceUse::kPositiveRtol; }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;
  void do_reset_state() override;
  void update_statistics();

  std::unique_ptr<Sundials> s_;
  long resets_ = 0;  // reset_state calls (each costs the base one rhs evaluation)
};

}  // namespace clm
