// Executes RunSpecs: model, consistent initial data, formulation and integrator from their registries,
// clm::simulate, and a record of every sample plus a summary. Two phases, so that every run of a config
// is checked (names, refusals, initial data) before the first one starts.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/consistency.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "experiments/run_spec.hpp"

namespace clm {

// Per-run numbers for /summary and `clmbench info`. NaN where a quantity does not apply.
struct RunSummary {
  double final_drift_position = 0, max_drift_position = 0;  // NaN for Pfaffian problems
  double final_drift_velocity = 0, max_drift_velocity = 0;
  double max_rel_energy_error = 0;  // max_k |E_k - E_0| / max(|E_0|, eps)
  double q_error_vs_reference = 0;  // max_k |q_k - q_ref(t_k)| (Model::closed_form); NaN when none
  double lambda_rel_error_vs_reference = 0;  // max_k |lambda_k - lambda_ref_k| / max_k |lambda_ref_k|; NaN when none
  // The headline column: the q error where the model has a closed-form motion, else the multiplier error.
  double error_vs_reference = 0;
  std::string reference = "none";  // "q" | "lambda" | "none": what error_vs_reference compares
};

// Everything one run produced; samples are row-major (K x n, K x m).
struct RunRecord {
  RunSpec spec;
  std::string status = "ok";  // "ok" | "diverged" | "failed"
  std::string message;
  int n = 0, m = 0;
  bool holonomic = false;
  std::vector<std::pair<std::string, double>> parameters;  // as resolved by the model
  Vec q0, qd0;                    // the consistent initial data the run started from
  std::string initial_source;     // "default" | "given"
  ProjectionReport projection;    // zero for default initial data
  StepStatistics stats;
  double t_reached = 0, wall_time_s = 0;
  std::vector<double> t, energy, drift_position, drift_velocity;
  std::vector<double> q, qd, lambda;
  std::vector<std::string> extra_names;
  std::vector<std::vector<double>> extras;  // extras[j][k]: extra_names[j] at sample k
  RunSummary summary;

  size_t samples() const { return t.size(); }
};

// A run ready to start: everything that can be wrong with the input has been checked.
struct PreparedRun {
  RunSpec spec;
  std::shared_ptr<const Model> model;
  std::unique_ptr<Formulation> formulation;
  std::unique_ptr<Integrator> integrator;
  Vec q0, qd0, y0;
  std::string initial_source;
  ProjectionReport projection;
};

// Builds the model, projects given initial data (reporting the distance on `log`; InputError under
// strict_initial when it exceeds 1e-12), checks FormulationEntry::refuses, makes formulation and integrator.
PreparedRun prepare_run(const RunSpec& spec, std::ostream& log);

// Integrates and records. Divergence and numerical failure become the record's status; never throws
// for them.
RunRecord execute_run(PreparedRun& run);

// Fills record.summary from the samples.
// vakonomic_on_nonholonomic: the run follows the vakonomic motion of nonholonomic constraints, so the
// problem's (nonholonomic) closed forms are not its reference.
void summarize(RunRecord& record, const Model& model, bool vakonomic_on_nonholonomic = false);

}  // namespace clm
