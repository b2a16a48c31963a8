// Executes RunSpecs: model, consistent initial data, formulation and integrator from their registries,
// clm::simulate, and a record of every sample plus a summary. Two phases, so that every run of a config
// is checked (names, refusals, initial data) before the first one starts.
#pragma once

#include <iosfwd>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/consistency.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "formulations/coordinate_projection.hpp"
#include "runs/progress_line.hpp"
#include "runs/reference_trajectory.hpp"
#include "runs/run_config.hpp"
#include "runs/run_summary.hpp"

namespace clm {

// Everything one run produced. The samples (row-major, K x n, K x m) are kept only when asked for
// (studies that compare runs); a results file gets them streamed through a RunObserver instead.
struct RunRecord {
  RunSpec spec;
  std::string status = "ok";  // "ok" | "diverged" | "failed"
  std::string message;
  int n = 0, m = 0;
  // numerical_rank of A(q0) (core/formulation.hpp): m unless the constraints are redundant (bricard: m - 1).
  int constraint_rank = 0;
  std::vector<std::string> coordinate_names, coordinate_units;  // of q (Model::coordinate_names)
  bool holonomic = false;  // every row a position row (the HDF5 attribute `holonomic`)
  // The position rows h(q, t) = 0 (Model::position_rows): m for holonomic problems, 0 for Pfaffian ones, between for
  // mixed ones. drift_position (|h|) is recorded when there are any.
  int position_rows = 0;
  // drift_position is a column of holonomic problems (m = 0 included, as it always was) and of mixed ones.
  bool records_position_drift() const { return holonomic || position_rows > 0; }
  std::vector<std::string> constraint_names;  // Model::constraint_names (empty: unnamed rows)
  // lambda's column names in the rows' order, position rows first: the rows' names where the problem gives them,
  // else lambda1 .. lambdam (HDF5 /lambda's `columns`, Python's Run.lambda_columns, the plots' labels).
  std::vector<std::string> lambda_columns() const {
    if (static_cast<int>(constraint_names.size()) == m) return constraint_names;
    std::vector<std::string> out;
    for (int i = 1; i <= m; ++i) out.push_back("lambda" + std::to_string(i));
    return out;
  }
  std::vector<std::pair<std::string, double>> parameters;  // as resolved by the model
  Vec q0, qd0;                    // the consistent initial data the run started from
  std::string initial_source;     // "default" | "given" | "default, projected" (off for these parameters)
  std::vector<std::string> warnings;  // PreparedRun::warnings, and what the run found (stiffness, validity)
  // Empty when the run stayed within its formulation's validity conditions (or it computes none), else one line
  // naming the failed condition (runs/validity_monitor.hpp, issue 24 item 2); also one of `warnings`.
  std::string validity;
  // penalty and added_mass: that their figures are a limit approximation of the constrained motion, and the gap's
  // estimate (HDF5 attribute limit_approximation; empty for the other formulations).
  std::string limit_approximation;
  // penalty and added_mass with run.limit_gap_estimate: max |q_N - q_N/2| over the common samples of the run and a
  // companion run at N / 2, the estimated distance of q_N from the N -> infinity motion (runs/limit_gap.hpp); NaN
  // where not estimated (HDF5 attribute limit_gap).
  double limit_gap = std::numeric_limits<double>::quiet_NaN();
  ProjectionReport projection;    // zero for default initial data
  StepStatistics stats;
  // The Jacobian the integrator solved with (Integrator::jacobian_used): none, exact, finite_difference,
  // method_tangent. run.jacobian = auto chooses by a fixed rule (docs/design.md); this says what it chose.
  std::string jacobian_used = "none";
  // What evaluated a mechanism file's terms: "native" or "tape" (run.mechanism_evaluation resolved; HDF5 attribute
  // mechanism_evaluation_used); empty for a zoo problem.
  std::string evaluation;
  ProjectionStatistics projection_stats;  // [formulation] projection (zero when none)
  double t_reached = 0, wall_time_s = 0;
  // CPU time of the thread that ran it: integrating (cpu_time_s, the work of work-precision diagrams) and
  // recording the samples (output_cpu_time_s: observation, error accumulation, HDF5 writing), measured
  // apart so that the output grid and compression do not blur the cost of a method.
  double cpu_time_s = 0, output_cpu_time_s = 0;
  // A run shorter than run.timing_budget of CPU time is integrated again (without recording) until the budget
  // is spent, at most 20 timings (issue 24 item 5): cpu_time_s is then the minimum, cpu_time_repeats the
  // number of timings and cpu_time_spread their relative spread (max - min) / min (NaN when timed once).
  int cpu_time_repeats = 1;
  double cpu_time_spread = std::numeric_limits<double>::quiet_NaN();
  // The CPU time the timing repeats cost (the whole of each repeat, recording included; 0 when timed once): reported
  // apart from the run's own time, so that a short run's figures show what its timing added (HDF5 attribute
  // timing_repeats_cpu_time_s; `run` prints it).
  double timing_repeats_cpu_time_s = 0;
  // What the errors of `summary` were measured against: the reference run's settings and step count, the
  // closed form, or why there is no reference (then the error figures are NaN). reference_cpu_time_s: the
  // reference run's own integration CPU time (NaN without one).
  std::string reference_message;
  double reference_cpu_time_s = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> t, energy, drift_position, drift_velocity;
  // The energy balance (core/energy_balance.hpp), recorded for time-dependent and forced problems (energy_balance):
  // the work since t0 of the constraint forces, of dV/dt and of the generalized forces, and E - E0 - W, per sample.
  bool energy_balance = false;
  std::vector<double> work_constraints, work_explicit_time, work_forces, energy_balance_residual;
  std::vector<double> q, qd, lambda;
  std::vector<std::string> extra_names;
  std::vector<std::vector<double>> extras;  // extras[j][k]: extra_names[j] at sample k
  // Runs whose formulation computes actuator forces (Formulation::records_actuator_forces): the names of the
  // actuated coordinates (empty otherwise), and with keep_samples F_a (row-major, K x n_a) and its power [K].
  std::vector<std::string> actuator_names;
  std::vector<double> actuator_force, actuator_power;
  // The model's named points (Model::named_points; a mechanism file's [points]): column names NAME.x, ... and
  // units (empty when it names none), and with keep_samples their positions (row-major, K x columns).
  std::vector<std::string> point_columns, point_units;
  std::vector<double> points;
  // The model's body velocities (Model::body_velocities): names, units, descriptions (empty when it declares
  // none), and with keep_samples their values (row-major, K x names).
  std::vector<std::string> body_velocity_columns, body_velocity_units, body_velocity_descriptions;
  std::vector<double> body_velocities;
  // The error against the reference at every sample (issue 24 item 3): true when the run's reference is
  // compared sample by sample (a closed form or a reference run; RunSummaryAccumulator::compares_every_sample),
  // then written as /runs/<id>/error_vs_reference, and with keep_samples kept here (row-major, K x 3:
  // the q, qd and lambda norms of SampleErrors).
  bool records_reference_error = false;
  std::vector<double> reference_error;
  RunSummary summary;
  size_t sample_count = 0;

