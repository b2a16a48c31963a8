#include "runs/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <ostream>

#include "core/energy_balance.hpp"
#include "core/position_rows_off.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "runs/cycle_counter.hpp"
#include "runs/limit_gap.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/file_model.hpp"
#include "runs/own_checks.hpp"
#include "runs/reference_cache.hpp"
#include "runs/run_options.hpp"
#include "runs/thread_cpu_time.hpp"
#include "runs/validity_monitor.hpp"
#include "integrators/implicit_integrator.hpp"
#include "integrators/newton_iteration.hpp"
#include "core/value_parsing.hpp"
#include "formulations/servo_direction.hpp"
#include "io/signal_cleanup.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStrictInitialTolerance = 1e-12;
// Below this the mass matrix's inverse (1e150) and squares (1e-300) are at the edge of double precision.
constexpr double kSmallestMassScale = 1e-150;

Vec to_vec(const std::vector<double>& v) { return Eigen::Map<const Vec>(v.data(), static_cast<Eigen::Index>(v.size())); }

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

// The last step of making a run's formulation and integrator (prepare_run, and a timing repeat's
// prepared_again): an integrator that keeps h(q) = 0 itself (rattle, ALI3-P, ida's GGL form, dla) passes
// singular positions on the constraint set, as coordinate projection does: the formulation's singular-position
// guard (core/formulation.hpp) is for methods that follow h = drift. Then the initial state.
void make_ready(PreparedRun& run) {
  if (run.integrator->integrates_constrained_system() && run.model->holonomic())
    run.formulation->set_positions_projected(true);
  run.formulation->initial_state(run.q0, run.qd0, run.y0);
}

// The position rows a start violates, with their residuals, as "position row 2 (hitch) h = 2.400e-01, " (empty
// when it violates none, or the model has none): what --strict-initial names.
std::string position_rows_off_text(const Model& model, const Vec& q) {
  std::string out;
  for (const PositionRowOff& r : position_rows_off(model, q, 0.0, kStrictInitialTolerance))
    out += r.label() + " h = " + short_number(r.h) + ", ";
  return out;
}

}  // namespace

bool follows_servo_motion(const RunSpec& spec) {
  return spec.formulation == "servo" && spec.options.servo_direction != kServoConstraintDirection;
}

