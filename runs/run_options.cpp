#include "runs/run_options.hpp"

#include "mechanism_files/mechanism_file.hpp"

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "integrators/implicit_integrator.hpp"

namespace clm {

namespace o = option;

namespace {

using NoEffect = std::function<std::string(const RunSpec&, const Model&, const Integrator&)>;

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The option is read only by these formulations.
NoEffect read_by(std::vector<std::string> formulations) {
  return [formulations](const RunSpec& s, const Model&, const Integrator&) -> std::string {
    for (const auto& f : formulations)
      if (f == s.formulation) return {};
    return "formulation " + s.formulation + " does not read it (read by " + join(formulations) + ")";
  };
}

// The option steers step-size control.
std::string adaptive_only(const RunSpec& s, const Model&, const Integrator& integrator) {
  return integrator.adaptive() ? std::string() : "integrator " + s.integrator + " takes fixed steps of dt";
}

// rtol, atol: read by adaptive methods and as the Newton tolerance of the implicit fixed-step ones.
std::string tolerance_unread(const RunSpec& s, const Model& m, const Integrator& integrator) {
  return integrator.reads_tolerances(s.integrator_settings()) ? std::string() : adaptive_only(s, m, integrator);
}

// The option acts on position constraints h(q) = 0 only (the rows of holonomic problems, the position rows of mixed
// ones).
NoEffect holonomic_and(NoEffect first) {
  return [first](const RunSpec& s, const Model& m, const Integrator& i) -> std::string {
    const std::string why = first(s, m, i);
    if (!why.empty()) return why;
    return m.holonomic() || m.has_position_rows() ? std::string()
                                 : "problem " + s.problem + " has no position constraints h(q) = 0 (velocity rows only)";
  };
}

}  // namespace

const std::vector<Option<RunSpec>>& run_options() {
  static const std::vector<Option<RunSpec>> rows = [] {
    std::vector<Option<RunSpec>> r;
    // [run]: what runs, for how long, how it is sampled, integrated and stopped.
    r.push_back(o::name<RunSpec>(
        "run", "problem", [](auto& s) -> auto& { return s.problem; },
        // A mechanism file is read when the run is resolved (find_problem), whose one-line errors name the
        // file's line and column; this check would replace them by "bad value".
        [](const std::string& v) {
          if (!is_mechanism_file(v)) problem_registry().get(v);
        },
        "a registered problem or a mechanism file (.toml)",
        "problem name (clmbench list problems), or the path of a mechanism file (docs/mechanism-files.md)", "problem",
        "problem"));
    r.push_back(o::name<RunSpec>(
        "run", "formulation", [](auto& s) -> auto& { return s.formulation; },
        [](const std::string& v) { formulation_registry().get(v); }, "a registered formulation",
        "formulation name (clmbench list formulations)", "formulation", "formulation"));
    r.push_back(o::name<RunSpec>(
        "run", "integrator", [](auto& s) -> auto& { return s.integrator; },
        [](const std::string& v) { integrator_registry().get(v); }, "a registered integrator",
        "integrator name (clmbench list integrators: what each accepts and its caveats, e.g. nh_rattle's parasitic mode "
        "on contracting nonholonomic systems, flagged by the run's own checks)",
        "integrator", "integrator"));
    for (auto* row : {&r[0], &r[1], &r[2]}) row->default_override = "(required)";
    r.push_back(o::number<RunSpec>("run", "t_end", [](auto& s) -> auto& { return s.t_end; }, positive(), "s",
                                   "end time; runs start at t = 0", "t-end", "t_end"));
    r.push_back(o::number<RunSpec>("run", "dt", [](auto& s) -> auto& { return s.dt; }, positive(), "s",
                                   "fixed step, or the initial step of an adaptive integrator", "dt", "dt"));
    r.push_back(o::number<RunSpec>("run", "rtol", [](auto& s) -> auto& { return s.rtol; }, NumberRule{0, true, 1, true}, "",
                                   "relative tolerance (adaptive integrators)", "rtol", "rtol"));
    r.back().no_effect = tolerance_unread;
    r.push_back(o::number<RunSpec>("run", "atol", [](auto& s) -> auto& { return s.atol; }, non_negative(), "",
                                   "absolute tolerance (adaptive integrators)", "atol", "atol"));
    r.back().no_effect = tolerance_unread;
    r.push_back(o::number<RunSpec>("run", "dt_min", [](auto& s) -> auto& { return s.dt_min; }, positive(), "",
                                   "an adaptive step below dt_min * max(1, |t|) ends the run \"failed\"", "dt-min",
                                   "dt_min"));
    r.back().no_effect = adaptive_only;
    r.push_back(o::number<RunSpec>("run", "dt_max", [](auto& s) -> auto& { return s.dt_max; }, non_negative(), "s",
                                   "largest adaptive step; 0 = no limit beyond the remaining interval", "dt-max",
                                   "dt_max"));
    r.back().no_effect = adaptive_only;
    r.push_back(o::boolean<RunSpec>("run", "fixed_step", [](auto& s) -> auto& { return s.fixed_step; },
                                    "adaptive integrators take constant steps of dt without error control "
                                    "(convergence orders, work-precision); fixed-step methods ignore it",
                                    "fixed-step", "fixed_step"));
    r.back().no_effect = adaptive_only;
    r.push_back(o::choice<RunSpec>("run", "jacobian", [](auto& s) -> auto& { return s.jacobian; },
                                   {"auto", "finite_difference", "autodiff"},
                                   "Jacobian df/dy of implicit integrators (radau5, implicit_midpoint, cvode bdf): "
                                   "forward differences, or the formulation's exact one by automatic "
                                   "differentiation (penalty, kkt, schur, augmented_lagrangian, added_mass, servo, "
                                   "fernandez_bloch on problems without explicit time dependence, a generalized force "
                                   "written over the scalar type (files' [forces]; not a double-only one), dense "
                                   "path; refused before the run for the others). auto: for kkt, schur, penalty, "
                                   "added_mass, servo and fernandez_bloch the exact one where the model's "
                                   "terms come from autodiff and n >= 6 (a rule from bench_integrators, not a "
                                   "timing: four_bar 38 against 113 us per Jacobian), else finite differences "
                                   "(small problems at parity; closed_chain's hand-written terms: 644 against 174 "
                                   "us at n = 16); for augmented_lagrangian always the exact one (differences of "
                                   "its rhs are poor: closed_chain(8) radau5 338 against 236 ms)",
                                   "jacobian", "jacobian"));
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator& integrator) -> std::string {
      return integrator.uses_jacobian(s.integrator_settings())
                 ? std::string()
                 : "integrator " + s.integrator + (s.integrator == "cvode" ? " with cvode_method = adams" : " is explicit and") +
                       " uses no Jacobian";
    };
    r.push_back(o::choice<RunSpec>("run", "cvode_method", [](auto& s) -> auto& { return s.cvode_method; },
                                   {"bdf", "adams"},
                                   "cvode: bdf (stiff: variable-order BDF, Newton, dense linear solver) or adams "
                                   "(non-stiff: Adams-Moulton, fixed-point iteration)",
                                   "cvode-method", "cvode_method"));
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator&) -> std::string {
      return s.integrator == "cvode" ? std::string() : "integrator " + s.integrator + " is not cvode";
    };
    r.push_back(o::number<RunSpec>("run", "output_every", [](auto& s) -> auto& { return s.output_every; },
                                   non_negative(), "s", "sample spacing written to HDF5; 0 = one sample per accepted step",
                                   "output-every", "output_every"));
    r.push_back(o::number<RunSpec>("run", "divergence_threshold",
                                   [](auto& s) -> auto& { return s.divergence_threshold; }, positive(), "",
                                   "a state entry above it in magnitude ends the run with status \"diverged\"",
                                   "divergence-threshold", "divergence_threshold"));
    r.push_back(o::count<RunSpec>("run", "max_steps", [](auto& s) -> auto& { return s.max_steps; }, 1,
                                  "attempted steps (accepted + rejected) after which the run ends \"failed\"; a constant-step run needing more (t_end / dt) is refused before it starts",
                                  "max-steps", "max_steps"));
    r.push_back(o::number<RunSpec>("run", "max_output_gb", [](auto& s) -> auto& { return s.max_output_gb; },
                                   non_negative(), "GB",
                                   "refuse a run whose samples would exceed this many GB uncompressed (estimated from "
                                   "t_end / output_every before it starts); 0 = no limit",
                                   "max-output-gb", "max_output_gb"));
    r.push_back(o::number<RunSpec>("run", "timing_budget", [](auto& s) -> auto& { return s.timing_budget; },
                                   non_negative(), "s",
                                   "a run that integrates in less CPU time is integrated again, without recording, "
                                   "until this much CPU time is spent (at most 20 timings): cpu_time_s is the "
                                   "minimum, cpu_time_spread the relative spread (max - min) / min; 0 = timed once",
                                   "timing-budget", "timing_budget"));
    r.push_back(o::boolean<RunSpec>("run", "strict_initial", [](auto& s) -> auto& { return s.strict_initial; },
                                    "refuse given q0/qd0 that are off the constraints by more than 1e-12 (one line naming the rows off and "
                                    "their residuals; otherwise q0 is moved onto the position rows h = 0, qd0 onto every row)",
                                    "strict-initial", "strict_initial"));
    r.push_back(o::boolean<RunSpec>("run", "limit_gap_estimate", [](auto& s) -> auto& { return s.limit_gap_estimate; },
                                    "penalty and added_mass: integrate a companion run at N / 2 and estimate the "
                                    "distance of this run from the N -> infinity motion (nonholonomic, vakonomic) as "
                                    "max |q_N - q_N/2| over the common samples (the gap falls like 1/N, Kozlov's "
                                    "theorems): the run attribute limit_gap, and a validity warning when it exceeds "
                                    "2 (atol + rtol max |q|) (the two runs' integration errors are in the estimate "
                                    "too); the companion's time is not in cpu_time_s. false: no "
                                    "companion, the run only says that its figures are a limit approximation",
                                    "limit-gap-estimate", "limit_gap_estimate"));
    r.back().no_effect = read_by({"penalty", "added_mass"});
    r.push_back(o::choice<RunSpec>("run", "mechanism_evaluation",
                                   [](auto& s) -> auto& { return s.mechanism_evaluation; }, {"auto", "native", "tape"},
                                   "how a mechanism file's terms are evaluated: native (M, c, F, A, the constraint "
                                   "bias, h, b and the energy derived on its expression graph, printed as C, compiled "
                                   "by the system's C compiler (CLMBENCH_CC, else cc) into a shared object cached by "
                                   "content in CLMBENCH_CACHE_DIR or ~/.cache/clmbench/native), tape (the interpreted "
                                   "tape, the reference the native code is tested against), auto (native where a "
                                   "compiler is found and the code is cached or at most 4 MB of C, about 15 s to "
                                   "compile; else the tape with one line saying why). The derivatives of "
                                   "exact Jacobians come from the tape either way",
                                   "mechanism-evaluation", "mechanism_evaluation"));
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator&) -> std::string {
      return is_mechanism_file(s.problem) ? std::string() : "problem " + s.problem + " is not a mechanism file";
    };
    // [initial]: given initial data (the attribute records the consistent data the run started from).
    r.push_back(o::number_list<RunSpec>("initial", "q0", [](auto& s) -> auto& { return s.q0; },
                                        "n numbers", "initial coordinates (projected onto the constraints)", "q0",
                                        "q0"));
    r.push_back(o::number_list<RunSpec>("initial", "qd0", [](auto& s) -> auto& { return s.qd0; },
                                        "n numbers", "initial velocities (projected onto A(q) qd = 0)", "qd0", "qd0"));
    for (auto* row : {&r[r.size() - 2], &r[r.size() - 1]}) row->default_override = "problem default";
    // [formulation]: FormulationOptions (core/formulation.hpp says which formulation reads which).
    r.push_back(o::number<RunSpec>("formulation", "N", [](auto& s) -> auto& { return s.options.N; }, positive(), "",
                                   "penalty / added-mass coefficient", "N", "formulation.N"));
    r.back().no_effect = read_by({"penalty", "added_mass"});
    r.push_back(o::number<RunSpec>("formulation", "baumgarte_alpha",
                                   [](auto& s) -> auto& { return s.options.baumgarte_alpha; }, any_number(), "1/s",
                                   "Baumgarte velocity gain (kkt, schur, servo): -2 alpha A qd", "baumgarte-alpha",
                                   "formulation.baumgarte_alpha"));
    r.back().no_effect = read_by({"kkt", "schur", "servo"});
    r.push_back(o::number<RunSpec>("formulation", "baumgarte_beta",
                                   [](auto& s) -> auto& { return s.options.baumgarte_beta; }, any_number(), "1/s",
                                   "Baumgarte position gain (kkt, schur, servo; the position rows h of holonomic and mixed problems): -beta^2 h", "baumgarte-beta",
                                   "formulation.baumgarte_beta"));
    r.back().no_effect = holonomic_and(read_by({"kkt", "schur", "servo"}));
    r.push_back(o::number<RunSpec>("formulation", "k", [](auto& s) -> auto& { return s.options.k; }, non_negative(), "",
                                   "penalty position spring k/2 |h|^2 (the position rows h of holonomic and mixed problems)", "k", "formulation.k"));
    r.back().no_effect = holonomic_and(read_by({"penalty"}));
    r.push_back(o::choice<RunSpec>("formulation", "added_mass_form",
                                   [](auto& s) -> auto& { return s.options.added_mass_form; },
                                   {"direct", "multiplier"},
                                   "added_mass: direct (state q, qd; mass matrix M + N A^T A) or multiplier (state q, "
                                   "qd, lambda = -N A qd; recommended for large N: step count independent of N)",
                                   "added-mass-form", "formulation.added_mass_form"));
    r.back().no_effect = read_by({"added_mass"});
    r.push_back(o::number_list<RunSpec>("formulation", "lambda0", [](auto& s) -> auto& { return s.options.lambda0; },
                                        "m numbers",
                                        "vakonomic / added_mass multiplier form: initial multipliers", "lambda0",
                                        "formulation.lambda0"));
    r.back().default_override = "zeros";
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator&) -> std::string {
      if (s.formulation == "vakonomic" || (s.formulation == "added_mass" && s.options.added_mass_form == "multiplier"))
        return {};
      return "formulation " + s.formulation + " does not read it (read by vakonomic and added_mass with "
             "added_mass_form = multiplier)";
    };
    r.push_back(o::choice<RunSpec>("formulation", "linear_algebra",
                                   [](auto& s) -> auto& { return s.options.linear_algebra; },
                                   {"auto", "sparse", "dense"},
                                   "kkt / schur / augmented_lagrangian (also under trapezoidal, ALI3-P) and the "
                                   "coordinate projection on problems built from bodies and joints (n_four_bar): "
                                   "sparse L D L^T in O(n) or the dense solve; auto takes sparse from " +
                                       std::to_string(kSparseCrossoverCoordinates) +
                                       " coordinates on (the measured crossover); redundant constraints stay dense "
                                       "in kkt / schur",
                                   "linear-algebra", "formulation.linear_algebra"));
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator&) -> std::string {
      // "sparse" where there is no sparse path is an error of its own (one line, before the run), not a warning.
      if (s.formulation == "kkt" || s.formulation == "schur" || s.formulation == "augmented_lagrangian" ||
          s.options.projection != "none" || s.options.linear_algebra == "sparse")
        return {};
      return "formulation " + s.formulation + " does not read it (read by kkt, schur, augmented_lagrangian and the "
             "coordinate projection)";
    };
    r.push_back(o::choice<RunSpec>("formulation", "projection", [](auto& s) -> auto& { return s.options.projection; },
                                   {"none", "position", "velocity", "both"},
                                   "after every accepted step project q onto h(q) = 0 (position: the position rows of holonomic and "
                                   "mixed problems) and/or qd onto A(q) qd = 0 (velocity: every row), in the mass-matrix "
                                   "metric; formulations "
                                   "with state (q, qd): kkt, schur, penalty, added_mass, vakonomic, fernandez_bloch",
                                   "projection", "formulation.projection"));
    r.push_back(o::number<RunSpec>("formulation", "repartition_threshold",
                                   [](auto& s) -> auto& { return s.options.repartition_threshold; }, NumberRule{1, true},
                                   "", "nullspace: re-pick independent coordinates when cond(A_D) exceeds it",
                                   "repartition-threshold", "formulation.repartition_threshold"));
    r.back().no_effect = read_by({"nullspace"});
    r.push_back(o::number<RunSpec>("formulation", "initial_offset",
                                   [](auto& s) -> auto& { return s.options.initial_offset; }, non_negative(), "",
                                   "fernandez_bloch: start |A qd0| = offset off the constraint, along the transversal "
                                   "frame X",
                                   "initial-offset", "formulation.initial_offset"));
    r.back().no_effect = read_by({"fernandez_bloch"});
    // augmented_lagrangian (formulations/augmented_lagrangian.hpp; with trapezoidal, ALI3-P).
    r.push_back(o::number<RunSpec>("formulation", "al_alpha", [](auto& s) -> auto& { return s.options.al_alpha; },
                                   positive(), "",
                                   "augmented_lagrangian: penalty alpha (units of the mass matrix over those of "
                                   "A^T A; with trapezoidal the index-3 scheme converges fast when alpha dt^2/4 "
                                   "dominates M)",
                                   "al-alpha", "formulation.al_alpha"));
    r.back().no_effect = read_by({"augmented_lagrangian"});
    r.push_back(o::number<RunSpec>("formulation", "al_xi", [](auto& s) -> auto& { return s.options.al_xi; },
                                   non_negative(), "",
                                   "augmented_lagrangian: damping ratio of the constraint stabilization "
                                   "(2 xi omega A qd; the ODE form, not ALI3-P)",
                                   "al-xi", "formulation.al_xi"));
    r.back().no_effect = read_by({"augmented_lagrangian"});
    r.push_back(o::number<RunSpec>("formulation", "al_omega", [](auto& s) -> auto& { return s.options.al_omega; },
                                   non_negative(), "1/s",
                                   "augmented_lagrangian: natural frequency of the constraint stabilization "
                                   "(2 xi omega A qd + omega^2 h, h on the position rows; the ODE form, not ALI3-P)",
                                   "al-omega", "formulation.al_omega"));
    r.back().no_effect = read_by({"augmented_lagrangian"});
    r.push_back(o::count<RunSpec>("formulation", "al_iterations",
                                  [](auto& s) -> auto& { return s.options.al_iterations; }, 1,
                                  "augmented_lagrangian: most multiplier updates lambda* += alpha (A qdd + ...) per "
                                  "evaluation (the ODE form)",
                                  "al-iterations", "formulation.al_iterations"));
    r.back().no_effect = read_by({"augmented_lagrangian"});
    r.push_back(o::number<RunSpec>("formulation", "al_tolerance",
                                   [](auto& s) -> auto& { return s.options.al_tolerance; }, non_negative(), "",
                                   "augmented_lagrangian: stop the multiplier updates when one is below this "
                                   "fraction of |lambda*| (max norm; the ODE form)",
                                   "al-tolerance", "formulation.al_tolerance"));
    r.back().no_effect = read_by({"augmented_lagrangian"});
    r.push_back(o::choice<RunSpec>("formulation", "al_tangent", [](auto& s) -> auto& { return s.options.al_tangent; },
                                   {"full", "penalty"},
                                   "trapezoidal (ALI3-P): Newton tangent M + (dt^2/4) [alpha A^T A + sum_i "
                                   "(lambda* + alpha h)_i d2h_i/dq2] (full: with the constraints' geometric "
                                   "stiffness, by autodiff) or without that sum (penalty)",
                                   "al-tangent", "formulation.al_tangent"));
    r.back().no_effect = [](const RunSpec& s, const Model&, const Integrator&) -> std::string {
      if (s.formulation == "augmented_lagrangian" && s.integrator == "trapezoidal") return {};
      return "only the trapezoidal integrator (ALI3-P) with formulation augmented_lagrangian reads it";
    };
    r.push_back(o::name<RunSpec>("formulation", "servo_direction",
                                 [](auto& s) -> auto& { return s.options.servo_direction; }, nullptr,
                                 "constraint or a servo_direction of the problem (clmbench list problems)",
                                 "servo: the covector field B(q) of the control force B^T lambda that realizes the "
                                 "constraints; constraint = A (the ideal reaction, the nonholonomic motion)",
                                 "servo-direction", "formulation.servo_direction"));
    r.back().no_effect = read_by({"servo"});
    // [reference]: the reference run of problems without a closed-form motion (runs/reference_cache.hpp).
    r.push_back(o::boolean<RunSpec>("reference", "compute", [](auto& s) -> auto& { return s.reference.compute; },
                                    "clmbench run: compute a reference run for runs whose problem has no closed-form "
                                    "motion (implied by any other [reference] key or flag, or an empty [reference] "
                                    "section; sweeps always compute one; closed forms are always used)",
                                    "reference", "reference.compute"));
    r.push_back(o::name<RunSpec>(
        "reference", "formulation", [](auto& s) -> auto& { return s.reference.formulation; },
        [](const std::string& v) { formulation_registry().get(v); }, "a registered formulation",
        "formulation of the reference run (runs that follow the vakonomic motion of nonholonomic constraints, "
        "vakonomic and added_mass, are compared with a vakonomic reference instead)",
        "reference-formulation", "reference.formulation"));
    r.push_back(o::name<RunSpec>(
        "reference", "integrator", [](auto& s) -> auto& { return s.reference.integrator; },
        [](const std::string& v) {
          // A reference is only as good as its error control: a fixed-step method has none.
          if (!integrator_registry().get(v).make()->adaptive())
            throw InputError("bad value '" + v + "' for reference.integrator (a fixed-step method; the reference needs "
                             "an adaptive one: dopri5, dop853, vern7, vern9 or radau5)");
        },
        "an adaptive integrator", "integrator of the reference run", "reference-integrator", "reference.integrator"));
    r.push_back(o::number<RunSpec>("reference", "rtol", [](auto& s) -> auto& { return s.reference.rtol; },
                                   NumberRule{0, true, 1, true}, "", "relative tolerance of the reference run",
                                   "reference-rtol", "reference.rtol"));
    r.push_back(o::number<RunSpec>("reference", "atol", [](auto& s) -> auto& { return s.reference.atol; },
                                   non_negative(), "", "absolute tolerance of the reference run", "reference-atol",
                                   "reference.atol"));
    return r;
  }();
  return rows;
}

const Option<RunSpec>* find_run_option(const std::string& section, const std::string& key) {
  for (const auto& o : run_options())
    if (o.section == section && o.key == key) return &o;
  return nullptr;
}

std::vector<std::string> run_option_keys(const std::string& section) {
  std::vector<std::string> keys;
  for (const auto& o : run_options())
    if (o.section == section) keys.push_back(o.key);
  return keys;
}

IntegratorSettings RunSpec::integrator_settings() const {
  IntegratorSettings s;
  s.dt = dt;
  s.rtol = rtol;
  s.atol = atol;
  s.dt_min = dt_min;
  s.dt_max = dt_max;
  s.fixed_step = fixed_step;
  s.jacobian = jacobian;
  s.cvode_method = cvode_method;
  return s;
}

SimulationSettings RunSpec::simulation_settings() const {
  return {.t_end = t_end, .output_every = output_every, .divergence_threshold = divergence_threshold,
          .max_steps = max_steps};
}

}  // namespace clm
