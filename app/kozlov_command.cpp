// `clmbench kozlov CONFIG.ini`: Kozlov's limit theorems as a convergence study (studies/kozlov_study.hpp).
#include <iostream>
#include <sstream>

#include "core/types.hpp"
#include "app/command.hpp"
#include "runs/results_writer.hpp"
#include "studies/kozlov_study.hpp"

namespace clm {

namespace {

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

po::options_description kozlov_flags() {
  po::options_description options("kozlov options");
  options.add_options()
      ("set", po::value<std::vector<std::string>>()->composing(), "section.key=value, repeatable")
      ("out", po::value<std::string>(), "output HDF5 file")
      ("help,h", "this help");
  return options;
}

std::string kozlov_help() {
  std::ostringstream s;
  s << "usage: clmbench kozlov CONFIG.ini [--set section.key=value ...] [--out FILE.h5]\n"
    << "  --set kozlov.N='1e2 1e3' edits a [kozlov] key, --set run.t_end=2 any other key\n"
    << kKozlovDetails << kozlov_keys_help()
    << "\nShipped studies: experiments/kozlov_{friction,added_mass}_{sleigh,skate,disk}.ini\n\n"
    << exit_codes_help();
  return s.str();
}

int kozlov(const CommandInvocation& call) {
  const po::options_description flags = kozlov_flags();
  const po::variables_map vm = parse_command_line(call.args, flags, "kozlov", "config");
  if (vm.count("help")) {
    call.out << kozlov_help();
    return kExitOk;
  }
  const std::optional<std::string> config_path = single_config(vm, "kozlov");
  if (!config_path)
    throw InputError("kozlov needs a config file (clmbench kozlov CONFIG.ini; see clmbench kozlov --help)");
  const std::optional<std::string> out_flag =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;

  const KozlovConfig config = load_kozlov_config(*config_path, strings_of(vm, "set"), out_flag);
  ResultsWriter writer(config.base.out, {*config_path});
  run_kozlov_study(config, writer, call.out, call.err);
  writer.commit({call.command_line, to_kozlov_config_text(config), ""});
  call.out << "wrote " << config.base.out << " (" << config.limit_runs.size() + 1 << " runs, /kozlov/"
           << config.settings.study << ")\n";
  return kExitOk;
}

}  // namespace

Command kozlov_command() {
  return {"kozlov",
          "Kozlov's limit theorems as a convergence study: the reference (kkt or vakonomic) and the limit\n"
          "family (penalty or added_mass) over a list of N, error vs N and its log-log slope (see kozlov --help)",
          kozlov_help, kozlov};
}

}  // namespace clm
