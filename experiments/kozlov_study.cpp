#include "experiments/kozlov_study.hpp"

#include "core/loglog_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/integrator.hpp"
#include "experiments/hdf5_writer.hpp"
#include "experiments/runner.hpp"
#include "experiments/value_parsing.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct KozlovKey {
  const char* key;
  const char* default_value;
  const char* description;
};
const KozlovKey kKozlovKeys[] = {
    {"theorem", "(required)", "1: penalty -> kkt (anisotropic friction); 2: added_mass -> vakonomic (added masses)"},
    {"N", "(required)", "the limit family's coefficients, e.g. 1e1 1e2 1e3 1e4 1e5 1e6 (each > 0)"},
    {"study", "<config stem without kozlov_>", "group name: results under /kozlov/<study>"},
    {"reference_integrator", "dopri5", "integrator of the reference run (kkt / vakonomic)"},
    {"reference_rtol", "1e-12", "relative tolerance of the reference run"},
    {"reference_atol", "1e-14", "absolute tolerance of the reference run"},
    {"fit_N_min", "smallest N", "fit only the N >= fit_N_min"},
    {"fit_N_max", "largest N", "fit only the N <= fit_N_max"},
    {"fit_error", "q", "which error the slope is fitted to: q (max |q_N - q_ref|) or qd (max |qd_N - qd_ref|)"},
};

std::string known_keys() {
  std::string s;
  for (const auto& k : kKozlovKeys) s += (s.empty() ? "" : ", ") + std::string(k.key);
  return s;
}

bool valid_study_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// "1e3" for exact powers of ten, else the round-trip text with '.' and '+' made name-safe.
std::string n_label(double N) {
  const double e = std::round(std::log10(N));
  if (std::abs(N - std::pow(10.0, e)) <= 1e-12 * N) return "1e" + std::to_string(static_cast<int>(e));
  std::string s = format_number(N);
  for (char& c : s)
    if (c == '.') c = 'p';
  s.erase(std::remove(s.begin(), s.end(), '+'), s.end());
  return s;
}

std::string where(const std::string& key, const ConfigValue& v) {
  return "kozlov." + key + (v.origin == "--set" ? std::string(" (--set)") : " in " + v.origin);
}

