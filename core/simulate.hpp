// The integration driver: steps an OdeSystem with an Integrator to t_end, emits samples exactly on the
// output grid (dense output / interpolation), and turns divergence and numerical failure into a status
// instead of a crash.
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
  double wall_time_s = 0;
  StepStatistics stats;
};

using SampleCallback = std::function<void(double t, const Vec& y)>;

SimulationResult simulate(OdeSystem& sys, Integrator& integrator, const Vec& y0, const SimulationSettings& sim,
                          const IntegratorSettings& settings, const SampleCallback& sample);

}  // namespace clm
