// `clmbench run`: the run(s) of a config file and/or the flags, into one HDF5 file. The flags are made
// from the option table (runs/run_options.cpp), so every option has its flag and its help line.
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "core/types.hpp"
#include "app/command.hpp"
#include "runs/results_writer.hpp"
#include "runs/progress_line.hpp"
#include "runs/published_comparison.hpp"
#include "runs/reference_cache.hpp"
#include "runs/run_config.hpp"
#include "runs/run_options.hpp"
#include "runs/runner.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

const char* kRunUsage = R"(usage:
  clmbench run CONFIG.ini [--set section.key=value ...] [run flags] [--out FILE.h5]
  clmbench run --problem P --formulation F --integrator I [run flags] [--out FILE.h5]
)";

const char* kRunDetails = R"(
Flags apply to every run of the config and take precedence over it; --set section.key=value edits
one key of the file (e.g. --set run.dt=1e-4, --set param.b=0.2, --set run.sleigh_kkt.t_end=2).
Negative values: --q0 -0.1,0,0 and --q0=-0.1,0,0 both work.

Config files (INI, read with Boost.Program_options; ';' and '#' start comments):
  [run]          problem, formulation, integrator, run settings (below), out
  [param]        <name> = value for any parameter of the problem (clmbench list problems)
  [shape]        <coordinate> = f(t): the prescribed actuated (shape) coordinates of an under-actuated
                 problem, for the formulations that prescribe them (prescribed_shape, kinematic). f is a
                 sum of terms c, c*t^k (k = 1..9), A*sin(w*t + p), A*cos(w*t + p) (A*, w* and + p
                 optional), or file:PATH (two columns t, value; a not-a-knot cubic spline; the run must
                 stay in the samples' time range). q0/qd0 of the actuated coordinates are f(0), f'(0).
  [initial]      q0 = a b c, qd0 = a b c  (n numbers each; projected onto the constraints, the
                 projection distance is printed; an error under strict_initial above 1e-12)
  [formulation]  formulation options (below); each formulation reads the ones it names
  [reference]    the reference run that errors (q_error_max, scd, mescd, ...) are measured against
                 when the problem has no closed-form motion: formulation, integrator, rtol, atol. `run`
                 computes it only when the config has a [reference] section or a --reference* flag is
                 given; closed forms are always used (docs/design.md section 5)
  [sweep]        lists of values (key = v1 v2 ...); validated, but expanded only by `clmbench sweep`
Every key, its unit, admissible values, flag and HDF5 attribute: docs/options.md.

Config keys and defaults:
)";

const char* kMultiRun = R"(
Several runs in one file: each section [run.NAME] declares a run named NAME (letters, digits, _ and -).
A run reads its keys from [run.NAME], [param.NAME], [initial.NAME], [formulation.NAME] and [shape.NAME],
each key falling back to the unsuffixed section ([run], [param], ...), which then holds what the runs share.
`out` is per file and belongs in [run]. Runs execute in the order of their [run.NAME] sections; every
run is checked before the first one starts. Without [run.NAME] sections the file is one run (the format
of docs/design.md section 4). Example (experiments/quickstart.ini):
    [run]
    integrator = dopri5
    out = results/quickstart.h5
    [run.sleigh_kkt]
    problem = chaplygin_sleigh
    formulation = kkt
    [run.pendulum_kkt]
    problem = pendulum_polar
    formulation = kkt
    [param.pendulum_kkt]
    L = 1.5

Output: one HDF5 file per invocation (docs/design.md section 5), written to OUT.tmp-<pid>.<n> and renamed to OUT
when complete; its parent directory is created when missing. Run ids: NAME, or
<problem>_<formulation>_<integrator> for a single run.
)";

