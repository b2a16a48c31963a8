// clmbench: the command-line front end (DESIGN.md section 4). Commands: list, run, info, kozlov, analyze.
// Exit codes: 0 the results file was written (every run recorded, whatever its status), 1 bad input,
// 2 I/O error, 3 internal error. Every error is exactly one line on stderr: "clmbench: error: ...".
#include <boost/program_options.hpp>
#include <iostream>
#include <set>
#include <sstream>

#include "core/version.hpp"
#include "experiments/analyze_command.hpp"
#include "experiments/catalog.hpp"
#include "experiments/hdf5_writer.hpp"
#include "experiments/kozlov_study.hpp"
#include "experiments/results_info.hpp"
#include "experiments/run_spec.hpp"
#include "experiments/runner.hpp"
#include "experiments/value_parsing.hpp"

namespace po = boost::program_options;
using namespace clm;

namespace {

constexpr int kExitOk = 0, kExitInput = 1, kExitOutput = 2, kExitInternal = 3;

const char* kUsage = R"(usage:
  clmbench list [problems|formulations|integrators]
  clmbench run CONFIG.ini [--set section.key=value ...] [run flags] [--out FILE.h5]
  clmbench run --problem P --formulation F --integrator I [run flags] [--out FILE.h5]
  clmbench kozlov CONFIG.ini [--set section.key=value ...] [--out FILE.h5]
  clmbench info FILE.h5
  clmbench analyze --problem P [--param name=value ...] [--q0 a,b,c]
  clmbench --help | clmbench run --help | clmbench --version
)";

const char* kCommands = R"(commands:
  list   registered problems (with parameters, defaults and meaning), formulations and integrators
  run    run the experiment(s) of a config file and/or the flags, write one HDF5 file
  kozlov Kozlov's limit theorems as a convergence study: the reference (kkt or vakonomic) and the limit
         family (penalty or added_mass) over a list of N, error vs N and its log-log slope (see kozlov --help)
  info   one line per run of a results file: id, problem, formulation, integrator, status, samples,
         max drift (position, velocity), max relative energy error, error vs reference, wall time
  analyze n, m, rank of A(q), DOF, integrability of the constraints (Frobenius: Lie brackets of ker A)
         and the dimension reached by iterated brackets (accessibility) at a configuration q
)";

const char* kExitCodes = R"(exit codes:
  0  the results file was written; every run is recorded with its status ("ok", "diverged" or
     "failed") and message, also when it diverged or failed
  1  bad input (unknown name, key, section or parameter, malformed number, missing config file,
     wrong-length q0/qd0, refused formulation/problem pairing, inconsistent initial data under
     --strict-initial); nothing is run and no file is written
  2  I/O error (output path not writable, results file unreadable); no partial file is left behind
  3  internal error
)";

const char* kRunDetails = R"(
Flags apply to every run of the config and take precedence over it; --set section.key=value edits
one key of the file (e.g. --set run.dt=1e-4, --set param.b=0.2, --set run.sleigh_kkt.t_end=2).
Negative values: --q0 -0.1,0,0 and --q0=-0.1,0,0 both work.

Config files (INI, read with Boost.Program_options; ';' and '#' start comments):
  [run]          problem, formulation, integrator, t_end, dt, rtol, atol, output_every,
                 divergence_threshold, strict_initial, out
  [param]        <name> = value for any parameter of the problem (clmbench list problems)
  [initial]      q0 = a b c, qd0 = a b c  (n numbers each; projected onto the constraints, the
                 projection distance is printed; an error under strict_initial above 1e-12)
  [formulation]  N, baumgarte_alpha, baumgarte_beta, k, added_mass_form, lambda0, repartition_threshold
  [sweep]        lists of values (key = v1 v2 ...); validated, but not expanded by `run`

Config keys and defaults:
)";

const char* kMultiRun = R"(
Several runs in one file: each section [run.NAME] declares a run named NAME (letters, digits, _ and -).
A run reads its keys from [run.NAME], [param.NAME], [initial.NAME] and [formulation.NAME], each key
falling back to the unsuffixed section ([run], [param], ...), which then holds what the runs share.
`out` is per file and belongs in [run]. Runs execute in the order of their [run.NAME] sections; every
run is checked before the first one starts. Without [run.NAME] sections the file is one run (the format
of DESIGN.md section 4). Example (experiments/quickstart.ini):
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

