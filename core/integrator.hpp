// The Integrator interface, after Drake's IntegratorBase: a non-virtual public interface (initialize,
// step) that validates the settings, binds the system, keeps the statistics and clips every step to the
// caller's limit exactly once, around private virtual hooks (do_initialize, do_step) that the methods
// implement with their own (Hairer-style) step-size controllers. A step reports whether it was accepted,
// so the driver can retry with a smaller one.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/ode.hpp"
#include "core/registry.hpp"

namespace clm {

class Formulation;

struct IntegratorSettings {
  double dt = 1e-3;    // fixed step, or the initial step of an adaptive method
  // Adaptive methods only. These are also the command line's defaults (RunSpec reads them from here).
  double rtol = 1e-10;
  double atol = 1e-12;
  double dt_min = 1e-14;  // an adaptive step below dt_min * max(1, |t|) ends the run as "failed"
  double dt_max = 0;      // 0: no limit beyond the remaining interval
  // Adaptive methods only: take constant steps of dt without error control (convergence orders by step
  // halving, work-precision studies). Fixed-step methods ignore it.
  bool fixed_step = false;
  // Implicit methods only: how J = df/dy is obtained. "finite_difference": column-wise forward differences
  // of the rhs (n evaluations per Jacobian; integrators/finite_difference_jacobian.hpp). "autodiff": the
  // system's own Jacobian by automatic differentiation (OdeSystem::jacobian: penalty, kkt and schur through
  // Model::dynamics_derivatives, or core/autodiff_ode.hpp); refused (InputError) for a system that provides
  // none (OdeSystem::has_jacobian). "auto": the own one where OdeSystem::own_jacobian_is_cheaper (a fixed
  // rule), else differences. Finite differences stay this struct's default (library users and tests keep
  // their bits); the run option's default is "auto" (runs/run_config.hpp).
  std::string jacobian = "finite_difference";
  // cvode only: "bdf" (stiff: variable-order BDF, Newton, dense linear solver) or "adams" (non-stiff:
  // Adams-Moulton, fixed-point iteration); integrators/cvode_integrator.hpp.
  std::string cvode_method = "bdf";
};

struct StepStatistics {
  long steps = 0;           // accepted
  long rejected_steps = 0;
  long rhs_evals = 0;
  long jacobian_evals = 0;
  long newton_iterations = 0;
  // Explicit adaptive methods: the time from which the step was limited by stability rather than accuracy
  // (Hairer's stiffness test in DOPRI5: h |lambda| > 3.25 on 15 consecutive accepted steps); -1: never.
  double stiffness_detected_at = -1;
};

class Integrator {
 public:
  virtual ~Integrator() = default;
  virtual std::string name() const = 0;
  virtual int order() const = 0;
  virtual bool adaptive() const = 0;
  // Order of the local error estimate that drives the step-size controller (the embedded method's order:
  // dopri5 4, radau5 3); 0 for methods without an error estimate (euler, rk4, implicit_midpoint).
  virtual int error_estimate_order() const { return 0; }
  // Whether the method solves with J = df/dy under these settings (implicit methods; cvode with bdf), so
  // that IntegratorSettings::jacobian applies to it.
  virtual bool uses_jacobian(const IntegratorSettings&) const { return false; }
  // The Jacobian the last initialize() chose (run attribute jacobian_used): "none" (no Newton iteration),
  // "exact" (the system's own, OdeSystem::jacobian: automatic differentiation), "finite_difference", or
  // "method_tangent" (the method's own Newton matrix from the model's terms, not J = df/dy: ALI3-P).
  virtual std::string jacobian_used() const { return "none"; }
  // Why the method cannot run with these settings ("" when it can); checked by initialize (InputError) and by
  // the runner before any run starts.
  virtual std::string refuses(const IntegratorSettings&) const { return {}; }
  // Whether rtol and atol act under these settings (error control, or a Newton tolerance of a fixed-step
  // implicit method); the runner's "has no effect" warning asks.
  bool reads_tolerances(const IntegratorSettings& s) const { return tolerance_use(s) != ToleranceUse::kNone; }

  // ---- Methods that integrate the constrained mechanical system itself -----------------------------------
  // rattle, dla, nh_rattle and ida advance (q, qd) of the constrained system rather than one formulation's
  // ODE: they run with --formulation kkt, which names that system (integrators/mechanical_system.hpp), read
  // the Model through it, and write their own multipliers. Why the method cannot run with formulation f on
  // its model ("" when it can): checked by the runner before the run (InputError, one line) and by the
  // methods' do_initialize.
  virtual std::string refuses_formulation(const Formulation& /*f*/) const { return {}; }
  // True for those methods: coordinate projection does not apply to them (they keep the constraints).
  virtual bool integrates_constrained_system() const { return false; }
  // What the method accepts, for `clmbench list integrators` ("every formulation", "kkt; holonomic problems").
  virtual std::string accepts() const { return "every formulation and problem"; }
  // The multipliers of the last accepted step where the method computes its own (the discrete multipliers
  // of rattle and dla, ida's algebraic variables); nullptr: lambda is the formulation's, from the sampled state.
  // The runner writes them for every sample on that step.
  virtual const Vec* step_multipliers() const { return nullptr; }
  // The multipliers for a sample at time t on the last accepted step: step_multipliers() unless the method
  // has an interpolant for them (ida: IDAGetDky of its algebraic variables). What the runner writes.
  virtual const Vec* multipliers_at(double /*t*/) const { return step_multipliers(); }

