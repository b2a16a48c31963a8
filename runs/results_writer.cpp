// ResultsWriter: runs into a results file (io/results_file.hpp), streamed sample by sample.
#include "runs/results_writer.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>

#include "io/hdf5_run_target.hpp"
#include "io/part_file.hpp"
#include "runs/run_options.hpp"
#include "runs/thread_cpu_time.hpp"

namespace clm {

using namespace hdf5;

namespace {

// What the /summary columns mean (their `description` attributes; docs/design.md section 5).
const std::vector<std::pair<std::string, std::string>>& summary_descriptions() {
  static const std::vector<std::pair<std::string, std::string>> descriptions{
             {"cpu_time_s", "s: thread CPU time integrating (sample recording excluded: run attribute output_cpu_time_s)"},
             {"cpu_time_repeats", "how many times the run was integrated for its CPU time (runs under run.timing_budget "
                                  "are repeated, without recording); cpu_time_s is their minimum"},
             {"cpu_time_spread", "relative spread (max - min) / min of the repeated CPU timings; NaN when timed once"},
             {"validity", "empty, or why the run left its formulation's validity conditions (fernandez_bloch's theorem, "
                          "the substituted chart, Kozlov's limits): the run then follows other equations; or which of "
                          "its own checks failed (energy, multipliers, step-to-step alternation; limit 1e-2 each, "
                          "runs/own_checks.hpp)"},
             {"reference_source", "closed_form | reference_run | published | none: what the *_error_* columns, scd and mescd compare with"},
             {"q_error_max", "max over samples of the Euclidean norm |q - q_ref| (units of q: m, rad, ...)"},
             {"q_error_final", "|q - q_ref| at t_end (NaN when the run stopped before)"},
             {"qd_error_max", "max over samples of |qd - qd_ref| (units of qd: m/s, rad/s, ...)"},
             {"qd_error_final", "|qd - qd_ref| at t_end"},
             {"lambda_error_max", "max over samples of |lambda - lambda_ref| (units of lambda)"},
             {"lambda_error_final", "|lambda - lambda_ref| at t_end"},
             {"scd", "digits: -log10 max_i |(y_i - r_i) / r_i| at t_end over y = (q, qd), r_i != 0 (Bari test set)"},
             {"mescd", "digits: -log10 max_i |y_i - r_i| / (atol/rtol + |r_i|) at t_end over y = (q, qd)"},
             {"energy_error_growth", "exponent p of max_{s<=t} |E(s) - E0| / |E0| ~ t^p over the last two decades of t "
                                     "(0 bounded, 1/2 random walk, 1 linear drift; NaN for runs under two decades); of |E - E0 - W| / |E0| "
                                     "where the problem does not conserve E (max_rel_energy_error NaN)"},
             {"drift_growth", "exponent p of max_{s<=t} drift(s) ~ t^p (|h| holonomic, |A qd| otherwise), as energy_error_growth"},
             {"reference_point_error_max", "max over samples of the distance of the benchmark's reference point (IFToMM P1, "
                                           "P3, B0: coordinates of q) from the reference's; NaN without one"},
             {"max_energy_balance_residual", "max over samples of |E - E0 - W| / max over samples of max(|E|, |W|), W the "
                                             "work of the moving constraints, dV/dt and the forces; NaN for problems "
                                             "without explicit time dependence or generalized forces"}};
  return descriptions;
}

}  // namespace

// The runs written into the file: the one being streamed, and the /summary rows of those finished.
static double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct ResultsWriter::State : RunObserver {
  struct SummaryRow {
    std::string run_id, problem, formulation, integrator, status, reference;
    double dt, N, t_end;
    RunSummary s;
    long samples, steps, rhs_evals;
    double wall_time_s;
    double rtol, atol, cpu_time_s;
    long cpu_time_repeats;
    double cpu_time_spread;
    std::string validity;
  };
  std::vector<SummaryRow> rows;
  // The /summary row of a finished run (one place for what a row holds: the writer and summary_of).
  static SummaryRow summary_row(const RunRecord& r);

  // The run in progress, made through `target` (the results file, or a sweep's part file).
  RunTarget* target = nullptr;
  RunTarget::Object group = 0, extras_group = 0;
  std::vector<std::unique_ptr<AppendableDataset>> datasets;  // t, q, qd, lambda, energy, [drift_position], drift_velocity
  std::vector<std::unique_ptr<AppendableDataset>> extras;
  // work_moving_constraints, work_explicit_time, work_generalized_forces, energy_balance_residual (time-dependent
  // problems only, RunRecord::energy_balance).
  std::vector<std::unique_ptr<AppendableDataset>> balance;
  bool position_drift = false;  // a drift_position column (RunRecord::records_position_drift)
  bool actuated = false;  // actuator_force and actuator_power follow drift_velocity in `datasets`
  bool has_points = false;  // points follows them
  bool has_body_velocities = false;  // body_velocities follows points
  bool has_reference_error = false;  // error_vs_reference follows them (RunRecord::records_reference_error)
  // Output costs a sweep accounts (PartWriter::take_output_times): the chunks written from sample() while the
  // run integrates (wall and thread CPU, read only when a chunk is full), and all compression (pack()).
  OutputTimes times;

  void begin(const RunRecord& header) override;
  void sample(double t, const Observation& obs, const SampleErrors& errors) override;
  void finish(const RunRecord& record) override;

  void open_run(const RunRecord& header);
  void close_run(const RunAttributes& attributes);
};

// /summary of the runs written here, one column per figure (a new column is one line here; merge copies
// columns generically).
static SummaryTable summary_table(const std::vector<ResultsWriter::State::SummaryRow>& rows) {
  using Row = ResultsWriter::State::SummaryRow;
  SummaryTable t;
  auto column = [&](const char* name, auto field) {
    std::vector<std::decay_t<decltype(field(std::declval<const Row&>()))>> out;
    for (const auto& row : rows) out.push_back(field(row));
    t.push_back({name, std::move(out)});
  };
  column("run_id", [](const Row& r) { return r.run_id; });
  column("problem", [](const Row& r) { return r.problem; });
  column("formulation", [](const Row& r) { return r.formulation; });
  column("integrator", [](const Row& r) { return r.integrator; });
  column("status", [](const Row& r) { return r.status; });
  column("dt", [](const Row& r) { return r.dt; });
  column("N", [](const Row& r) { return r.N; });
  column("t_end", [](const Row& r) { return r.t_end; });
  column("samples", [](const Row& r) { return r.samples; });
  column("steps", [](const Row& r) { return r.steps; });
  column("rhs_evals", [](const Row& r) { return r.rhs_evals; });
  column("final_drift_position", [](const Row& r) { return r.s.final_drift_position; });
  column("max_drift_position", [](const Row& r) { return r.s.max_drift_position; });
  column("final_drift_velocity", [](const Row& r) { return r.s.final_drift_velocity; });
  column("max_drift_velocity", [](const Row& r) { return r.s.max_drift_velocity; });
  column("max_rel_energy_error", [](const Row& r) { return r.s.max_rel_energy_error; });
  column("q_error_vs_reference", [](const Row& r) { return r.s.q_error_vs_reference; });
  column("lambda_consistency", [](const Row& r) { return r.s.lambda_consistency; });
  column("error_vs_reference", [](const Row& r) { return r.s.error_vs_reference; });
  column("reference", [](const Row& r) { return r.s.reference; });
  column("wall_time_s", [](const Row& r) { return r.wall_time_s; });
  // Work-precision columns (issue 10 item 6): tolerances, cost, and errors against the reference.
  column("rtol", [](const Row& r) { return r.rtol; });
  column("atol", [](const Row& r) { return r.atol; });
  column("cpu_time_s", [](const Row& r) { return r.cpu_time_s; });
  column("cpu_time_repeats", [](const Row& r) { return r.cpu_time_repeats; });
  column("cpu_time_spread", [](const Row& r) { return r.cpu_time_spread; });
  column("validity", [](const Row& r) { return r.validity; });
  column("reference_source", [](const Row& r) { return r.s.reference_source; });
  column("q_error_max", [](const Row& r) { return r.s.q_error_max; });
  column("q_error_final", [](const Row& r) { return r.s.q_error_final; });
  column("qd_error_max", [](const Row& r) { return r.s.qd_error_max; });
  column("qd_error_final", [](const Row& r) { return r.s.qd_error_final; });
  column("lambda_error_max", [](const Row& r) { return r.s.lambda_error_max; });
  column("lambda_error_final", [](const Row& r) { return r.s.lambda_error_final; });
  column("scd", [](const Row& r) { return r.s.scd; });
  column("mescd", [](const Row& r) { return r.s.mescd; });
  column("energy_error_growth", [](const Row& r) { return r.s.energy_error_growth; });
  column("drift_growth", [](const Row& r) { return r.s.drift_growth; });
  column("reference_point_error_max", [](const Row& r) { return r.s.reference_point_error_max; });
  column("max_energy_balance_residual", [](const Row& r) { return r.s.max_energy_balance_residual; });
  for (auto& c : t)
    for (const auto& [name, text] : summary_descriptions())
      if (c.name == name) c.description = text;
  return t;
}

void ResultsWriter::State::begin(const RunRecord& header) {
  target->guarded("run '" + header.spec.run_id + "'", [&] {
    target->begin_run(header.spec.run_id, header.spec.sweep_index);
    open_run(header);
  });
}

void ResultsWriter::State::sample(double t, const Observation& obs, const SampleErrors& errors) {
  // Buffering a sample is no HDF5 call: the lock is taken only when a chunk is full (for a short run,
  // never before finish()), so a sweep's workers do not wait on each other's writing for every sample.
  bool full = datasets[0]->push(&t);
  full = datasets[1]->push(obs.q.data()) || full;
  full = datasets[2]->push(obs.qd.data()) || full;
  full = datasets[3]->push(obs.lambda.data()) || full;
  full = datasets[4]->push(&obs.energy) || full;
  size_t next = 5;
  if (position_drift) full = datasets[next++]->push(&obs.drift_position) || full;
  full = datasets[next++]->push(&obs.drift_velocity) || full;
  if (actuated) {
    full = datasets[next++]->push(obs.actuator_force.data()) || full;
    full = datasets[next++]->push(&obs.actuator_power) || full;
  }
  if (has_points) full = datasets[next++]->push(obs.points.data()) || full;
  if (has_body_velocities) full = datasets[next++]->push(obs.body_velocities.data()) || full;
  if (has_reference_error) {
    const double e[3] = {errors.q, errors.qd, errors.lambda};
    full = datasets[next++]->push(e) || full;
  }
  for (size_t j = 0; j < extras.size(); ++j) full = extras[j]->push(&obs.extras[j]) || full;
  if (!balance.empty()) {
    full = balance[0]->push(&obs.work_constraints) || full;
    full = balance[1]->push(&obs.work_explicit_time) || full;
    full = balance[2]->push(&obs.work_forces) || full;
    full = balance[3]->push(&obs.energy_balance_residual) || full;
  }
  if (full) {
    const double w0 = steady_seconds(), c0 = thread_cpu_seconds();
    // Compressed here, outside the HDF5 lock (issue 25); the lock is held only to hand HDF5 the chunks.
    for (auto* group : {&datasets, &extras, &balance})
      for (auto& d : *group)
        if (d->full()) d->pack();
    const double c1 = thread_cpu_seconds();
    times.pack_cpu += c1 - c0;
    struct Add {  // also when the write throws
      OutputTimes& t;
      double w0, c0;
      ~Add() {
        t.chunk_wall += steady_seconds() - w0;
        t.chunk_cpu += thread_cpu_seconds() - c0;
      }
    } add{times, w0, c0};
    target->guarded("run samples", [&] {
      for (auto& d : datasets)
        if (d->full()) d->flush();
      for (auto& d : extras)
        if (d->full()) d->flush();
      for (auto& d : balance)
        if (d->full()) d->flush();
    });
  }
}

void ResultsWriter::State::finish(const RunRecord& record) {
  // The last chunks compressed and the attributes made outside the HDF5 lock (issue 25: what the lock
  // serializes is what a sweep's jobs cannot do side by side).
  const double c0 = thread_cpu_seconds();
  for (auto* group : {&datasets, &extras, &balance})
    for (auto& d : *group) d->pack();
  times.pack_cpu += thread_cpu_seconds() - c0;
  const RunAttributes attributes = run_attributes(record);
  SummaryRow row = summary_row(record);
  target->guarded("run '" + record.spec.run_id + "'", [&] {
    close_run(attributes);
    target->end_run();
  });
  rows.push_back(std::move(row));
}

void ResultsWriter::State::open_run(const RunRecord& r) {
  group = target->group(0, r.spec.run_id);
  position_drift = r.records_position_drift();  // |h| of the position rows (holonomic and mixed problems)
  const RunTarget::Object g = group;
  const hsize_t n = static_cast<hsize_t>(r.n), m = static_cast<hsize_t>(r.m);
  const hsize_t max_rows = static_cast<hsize_t>(std::min(sample_bound(r.spec), 1e15));
  datasets.clear();
  // Units and column names travel with the data (a reader needs no table of the problem's coordinates).
  std::vector<std::string> qd_units;
  for (const auto& u : r.coordinate_units) qd_units.push_back(u == "-" ? "1/s" : u + "/s");
  const std::vector<std::string> lambda_names = r.lambda_columns();
  auto add = [&](const char* name, hsize_t cols, bool matrix,
                 std::vector<std::pair<std::string, std::vector<std::string>>> labels) {
    datasets.push_back(std::make_unique<AppendableDataset>(*target, g, name, cols, matrix, max_rows));
    datasets.back()->labels = std::move(labels);
  };
  add("t", 0, false, {{"units", {"s"}}});
  add("q", n, true, {{"columns", r.coordinate_names}, {"units", r.coordinate_units}});
  add("qd", n, true, {{"columns", r.coordinate_names}, {"units", qd_units}});
  // Multipliers are generalized forces per unit of constraint (A^T lambda enters M qdd + c = F + A^T lambda).
  add("lambda", m, true, {{"columns", lambda_names}});
  add("energy", 0, false, {{"units", {"J"}}});
  if (position_drift) add("drift_position", 0, false, {{"description", {"|h(q, t)| of the position rows, in the constraint's units"}}});
  add("drift_velocity", 0, false, {{"description", {"|A(q) qd|, in the constraint's units per second"}}});
  balance.clear();
  if (r.energy_balance) {
    // The energy balance of a time-dependent problem (core/energy_balance.hpp); E - E0 - W is zero for the exact
    // motion of the formulation's equations.
    for (const auto& [name, description] : std::vector<std::pair<const char*, const char*>>{
             {"work_moving_constraints", "work since t0 of the constraint forces A^T lambda, integral of lambda . (A qd) "
                                         "(= -lambda . b on the constraint)"},
             {"work_explicit_time", "work since t0 of the explicit time dependence of V(q, t), integral of dV/dt at fixed q"},
             {"work_generalized_forces", "work since t0 of the generalized forces, integral of qd . F"},
             {"energy_balance_residual", "E - E0 - (sum of the three works): zero for the exact motion"}}) {
      balance.push_back(std::make_unique<AppendableDataset>(*target, g, name, 0, false, max_rows));
      balance.back()->labels = {{"units", {"J"}}, {"description", {description}}};
    }
  }
  // Prescribed shape (prescribed_shape): the actuators' generalized forces and the power they spend.
  actuated = !r.actuator_names.empty();
  if (actuated) {
    add("actuator_force", static_cast<hsize_t>(r.actuator_names.size()), true,
        {{"columns", r.actuator_names},
         {"description", {"generalized force F_a on each actuated coordinate (N for a length, N m for an angle)"}}});
    add("actuator_power", 0, false, {{"units", {"W"}}, {"description", {"F_a . qd_a, the power the actuators spend"}}});
  }
  // Named points (a mechanism file's [points]): their positions, for the plots.
  has_points = !r.point_columns.empty();
  if (has_points)
    add("points", static_cast<hsize_t>(r.point_columns.size()), true,
        {{"columns", r.point_columns}, {"units", r.point_units},
         {"description", {"positions of the mechanism's named points ([points] of its file, points() of a zoo "
                          "problem), from q and t"}}});
  // Body velocities ([body_velocities] of a file, body_velocities() of a zoo problem), for the plots.
  has_body_velocities = !r.body_velocity_columns.empty();
  if (has_body_velocities)
    add("body_velocities", static_cast<hsize_t>(r.body_velocity_columns.size()), true,
        {{"columns", r.body_velocity_columns}, {"units", r.body_velocity_units},
         {"descriptions", r.body_velocity_descriptions},
         {"description", {"the mechanism's body-frame velocities ([body_velocities] of its file, body_velocities() "
                          "of a zoo problem), from q, qd and t"}}});
  // The error against the reference at each sample (issue 24 item 3): what the error-against-time figure draws.
  has_reference_error = r.records_reference_error;
  if (has_reference_error)
    add("error_vs_reference", 3, true,
        {{"columns", {"q", "qd", "lambda"}},
         {"description", {"Euclidean norms of q - q_ref, qd - qd_ref, lambda - lambda_ref at each sample, against the "
                          "run's reference (attribute reference_source: closed_form or reference_run); NaN where "
                          "a sample was not compared or has no such values"}}});
  extras_group = target->group(g, "extras");
  extras.clear();
  for (const auto& name : r.extra_names)
    extras.push_back(std::make_unique<AppendableDataset>(*target, extras_group, name, 0, false, max_rows));
}

RunAttributes run_attributes(const RunRecord& r) {
  RunAttributes out;
  auto add = [&out](std::string name, AttributeValue value) { out.emplace_back(std::move(name), std::move(value)); };
  const RunSpec& s = r.spec;
  // Every option of the table under its attribute name; the [initial] rows record the consistent data
  // the run started from (the given data projected, or the problem's defaults).
  for (const auto& o : run_options()) {
    if (o.attribute.empty()) continue;
    if (o.section == "initial") {
      const Vec& v = o.key == "q0" ? r.q0 : r.qd0;
      add(o.attribute, std::vector<double>(v.data(), v.data() + v.size()));
      continue;
    }
    if (const auto value = o.attribute_value(s)) add(o.attribute, *value);
  }
  add("status", r.status);
  add("message", r.message);
  for (const auto& [name, value] : r.parameters) add("param." + name, value);
  // The resolved [shape]: the prescribed function of each actuated coordinate, as written (core/shape_schedule.hpp).
  // Samples from a file are recorded as file:PATH@sha256:HEX (the identity of their contents), and, when
  // there are at most kRecordedSamples of them, the samples themselves: shape.NAME.samples = t0 y0 t1 y1 ...
  constexpr size_t kRecordedSamples = 1024;  // 16 KiB: an attribute, well inside HDF5's 64 KiB object header
  for (size_t i = 0; i < r.spec.shape.size(); ++i) {
    const auto& [name, text] = r.spec.shape[i];
    add("shape." + name, text);
    if (i >= r.spec.options.shape.functions.size()) continue;
    const ShapeFunction& f = r.spec.options.shape.functions[i];
    if (f.file().empty() || f.sample_times().size() > kRecordedSamples) continue;
    std::vector<double> pairs;
    for (size_t k = 0; k < f.sample_times().size(); ++k) {
      pairs.push_back(f.sample_times()[k]);
      pairs.push_back(f.sample_values()[k]);
    }
    add("shape." + name + ".samples", pairs);
  }
  add("initial_source", r.initial_source);
  {
    std::string warnings;
    for (const auto& w : r.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    add("warnings", warnings);
  }
  add("initial_projection_dq", r.projection.position_distance);
  add("initial_projection_dqd", r.projection.velocity_distance);
  // n_coordinates / n_constraints, not n / m: "m" is also a common parameter (a mass), param.m.
  add("n_coordinates", static_cast<long>(r.n));
  add("n_constraints", static_cast<long>(r.m));
  // Rank of A(q0) (numerical_rank): below n_constraints when the constraints are redundant (kkt, schur and
  // nullspace then work on the rank-r row space, docs/design.md section 1).
  add("constraint_rank", static_cast<long>(r.constraint_rank));
  add("holonomic", static_cast<long>(r.holonomic));
  // The constraint kind (core/problem.hpp): lambda's first position_rows columns are the position rows'.
  add("position_rows", static_cast<long>(r.position_rows));
  add("constraint_kind", std::string(r.m == 0 ? "none" : r.position_rows == r.m ? "holonomic" : r.position_rows == 0 ? "pfaffian" : "mixed"));
  add("steps", r.stats.steps);
  add("rejected_steps", r.stats.rejected_steps);
  add("rhs_evals", r.stats.rhs_evals);
  add("jacobian_evals", r.stats.jacobian_evals);
  add("jacobian_used", r.jacobian_used);
  if (!r.evaluation.empty()) add("mechanism_evaluation_used", r.evaluation);
  add("newton_iterations", r.stats.newton_iterations);
  add("stiffness_detected_at", r.stats.stiffness_detected_at);
  // Coordinate projection ([formulation] projection): steps projected, Gauss-Newton iterations, and the
  // largest corrections |dq|_inf, |dqd|_inf (all 0 without projection).
  add("projection_steps", r.projection_stats.projections);
  add("projection_iterations", r.projection_stats.iterations);
  add("projection_max_position_correction", r.projection_stats.max_position_correction);
  add("projection_max_velocity_correction", r.projection_stats.max_velocity_correction);
  add("t_reached", r.t_reached);
  add("wall_time_s", r.wall_time_s);
  add("cpu_time_s", r.cpu_time_s);
  add("cpu_time_repeats", static_cast<long>(r.cpu_time_repeats));
  add("cpu_time_spread", r.cpu_time_spread);
  add("timing_repeats_cpu_time_s", r.timing_repeats_cpu_time_s);
  add("validity", r.validity);
  add("limit_approximation", r.limit_approximation);
  add("limit_gap", r.limit_gap);
  add("output_cpu_time_s", r.output_cpu_time_s);
  // Errors against the reference (issue 10 item 6; units: those of q, qd, lambda; scd, mescd in digits).
  add("reference_source", r.summary.reference_source);
  add("reference_message", r.reference_message);
  add("reference_cpu_time_s", r.reference_cpu_time_s);
  add("q_error_max", r.summary.q_error_max);
  add("q_error_final", r.summary.q_error_final);
  add("qd_error_max", r.summary.qd_error_max);
  add("qd_error_final", r.summary.qd_error_final);
  add("lambda_error_max", r.summary.lambda_error_max);
  add("lambda_error_final", r.summary.lambda_error_final);
  add("scd", r.summary.scd);
  add("mescd", r.summary.mescd);
  add("energy_error_growth", r.summary.energy_error_growth);
  add("drift_growth", r.summary.drift_growth);
  add("reference_point_error_max", r.summary.reference_point_error_max);
  add("max_energy_balance_residual", r.summary.max_energy_balance_residual);
  add("max_rel_energy_error", r.summary.max_rel_energy_error);  // NaN where the problem does not conserve E
  if (s.sweep_index >= 0) {
    add("sweep_index", s.sweep_index);
    add("sweep_point", s.sweep_point);
  }
  return out;
}

void ResultsWriter::State::close_run(const RunAttributes& attributes) {
  for (const auto& [name, value] : attributes)
    std::visit([&, &name = name](const auto& v) { target->attribute(group, name, v); }, value);
  for (auto& d : datasets) d->close();
  for (auto& d : extras) d->close();
  for (auto& d : balance) d->close();
  datasets.clear();
  extras.clear();
  balance.clear();
  target->close(extras_group);
  target->close(group);
}

ResultsWriter::State::SummaryRow ResultsWriter::State::summary_row(const RunRecord& r) {
  const RunSpec& s = r.spec;
  return {s.run_id, s.problem, s.formulation, s.integrator, r.status, r.summary.reference, s.dt, s.options.N,
          s.t_end, r.summary, static_cast<long>(r.samples()), r.stats.steps, r.stats.rhs_evals,
          r.wall_time_s, s.rtol, s.atol, r.cpu_time_s, r.cpu_time_repeats, r.cpu_time_spread, r.validity};
}

SummaryTable summary_of(const RunRecord& record) { return summary_table({ResultsWriter::State::summary_row(record)}); }

ResultsWriter::ResultsWriter(std::string out_path, const std::vector<std::string>& inputs, WriterOptions options)
    : file_(std::move(out_path), inputs, options), target_(std::make_unique<Hdf5RunTarget>(file_)),
      state_(std::make_unique<State>()) {
  state_->target = target_.get();
  // A file of runs has /runs (and /summary) even when no run is written into it.
  file_.guarded("runs", [&] { file_.runs_group(); });
}

ResultsWriter::~ResultsWriter() {
  Hdf5Lock lock;
  state_.reset();
  target_.reset();  // the run in progress, if any, closed (silently) before the file
}

RunObserver& ResultsWriter::run_observer() {
  file_.require_open();
  return *state_;
}

void ResultsWriter::write_run(const RunRecord& r) {
  RunObserver& o = run_observer();
  o.begin(r);
  Observation obs;
  const size_t n = static_cast<size_t>(r.n), m = static_cast<size_t>(r.m);
  for (size_t k = 0; k < r.samples(); ++k) {
    obs.q = Eigen::Map<const Vec>(&r.q[k * n], r.n);
    obs.qd = Eigen::Map<const Vec>(&r.qd[k * n], r.n);
    obs.lambda = Eigen::Map<const Vec>(r.lambda.data() + k * m, r.m);
    obs.energy = r.energy[k];
    obs.drift_position = r.records_position_drift() ? r.drift_position[k] : 0.0;
    obs.drift_velocity = r.drift_velocity[k];
    obs.extras.resize(r.extras.size());
    for (size_t j = 0; j < r.extras.size(); ++j) obs.extras[j] = r.extras[j][k];
    if (r.energy_balance) {
      obs.work_constraints = r.work_constraints[k];
      obs.work_explicit_time = r.work_explicit_time[k];
      obs.work_forces = r.work_forces[k];
      obs.energy_balance_residual = r.energy_balance_residual[k];
    }
    const size_t na = r.actuator_names.size();
    if (r.actuator_power.size() == r.samples()) {
      obs.actuator_force = Eigen::Map<const Vec>(r.actuator_force.data() + k * na, static_cast<Eigen::Index>(na));
      obs.actuator_power = r.actuator_power[k];
    } else {
      obs.actuator_force.setConstant(static_cast<Eigen::Index>(na), std::numeric_limits<double>::quiet_NaN());
    }
    const size_t np = r.point_columns.size();
    if (np > 0) {
      if (r.points.size() == r.samples() * np) obs.points = Eigen::Map<const Vec>(r.points.data() + k * np, static_cast<Eigen::Index>(np));
      else obs.points.setConstant(static_cast<Eigen::Index>(np), std::numeric_limits<double>::quiet_NaN());
    }
    const size_t nb = r.body_velocity_columns.size();
    if (nb > 0) {
      if (r.body_velocities.size() == r.samples() * nb)
        obs.body_velocities = Eigen::Map<const Vec>(r.body_velocities.data() + k * nb, static_cast<Eigen::Index>(nb));
      else obs.body_velocities.setConstant(static_cast<Eigen::Index>(nb), std::numeric_limits<double>::quiet_NaN());
    }
    SampleErrors errors;
    if (r.reference_error.size() == 3 * r.samples()) errors = {r.reference_error[3 * k], r.reference_error[3 * k + 1],
                                                               r.reference_error[3 * k + 2]};
    o.sample(r.t[k], obs, errors);
  }
  o.finish(r);
}

void ResultsWriter::write_group(const ResultGroup& g) { file_.write_group(g); }

void ResultsWriter::copy_run(hid_t source_runs, const std::string& run_id) { file_.copy_run(source_runs, run_id); }

void ResultsWriter::append_summary(const SummaryTable& rows) { file_.append_summary(rows); }

void ResultsWriter::commit(const Provenance& provenance) {
  const SummaryTable own = summary_table(state_->rows);
  file_.commit(provenance, &own);
}

PartWriter::PartWriter(std::string path) : file_(std::move(path)), state_(std::make_unique<ResultsWriter::State>()) {
  state_->target = &file_;
}

PartWriter::~PartWriter() = default;

RunObserver& PartWriter::run_observer() { return *state_; }

OutputTimes PartWriter::take_output_times() { return std::exchange(state_->times, OutputTimes{}); }

void PartWriter::commit(const Provenance& provenance, const std::vector<std::string>& run_configs) {
  file_.commit(summary_table(state_->rows), run_configs, provenance);
}

}  // namespace clm