Output: one HDF5 file per invocation (DESIGN.md section 5), written to OUT.tmp-<pid> and renamed to OUT
when complete; its parent directory is created when missing. Run ids: NAME, or
<problem>_<formulation>_<integrator> for a single run.
)";

const char* kKozlovDetails = R"(
A kozlov config is a single-run config ([run], [param], [initial], [formulation]) plus a [kozlov] section:
  Theorem 1 (kozlov.theorem = 1): penalty (anisotropic friction N/2 |A qd|^2) against the nonholonomic
            reference kkt;  Theorem 2 (= 2): added_mass (L + N/2 |A qd|^2) against the vakonomic reference.
[run] gives problem, the limit family's integrator, dt, rtol, atol, t_end, output_every (> 0: the common
sample grid) and out (default results/<config stem>.h5); run.formulation follows from the theorem.
[formulation] holds the limit family's options (added_mass_form, k, lambda0, ...); N comes from kozlov.N.
The reference runs once at reference_rtol / reference_atol, the limit family once per N, all from the
same initial data projected onto the constraints. Per N: error_q = max_k |q_N(t_k) - q_ref(t_k)|,
error_qd = the same for qd, constraint_violation = max_k |A qd_N|; then the least-squares fit
log10(error) = slope log10(N) + intercept (fit_residual: RMS of the log10 residuals). A run that
diverges or fails is recorded, its errors are NaN and it is left out of the fit.
Output: every run under /runs and /kozlov/<study>/ (datasets N, error_q, error_qd, constraint_violation,
run_id, status, steps, wall_time_s; attributes slope, intercept, fit_residual, fitted_error, ...).
tools/plot.py FILE.h5 draws error vs N with the fitted line (<stem>_kozlov_<study>.png).

[kozlov] keys and defaults:
)";

po::options_description run_options() {
  po::options_description o("run options", 100, 50);
  auto str = [] { return po::value<std::string>(); };
  o.add_options()
      ("problem", str(), "problem name ([run] problem)")
      ("formulation", str(), "formulation name ([run] formulation)")
      ("integrator", str(), "integrator name ([run] integrator)")
      ("t-end", str(), "end time, default 10 ([run] t_end)")
      ("dt", str(), "fixed step or initial adaptive step, default 1e-3 ([run] dt)")
      ("rtol", str(), "relative tolerance, default 1e-10 ([run] rtol)")
      ("atol", str(), "absolute tolerance, default 1e-12 ([run] atol)")
      ("output-every", str(), "sample spacing, default 0.01; 0 = every step ([run] output_every)")
      ("divergence-threshold", str(), "|y|_inf above it: status diverged, default 1e12")
      ("param", po::value<std::vector<std::string>>()->composing(),
       "name=value, repeatable: problem parameter ([param] name)")
      ("q0", str(), "a,b,c: initial coordinates ([initial] q0)")
      ("qd0", str(), "a,b,c: initial velocities ([initial] qd0)")
      ("N", str(), "penalty / added-mass coefficient, default 1e4 ([formulation] N)")
      ("baumgarte-alpha", str(), "Baumgarte velocity gain, default 0")
      ("baumgarte-beta", str(), "Baumgarte position gain, default 0")
      ("strict-initial", po::bool_switch(), "fail instead of projecting inconsistent q0/qd0 (> 1e-12)")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "section.key=value, repeatable: edit one key of the config file")
      ("out", str(), "output HDF5 file, default results/<problem>_<formulation>_<integrator>.h5 ([run] out)")
      ("help,h", "this help");
  return o;
}

std::string run_help() {
  std::ostringstream s;
  s << kUsage << "\n" << run_options() << kRunDetails;
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
  s << kMultiRun << "\n" << kExitCodes;
  return s.str();
}

std::string full_help() {
  std::ostringstream s;
  s << "clmbench " << kVersion << " (" << kGitCommit
    << "): which formulation of the constrained equations of motion, with which integrator, is most accurate,\n"
       "drifts least and runs fastest. Results land in HDF5 (h5py, MATLAB, Julia read them directly).\n\n"
    << kCommands << "\n"
    << run_help() << "\nkozlov: clmbench kozlov --help\n" << kKozlovDetails << kozlov_keys_help()
    << "\nanalyze: clmbench analyze --help\n" << analyze_help();
  return s.str();
}

