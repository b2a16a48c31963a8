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
// t_end < t0, wrong y0 size, bad tolerances) propagates to the caller.
#pragma once

#include <functional>
#include <string>

#include "core/integrator.hpp"

namespace clm {

struct SimulationSettings {
  double t0 = 0;
  double t_end = 1;
  double output_every = 0.01;          // <= 0: a sample after every accepted step
  double divergence_threshold = 1e12;  // |y|_inf above this: status "diverged"
  long max_steps = 200'000'000;
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

SimulationResult simulate(OdeSystem& sys, Integrator& integrator, const Vec& y0, const SimulationSettings& sim,
                          const IntegratorSettings& settings, const SampleCallback& sample);

}  // namespace clm