std::string short_number(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

KozlovConfig load_kozlov_config(const std::string& path, const std::vector<std::string>& sets,
                                const std::optional<std::string>& out_flag) {
  ConfigLayer file = read_config_file(path, {"kozlov"});
  std::map<std::string, ConfigValue> kozlov;
  if (auto s = file.find("kozlov"); s != file.end()) {
    kozlov = s->second;
    file.erase(s);
  }
  for (const auto& assignment : sets) {
    const auto eq = assignment.find('=');
    const std::string name = eq == std::string::npos ? std::string() : trim(assignment.substr(0, eq));
    if (name.rfind("kozlov.", 0) == 0 && name.size() > 7) {
      kozlov[name.substr(7)] = {trim(assignment.substr(eq + 1)), "--set", 1L << 40};
    } else {
      apply_set(file, assignment);
    }
  }
  if (kozlov.empty()) throw InputError("config file '" + path + "' has no [kozlov] section (see clmbench kozlov --help)");
  for (const auto& [key, value] : kozlov) {
    const bool known = std::any_of(std::begin(kKozlovKeys), std::end(kKozlovKeys),
                                   [&](const KozlovKey& k) { return key == k.key; });
    if (!known)
      throw InputError("unknown config key 'kozlov." + key + "' in " + value.origin + " (known keys of [kozlov]: " +
                       known_keys() + ")");
  }
  for (const auto& [section, keys] : file) {
    if (section.find('.') != std::string::npos || section == "sweep") {
      throw InputError("config section [" + section + "] in " + keys.begin()->second.origin +
                       " is not used by kozlov (one study per file: [run], [param], [initial], [formulation], [kozlov])");
    }
  }

  KozlovConfig c;
  KozlovSettings& k = c.settings;
  auto get = [&](const char* key) -> const ConfigValue* {
    auto it = kozlov.find(key);
    return it == kozlov.end() ? nullptr : &it->second;
  };
  if (const ConfigValue* v = get("theorem")) {
    const std::string t = trim(v->text);
    if (t != "1" && t != "2") throw InputError("bad value '" + t + "' for " + where("theorem", *v) + " (expected 1 or 2)");
    k.theorem = t == "1" ? 1 : 2;
  } else {
    throw InputError("no kozlov.theorem given in " + path + " (1: penalty -> kkt, 2: added_mass -> vakonomic)");
  }
  if (const ConfigValue* v = get("N")) {
    k.N = parse_number_list(v->text, where("N", *v));
    for (double N : k.N)
      if (!(N > 0)) throw InputError(where("N", *v) + ": every N must be > 0 (got " + format_number(N) + ")");
    for (size_t i = 0; i < k.N.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (k.N[i] == k.N[j]) throw InputError(where("N", *v) + ": N = " + format_number(k.N[i]) + " is given twice");
  } else {
    throw InputError("no kozlov.N given in " + path + " (e.g. N = 1e1 1e2 1e3 1e4 1e5 1e6)");
  }
  if (const ConfigValue* v = get("study")) {
    k.study = trim(v->text);
    if (!valid_study_name(k.study))
      throw InputError("bad value '" + k.study + "' for " + where("study", *v) + " (letters, digits, _ and -)");
  } else {
    k.study = std::filesystem::path(path).stem().string();
    if (k.study.rfind("kozlov_", 0) == 0 && k.study.size() > 7) k.study = k.study.substr(7);
    for (char& ch : k.study)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) ch = '_';
  }
  if (const ConfigValue* v = get("reference_integrator")) {
    k.reference_integrator = trim(v->text);
    integrator_registry().get(k.reference_integrator);
  }
  auto positive = [&](const char* key, double& target, bool allow_zero) {
    if (const ConfigValue* v = get(key)) {
      target = parse_number(v->text, where(key, *v));
      if (allow_zero ? target < 0 : target <= 0)
        throw InputError(where(key, *v) + " must be " + (allow_zero ? ">= 0" : "> 0") + " (got " + format_number(target) + ")");
    }
  };
  positive("reference_rtol", k.reference_rtol, false);
  positive("reference_atol", k.reference_atol, true);
  positive("fit_N_min", k.fit_N_min, false);
  positive("fit_N_max", k.fit_N_max, false);
  if (k.fit_N_min > k.fit_N_max)
    throw InputError("kozlov.fit_N_min (" + format_number(k.fit_N_min) + ") is above kozlov.fit_N_max (" +
                     format_number(k.fit_N_max) + ")");
  if (const ConfigValue* v = get("fit_error")) {
    k.fit_error = trim(v->text);
    if (k.fit_error != "q" && k.fit_error != "qd")
      throw InputError("bad value '" + k.fit_error + "' for " + where("fit_error", *v) + " (expected q or qd)");
  }

  const std::string family = k.theorem == 1 ? "penalty" : "added_mass";
  if (auto s = file.find("run"); s != file.end() && s->second.count("formulation")) {
    const ConfigValue& v = s->second.at("formulation");
    if (trim(v.text) != family)
      throw InputError("run.formulation = " + trim(v.text) + " in " + v.origin + " contradicts kozlov.theorem = " +
                       std::to_string(k.theorem) + " (its limit family is " + family + "; leave run.formulation out)");
  }
  ConfigLayer flags;
  flags["run"]["formulation"] = {family, "kozlov.theorem"};
  c.base = resolve_run_config(path, file, flags, out_flag);
  if (!out_flag && !(file.count("run") && file.at("run").count("out")))
    c.base.out = "results/" + std::filesystem::path(path).stem().string() + ".h5";
  const RunSpec& base = c.base.runs.front();
  if (!(base.output_every > 0))
    throw InputError("run.output_every must be > 0 for kozlov (the errors are compared on a common sample grid)");

  c.reference = base;
  c.reference.formulation = k.theorem == 1 ? "kkt" : "vakonomic";
  c.reference.integrator = k.reference_integrator;
  c.reference.rtol = k.reference_rtol;
  c.reference.atol = k.reference_atol;
  c.reference.named = true;
  c.reference.run_id = "reference_" + c.reference.formulation;
  for (double N : k.N) {
    RunSpec r = base;
    r.options.N = N;
    r.named = true;
    r.run_id = family + "_N" + n_label(N);
    c.limit_runs.push_back(std::move(r));
  }
  return c;
}

void fit_loglog(const std::vector<double>& x, const std::vector<double>& y, double x_min, double x_max,
                KozlovResult& result) {
  // The fit itself is core/loglog_fit.hpp's; here only the N range is applied.
  std::vector<double> xs, ys;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] >= x_min && x[i] <= x_max) {
      xs.push_back(x[i]);
      ys.push_back(y[i]);
    }
  }
  const LogLogFit fit = clm::fit_loglog(xs, ys);
  result.fit_points = fit.points;
  result.slope = fit.slope;
  result.intercept = fit.intercept;
  result.fit_residual = fit.residual;
}