po::options_description run_flags() {
  po::options_description o("run options", 100, 50);
  for (const auto& row : run_options()) {
    if (row.flag.empty()) continue;
    std::string help = row.description;
    if (row.type == OptionType::kNumberList) help = "a,b,c: " + help;
    if (row.default_override != "(required)") help += ", default " + row.default_text();
    help += " ([" + row.section + "] " + row.key + ")";
    if (row.type == OptionType::kBool) {
      o.add_options()(row.flag.c_str(), po::bool_switch(), help.c_str());
    } else {
      o.add_options()(row.flag.c_str(), po::value<std::string>(), help.c_str());
    }
  }
  o.add_options()
      ("param", po::value<std::vector<std::string>>()->composing(),
       "name=value, repeatable: problem parameter ([param] name)")
      ("shape", po::value<std::vector<std::string>>()->composing(),
       "NAME=EXPR, repeatable: prescribed actuated coordinate NAME as a function of t ([shape] NAME)")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "section.key=value, repeatable: edit one key of the config file")
      ("out", po::value<std::string>(),
       "output HDF5 file, default results/<problem>_<formulation>_<integrator>.h5 ([run] out)")
      ("progress", po::value<std::string>()->default_value("auto"),
       "auto | always | never: progress of each run on stderr (t reached of t_end, steps/s, ETA); auto: a "
       "line redrawn on a terminal for runs over 2 s, otherwise a plain line every 30 s for runs over 30 s")
      ("help,h", "this help");
  return o;
}

std::string run_help() {
  std::ostringstream s;
  s << kRunUsage << "\n" << run_flags() << kRunDetails;
  std::string section;
  for (const auto& k : config_keys()) {
    if (k.section != section) {
      section = k.section;
      s << "  [" << section << "]\n";
    }
    std::string lhs = "    " + k.key + " = " + k.default_value;
    if (lhs.size() < 36) {
      s << lhs << std::string(36 - lhs.size(), ' ') << k.description << "\n";
    } else {
      s << lhs << "\n" << std::string(36, ' ') << k.description << "\n";
    }
  }
  s << kMultiRun << "\n" << exit_codes_help();
  return s.str();
}