  // Validates the settings (InputError, one line naming the method and the setting), binds the system,
  // sets t = t0 and y = y0, evaluates f(t0, y0), resets the statistics, and lets the method size every
  // workspace (no heap allocation in step()).
  void initialize(OdeSystem& sys, double t0, const Vec& y0, const IntegratorSettings& s);

  // Attempts one step that ends no later than t_limit: h = min(current_step(), t_limit - t), where a step
  // that would end within round-off (constant steps) or within 1% (adaptive) of t_limit is stretched to
  // end exactly on it. Returns true if accepted (time() and state() advance; true without a step when
  // t_limit <= time()), false if rejected (the controller has already shrunk the next step).
  bool step(double t_limit);

  // Value on the last accepted step [t_prev, t] (dense output where the method has one, cubic Hermite
  // from end-point derivatives otherwise). dop853, vern7 and vern9 evaluate their interpolant's extra stages
  // on the first call within a step (counted in rhs_evals); the others never evaluate the system here.
  virtual void interpolate(double t, Vec& y) const = 0;

  // The system changed the state after a step (projection): y is taken and f(t, y) re-evaluated.
  void reset_state(const Vec& y);

  double time() const { return t_; }
  const Vec& state() const { return y_; }
  double current_step() const { return h_; }  // the step the method will try next
  const StepStatistics& statistics() const { return stats_; }
  // Takes constant steps of dt (a fixed-step method, or IntegratorSettings::fixed_step); valid after initialize.
  bool constant_steps() const { return constant_steps_; }

  // The error norm of the adaptive methods (Hairer & Wanner): sqrt(1/n sum_i (err_i / sc_i)^2) with
  // sc_i = atol + rtol max(|y_old_i|, |y_new_i|) (floored at the smallest normal double). Summed in index
  // order, so that every method gets bit-identical values.
  static double weighted_rms_norm(const Vec& err, const Vec& y_old, const Vec& y_new, double rtol, double atol);
  // The same with precomputed weights sc_i (no floor).
  static double weighted_rms_norm(const Vec& err, const Vec& sc);

 protected:
  // Tolerances a method reads with the given settings: none, rtol/atol >= 0 and not both zero, or rtol > 0.
  enum class ToleranceUse { kNone, kNonNegative, kPositiveRtol };
  virtual ToleranceUse tolerance_use(const IntegratorSettings& s) const {
    return (adaptive() && !s.fixed_step) ? ToleranceUse::kNonNegative : ToleranceUse::kNone;
  }

  // f(t, y) into dy, counted in the statistics.
  void eval_rhs(double t, const Vec& y, Vec& dy) {
    sys_->rhs(t, y, dy);
    ++stats_.rhs_evals;
  }
  // The same from interpolate(): methods whose dense output needs extra stages (dop853, vern7, vern9) evaluate
  // them on the first interpolate() of a step, so that runs that sample rarely do not pay; counted like any other.
  void eval_rhs_for_dense_output(double t, const Vec& y, Vec& dy) const {
    sys_->rhs(t, y, dy);
    ++stats_.rhs_evals;
  }

  // The time the step being attempted ends at (t_limit exactly when it lands there); valid in do_step.
  double step_end() const { return t_end_; }
  // For methods that choose their own steps (cvode): the accepted step ended at t, before step_end()
  // (t_ < t <= step_end()). Called in do_step before it returns true.
  void end_step_early(double t) { t_end_ = t; }

  OdeSystem* sys_ = nullptr;
  IntegratorSettings settings_;
  // The integrator's position, kept here (as Drake's IntegratorBase keeps its context) so that every
  // method reports it the same way.
  double t_ = 0;  // time of the last accepted step
  Vec y_;         // state at t_
  Vec f_;         // f(t_, y_), kept current by the base (initialize, reset_state) and by do_step on acceptance
  double h_ = 0;  // next step to try
  mutable StepStatistics stats_;  // mutable: lazy dense-output stages are counted from interpolate() const

 private:
  // Sizes the method's workspaces and sets h_; y_ = y0 and f_ = f(t0, y0) are already in place.
  virtual void do_initialize(const IntegratorSettings& s) = 0;
  // One attempt of exactly h (> 0), ending at step_end(). On acceptance: y_ and f_ hold the new state and
  // its derivative, h_ the next step; the base advances t_ and counts the step. On rejection: y_ and f_
  // untouched, h_ shrunk; the base counts the rejection.
  virtual bool do_step(double h) = 0;
  // After reset_state replaced y_ and f_: drop what depended on the old state.
  virtual void do_reset_state() {}

  bool constant_steps_ = false;
  double t_end_ = 0;
};

struct IntegratorEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Integrator>()> make;
};

Registry<IntegratorEntry>& integrator_registry();

}  // namespace clm
