// One simulation run for tests: formulation and integrator from their registries, (q0, qd0) mapped to the
// formulation's state, every sample observed and kept. The suites compare these trajectories against
// closed forms and against each other.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "formulations/coordinate_projection.hpp"

namespace clm::testing {

struct RecordedRun {
  SimulationResult result;
  std::vector<double> t;
  std::vector<Observation> obs;  // one per sample
};

struct RunSettings {
  std::string integrator = "dopri5";
  double t_end = 1;
  double output_every = 0.05;
  double dt = 1e-3;  // fixed step, or the initial step of an adaptive integrator
  double rtol = 1e-12;
  double atol = 1e-14;
  std::string cvode_method = "bdf";
  FormulationOptions options{};
};

inline RecordedRun record_run(const std::shared_ptr<const Model>& model, const std::string& formulation,
                              const Vec& q0, const Vec& qd0, const RunSettings& rs) {
  auto f = formulation_registry().get(formulation).make(model, rs.options);
  auto integ = integrator_registry().get(rs.integrator).make();
  Vec y0;
  f->initial_state(q0, qd0, y0);
  SimulationSettings sim;
  sim.t_end = rs.t_end;
  sim.output_every = rs.output_every;
  IntegratorSettings s;
  s.dt = rs.dt;
  s.rtol = rs.rtol;
  s.atol = rs.atol;
  s.cvode_method = rs.cvode_method;
  RecordedRun out;
  // [formulation] projection wraps the formulation, as the runner does (runs/runner.cpp).
  // An integrator that keeps h(q) = 0 itself passes singular positions, as the runner tells the formulation.
  if (integ->integrates_constrained_system() && model->holonomic()) f->set_positions_projected(true);
  std::optional<ProjectedSystem> projected;
  if (rs.options.projection != "none") projected.emplace(*f, projection_mode(rs.options.projection));
  OdeSystem& system = projected ? static_cast<OdeSystem&>(*projected) : static_cast<OdeSystem&>(*f);
  out.result = simulate(system, *integ, y0, sim, s, [&](double t, const Vec& y) {
    Observation o;
    f->observe(t, y, o);
    out.t.push_back(t);
    out.obs.push_back(std::move(o));
  });
  return out;
}

// max over the common samples of |q_a - q_b|_inf between two recorded runs on the same output grid (any types
// with t and obs, e.g. RecordedRun and ida_test's IdaRun); the grids must match sample for sample.
template <class RunA, class RunB>
double max_q_difference(const RunA& a, const RunB& b) {
  EXPECT_EQ(a.t.size(), b.t.size());
  double d = 0;
  for (size_t k = 0; k < std::min(a.t.size(), b.t.size()); ++k) {
    EXPECT_DOUBLE_EQ(a.t[k], b.t[k]);
    d = std::max(d, Vec(a.obs[k].q - b.obs[k].q).lpNorm<Eigen::Infinity>());
  }
  return d;
}

}  // namespace clm::testing
