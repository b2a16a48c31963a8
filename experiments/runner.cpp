#include "experiments/runner.hpp"

#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <ostream>

#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "experiments/value_parsing.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStrictInitialTolerance = 1e-12;
// std::string constants: assigning string literals here trips GCC 12's false -Wrestrict (PR 105329).
const std::string kReferenceQ = "q", kReferenceLambda = "lambda", kReferenceNone = "none";

Vec to_vec(const std::vector<double>& v) { return Eigen::Map<const Vec>(v.data(), static_cast<Eigen::Index>(v.size())); }

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::isnan(x) ? x : std::max(m, x);
  return v.empty() ? kNaN : m;
}

}  // namespace

PreparedRun prepare_run(const RunSpec& spec, std::ostream& log) {
  PreparedRun run;
  run.spec = spec;
  run.model = make_model(spec.problem, spec.params);
  const Model& model = *run.model;
  const std::string label = "run " + spec.run_id;

  run.model->default_initial(run.q0, run.qd0);
  run.initial_source = "default";
  if (spec.q0 || spec.qd0) {
    run.initial_source = "given";
    if (spec.q0) run.q0 = to_vec(*spec.q0);
    if (spec.qd0) run.qd0 = to_vec(*spec.qd0);
    run.projection = project_onto_constraints(model, run.q0, run.qd0);
    if (spec.strict_initial && (run.projection.position_distance > kStrictInitialTolerance ||
                                run.projection.velocity_distance > kStrictInitialTolerance)) {
      throw InputError(label + ": given initial data are off the constraints (|dq| = " +
                       short_number(run.projection.position_distance) + ", |dqd| = " +
                       short_number(run.projection.velocity_distance) + " > 1e-12) and strict_initial is set");
    }
    log << label << ": projected initial data onto the constraints: |dq| = "
        << short_number(run.projection.position_distance)
        << ", |dqd| = " << short_number(run.projection.velocity_distance) << "\n";
  }

  const FormulationEntry& fe = formulation_registry().get(spec.formulation);
  if (fe.refuses) {
    const std::string reason = fe.refuses(model);
    if (!reason.empty())
      throw InputError("formulation " + spec.formulation + " cannot run problem " + spec.problem + ": " + reason);
  }
  run.formulation = fe.make(run.model, spec.options);
  run.integrator = integrator_registry().get(spec.integrator).make();
  run.formulation->initial_state(run.q0, run.qd0, run.y0);
  return run;
}

RunRecord execute_run(PreparedRun& run) {
  RunRecord r;
  r.spec = run.spec;
  const Model& model = *run.model;
  r.n = model.n();
  r.m = model.m();
  r.holonomic = model.holonomic();
  r.parameters = model.parameters();
  r.q0 = run.q0;
  r.qd0 = run.qd0;
  r.initial_source = run.initial_source;
  r.projection = run.projection;
  r.extra_names = run.formulation->extra_names();
  r.extras.resize(r.extra_names.size());

  SimulationSettings sim;
  sim.t_end = run.spec.t_end;
  sim.output_every = run.spec.output_every;
  sim.divergence_threshold = run.spec.divergence_threshold;
  IntegratorSettings settings;
  settings.dt = run.spec.dt;
  settings.rtol = run.spec.rtol;
  settings.atol = run.spec.atol;

  Observation obs;
  Formulation& f = *run.formulation;
  auto record_sample = [&](double t, const Vec& y) {
    f.observe(t, y, obs);
    r.t.push_back(t);
    r.q.insert(r.q.end(), obs.q.data(), obs.q.data() + r.n);
    r.qd.insert(r.qd.end(), obs.qd.data(), obs.qd.data() + r.n);
    if (obs.lambda.size() == r.m) {
      r.lambda.insert(r.lambda.end(), obs.lambda.data(), obs.lambda.data() + r.m);
    } else {
      r.lambda.insert(r.lambda.end(), r.m, kNaN);
    }
    r.energy.push_back(obs.energy);
    if (r.holonomic) r.drift_position.push_back(obs.drift_position);
    r.drift_velocity.push_back(obs.drift_velocity);
    for (size_t j = 0; j < r.extras.size(); ++j) r.extras[j].push_back(j < obs.extras.size() ? obs.extras[j] : kNaN);
  };

  const auto wall_start = std::chrono::steady_clock::now();
  try {
    const SimulationResult result = simulate(f, *run.integrator, run.y0, sim, settings, record_sample);
    r.status = result.status;
    r.message = result.message;
    r.t_reached = result.t_reached;
    r.stats = result.stats;
    r.wall_time_s = result.wall_time_s;
  } catch (const std::exception& e) {
    // Anything simulate() did not turn into a status still must not lose the samples computed so far.
    r.status = "failed";
    r.message = e.what();
    r.t_reached = r.t.empty() ? 0.0 : r.t.back();
    r.stats = run.integrator->statistics();
    r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  }
  // A sample may be only partly recorded if observe() threw; keep whole rows.
  const size_t K = r.t.size();
  r.q.resize(K * r.n);
  r.qd.resize(K * r.n);
  r.lambda.resize(K * r.m);
  summarize(r, model, run.formulation->vakonomic_motion() && !model.holonomic());
  return r;
}