PreparedRun prepare_run(const RunSpec& spec, std::ostream& log, bool warn_unused) {
  PreparedRun run;
  run.spec = spec;
  const std::string label = "run " + spec.run_id;
  // A largest step below the smallest one cannot be met: the run crawled at dt_max until max_steps (issue 21).
  if (spec.dt_max > 0 && spec.dt_max < spec.dt_min)
    throw InputError(label + ": run.dt_max = " + format_number(spec.dt_max) + " is below run.dt_min = " +
                     format_number(spec.dt_min) + " (dt_max must be 0, no limit, or >= dt_min)");
  if (is_mechanism_file(spec.problem)) {
    FileModel file = make_file_model(spec.problem, spec.params, spec.mechanism_evaluation);
    run.model = std::move(file.model);
    run.evaluation = file.evaluation;
    if (!file.note.empty()) {
      // Said once per process and file: a sweep of a thousand runs does not repeat it.
      static std::mutex said_mutex;
      static std::set<std::string> said;
      std::lock_guard<std::mutex> lock(said_mutex);
      if (said.insert(file.note).second) log << "clmbench: note: " << file.note << "\n";
    }
  } else {
    run.model = make_model(spec.problem, spec.params);
  }
  const Model& model = *run.model;

  run.model->default_initial(run.q0, run.qd0);
  run.initial_source = "default";
  const ShapeSchedule& shape = spec.options.shape;
  if (spec.q0 || spec.qd0 || !shape.empty()) {
    if (spec.q0 || spec.qd0) run.initial_source = "given";
    if (spec.q0) run.q0 = to_vec(*spec.q0);
    if (spec.qd0) run.qd0 = to_vec(*spec.qd0);
    // A prescribed shape fixes the actuated coordinates at t = 0: q_a(0), qd_a(0) from the schedule, and the
    // projection onto the constraints moves only the other coordinates.
    if (!shape.empty()) {
      const Eigen::Index k = static_cast<Eigen::Index>(shape.coordinates.size());
      Vec qa(k), qda(k), qdda(k);
      shape.evaluate(0.0, qa, qda, qdda);
      for (Eigen::Index j = 0; j < k; ++j) {
        run.q0[shape.coordinates[j]] = qa[j];
        run.qd0[shape.coordinates[j]] = qda[j];
      }
    }
    const std::string rows_off = position_rows_off_text(model, run.q0);  // before the projection moves q0
    run.projection = project_onto_constraints(model, run.q0, run.qd0, 1e-13, 50, 0.0, shape.coordinates);
    if (spec.strict_initial && (run.projection.position_distance > kStrictInitialTolerance ||
                                run.projection.velocity_distance > kStrictInitialTolerance)) {
      throw InputError(label + ": given initial data are off the constraints (" + rows_off + "|dq| = " +
                       short_number(run.projection.position_distance) + ", |dqd| = " +
                       short_number(run.projection.velocity_distance) + " > 1e-12) and strict_initial is set");
    }
    // Data already on the constraints are said to be so, not "projected" by nothing (issue 43).
    if (run.projection.position_distance == 0 && run.projection.velocity_distance == 0)
      log << label << ": the given initial data lie on the constraints (used as given)\n";
    else
      log << label << ": projected initial data onto the constraints: |dq| = "
          << short_number(run.projection.position_distance)
          << ", |dqd| = " << short_number(run.projection.velocity_distance) << "\n";
  } else if (model.m() > 0) {
    // The problem's default state is consistent for its default parameters, but not necessarily for others (a
    // mechanism file's initial numbers, a formula that assumed a parameter value): checked like given data
    // (issue 24 item 1), and projected only when it is off, so that a consistent default start keeps its bits.
    Vec q = run.q0, qd = run.qd0;
    const std::string rows_off = position_rows_off_text(model, q);
    const ProjectionReport p = project_onto_constraints(model, q, qd, 1e-13, 50, 0.0, {});
    if (p.position_distance > kStrictInitialTolerance || p.velocity_distance > kStrictInitialTolerance) {
      const std::string off = rows_off + "|dq| = " + short_number(p.position_distance) + ", |dqd| = " +
                              short_number(p.velocity_distance);
      if (spec.strict_initial)
        throw InputError(label + ": the default initial data of problem " + model.name() +
                         " are off the constraints for these parameters (" + off +
                         " > 1e-12) and strict_initial is set; give q0 / qd0");
      run.q0 = q;
      run.qd0 = qd;
      run.projection = p;
      run.initial_source = "default, projected";
      log << label << ": the default initial data are off the constraints for these parameters; projected onto "
          << "them: " << off << "\n";
    }
  }

  const FormulationEntry& fe = formulation_registry().get(spec.formulation);
  if (fe.refuses) {
    const std::string reason = fe.refuses(model);
    if (!reason.empty())
      throw InputError("formulation " + spec.formulation + " cannot run problem " + spec.problem + ": " + reason);
  }
  run.formulation = fe.make(run.model, spec.options);
  if (const std::string why = projection_refusal(*run.formulation, projection_mode(spec.options.projection));
      !why.empty()) {
    throw InputError(label + ": " + why);
  }
  // The samples' size, estimated before anything runs (output_every = 0 samples every step: unknown).
  if (spec.output_every > 0) {
    const double samples = sample_bound(spec);
    const double columns = 3 + 2.0 * model.n() + model.m() + (model.holonomic() || model.has_position_rows() ? 1 : 0) +
                           static_cast<double>(run.formulation->extra_names().size());
    const double gb = samples * columns * sizeof(double) / 1e9;
    run.sample_bytes = gb * 1e9;
    if (spec.max_output_gb > 0 && gb > spec.max_output_gb) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%.3g GB (%.3g samples of %.0f numbers)", gb, samples, columns);
      throw InputError(label + ": its samples would take about " + std::string(buf) + ", above run.max_output_gb = " +
                       format_number(spec.max_output_gb) + " (raise output_every, or max_output_gb; 0 = no limit)");
    }
  }
  run.integrator = integrator_registry().get(spec.integrator).make();
  if (const std::string why = run.integrator->refuses(spec.integrator_settings()); !why.empty())
    throw InputError(label + ": " + why);
  if (const std::string why = run.integrator->refuses_formulation(*run.formulation); !why.empty())
    throw InputError(label + ": " + why);
  // Constant steps that cannot reach t_end within max_steps: refused before the run, instead of crawling to
  // the step limit (dt 1e-300) or, below about 1e-308 of the output spacing, failing "dt ... (got 0)"
  // (issue 21).
  if ((!run.integrator->adaptive() || spec.fixed_step) && spec.dt > 0 && spec.max_steps > 0) {
    const double steps = spec.t_end / spec.dt;
    if (!(steps <= static_cast<double>(spec.max_steps)))
      throw InputError(label + ": run.dt = " + format_number(spec.dt) + " takes " + short_number(steps) +
                       " constant steps to t_end = " + format_number(spec.t_end) + ", more than run.max_steps = " +
                       std::to_string(spec.max_steps) + " (raise dt, or max_steps)");
  }
  if (run.integrator->integrates_constrained_system() && projection_mode(spec.options.projection) != ProjectionMode::kNone)
    throw InputError(label + ": integrator " + spec.integrator + " keeps the constraints itself; formulation.projection = " +
                     spec.options.projection + " does not apply to it (use projection = none)");
  if (spec.jacobian == "autodiff" && run.integrator->uses_jacobian(spec.integrator_settings()) &&
      !run.formulation->has_jacobian()) {
    // Say why, where the reason is the problem's: the exact dynamics derivatives are derived for problems without
    // explicit time dependence whose generalized force, if any, is templated over the scalar (core/autodiff_model.hpp).
    const Model& m = *run.model;
    const std::string why =
        m.time_dependent() ? " (the problem depends on t explicitly, for which the exact Jacobian is not derived)"
        : m.has_generalized_force() && !m.has_dynamics_derivatives()
            ? " (its generalized_force is written for double only: write it as a template over the scalar type, "
              "core/problem.hpp, for the exact Jacobian)"
            : "";
    throw InputError(label + ": run.jacobian = autodiff, but formulation " + spec.formulation + " with problem " +
                     spec.problem + " provides no Jacobian of its own" + why + " (use finite_difference)");
  }
  if (warn_unused) {
    const RunSpec defaults;
    for (const auto& o : run_options()) {
      if (!o.no_effect) continue;
      const auto value = o.text(spec);
      if (!value || value == o.text(defaults)) continue;
      const std::string why = o.no_effect(spec, model, *run.integrator);
      if (why.empty()) continue;
      run.warnings.push_back(o.qualified() + " = " + *value + " has no effect: " + why);
      log << "clmbench: warning: " << label << ": " << run.warnings.back() << "\n";
    }
  }
  {
    // A mass matrix whose scale leaves double precision (issue 43 item 3: m = 1e-320 ran "ok", 6.1e-5 off the
    // m = 1 motion): its inverse and the solves' products overflow or flush to zero, whatever the formulation.
    auto ws = model.make_workspace();
    ModelTerms terms = model.make_terms();
    model.evaluate(0.0, run.q0, run.qd0, kMassMatrix, *ws, terms);
    const double scale = terms.M.size() > 0 ? terms.M.cwiseAbs().maxCoeff() : 1.0;
    if (!(scale >= kSmallestMassScale) || !std::isfinite(scale))
      throw InputError(label + ": the mass matrix M(q0) of problem " + model.name() + " has largest entry " +
                       short_number(scale) + ", " + (std::isfinite(scale) ? "below 1e-150" : "not finite") +
                       ": its inverse and the solves' products leave double precision (rescale the units, or look "
                       "for a parameter set to a vanishing value)");
  }
  make_ready(run);
  if (model.m() > 0) {
    auto ws = model.make_workspace();
    ModelTerms terms = model.make_terms();
    model.evaluate(0.0, run.q0, run.qd0, kConstraintJacobian, *ws, terms);
    run.constraint_rank = numerical_rank(terms.A);
    // No degree of freedom (issue 43: m = n and m > n were accepted without a word): with time-independent
    // constraints nothing can move; a time-dependent problem is then driven kinematically, qd = -A^-1 b(t), which
    // is a motion.
    if (run.constraint_rank >= model.n() && !model.time_dependent())
      throw InputError(label + ": the constraints of problem " + model.name() + " leave no degree of freedom: A(q0) "
                       "has rank " + std::to_string(run.constraint_rank) + " = n (" + std::to_string(model.m()) +
                       " rows), so nothing can move (remove a row, or add a coordinate)");
    // Coordinate projection factors A M^-1 A^T, singular for redundant constraints: refused before the run
    // rather than failing at its first projected step.
    if (run.constraint_rank < model.m() && projection_mode(spec.options.projection) != ProjectionMode::kNone)
      throw InputError(label + ": formulation.projection = " + spec.options.projection + " needs independent "
                       "constraints, but A(q0) of problem " + spec.problem + " has rank " +
                       std::to_string(run.constraint_rank) + " < " + std::to_string(model.m()) +
                       " rows (redundant constraints; use projection = none)");
  }
  return run;
}

