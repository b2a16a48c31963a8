// `clmbench analyze --problem P [--param name=value ...] [--q0 a,b,c]`: the constraint analysis of
// analysis/constraint_analysis.hpp (n, m, rank A(q), DOF, integrability, accessibility), human-readable.
#include <map>
#include <optional>
#include <sstream>

#include "core/problem_registry.hpp"
#include "app/analyze_equilibrium.hpp"
#include "app/command.hpp"
#include "io/results_file.hpp"
#include "app/problem_analysis.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

constexpr const char* kSpeedAnalysisHelp =
    "\nWith --speed: the linearization about the problem's steady motion at each speed (problems that declare\n"
    "one: bicycle, steady straight running), by automatic differentiation of the nonlinear model; prints per\n"
    "speed the eigenvalues of the linearized equations (lean/steer for the bicycle) and the speeds where the\n"
    "stability changes, bisected to 1e-12 (bicycle: \"weave speed = ...\", \"capsize speed = ...\"); --out F.h5\n"
    "writes /analysis/speed [K], /analysis/eigenvalues_real and /analysis/eigenvalues_imag [K, 2k].\n"
    "Example: clmbench analyze --problem bicycle --speed 0:10:0.5 --out results/bicycle_speeds.h5\n\n";

po::options_description analyze_options() {
  po::options_description o("analyze options", 100, 50);
  o.add_options()
      ("problem", po::value<std::string>(), "problem name (clmbench list problems)")
      ("param", po::value<std::vector<std::string>>()->composing(), "name=value, repeatable: problem parameter")
      ("q0", po::value<std::string>(), "a,b,c: the configuration q to analyse (default: the problem's q0)")
      ("speed", po::value<std::string>(), "v1,v2,... or start:stop:step: linearize about the problem's steady motion at "
                                          "each speed (analysis/speed_analysis.hpp)")
      ("help,h", "this help");
  add_equilibrium_flags(o);
  return o;
}

std::string analyze_help() {
  std::ostringstream s;
  s << "usage: clmbench analyze --problem P [--param name=value ...] [--q0 a,b,c]\n"
    << "       clmbench analyze --problem P [--param ...] [--q0 a,b,c] [--qd0 a,b,c] --equilibrium [--equilibrium-tol T] [--out F.h5]\n\n"
    << "       clmbench analyze --problem P [--param name=value ...] --speed LIST [--out FILE.h5]\n\n"
    << "Constraint analysis at the configuration q (default: the problem's q0): n, m, the rank of A(q)\n"
       "(SVD, singular values above 1e-9 x the largest), the degrees of freedom n - rank, and for Pfaffian\n"
       "problems whether the constraint distribution D = ker A is involutive (Frobenius: the Lie brackets\n"
       "[X_i, X_j] of a basis of D, by automatic differentiation, lie in D; the largest residual, the sine of\n"
       "the angle between a bracket and D, is printed, involutive below 1e-8), i.e. whether the constraints\n"
       "are holonomic in disguise, and the dimension reached by iterated brackets up to depth 3\n"
       "(accessibility; depth >= 2 by 4th-order central differences, span tolerance 1e-6) with the depth at\n"
       "which it was reached. Holonomic problems are integrable by construction (accessible dimension = DOF).\n"
       "The verdicts hold at the q analysed. Example: clmbench analyze --problem sphere_in_disguise --q0 1,2,2\n"
       "For a kinematic system (actuated coordinates declared, m = n_p, W_p invertible at q; seed 000 eq. 2.14):\n"
       "the input vector fields g_j of qd = sum_j g_j qd_aj, their Lie brackets [g_i, g_j] (autodiff) and the\n"
       "controllability rank (of the g_i with their brackets, and with iterated brackets). --out F.h5 writes\n"
       "/analysis (q, singular_values, span_by_depth; input_fields [k, n], brackets [pairs, n], bracket_names).\n"
       "Example: clmbench analyze --problem kinematic_car --q0 0,0,0,0.3,0 --out results/car_brackets.h5\n\n"
    << equilibrium_help()
    << kSpeedAnalysisHelp << analyze_options();
  return s.str();
}

// --speed (analysis/speed_analysis.hpp); kept apart from the constraint analysis.
int analyze_speed_command(const CommandInvocation& call, const std::string& problem,
                          const std::map<std::string, double>& overrides, const po::variables_map& vm) {
  if (vm.count("q0")) throw InputError("analyze: --q0 does not apply to --speed (the steady motion fixes q)");
  const std::vector<double> speeds = parse_speed_list(vm["speed"].as<std::string>(), "--speed");
  std::optional<std::string> out;
  if (vm.count("out")) {
    out = vm["out"].as<std::string>();
    check_output_path(*out, {});  // before the analysis runs
  }
  SpeedAnalysis a;
  try {
    a = analyze_problem_speeds(problem, overrides, speeds);
  } catch (const NumericalFailure& e) {  // e.g. parameters whose front wheel cannot reach the ground
    throw InputError(std::string("--speed: ") + e.what());
  }
  call.out << format_speed_analysis(a);
  if (out) {
    write_speed_analysis(*out, a, call.command_line);
    call.out << "wrote " << *out << "\n";
  }
  return kExitOk;
}

int analyze(const CommandInvocation& call) {
  const po::options_description options = analyze_options();
  const po::variables_map vm = parse_command_line(call.args, options, "analyze");
  if (vm.count("help")) {
    call.out << analyze_help();
    return kExitOk;
  }
  if (!vm.count("problem")) throw InputError("analyze needs --problem P (see clmbench analyze --help)");
  const std::string problem = vm["problem"].as<std::string>();
  find_problem(problem);  // an unknown name or a bad file is reported before the parameters are read
  std::map<std::string, double> overrides;
  for (const auto& p : strings_of(vm, "param")) {
    const auto [name, value] = split_param(p);
    overrides[name] = parse_number(value, "--param " + name);
  }
  if (vm.count("speed") && vm.count("equilibrium"))
    throw InputError("analyze: --speed and --equilibrium are two analyses; give one of them");
  if (vm.count("speed")) return analyze_speed_command(call, problem, overrides, vm);
  std::optional<Vec> q;
  if (vm.count("q0")) {
    const std::vector<double> values = parse_number_list(vm["q0"].as<std::string>(), "--q0");
    q = Vec(static_cast<Eigen::Index>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) (*q)[static_cast<Eigen::Index>(i)] = values[i];
  }
  if (vm.count("equilibrium")) return run_equilibrium_analysis(call, vm, problem, overrides, q);
  for (const char* flag : {"qd0", "equilibrium-tol"})
    if (vm.count(flag)) throw InputError(std::string("analyze: --") + flag + " is read only with --equilibrium");
  std::optional<std::string> out;
  if (vm.count("out")) {
    out = vm["out"].as<std::string>();
    check_output_path(*out, {});  // before the analysis runs
  }
  const ConstraintAnalysis a = analyze_problem(problem, overrides, q);
  call.out << format_constraint_analysis(a);
  if (out) {
    write_constraint_analysis(*out, a, call.command_line);
    call.out << "wrote " << *out << "\n";
  }
  return kExitOk;
}

}  // namespace

Command analyze_command() {
  return {"analyze",
          "n, m, rank of A(q), DOF, integrability of the constraints (Frobenius: Lie brackets of ker A)\n"
          "and the dimension reached by iterated brackets (accessibility) at a configuration q",
          analyze_help, analyze};
}

}  // namespace clm