namespace {

// max_k |a_k - b_k| over the common samples (rows of n numbers); NaN when the grids differ or a run
// did not reach the end.
double max_row_distance(const RunRecord& a, const RunRecord& b, const std::vector<double>& va,
                        const std::vector<double>& vb) {
  if (a.status != "ok" || b.status != "ok" || a.samples() != b.samples() || a.samples() == 0) return kNaN;
  const size_t n = static_cast<size_t>(a.n);
  double worst = 0;
  for (size_t k = 0; k < a.samples(); ++k) {
    if (std::abs(a.t[k] - b.t[k]) > 1e-9 * std::max(1.0, std::abs(b.t[k]))) return kNaN;
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      const double d = va[k * n + i] - vb[k * n + i];
      s += d * d;
    }
    worst = std::max(worst, std::sqrt(s));
  }
  return std::isfinite(worst) ? worst : kNaN;
}

}  // namespace

KozlovResult run_kozlov_study(const KozlovConfig& c, ResultsWriter& writer, std::ostream& out, std::ostream& log) {
  const KozlovSettings& k = c.settings;
  // Every run is prepared (names, refusals, initial data) before the first starts.
  PreparedRun reference = prepare_run(c.reference, log);
  std::vector<PreparedRun> limits;
  for (const RunSpec& spec : c.limit_runs) limits.push_back(prepare_run(spec, log));

  const RunSpec& base = c.base.runs.front();
  out << "kozlov study " << k.study << ": Theorem " << k.theorem << ", " << base.problem << ", t in [0, "
      << format_number(base.t_end) << "]\n  limit " << base.formulation << " (" << base.integrator << ", rtol "
      << format_number(base.rtol) << ") -> reference " << c.reference.formulation << " (" << k.reference_integrator
      << ", rtol " << format_number(k.reference_rtol) << ")\n";

  const RunRecord ref = execute_run(reference);
  writer.write_run(ref);
  reference.formulation.reset();
  out << "  reference " << ref.spec.run_id << ": " << ref.status << (ref.message.empty() ? "" : " (" + ref.message + ")")
      << ", " << ref.stats.steps << " steps, " << short_number(ref.wall_time_s) << " s\n";
  if (ref.status != "ok")
    out << "  warning: the reference did not reach t_end; every error is NaN\n";

  KozlovResult result;
  char line[256];
  std::snprintf(line, sizeof line, "  %-9s %-11s %-11s %-11s %-8s %-8s %s\n", "N", "error_q", "error_qd", "max|A qd|",
                "steps", "time_s", "status");
  out << line;
  for (PreparedRun& run : limits) {
    const RunRecord r = execute_run(run);
    writer.write_run(r);
    run.formulation.reset();
    const double eq = max_row_distance(r, ref, r.q, ref.q);
    const double eqd = max_row_distance(r, ref, r.qd, ref.qd);
    const double cv = r.status == "ok" ? r.summary.max_drift_velocity : kNaN;
    result.N.push_back(r.spec.options.N);
    result.error_q.push_back(eq);
    result.error_qd.push_back(eqd);
    result.constraint_violation.push_back(cv);
    result.wall_time_s.push_back(r.wall_time_s);
    result.run_id.push_back(r.spec.run_id);
    result.status.push_back(r.status);
    result.steps.push_back(r.stats.steps);
    std::snprintf(line, sizeof line, "  %-9.0e %-11.3e %-11.3e %-11.3e %-8ld %-8.3f %s", r.spec.options.N, eq, eqd, cv,
                  r.stats.steps, r.wall_time_s, r.status.c_str());
    out << line << (r.message.empty() ? "" : " (" + r.message + ")") << "\n";
  }
  const std::vector<double>& fitted = k.fit_error == "q" ? result.error_q : result.error_qd;
  fit_loglog(result.N, fitted, k.fit_N_min, k.fit_N_max, result);
  std::vector<std::string> excluded;
  for (size_t i = 0; i < result.N.size(); ++i)
    if (!std::isfinite(fitted[i]) || !(fitted[i] > 0)) excluded.push_back(format_number(result.N[i]));
  if (!excluded.empty()) {
    out << "  excluded from the fit (diverged, failed or no error):";
    for (const auto& s : excluded) out << " N=" << s;
    out << "\n";
  }
  std::snprintf(line, sizeof line,
                "  slope %.4f (log10 error_%s vs log10 N, %d points, N in [%g, %g]), intercept %.4f, fit residual %.3g\n",
                result.slope, k.fit_error.c_str(), result.fit_points, std::max(k.fit_N_min, *std::min_element(k.N.begin(), k.N.end())),
                std::min(k.fit_N_max, *std::max_element(k.N.begin(), k.N.end())), result.intercept, result.fit_residual);
  out << line;

  ResultGroup g;
  g.path = "kozlov/" + k.study;
  g.numbers = {{"N", result.N},
               {"error_q", result.error_q},
               {"error_qd", result.error_qd},
               {"constraint_violation", result.constraint_violation},
               {"wall_time_s", result.wall_time_s}};
  g.integers = {{"steps", result.steps}};
  g.strings = {{"run_id", result.run_id}, {"status", result.status}};
  g.number_attributes = {{"slope", result.slope},
                         {"intercept", result.intercept},
                         {"fit_residual", result.fit_residual},
                         {"fit_points", static_cast<double>(result.fit_points)},
                         {"fit_N_min", k.fit_N_min},
                         {"fit_N_max", k.fit_N_max},
                         {"theorem", static_cast<double>(k.theorem)},
                         {"t_end", base.t_end}};
  g.text_attributes = {{"fitted_error", "error_" + k.fit_error},
                       {"problem", base.problem},
                       {"limit_formulation", base.formulation},
                       {"limit_integrator", base.integrator},
                       {"reference_formulation", c.reference.formulation},
                       {"reference_integrator", k.reference_integrator},
                       {"reference_run", c.reference.run_id},
                       {"reference_status", ref.status}};
  writer.write_group(g);
  return result;
}

