// The integration driver: steps an OdeSystem with an Integrator to t_end, emits samples exactly on the
// output grid (dense output / interpolation), and turns divergence and numerical failure into a status
// instead of a crash.
//
// Output grid: t0 + k * output_every for k = 0, 1, ... while below t_end, then t_end itself (a grid point
// within round-off of t_end is t_end); every time exactly once, in increasing order. Samples inside a step
// come from the integrator's interpolant on that step; a sample at a step end is the state after
// OdeSystem::after_step (projection). output_every <= 0: t0 and then the state after every accepted step.
//
// Fixed-step runs (a non-adaptive integrator, or IntegratorSettings::fixed_step): when dt <= output_every
// the step is shrunk to output_every / ceil(output_every / dt) and the steps land on the grid; a coarser
// step is kept and the samples are interpolated. The step used is SimulationResult::dt_effective.
//
// Status: "ok"; "diverged" when the state becomes non-finite or |y|_inf exceeds divergence_threshold
// (the samples before are kept); "failed" with a message on NumericalFailure (or any other exception
// except InputError) from the system or the integrator, on step-size underflow (a rejected step leaving
// the next one below dt_min * max(1, |t|), or an accepted step that does not advance time) and when more
// than max_steps steps (accepted + rejected) are attempted. InputError (bad settings: fixed dt <= 0,
// t_end < t0, wrong y0 size, bad tolerances) and AbortRun (from the sample callback) propagate to the caller.
#pragma once

#include <algorithm>
#include <functional>
#include <string>

#include "core/integrator.hpp"

namespace clm {

struct SimulationSettings {
  double t0 = 0;
  double t_end = 1;
  double output_every = 0.01;          // <= 0: a sample after every accepted step
  double divergence_threshold = 1e12;  // |y|_inf above this: status "diverged"
  // Attempted steps (accepted + rejected) before the run ends "failed" naming the limit: a run that needs
  // more is almost always stiff under an explicit method or mis-configured (penalty + dopri5 at N = 1e8
  // took 178 million steps); raise it (run.max_steps) for a deliberate very long run.
  long max_steps = 50'000'000;
};

struct SimulationResult {
  std::string status = "ok";  // "ok" | "diverged" | "failed"
  std::string message;
  double t_reached = 0;
  double dt_effective = 0;  // the constant step of a fixed-step run after grid alignment; 0 for adaptive runs
  long samples = 0;         // number of sample() calls
  double wall_time_s = 0;
  StepStatistics stats;
};

using SampleCallback = std::function<void(double t, const Vec& y)>;

// Where a run is, for a progress display: called every kProgressEvery attempted steps and once at the end
// (finished = true). The callback decides how often to show anything (runs/progress_line.hpp);
// it must not throw except AbortRun.
struct SimulationProgress {
  double t0 = 0, t = 0, t_end = 0;  // start, reached, target time
  long steps = 0;                   // attempted steps so far (accepted + rejected)
  bool finished = false;
  double fraction() const { return t_end > t0 ? std::clamp((t - t0) / (t_end - t0), 0.0, 1.0) : 1.0; }
};
using ProgressCallback = std::function<void(const SimulationProgress&)>;
constexpr long kProgressEvery = 64;

// Called once per accepted step [t_prev, t], after the divergence check and before the samples inside the step
// and OdeSystem::after_step, while the integrator's interpolant covers the step (the energy balance's
// quadrature, core/energy_balance.hpp). May throw NumericalFailure (the run ends "failed").
using StepCallback = std::function<void(double t_prev, double t)>;

SimulationResult simulate(OdeSystem& sys, Integrator& integrator, const Vec& y0, const SimulationSettings& sim,
                          const IntegratorSettings& settings, const SampleCallback& sample,
                          const ProgressCallback& progress = {}, const StepCallback& on_step = {});

}  // namespace clm