std::string join_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    const bool quote = a.empty() || a.find_first_of(" \t\"'\\$") != std::string::npos;
    if (quote) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (i ? " " : "") + a;
  }
  return out;
}

// Boost takes "-0.1,0,0" after "--q0" for an option; glue such values to their flag ("--q0=-0.1,0,0").
std::vector<std::string> glue_negative_values(const std::vector<std::string>& args, const po::options_description& o) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0 && a.find('=') == std::string::npos && i + 1 < args.size()) {
      const std::string& next = args[i + 1];
      const auto* desc = o.find_nothrow(a.substr(2), false);
      const bool looks_negative = next.size() > 1 && next[0] == '-' && (std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.');
      if (desc && desc->semantic()->max_tokens() > 0 && looks_negative) {
        out.push_back(a + "=" + next);
        ++i;
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

int run_command(const std::vector<std::string>& raw_args, const std::string& command_line) {
  const po::options_description options = run_options();
  po::options_description all;
  all.add(options);
  all.add_options()("config", po::value<std::vector<std::string>>(), "");
  po::positional_options_description positional;
  positional.add("config", -1);
  const std::vector<std::string> args = glue_negative_values(raw_args, options);
  po::variables_map vm;
  try {
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(all).positional(positional).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string(e.what()) + " (see clmbench run --help)");
  }
  if (vm.count("help")) {
    std::cout << run_help();
    return kExitOk;
  }
  std::optional<std::string> config_path;
  if (vm.count("config")) {
    const auto& configs = vm["config"].as<std::vector<std::string>>();
    if (configs.size() > 1) throw InputError("more than one config file given ('" + configs[1] + "'); run takes one");
    config_path = configs.front();
  }

  ConfigLayer flags;
  auto flag = [&](const char* name, const char* section, const char* key) {
    if (vm.count(name)) flags[section][key] = {vm[name].as<std::string>(), std::string("--") + name};
  };
  flag("problem", "run", "problem");
  flag("formulation", "run", "formulation");
  flag("integrator", "run", "integrator");
  flag("t-end", "run", "t_end");
  flag("dt", "run", "dt");
  flag("rtol", "run", "rtol");
  flag("atol", "run", "atol");
  flag("output-every", "run", "output_every");
  flag("divergence-threshold", "run", "divergence_threshold");
  flag("q0", "initial", "q0");
  flag("qd0", "initial", "qd0");
  flag("N", "formulation", "N");
  flag("baumgarte-alpha", "formulation", "baumgarte_alpha");
  flag("baumgarte-beta", "formulation", "baumgarte_beta");
  if (vm["strict-initial"].as<bool>()) flags["run"]["strict_initial"] = {"true", "--strict-initial"};
  if (vm.count("param")) {
    for (const auto& p : vm["param"].as<std::vector<std::string>>()) {
      const auto eq = p.find('=');
      const std::string name = eq == std::string::npos ? std::string() : trim(p.substr(0, eq));
      if (name.empty()) throw InputError("malformed --param '" + p + "' (expected name=value, e.g. --param m=2)");
      flags["param"][name] = {p.substr(eq + 1), "--param " + name};
    }
  }
  if (!config_path && !flags.count("run")) {
    throw InputError("run needs a config file or --problem, --formulation and --integrator (see clmbench run --help)");
  }
  const std::vector<std::string> sets =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (!config_path && !sets.empty()) throw InputError("--set edits a config file, but none was given");
  const std::optional<std::string> out_flag =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;

  const RunConfig config = load_run_config(config_path, sets, flags, out_flag);
  if (!config.sweep.empty()) {
    std::cerr << "clmbench: note: the [sweep] section is not expanded by `run`; running the configured run(s) only\n";
  }

  ResultsWriter writer(config.out);  // an unwritable output path is reported before anything runs
  std::vector<PreparedRun> prepared;
  for (const RunSpec& spec : config.runs) prepared.push_back(prepare_run(spec, std::cerr));

  for (PreparedRun& run : prepared) {
    const RunRecord record = execute_run(run);
    writer.write_run(record);
    std::cout << "run " << record.spec.run_id << ": " << record.status;
    if (!record.message.empty()) std::cout << " (" << record.message << ")";
    std::cout << ", " << record.samples() << " samples, " << record.stats.steps << " steps, "
              << format_number(record.wall_time_s) << " s\n";
    run.formulation.reset();  // free the workspace early; the record has been written
  }
  writer.commit({command_line, to_config_text(config)});
  std::cout << "wrote " << config.out << " (" << config.runs.size() << " run" << (config.runs.size() == 1 ? "" : "s")
            << ")\n";
  return kExitOk;
}

std::string kozlov_help() {
  std::ostringstream s;
  s << "usage: clmbench kozlov CONFIG.ini [--set section.key=value ...] [--out FILE.h5]\n"
    << "  --set kozlov.N='1e2 1e3' edits a [kozlov] key, --set run.t_end=2 any other key\n"
    << kKozlovDetails << kozlov_keys_help()
    << "\nShipped studies: experiments/kozlov_{friction,added_mass}_{sleigh,skate,disk}.ini\n\n"
    << kExitCodes;
  return s.str();
}

int kozlov_command(const std::vector<std::string>& raw_args, const std::string& command_line) {
  po::options_description options("kozlov options");
  options.add_options()
      ("set", po::value<std::vector<std::string>>()->composing(), "section.key=value, repeatable")
      ("out", po::value<std::string>(), "output HDF5 file")
      ("help,h", "this help");
  po::options_description all;
  all.add(options);
  all.add_options()("config", po::value<std::vector<std::string>>(), "");
  po::positional_options_description positional;
  positional.add("config", -1);
  po::variables_map vm;
  try {
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(raw_args).options(all).positional(positional).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string(e.what()) + " (see clmbench kozlov --help)");
  }
  if (vm.count("help")) {
    std::cout << kozlov_help();
    return kExitOk;
  }
  if (!vm.count("config")) throw InputError("kozlov needs a config file (clmbench kozlov CONFIG.ini; see clmbench kozlov --help)");
  const auto& configs = vm["config"].as<std::vector<std::string>>();
  if (configs.size() > 1) throw InputError("more than one config file given ('" + configs[1] + "'); kozlov takes one");
  const std::vector<std::string> sets =
      vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const std::optional<std::string> out_flag =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;

  const KozlovConfig config = load_kozlov_config(configs.front(), sets, out_flag);
  ResultsWriter writer(config.base.out);
  run_kozlov_study(config, writer, std::cout, std::cerr);
  writer.commit({command_line, to_kozlov_config_text(config)});
  std::cout << "wrote " << config.base.out << " (" << config.limit_runs.size() + 1 << " runs, /kozlov/"
            << config.settings.study << ")\n";
  return kExitOk;
}

int info_command(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: clmbench info FILE.h5\n\n" << kCommands;
    return kExitOk;
  }
  if (args.size() != 1) throw InputError("info takes exactly one results file (clmbench info FILE.h5)");
  std::cout << format_results_table(read_results_info(args[0]));
  return kExitOk;
}

