// A run for the tests of what a run records (validity, error series, timings, points, messages): a RunSpec of
// a problem (zoo name or mechanism file) at its default parameters, timed once (run.timing_budget = 0: these tests measure results, not CPU
// time; tests/timing_repeats_test.cpp sets its own), and the run prepared and executed.
#pragma once

#include <sstream>
#include <string>

#include "core/problem_registry.hpp"
#include "runs/runner.hpp"

namespace clm::testing {

inline RunSpec spec_for(const std::string& problem, const std::string& formulation, const std::string& integrator) {
  RunSpec s;
  s.run_id = problem + "_" + formulation;
  s.problem = problem;
  s.formulation = formulation;
  s.integrator = integrator;
  s.timing_budget = 0;
  // A zoo problem's defaults stated; a mechanism file (a path) brings its own.
  if (problem_registry().contains(problem))
    for (const auto& p : problem_registry().get(problem).parameters) s.params[p.name] = p.default_value;
  return s;
}

inline RunRecord execute(const RunSpec& spec, bool keep_samples = false) {
  std::ostringstream log;
  PreparedRun prepared = prepare_run(spec, log);
  return execute_run(prepared, nullptr, keep_samples);
}

}  // namespace clm::testing
