// `clmbench kozlov CONFIG.ini`: Kozlov's limit theorems [seed-004] measured as a convergence study.
//
//   Theorem 1: penalty (viscous anisotropic friction R_N = N/2 |A qd|^2) -> the nonholonomic motion (kkt);
//   Theorem 2: added_mass (L_N = L + N/2 |A qd|^2)                         -> the vakonomic motion.
//
// The config is a single-run config (docs/design.md section 4: [run], [param], [initial], [formulation]) plus
// a [kozlov] section. [run] names the problem and the limit family's integrator and tolerances; the
// formulation follows from kozlov.theorem. The reference (kkt or vakonomic) runs once at tight
// tolerance, the limit family once per N, all from the same consistent initial data (on the constraint)
// and sampled on the same grid (run.output_every). Per N:
//   error_q  = max_k |q_N(t_k) - q_ref(t_k)|,  error_qd = max_k |qd_N(t_k) - qd_ref(t_k)|  (Euclidean norms),
//   constraint_violation = max_k |A(q_N) qd_N|,
// and the least-squares fit log10(error) = slope log10(N) + intercept over the finite errors with N in
// [fit_N_min, fit_N_max], with fit_residual = RMS of the log10 residuals. A run that diverges or fails is
// recorded with its status, its errors are NaN and it is left out of the fit; the study goes on.
// Output: every run under /runs as usual, and /kozlov/<study>/ with datasets N, error_q, error_qd,
// constraint_violation, run_id, status, steps, wall_time_s and attributes slope, intercept,
// fit_residual, fitted_error, fit_N_min, fit_N_max, fit_points, theorem, problem, limit_formulation,
// reference_formulation, reference_run.
#pragma once

#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "runs/option_table.hpp"
#include "runs/run_config.hpp"

namespace clm {

struct KozlovSettings {
  std::string study;  // the /kozlov/<study> group name (default: config file stem without "kozlov_")
  int theorem = 1;    // 1: penalty -> kkt; 2: added_mass -> vakonomic
  std::string theorem_text = "1";  // as written (the option row's choice)
  std::vector<double> N;  // the limit family's coefficients (required), each > 0
  std::string reference_integrator = "dopri5";
  double reference_rtol = 1e-12, reference_atol = 1e-14;
  double fit_N_min = 0, fit_N_max = std::numeric_limits<double>::infinity();
  std::string fit_error = "q";  // "q" | "qd": which error the slope is fitted to
};

struct KozlovConfig {
  RunConfig base;  // one run: the limit family's settings (formulation set from the theorem)
  KozlovSettings settings;
  RunSpec reference;       // kkt / vakonomic at the reference tolerances
  std::vector<RunSpec> limit_runs;  // one per N
};

// Reads and validates everything (InputError with one line naming the key) before anything runs.
KozlovConfig load_kozlov_config(const std::string& path, const std::vector<std::string>& sets,
                                const std::optional<std::string>& out_flag);

struct KozlovResult {
  std::vector<double> N, error_q, error_qd, constraint_violation, wall_time_s;
  std::vector<std::string> run_id, status;
  std::vector<long> steps;
  double slope = std::numeric_limits<double>::quiet_NaN();
  double intercept = std::numeric_limits<double>::quiet_NaN();
  double fit_residual = std::numeric_limits<double>::quiet_NaN();
  int fit_points = 0;
};

// Least squares log10(y) = slope log10(x) + intercept over the points with finite y > 0 and x in
// [x_min, x_max]; fills slope, intercept, fit_residual (RMS of log10 residuals) and fit_points
// (NaN slope with fewer than 2 points).
void fit_loglog(const std::vector<double>& x, const std::vector<double>& y, double x_min, double x_max,
                KozlovResult& result);

class ResultsWriter;

// Runs the study, writes every run and /kozlov/<study> to `writer` (not committed), prints the
// error-vs-N table and the slope to `out`, projection notes to `log`.
KozlovResult run_kozlov_study(const KozlovConfig& config, ResultsWriter& writer, std::ostream& out, std::ostream& log);

// The resolved configuration (config attribute of the results file); `clmbench kozlov` reads it back.
std::string to_kozlov_config_text(const KozlovConfig& config);

// The rows of the option table for [kozlov] (runs/option_table.hpp).
const std::vector<Option<KozlovSettings>>& kozlov_options();

// The [kozlov] keys for --help.
std::string kozlov_keys_help();

}  // namespace clm