int list_command(const std::vector<std::string>& args) {
  if (args.size() > 1) throw InputError("list takes at most one of problems, formulations, integrators");
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: clmbench list [problems|formulations|integrators]\n";
    return kExitOk;
  }
  std::cout << format_catalog(args.empty() ? "" : args[0]);
  return kExitOk;
}

int fail(const std::string& message, int code) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "clmbench: error: " << line << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) throw InputError("no command given (expected list, run, kozlov, info or analyze; see clmbench --help)");
    const std::string command = args.front();
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << full_help();
      return kExitOk;
    }
    if (command == "--version") {
      std::cout << "clmbench " << kVersion << " (" << kGitCommit << ")\n";
      return kExitOk;
    }
    if (command == "list") return list_command(rest);
    if (command == "run") return run_command(rest, join_command_line(argc, argv));
    if (command == "info") return info_command(rest);
    if (command == "kozlov") return kozlov_command(rest, join_command_line(argc, argv));
    if (command == "analyze") return analyze_command(rest, std::cout);
    throw InputError("unknown command '" + command + "' (expected list, run, kozlov, info or analyze; see clmbench --help)");
  } catch (const InputError& e) {
    return fail(e.what(), kExitInput);
  } catch (const OutputError& e) {
    return fail(e.what(), kExitOutput);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what(), kExitInternal);
  }
}