void summarize(RunRecord& r, const Model& model, bool vakonomic_on_nonholonomic) {
  RunSummary& s = r.summary;
  const size_t K = r.samples();
  if (r.holonomic) {
    s.max_drift_position = max_of(r.drift_position);
    s.final_drift_position = K ? r.drift_position.back() : kNaN;
  } else {
    s.max_drift_position = s.final_drift_position = kNaN;
  }
  s.max_drift_velocity = max_of(r.drift_velocity);
  s.final_drift_velocity = K ? r.drift_velocity.back() : kNaN;

  s.max_rel_energy_error = K ? 0.0 : kNaN;
  if (K) {
    // Relative to E0, but never dividing by less than machine epsilon (a system at rest has E0 = 0).
    const double scale = std::max(std::abs(r.energy.front()), std::numeric_limits<double>::epsilon());
    for (double e : r.energy) s.max_rel_energy_error = std::max(s.max_rel_energy_error, std::abs(e - r.energy.front()) / scale);
  }

  s.q_error_vs_reference = kNaN;
  Vec q_ref, qd_ref;
  // The closed forms are nonholonomic motions and multipliers: no reference for a vakonomic-family run.
  if (K && !vakonomic_on_nonholonomic && model.closed_form(0.0, r.q0, r.qd0, q_ref, qd_ref)) {
    double err = 0;
    for (size_t k = 0; k < K; ++k) {
      if (!model.closed_form(r.t[k], r.q0, r.qd0, q_ref, qd_ref)) {
        err = kNaN;
        break;
      }
      const Eigen::Map<const Vec> q(&r.q[k * r.n], r.n);
      err = std::max(err, (q - q_ref).norm());
    }
    s.q_error_vs_reference = err;
  }

  s.lambda_rel_error_vs_reference = kNaN;
  Vec lambda_ref;
  if (K && r.m > 0 && !vakonomic_on_nonholonomic && model.closed_form_multiplier(r.q0, r.qd0, lambda_ref)) {
    // Normalized by the largest reference multiplier: lambda may pass through zero along the motion.
    double err = 0, scale = 0;
    for (size_t k = 0; k < K; ++k) {
      const Eigen::Map<const Vec> q(&r.q[k * r.n], r.n), qd(&r.qd[k * r.n], r.n), lambda(&r.lambda[k * r.m], r.m);
      model.closed_form_multiplier(q, qd, lambda_ref);
      err = std::max(err, (lambda - lambda_ref).norm());
      scale = std::max(scale, lambda_ref.norm());
    }
    s.lambda_rel_error_vs_reference = err / std::max(scale, std::numeric_limits<double>::min());
  }

  if (!std::isnan(s.q_error_vs_reference)) {
    s.error_vs_reference = s.q_error_vs_reference;
    s.reference = kReferenceQ;
  } else if (!std::isnan(s.lambda_rel_error_vs_reference)) {
    s.error_vs_reference = s.lambda_rel_error_vs_reference;
    s.reference = kReferenceLambda;
  } else {
    s.error_vs_reference = kNaN;
    s.reference = kReferenceNone;
  }
}

}  // namespace clm
