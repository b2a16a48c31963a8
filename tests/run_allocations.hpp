// The "a longer run allocates no more" check shared by the driver, projection and cvode tests: heap
// allocations of a whole simulate() call (integrator made, initialized and run), for a short and a ten
// times longer run. Equal counts mean everything is allocated up front and nothing per step or sample.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "allocation_counter.hpp"
#include "core/simulate.hpp"

namespace clm::testing {

// Allocations of runs to t_short and t_long (output every `output_every`); every run must end "ok".
inline std::array<std::size_t, 2> allocations_of_runs(OdeSystem& sys, const std::string& integrator, const Vec& y0,
                                                      const IntegratorSettings& s, double output_every,
                                                      double t_short, double t_long) {
  std::array<std::size_t, 2> counts{};
  for (int i = 0; i < 2; ++i) {
    auto integ = integrator_registry().get(integrator).make();
    SimulationSettings sim;
    sim.t_end = i == 0 ? t_short : t_long;
    sim.output_every = output_every;
    double sink = 0;
    SampleCallback cb = [&sink](double, const Vec& y) { sink += y[0]; };
    AllocationScope scope;
    const SimulationResult r = simulate(sys, *integ, y0, sim, s, cb);
    counts[i] = scope.count();
    EXPECT_EQ(r.status, "ok") << integrator << ": " << r.message;
  }
  return counts;
}

}  // namespace clm::testing