  size_t samples() const { return sample_count; }
};

// Receives a run as it is computed: begin() with the header (spec, n, m, holonomic, extra names, initial
// data, whether the reference errors are recorded), sample() per output time, finish() with status, statistics and summary. Throwing an AbortRun
// (e.g. OutputError) stops the run and reaches execute_run's caller.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void begin(const RunRecord& header) = 0;
  // `errors`: the sample's errors against the reference (NaN when header.records_reference_error is false).
  virtual void sample(double t, const Observation& obs, const SampleErrors& errors) = 0;
  virtual void finish(const RunRecord& record) = 0;
};

// A run ready to start: everything that can be wrong with the input has been checked.
struct PreparedRun {
  RunSpec spec;
  std::shared_ptr<const Model> model;
  // A mechanism file's evaluation (run.mechanism_evaluation resolved): "native" or "tape"; empty for a zoo problem.
  std::string evaluation;
  std::unique_ptr<Formulation> formulation;
  std::unique_ptr<Integrator> integrator;
  Vec q0, qd0, y0;
  int constraint_rank = 0;  // numerical_rank of A(q0)
  // The samples' size in bytes at most (t, q, qd, lambda, energy, drift, the formulation's extras; floor(t_end /
  // output_every) + 2 samples), what a caller keeping them in memory (Python) needs; 0 when unknown
  // (output_every = 0: a sample per step).
  double sample_bytes = 0;
  std::string initial_source;
  ProjectionReport projection;
  std::vector<std::string> warnings;  // options set for this run that it does not read
};

// An upper bound of the number of samples a run records: floor(t_end / output_every) + 2 (the output
// grid below t_end, then t_end); 0 when output_every = 0 (a sample per accepted step: unknown).
double sample_bound(const RunSpec& spec);

// Builds the model, projects given initial data (reporting the distance on `log`; InputError under
// strict_initial when it exceeds 1e-12), checks FormulationEntry::refuses, makes formulation and integrator.
// With warn_unused, every option set away from its default that this run's formulation or integrator does
// not read is named once on `log` ("clmbench: warning: ...") and kept in PreparedRun::warnings.
PreparedRun prepare_run(const RunSpec& spec, std::ostream& log, bool warn_unused = true);

// A servo run whose field B is not A (formulation.servo_direction != constraint) follows a motion of its own
// (formulations/servo_formulation.hpp): the problem's closed form (a nonholonomic motion) is not its
// reference, a servo run with the same field is (runs/reference_cache.cpp).
bool follows_servo_motion(const RunSpec& spec);

// Integrates, feeds `observer` (may be null) and summarizes; keeps the samples in the record when
// keep_samples. Divergence and numerical failure become the record's status; never throws for them
// (an AbortRun from the observer propagates).
// `progress` (may be null) is updated while the run integrates (fraction of t_end, steps/s) and finished
// with the steps taken.
// `reference` (may be null; must outlive the call): what the run's error figures (q/qd/lambda errors,
// scd, mescd) are measured against (runs/reference_cache.hpp makes it): a reference run on the
// same output grid, or a reference that could not be computed (the figures are NaN and the reason is a
// warning). Null: the problem's closed form where it has one for this run, else NaN figures.
RunRecord execute_run(PreparedRun& run, RunObserver* observer = nullptr, bool keep_samples = true,
                      ProgressLine* progress = nullptr, const ReferenceTrajectory* reference = nullptr);

}  // namespace clm