double sample_bound(const RunSpec& spec) {
  return spec.output_every > 0 ? std::floor(spec.t_end / spec.output_every) + 2 : 0.0;
}

namespace {

// A fixed-step method that halves its step when its Newton iteration fails (rattle, verlet under penalty,
// implicit_midpoint) ends a hopeless run with the driver's "step size underflow (h = 7.3e-15)", which names
// neither the iteration nor why it failed (issue 24 item 7): said here from the method's last failure.
std::string newton_failure_message(const std::string& message, const PreparedRun& run) {
  const auto* reports = dynamic_cast<const ReportsNewtonFailure*>(run.integrator.get());
  if (!reports || message.rfind("step size underflow", 0) != 0) return message;
  const NewtonFailure& f = reports->last_newton_failure();
  if (*f.why == '\0') return message;
  char buf[512];
  if (f.iterations == 0) {
    std::snprintf(buf, sizeof buf, "%s: the Newton iteration of its implicit step failed at t = %.10g for every step "
                  "size it tried, from h = %.3g down to %.3g (it halves its step when Newton fails): at h = %.3g %s",
                  run.spec.integrator.c_str(), f.t, f.h, run.integrator->current_step(), f.h, f.why);
  } else {
    std::snprintf(buf, sizeof buf, "%s: the Newton iteration of its implicit step failed at t = %.10g for every step "
                  "size it tried, from h = %.3g down to %.3g (it halves its step when Newton fails): at h = %.3g %s "
                  "(after %d iterations the scaled increment was %.3g, the tolerance %.3g; the weights are atol + "
                  "rtol |y| with rtol = %.3g, atol = %.3g: at rtol below about 1e-13, or atol = 0 with a coordinate "
                  "at 0, rounding alone exceeds them)", run.spec.integrator.c_str(), f.t, f.h,
                  run.integrator->current_step(), f.h, f.why, f.iterations, f.increment, f.tolerance, run.spec.rtol,
                  run.spec.atol);
  }
  std::string out = buf;
  if (run.constraint_rank < run.model->m())
    out += "; A(q0) has rank " + std::to_string(run.constraint_rank) + " of " + std::to_string(run.model->m()) +
           " rows: redundant constraints make the method's Newton matrix singular (kkt with dopri5 or radau5, or "
           "trapezoidal, handle them)";
  return out;
}

// One integration of a prepared run: everything execute_run does but the observer's finish() and the timing
// repeats.
RunRecord execute_once(PreparedRun& run, RunObserver* observer, bool keep_samples, ProgressLine* progress,
                       const ReferenceTrajectory* reference, PositionProbe* probe = nullptr) {
  RunRecord r;
  r.spec = run.spec;
  const Model& model = *run.model;
  r.n = model.n();
  r.m = model.m();
  r.constraint_rank = run.constraint_rank;
  r.holonomic = model.holonomic();
  r.position_rows = model.position_rows();
  r.constraint_names = model.constraint_names();
  r.coordinate_names = model.coordinate_names();
  r.coordinate_units = model.coordinate_units();
  r.parameters = model.parameters();
  r.q0 = run.q0;
  r.qd0 = run.qd0;
  r.initial_source = run.initial_source;
  r.evaluation = run.evaluation;
  r.warnings = run.warnings;
  r.projection = run.projection;
  r.extra_names = run.formulation->extra_names();
  if (run.formulation->records_actuator_forces())
    for (int i : model.actuated_coordinates()) r.actuator_names.push_back(r.coordinate_names[i]);
  r.extras.resize(r.extra_names.size());
  const NamedPoints* points = model.named_points();
  if (points) {
    r.point_columns = points->columns();
    r.point_units = points->column_units();
  }
  const BodyVelocities* body_velocities = model.body_velocities();
  if (body_velocities) {
    r.body_velocity_columns = body_velocities->names;
    r.body_velocity_units = body_velocities->column_units();
    r.body_velocity_descriptions = body_velocities->descriptions;
  }
  // The energy of a time-dependent or forced problem is not conserved: the run records its balance instead, the
  // work of the explicit time dependence, of every generalized force (t-dependent, dissipative or not) and of the
  // constraints (nothing is made, and nothing costs, for the others).
  r.energy_balance = model.time_dependent() || model.has_generalized_force();

  const SimulationSettings sim = run.spec.simulation_settings();
  const IntegratorSettings settings = run.spec.integrator_settings();

  Observation obs;
  Formulation& f = *run.formulation;
  double last_sample_t = 0;
  const AccuracySettings accuracy{
      .t_end = run.spec.t_end, .rtol = run.spec.rtol, .atol = run.spec.atol, .reference = reference};
  RunSummaryAccumulator summary(model, r.q0, r.qd0,
                                (f.vakonomic_motion() && !model.holonomic()) || follows_servo_motion(run.spec) ||
                                    !closed_form_follows_shape(model, r.q0, r.qd0, run.spec.options.shape,
                                                               run.spec.t_end),
                                accuracy);
  r.records_reference_error = summary.compares_every_sample();
  // lambda_consistency of every model: the problem's own multipliers at each sample's state, by a kkt solve of its
  // equations (the closed-form multiplier where the problem has one; none for formulations that prescribe a
  // shape, whose actuator forces are outside A^T lambda). Its cost counts as output.
  std::unique_ptr<Formulation> ideal_kkt;
  Observation ideal_obs;
  Vec ideal_y(2 * model.n());
  if (model.m() > 0 && !formulation_registry().get(run.spec.formulation).uses_shape) {
    ideal_kkt = formulation_registry().get("kkt").make(run.model, FormulationOptions{});
    ideal_kkt->initial_state(r.q0, r.qd0, ideal_y);
    summary.use_ideal_multipliers([&](double t, const Vec& q, const Vec& qd, Vec& lambda) {
      ideal_y.head(q.size()) = q;
      ideal_y.tail(qd.size()) = qd;
      try {
        ideal_kkt->observe(t, ideal_y, ideal_obs);
      } catch (const NumericalFailure&) {
        return false;  // a singular KKT matrix at this state: no figure from it
      }
      lambda = ideal_obs.lambda;
      return lambda.allFinite();
    });
  }
  ValidityMonitor validity(run.spec.formulation, r.extra_names, run.spec.options.N);
  if (observer) observer->begin(r);
  // Counter cycles spent in record_sample and the step callback; the run's CPU time is apportioned by them
  // (runs/cycle_counter.hpp).
  std::uint64_t output_cycles = 0;
  std::optional<EnergyBalance> balance;
  if (r.energy_balance) balance.emplace(f, *run.integrator);
  MultiplierAlternation alternation;
  double energy0 = 0;
  auto record_sample = [&](double t, const Vec& y) {
    // Timed apart from the integration: observation, summary and writing are not the method's work.
    struct Timer {
      std::uint64_t& total;
      std::uint64_t start = cycle_count();
      ~Timer() { total += cycle_count() - start; }
    } timer{output_cycles};
    // Ctrl-C in a host that must survive it (io/signal_cleanup.hpp, cooperative interruption; never set for
    // the command): the run stops here and the interruption reaches the caller.
    if (interrupt_requested()) throw Interrupted("interrupted");
    f.observe(t, y, obs);  // may throw: then nothing of this sample is recorded
    // The method's own multipliers (rattle, dla, ida) replace the formulation's, on every sample of the step.
    if (const Vec* own = run.integrator->multipliers_at(t); own && own->size() == r.m) obs.lambda = *own;
    if (obs.lambda.size() != r.m) obs.lambda.setConstant(r.m, kNaN);
    obs.extras.resize(r.extra_names.size(), kNaN);
    if (balance) {
      if (r.sample_count == 0) {
        balance->start(t, y);
        energy0 = obs.energy;
      }
      const EnergyBalance::Work w = balance->at(t);
      obs.work_constraints = w.constraints;
      obs.work_explicit_time = w.explicit_time;
      obs.work_forces = w.forces;
      obs.energy_balance_residual = obs.energy - energy0 - w.total();
    }
    if (obs.actuator_force.size() != static_cast<Eigen::Index>(r.actuator_names.size()))
      obs.actuator_force.setConstant(static_cast<Eigen::Index>(r.actuator_names.size()), kNaN);
    if (points) {
      if (obs.points.size() != static_cast<Eigen::Index>(r.point_columns.size()))
        obs.points.resize(static_cast<Eigen::Index>(r.point_columns.size()));  // once
      points->positions(t, obs.q, obs.points);
    }
    if (body_velocities) {
      if (obs.body_velocities.size() != body_velocities->size()) obs.body_velocities.resize(body_velocities->size());  // once
      body_velocities->values(t, obs.q, obs.qd, obs.body_velocities);
    }
    ++r.sample_count;
    last_sample_t = t;
    summary.add(t, obs);
    validity.add(t, obs);
    if (probe) probe->add(t, obs.q);
    if (keep_samples) {
      r.t.push_back(t);
      r.q.insert(r.q.end(), obs.q.data(), obs.q.data() + r.n);
      r.qd.insert(r.qd.end(), obs.qd.data(), obs.qd.data() + r.n);
      r.lambda.insert(r.lambda.end(), obs.lambda.data(), obs.lambda.data() + r.m);
      r.energy.push_back(obs.energy);
      if (r.records_position_drift()) r.drift_position.push_back(obs.drift_position);
      r.drift_velocity.push_back(obs.drift_velocity);
      for (size_t j = 0; j < r.extras.size(); ++j) r.extras[j].push_back(obs.extras[j]);
      if (balance) {
        r.work_constraints.push_back(obs.work_constraints);
        r.work_explicit_time.push_back(obs.work_explicit_time);
        r.work_forces.push_back(obs.work_forces);
        r.energy_balance_residual.push_back(obs.energy_balance_residual);
      }
      if (points) r.points.insert(r.points.end(), obs.points.data(), obs.points.data() + obs.points.size());
      if (body_velocities)
        r.body_velocities.insert(r.body_velocities.end(), obs.body_velocities.data(),
                                 obs.body_velocities.data() + obs.body_velocities.size());
      if (r.records_reference_error) {
        const SampleErrors& e = summary.latest_errors();
        r.reference_error.insert(r.reference_error.end(), {e.q, e.qd, e.lambda});
      }
      if (!r.actuator_names.empty()) {
        r.actuator_force.insert(r.actuator_force.end(), obs.actuator_force.data(),
                                obs.actuator_force.data() + obs.actuator_force.size());
        r.actuator_power.push_back(obs.actuator_power);
      }
    }
    if (observer) observer->sample(t, obs, summary.latest_errors());
  };

  // t reached, of t_end, and the stepping rate: a run that crawls (stiff under an explicit method, a
  // tiny fixed step) shows it while it runs.
  ProgressCallback on_progress;
  long final_steps = 0;
  double final_fraction = 0;
  if (progress) {
    on_progress = [&](const SimulationProgress& p) {
      final_steps = p.steps;
      final_fraction = p.fraction();
      if (p.finished) return;
      progress->update(p.fraction(), [&] {
        const double rate = p.steps / std::max(progress->elapsed(), 1e-9);
        return "t = " + ProgressLine::number(p.t) + " of " + ProgressLine::number(p.t_end) + ", " +
               ProgressLine::number(rate) + " steps/s";
      });
    };
  }

  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_seconds();
  const std::uint64_t cycles_start = cycle_count();
  try {
    // Projection wraps the formulation: the driver sees it as the system's after_step.
    const ProjectionMode projection = projection_mode(run.spec.options.projection);
    std::optional<ProjectedSystem> projected;
    if (projection != ProjectionMode::kNone) projected.emplace(f, projection);
    OdeSystem& system = projected ? static_cast<OdeSystem&>(*projected) : static_cast<OdeSystem&>(f);
    // The balance's quadrature runs on every accepted step, on the integrator's interpolant of that step;
    // its CPU time counts as output (not the method's work), like the samples'.
    // The alternation check reads the method's own multipliers after every accepted step (runs/own_checks.hpp).
    StepCallback on_step;
    const bool own_multipliers = run.integrator->step_multipliers() != nullptr && r.m > 0;
    if (balance || own_multipliers) {
      on_step = [&](double t0, double t1) {
        const std::uint64_t start = cycle_count();
        if (balance) balance->step(t0, t1);
        if (own_multipliers) alternation.add(*run.integrator->step_multipliers());
        output_cycles += cycle_count() - start;
      };
    }
    const SimulationResult result =
        simulate(system, *run.integrator, run.y0, sim, settings, record_sample, on_progress, on_step);
    if (projected) r.projection_stats = projected->statistics();
    r.status = result.status;
    r.message = newton_failure_message(result.message, run);
    r.t_reached = result.t_reached;
    r.stats = result.stats;
    r.wall_time_s = result.wall_time_s;
  } catch (const AbortRun&) {
    throw;
  } catch (const std::exception& e) {
    // Anything simulate() did not turn into a status still must not lose the samples computed so far.
    r.status = "failed";
    r.message = e.what();
    r.t_reached = last_sample_t;
    r.stats = run.integrator->statistics();
    r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  }
  r.jacobian_used = run.integrator->jacobian_used();
  const double cpu_total = std::max(0.0, thread_cpu_seconds() - cpu_start);
  const std::uint64_t cycles_total = cycle_count() - cycles_start;
  const double output_share =
      cycles_total > 0 ? std::min(1.0, static_cast<double>(output_cycles) / static_cast<double>(cycles_total)) : 0.0;
  r.output_cpu_time_s = cpu_total * output_share;
  r.cpu_time_s = cpu_total - r.output_cpu_time_s;
  if (r.stats.stiffness_detected_at >= 0) {
    r.warnings.push_back("the problem became stiff at t = " + format_number(r.stats.stiffness_detected_at) + ": " +
                         r.spec.integrator + "'s step is limited by stability, not accuracy (Hairer's test); an "
                         "implicit integrator (radau5) takes far fewer steps");
  }
  if (progress) progress->finish(final_fraction, std::to_string(final_steps) + " steps, " + r.status);
  r.summary = summary.finish();
  r.validity = validity.finish(r.status == "ok");
  // "ok" is a claim: a run that finished but fails its own checks says which and by how much, in validity.
  if (r.status == "ok") {
    if (const std::string own = own_check_failures(r.summary, run.spec.formulation, alternation.ratio()); !own.empty())
      r.validity = r.validity.empty() ? own : r.validity + "; " + own;
  }
  if (!r.validity.empty()) r.warnings.push_back(r.validity);
  if (r.summary.reference_source == "reference_run" && reference) {
    r.reference_message = reference->description;
    r.reference_cpu_time_s = reference->cpu_time_s;
  } else if (r.summary.reference_source == "closed_form") {
    r.reference_message = "closed-form motion of " + r.spec.problem;
  } else if (const PublishedReference* pub = model.published_reference();
             r.summary.reference_source == "published" && pub) {
    r.reference_message = "published values at t = " + format_number(pub->t) + " [" + pub->source + "]: " + pub->description;
  }
  // A published reference not used said nothing (reference_source none, empty message; issue 21).
  if (r.summary.reference_source == "none" && r.reference_message.empty() && !r.summary.published_withheld.empty())
    r.reference_message = "no reference: " + r.summary.published_withheld;
  if (!r.summary.reference_note.empty()) {
    r.reference_message = r.summary.reference_note;
    r.warnings.push_back("no error figures against the reference (NaN): " + r.summary.reference_note);
  }
  return r;
}

// The run's formulation and integrator made afresh on its model and initial data, as prepare_run made them
// (everything prepare_run checked holds already): a timing repeat starts from the same state.
PreparedRun prepared_again(const PreparedRun& run, const RunSpec& spec) {
  PreparedRun again;
  again.spec = spec;
  again.model = run.model;
  again.evaluation = run.evaluation;
  again.q0 = run.q0;
  again.qd0 = run.qd0;
  again.constraint_rank = run.constraint_rank;
  again.initial_source = run.initial_source;
  again.projection = run.projection;
  again.formulation = formulation_registry().get(spec.formulation).make(run.model, spec.options);
  again.integrator = integrator_registry().get(run.spec.integrator).make();
  make_ready(again);
  return again;
}

// Times a short run again until run.timing_budget of CPU time is spent (issue 24 item 5): one timing of a
// 0.2-1 ms run is noise-limited (the clock's resolution, a context switch, a cold cache), so cpu_time_s becomes
// the minimum of the repeats, the least disturbed, and cpu_time_spread their relative spread
// (max - min) / min. A repeat that does not reproduce the first run's step count and result is a warning
// (the run is not deterministic: a defect), and the timing stops there.
void time_repeatedly(const PreparedRun& run, RunRecord& r, const ReferenceTrajectory* reference) {
  constexpr int kMaxTimings = 20;
  const double budget = run.spec.timing_budget;
  if (r.status != "ok" || !(budget > 0) || r.cpu_time_s >= budget) return;
  double total = r.cpu_time_s, lo = r.cpu_time_s, hi = r.cpu_time_s;
  int timings = 1;
  const double repeats_start = thread_cpu_seconds();
  while (total < budget && timings < kMaxTimings) {
    PreparedRun again = prepared_again(run, run.spec);
    const RunRecord repeat = execute_once(again, nullptr, /*keep_samples=*/false, nullptr, reference);
    if (repeat.status != r.status || repeat.stats.steps != r.stats.steps || repeat.stats.rhs_evals != r.stats.rhs_evals ||
        !(repeat.summary.q_error_max == r.summary.q_error_max || (std::isnan(repeat.summary.q_error_max) &&
                                                                   std::isnan(r.summary.q_error_max)))) {
      r.warnings.push_back("a timing repeat of this run took " + std::to_string(repeat.stats.steps) + " steps (" +
                           repeat.status + ") where the run took " + std::to_string(r.stats.steps) + " (" + r.status +
                           "): the run is not reproducible; its CPU time is from " + std::to_string(timings) +
                           " timing(s)");
      break;
    }
    ++timings;
    total += repeat.cpu_time_s;
    lo = std::min(lo, repeat.cpu_time_s);
    hi = std::max(hi, repeat.cpu_time_s);
  }
  r.cpu_time_repeats = timings;
  r.timing_repeats_cpu_time_s = thread_cpu_seconds() - repeats_start;
  r.cpu_time_s = lo;
  r.cpu_time_spread = timings > 1 && lo > 0 ? (hi - lo) / lo : kNaN;
}

bool is_limit_formulation(const std::string& formulation) {
  return formulation == "penalty" || formulation == "added_mass";
}

// penalty and added_mass follow the constrained motion only as N -> infinity (Kozlov's theorems): their figures are a
// limit approximation. With run.limit_gap_estimate the gap is estimated from a companion run at N / 2
// (runs/limit_gap.hpp), and a gap above twice the run's tolerance 2 (atol + rtol max |q|) is a validity warning
// (issue 39: added_mass at N = 1e4 ran 1.03 m from the reference with no word). Twice: the estimate is the gap plus
// the difference of the two runs' integration errors, each of the order of the tolerance (the sleigh at N = 1e8,
// rtol 1e-6: a gap of 4.7e-9 read as 5.2e-7 built with gcc, 1.05e-6 with clang, against a tolerance of 1.25e-6), so
// only above 2 tol is the gap, not the integration, what the run's error is made of.
void judge_limit_gap(const PreparedRun& run, RunRecord& r, const PositionProbe* probe) {
  const RunSpec& spec = run.spec;
  const std::string limit = spec.formulation == "penalty" ? "nonholonomic motion (Kozlov's theorem 1)"
                                                          : "vakonomic motion (Kozlov's theorem 2)";
  const std::string head =
      spec.formulation + " at N = " + format_number(spec.options.N) + " is a limit approximation of the " + limit;
  if (!probe) {
    r.limit_approximation = head + ": its distance from that motion is not estimated (run.limit_gap_estimate = "
                            "false; clmbench kozlov measures it over N)";
    return;
  }
  if (r.status != "ok") {
    r.limit_approximation = head + ": its distance from that motion is not estimated (the run ended " + r.status + ")";
    return;
  }
  RunSpec half = spec;
  half.options.N = spec.options.N / 2;
  PreparedRun companion = prepared_again(run, half);
  PositionProbe companion_probe(sample_bound(spec));
  const RunRecord c = execute_once(companion, nullptr, /*keep_samples=*/false, nullptr, nullptr, &companion_probe);
  if (c.status != "ok") {
    r.limit_approximation = head + ": its distance from that motion is not estimated (the companion run at N = " +
                            format_number(half.options.N) + " ended " + c.status + ": " + c.message + ")";
    return;
  }
  const LimitGapEstimate e = compare_probes(*probe, companion_probe);
  if (!std::isfinite(e.gap)) {
    r.limit_approximation = head + ": its distance from that motion is not estimated (" + e.why + ")";
    return;
  }
  r.limit_gap = e.gap;
  const double tolerance = 2 * (spec.atol + spec.rtol * e.q_scale);
  const std::string estimate = "an estimated " + short_number(e.gap) + " in q (max |q_N - q_N/2| over " +
                               std::to_string(e.compared) + " common samples; the gap falls like 1/N)";
  r.limit_approximation = head + ": its distance from that motion is " + estimate;
  if (e.gap > tolerance) {
    const std::string line = "limit gap: " + spec.formulation + " at N = " + format_number(spec.options.N) +
                             " is " + estimate +  " from the " + limit + ", above twice the run's tolerance, " +
                             short_number(tolerance) + " (2 (atol + rtol max |q|)); a larger N closes it";
    r.validity = r.validity.empty() ? line : r.validity + "; " + line;
    r.warnings.push_back(line);
  }
}

}  // namespace

RunRecord execute_run(PreparedRun& run, RunObserver* observer, bool keep_samples, ProgressLine* progress,
                      const ReferenceTrajectory* reference) {
  const bool limit = is_limit_formulation(run.spec.formulation) && run.model->m() > 0;
  std::optional<PositionProbe> probe;
  if (limit && run.spec.limit_gap_estimate) probe.emplace(sample_bound(run.spec));
  RunRecord r = execute_once(run, observer, keep_samples, progress, reference, probe ? &*probe : nullptr);
  if (limit) judge_limit_gap(run, r, probe ? &*probe : nullptr);
  time_repeatedly(run, r, reference);
  if (observer) observer->finish(r);
  return r;
}

}  // namespace clm