std::string to_kozlov_config_text(const KozlovConfig& c) {
  const KozlovSettings& k = c.settings;
  std::ostringstream s;
  s << "# resolved clmbench kozlov study; run it again with: clmbench kozlov FILE.ini\n";
  std::string base = to_config_text(c.base);
  s << base.substr(base.find('\n') + 1);
  s << "\n[kozlov]\nstudy = " << k.study << "\ntheorem = " << k.theorem << "\nN =";
  for (double N : k.N) s << " " << format_number(N);
  s << "\nreference_integrator = " << k.reference_integrator << "\nreference_rtol = " << format_number(k.reference_rtol)
    << "\nreference_atol = " << format_number(k.reference_atol) << "\n";
  if (k.fit_N_min > 0) s << "fit_N_min = " << format_number(k.fit_N_min) << "\n";
  if (std::isfinite(k.fit_N_max)) s << "fit_N_max = " << format_number(k.fit_N_max) << "\n";
  s << "fit_error = " << k.fit_error << "\n";
  return s.str();
}

std::string kozlov_keys_help() {
  std::ostringstream s;
  s << "  [kozlov]\n";
  for (const auto& k : kKozlovKeys) {
    std::string lhs = "    " + std::string(k.key) + " = " + k.default_value;
    if (lhs.size() < 36) s << lhs << std::string(36 - lhs.size(), ' ') << k.description << "\n";
    else s << lhs << "\n" << std::string(36, ' ') << k.description << "\n";
  }
  return s.str();
}

}  // namespace clm
