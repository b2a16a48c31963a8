// The Integrator interface, after Drake's IntegratorBase: a step reports whether it was accepted, so the
// driver can retry with a smaller one; error-estimate order and step statistics are part of it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/ode.hpp"
#include "core/registry.hpp"

namespace clm {

struct IntegratorSettings {
  double dt = 1e-3;    // fixed step, or the initial step of an adaptive method
  double rtol = 1e-8;  // adaptive methods only
  double atol = 1e-10;
  double dt_min = 1e-14;  // an adaptive step below dt_min * max(1, |t|) ends the run as "failed"
  double dt_max = 0;      // 0: no limit beyond the remaining interval
  // Adaptive methods only: take constant steps of dt without error control (convergence orders by step
  // halving, work-precision studies). Fixed-step methods ignore it.
  bool fixed_step = false;
};

struct StepStatistics {
  long steps = 0;           // accepted
  long rejected_steps = 0;
  long rhs_evals = 0;
  long jacobian_evals = 0;
  long newton_iterations = 0;
};

class Integrator {
 public:
  virtual ~Integrator() = default;
  virtual std::string name() const = 0;
  virtual int order() const = 0;
  virtual bool adaptive() const = 0;

  // Binds the system and the initial state; sizes every workspace (no allocation in step()).
  virtual void initialize(OdeSystem& sys, double t0, const Vec& y0, const IntegratorSettings& s) = 0;

  // Attempts one step that ends no later than t_limit. Fixed-step methods take min(dt, t_limit - t);
  // adaptive ones their controller's step, clipped. Returns true if accepted (time() and state()
  // advance), false if rejected (the controller has already shrunk the next step).
  virtual bool step(double t_limit) = 0;

  // Value on the last accepted step [t_prev, t] (dense output where the method has one, cubic Hermite
  // from end-point derivatives otherwise).
  virtual void interpolate(double t, Vec& y) const = 0;

  // The system changed the state after a step (projection): drop cached derivatives.
  virtual void reset_state(const Vec& y) = 0;

  double time() const { return t_; }
  const Vec& state() const { return y_; }
  double current_step() const { return h_; }  // the step the method will try next
  const StepStatistics& statistics() const { return stats_; }

 protected:
  // The integrator's position, kept here (as Drake's IntegratorBase keeps its context) so that every
  // method reports it the same way.
  double t_ = 0;  // time of the last accepted step
  Vec y_;         // state at t_
  double h_ = 0;  // next step to try
  StepStatistics stats_;
};

struct IntegratorEntry {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Integrator>()> make;
};

Registry<IntegratorEntry>& integrator_registry();

}  // namespace clm
