// `clmbench check --problem P|FILE.toml [--param name=value ...] [--q0 a,b,..] [--qd0 a,b,..] [--t-end T]`: the model
// contracts of runs/model_checks.hpp, one line each with the measured figure, the tolerance and a verdict
// (ok, FAIL, or "-" with why the check does not apply), then a summary line. Exit 0 when no check fails,
// kExitCheckFailed (4) when one does; a file's own errors are, as everywhere, one line and exit 1 (the loader's
// checks at the initial state, which `clmbench mechanism check` describes, run when the file is read).
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "app/command.hpp"
#include "core/value_parsing.hpp"
#include "runs/model_checks.hpp"

namespace clm {

namespace {

po::options_description check_options() {
  po::options_description o("check options", 100, 50);
  o.add_options()
      ("problem", po::value<std::string>(), "problem name (clmbench list problems) or mechanism file (.toml)")
      ("param", po::value<std::vector<std::string>>()->composing(), "name=value, repeatable: problem parameter")
      ("q0", po::value<std::string>(), "a,b,c: the start of the term checks and of the run (default: the problem's)")
      ("qd0", po::value<std::string>(), "a,b,c: its velocities (projected onto the constraints, like a run's)")
      ("t-end", po::value<std::string>(), "length of the run of the closed-form and energy checks (default 1)")
      ("seed", po::value<std::string>(), "seed of the random states, directions and parameter sets (default 24)")
      ("tsv", "one tab-separated row per check instead: name, value, tolerance, verdict, figures (for scripts)")
      ("help,h", "this help");
  return o;
}

std::string check_help() {
  std::ostringstream s;
  s << "usage: clmbench check --problem P|FILE.toml [--param name=value ...] [--q0 a,b,..] [--qd0 a,b,..] [--t-end T]\n"
       "                      [--seed N] [--tsv]\n\n"
       "Runs the contracts every zoo problem is tested for on one problem or mechanism file, in seconds, and prints\n"
       "one line per check: the measured figures, the tolerance and a verdict, ok, FAIL, or \"-\" with why the check\n"
       "does not apply; then a summary line. The term checks run at the start (the problem's default initial state,\n"
       "or --q0/--qd0 projected onto the constraints like a run's) and at 4 random states near it, off the\n"
       "constraints (the identities hold everywhere), along every coordinate axis up to 16 coordinates and along 4\n"
       "random directions beyond. A relative figure is the largest difference over those states divided by the\n"
       "largest term. FD: Richardson-extrapolated central differences of Model terms alone (truncation O(step^4),\n"
       "steps 1e-3 of each coordinate), at most 5e-11 from the terms on every zoo problem and shipped file.\n\n"
       "  initial state                 |h(q0)| and |A(q0) qd0 + b| of the default initial state <= 1e-12 (the runner's\n"
       "                                threshold: above it a run projects the state onto the constraints)\n"
       "  initial state, params +-10 %  the same for 8 parameter sets drawn within +-10 % of the given values (0: +-0.1;\n"
       "                                an integer rounded where a fraction is refused; a parameter the problem admits\n"
       "                                at no other value, such as a file's min = max, held; refused sets skipped): the\n"
       "                                default state must follow the parameters\n"
       "  mass matrix                   M symmetric (|M - M^T| <= 1e-12 |M|) and positive definite (condition number\n"
       "                                <= 1e14) at every checked state\n"
       "  A (, b) vs FD of h            holonomic constraints: A = dh/dq and, time-dependent, b = dh/dt (1e-7)\n"
       "  Adot qd vs FD                 the acceleration-level bias against d/ds [A qd + b] along (q + s qd, t + s)\n"
       "                                (1e-7): the second derivative of the constraints that formulations enforce\n"
       "  dL/dq, p vs FD of L           the Lagrangian's derivatives the variational integrators use, against\n"
       "                                differences of L = T + qd . a - V (1e-7)\n"
       "  c vs FD of L                  the bias c (Coriolis, centrifugal, gravity, gyroscopic terms) against the\n"
       "                                Euler-Lagrange expression d/dt(dL/dqd) - dL/dq at qdd = 0 (1e-7)\n"
       "  derivatives vs FD             the exact Jacobians' dM/dq, dA/dq, dc/dq, dc/dqd, d(Adot qd)/d(q, qd) and\n"
       "                                dF/d(q, qd) of a generalized force (1e-7); \"-\" with explicit time dependence\n"
       "                                or a force written for double only (the model has none), and beyond 64\n"
       "                                coordinates (dense n^3 cost)\n"
       "  analytic vs autodiff          hand-written terms (analytic_terms; a file's reverse mode from 8 coordinates)\n"
       "                                against the autodiff model (1e-11)\n"
       "  sparse vs dense               the bodies-and-joints terms against the dense ones (1e-12)\n"
       "  velocity basis                a stated S(q): |A S| <= 1e-12 |A| |S|, rank n - m, Sdot v against FD (1e-7)\n"
       "  closed form                   a kkt + dopri5 run (rtol 1e-12, atol 1e-14) to --t-end (default 1) against the\n"
       "                                closed form: max |q - q_cf| / max(1, |q|) and the same for qd <= 1e-8 (a file's\n"
       "                                [closed_form] is checked by its loader at t = 0 only)\n"
       "  energy                        that run's max |E - E0| / max |E| <= 1e-8 where energy is conserved (no explicit\n"
       "                                time dependence, no generalized force); with explicit time dependence the energy\n"
       "                                balance residual |E - E0 - W| (core/energy_balance.hpp); \"-\" with forces\n\n"
       "The run stops after 5000 steps (a stiff or fast problem, andrews_squeezer, is judged over the part it ran);\n"
       "positions and velocities are projected after each step on problems with singular positions (n_four_bar),\n"
       "which kkt cannot pass otherwise. The tolerances sit 3-4 decades above the largest figure measured on every zoo\n"
       "problem and shipped mechanism file (docs/design.md, \"clmbench check\"), and far below what a wrong term gives.\n"
       "A mechanism file is read and compiled first: its errors, and the loader's checks at the initial state (T\n"
       "quadratic, M positive definite, the optional sections, the closed form at t = 0), are one line\n"
       "FILE:LINE:COLUMN and exit 1; `clmbench mechanism check FILE` describes the file (sizes, kind, eigenvalues of M,\n"
       "rank of A, integrability).\n\n"
       "Examples: clmbench check --problem chaplygin_sleigh\n"
       "          clmbench check --problem mechanisms/coin_on_incline.toml --param alpha=0.4\n\n"
    << check_options() << "\n"
    << exit_codes_help()
    << "  4  clmbench check: a check failed (the summary line counts them)\n";
  return s.str();
}

std::string verdict_text(ModelCheck::Verdict v) {
  switch (v) {
    case ModelCheck::Verdict::kOk: return "ok";
    case ModelCheck::Verdict::kFail: return "FAIL";
    case ModelCheck::Verdict::kSkipped: return "-";
  }
  return "?";
}

std::optional<std::vector<double>> number_list(const po::variables_map& vm, const char* flag) {
  if (!vm.count(flag)) return std::nullopt;
  return parse_number_list(vm[flag].as<std::string>(), std::string("--") + flag);
}

int check(const CommandInvocation& call) {
  const po::variables_map vm = parse_command_line(call.args, check_options(), "check");
  if (vm.count("help")) {
    call.out << check_help();
    return kExitOk;
  }
  if (!vm.count("problem")) throw InputError("check needs --problem P or --problem FILE.toml (see clmbench check --help)");
  ModelCheckSettings settings;
  for (const auto& p : strings_of(vm, "param")) {
    const auto [name, value] = split_param(p);
    settings.overrides[name] = parse_number(value, "--param " + name);
  }
  settings.q0 = number_list(vm, "q0");
  settings.qd0 = number_list(vm, "qd0");
  if (vm.count("t-end")) {
    settings.t_end = parse_number(vm["t-end"].as<std::string>(), "--t-end");
    if (!(settings.t_end > 0) || !std::isfinite(settings.t_end))
      throw InputError("--t-end must be a positive number (got " + echo_value(vm["t-end"].as<std::string>()) + ")");
  }
  if (vm.count("seed")) {
    const double seed = parse_number(vm["seed"].as<std::string>(), "--seed");
    if (!(seed >= 0 && seed <= 4294967295.0 && seed == std::floor(seed)))
      throw InputError("--seed must be an integer in [0, 2^32) (got " + echo_value(vm["seed"].as<std::string>()) + ")");
    settings.seed = static_cast<unsigned>(seed);
  }
  const ModelCheckReport report = check_model(vm["problem"].as<std::string>(), settings);
  auto& out = call.out;
  const int ok = report.count(ModelCheck::Verdict::kOk), failed = report.count(ModelCheck::Verdict::kFail),
            skipped = report.count(ModelCheck::Verdict::kSkipped);
  if (vm.count("tsv")) {
    out << "check\tvalue\ttolerance\tverdict\tfigures\n";
    for (const ModelCheck& c : report.checks) {
      char numbers[64];
      std::snprintf(numbers, sizeof numbers, "%.3e\t%.0e", c.value, c.tolerance);
      out << c.name << "\t" << (c.verdict == ModelCheck::Verdict::kSkipped ? "-\t-" : numbers) << "\t"
          << verdict_text(c.verdict) << "\t" << c.measured << "\n";
    }
    return failed ? kExitCheckFailed : kExitOk;
  }
  for (const auto& note : report.notes) out << note << "\n";
  // name, figures, tolerance, verdict; a long figure pushes the last two columns right rather than wrap.
  constexpr std::size_t kName = 30, kText = 92, kTol = 11;
  auto padded = [](std::string s, std::size_t width) { return s.size() < width ? s + std::string(width - s.size(), ' ') : s + "  "; };
  for (const ModelCheck& c : report.checks) {
    char tol[32] = "";
    if (c.verdict != ModelCheck::Verdict::kSkipped && std::isfinite(c.tolerance))
      std::snprintf(tol, sizeof tol, "tol %.0e", c.tolerance);
    out << padded(c.name, kName) << padded(c.measured, kText) << padded(tol, kTol) << verdict_text(c.verdict) << "\n";
  }
  double seconds = 0;
  for (const ModelCheck& c : report.checks) seconds += c.seconds;
  char took[32];
  std::snprintf(took, sizeof took, "%.2g s", seconds);
  out << (failed ? "FAILED: " : "passed: ") << ok << " ok, " << failed << " FAIL, " << skipped << " not applicable ("
      << report.problem << ", " << took << ")\n";
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace

Command check_command() {
  return {"check",
          "the model contracts of the test suite on one problem or mechanism file: initial state (also for\n"
          "perturbed parameters), terms against finite differences, closed form and energy against a run",
          check_help, check};
}

}  // namespace clm