int run(const CommandInvocation& call) {
  const po::options_description flags_description = run_flags();
  const po::variables_map vm = parse_command_line(call.args, flags_description, "run", "config");
  if (vm.count("help")) {
    call.out << run_help();
    return kExitOk;
  }
  const std::optional<std::string> config_path = single_config(vm, "run");

  ConfigLayer flags;
  for (const auto& row : run_options()) {
    if (row.flag.empty() || !vm.count(row.flag)) continue;
    if (row.type == OptionType::kBool) {
      if (vm[row.flag].as<bool>()) flags[row.section][row.key] = {"true", "--" + row.flag};
    } else {
      flags[row.section][row.key] = {vm[row.flag].as<std::string>(), "--" + row.flag};
    }
  }
  for (const auto& p : strings_of(vm, "param")) {
    const auto [name, value] = split_param(p);
    flags["param"][name] = {value, "--param " + name};
  }
  for (const auto& p : strings_of(vm, "shape")) {
    const auto [name, value] = split_param(p, "shape", "phi=0.3*sin(2*t)");
    flags["shape"][name] = {value, "--shape " + name};
  }
  if (!config_path && !flags.count("run")) {
    throw InputError("run needs a config file or --problem, --formulation and --integrator (see clmbench run --help)");
  }
  const std::vector<std::string> sets = strings_of(vm, "set");
  if (!config_path && !sets.empty()) throw InputError("--set edits a config file, but none was given");
  const std::optional<std::string> out_flag =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;

  const RunConfig config = load_run_config(config_path, sets, flags, out_flag);
  if (!config.sweep.empty()) {
    call.err << "clmbench: note: the [sweep] section is expanded by `clmbench sweep`, not by `run`; running the configured run(s) only\n";
  }

  const ProgressMode progress_display = progress_mode(vm["progress"].as<std::string>());

  const std::vector<std::string> inputs = config_path ? std::vector<std::string>{*config_path} : std::vector<std::string>{};
  check_output_path(config.out, inputs);
  std::vector<PreparedRun> prepared;
  for (const RunSpec& spec : config.runs) {
    prepared.push_back(prepare_run(spec, call.err));
    if (spec.reference.compute) check_reference(prepared.back());  // bad [reference] settings: before any run
  }
  ResultsWriter writer(config.out, inputs);  // an unwritable output path is reported before anything runs

  // Runs of one problem, parameter set, initial data and grid share one reference run; it is released after
  // the last run that needs it, so at most the references of interleaved keys are held at once.
  ReferenceCache references;
  std::map<std::string, int> uses;  // reference key -> runs still to come that need it
  std::vector<std::optional<RunSpec>> reference_specs;
  for (const PreparedRun& p : prepared) {
    reference_specs.push_back(p.spec.reference.compute && !has_closed_form_reference(p)
                                  ? std::optional<RunSpec>(reference_spec(p))
                                  : std::nullopt);
    if (reference_specs.back()) ++uses[reference_key(*reference_specs.back())];
  }
  for (size_t i = 0; i < prepared.size(); ++i) {
    PreparedRun& prepared_run = prepared[i];
    const size_t warned = prepared_run.warnings.size();
    std::shared_ptr<const ReferenceTrajectory> reference;
    if (prepared_run.spec.reference.compute) {
      const long before = references.computations();
      ProgressLine reference_progress(call.err, progress_display, "reference of run " + prepared_run.spec.run_id);
      reference = references.get(prepared_run, &reference_progress);
      if (reference_specs[i] && --uses[reference_key(*reference_specs[i])] == 0) references.release(*reference_specs[i]);
      if (references.computations() > before && reference->source == ReferenceSource::kReferenceRun)
        call.out << "run " << prepared_run.spec.run_id << ": " << reference->description << ", "
                 << ProgressLine::number(reference->cpu_time_s) << " s CPU\n";
    }
    ProgressLine progress(call.err, progress_display, "run " + prepared_run.spec.run_id);
    const RunRecord record = execute_run(prepared_run, &writer.run_observer(), /*keep_samples=*/false, &progress,
                                         reference.get());
    for (size_t i = warned; i < record.warnings.size(); ++i)
      call.err << "clmbench: warning: run " << record.spec.run_id << ": " << record.warnings[i] << "\n";
    call.out << "run " << record.spec.run_id << ": " << record.status;
    if (!record.message.empty()) call.out << " (" << record.message << ")";
    // "ok" is a claim the run's validity can withdraw (runs/own_checks.hpp): never a plain "ok" then.
    if (record.status == "ok" && !record.validity.empty()) call.out << " but flagged (the warning above)";
    call.out << ", " << record.samples() << " samples, " << record.stats.steps << " steps, "
             << format_number(record.wall_time_s) << " s";
    // The timing repeats of a short run (run.timing_budget) apart from the run's own time.
    if (record.cpu_time_repeats > 1)
      call.out << " (timed " << record.cpu_time_repeats << " times: " << ProgressLine::number(record.cpu_time_s)
               << " s CPU at best, the repeats " << ProgressLine::number(record.timing_repeats_cpu_time_s)
               << " s; run.timing_budget = 0 times it once)";
    call.out << "\n";
    print_published_comparison(call.out, *prepared_run.model, record);
    print_reference_point_error(call.out, *prepared_run.model, record);
    prepared_run.formulation.reset();  // free the workspace early; the record has been written
  }
  writer.commit({call.command_line, to_config_text(config), ""});
  call.out << "wrote " << config.out << " (" << config.runs.size() << " run" << (config.runs.size() == 1 ? "" : "s")
           << ")\n";
  return kExitOk;
}

}  // namespace

Command run_command() {
  return {"run", "run the experiment(s) of a config file and/or the flags, write one HDF5 file", run_help, run};
}

}  // namespace clm
