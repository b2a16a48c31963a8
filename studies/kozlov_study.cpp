#include "studies/kozlov_study.hpp"

#include "core/loglog_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/integrator.hpp"
#include "runs/results_writer.hpp"
#include "runs/runner.hpp"
#include "studies/study.hpp"
#include "runs/vakonomic_closed_form.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

std::string short_number(double v) { return format_figure(v, "%.3g", "nan"); }

}  // namespace

const std::vector<Option<KozlovSettings>>& kozlov_options() {
  namespace o = option;
  static const std::vector<Option<KozlovSettings>> rows = [] {
    std::vector<Option<KozlovSettings>> r;
    r.push_back(o::choice<KozlovSettings>(
        "kozlov", "theorem", [](auto& k) -> auto& { return k.theorem_text; }, {"1", "2"},
        "1: penalty -> kkt (anisotropic friction); 2: added_mass -> vakonomic (added masses)", "", ""));
    {
      // The theorem is an int in KozlovSettings; the row reads and writes it through its text.
      auto choose = r.back().assign;
      r.back().assign = [choose](KozlovSettings& k, const std::string& text, const std::string& where) {
        choose(k, text, where);
        k.theorem = k.theorem_text == "1" ? 1 : 2;
      };
      r.back().text = [](const KozlovSettings& k) -> std::optional<std::string> { return std::to_string(k.theorem); };
      r.back().default_override = "(required)";
    }
    r.push_back(o::number_list<KozlovSettings>("kozlov", "N", [](auto& k) -> auto& { return k.N; },
                                               "distinct numbers > 0",
                                               "the limit family's coefficients, e.g. 1e1 1e2 1e3 1e4 1e5 1e6", "", ""));
    {
      auto parse = r.back().assign;
      r.back().assign = [parse](KozlovSettings& k, const std::string& text, const std::string& where) {
        parse(k, text, where);
        for (double N : k.N)
          if (!(N > 0)) throw InputError(where + ": every N must be > 0 (got " + format_number(N) + ")");
        for (size_t i = 0; i < k.N.size(); ++i)
          for (size_t j = 0; j < i; ++j)
            if (k.N[i] == k.N[j]) throw InputError(where + ": N = " + format_number(k.N[i]) + " is given twice");
      };
      r.back().default_override = "(required)";
    }
    r.push_back(o::name<KozlovSettings>(
        "kozlov", "study", [](auto& k) -> auto& { return k.study; },
        [](const std::string& v) {
          if (!valid_study_name(v)) throw InputError("bad value '" + echo_value(v) + "' for kozlov.study (letters, digits, _ and -)");
        },
        "letters, digits, _ and -", "group name: results under /kozlov/<study>", "", ""));
    r.back().default_override = "<config stem without kozlov_>";
    r.push_back(o::name<KozlovSettings>(
        "kozlov", "reference_integrator", [](auto& k) -> auto& { return k.reference_integrator; },
        [](const std::string& v) { integrator_registry().get(v); }, "a registered integrator",
        "integrator of the reference run (kkt / vakonomic)", "", ""));
    r.push_back(o::number<KozlovSettings>("kozlov", "reference_rtol", [](auto& k) -> auto& { return k.reference_rtol; },
                                          positive(), "", "relative tolerance of the reference run", "", ""));
    r.push_back(o::number<KozlovSettings>("kozlov", "reference_atol", [](auto& k) -> auto& { return k.reference_atol; },
                                          non_negative(), "", "absolute tolerance of the reference run", "", ""));
    r.push_back(o::number<KozlovSettings>("kozlov", "fit_N_min", [](auto& k) -> auto& { return k.fit_N_min; },
                                          positive(), "", "fit only the N >= fit_N_min", "", ""));
    r.back().default_override = "smallest N";
    r.back().text = [](const KozlovSettings& k) -> std::optional<std::string> {
      if (!(k.fit_N_min > 0)) return std::nullopt;
      return format_number(k.fit_N_min);
    };
    r.push_back(o::number<KozlovSettings>("kozlov", "fit_N_max", [](auto& k) -> auto& { return k.fit_N_max; },
                                          positive(), "", "fit only the N <= fit_N_max", "", ""));
    r.back().default_override = "largest N";
    r.back().text = [](const KozlovSettings& k) -> std::optional<std::string> {
      if (!std::isfinite(k.fit_N_max)) return std::nullopt;
      return format_number(k.fit_N_max);
    };
    r.push_back(o::choice<KozlovSettings>(
        "kozlov", "fit_error", [](auto& k) -> auto& { return k.fit_error; }, {"q", "qd"},
        "which error the slope is fitted to: q (max |q_N - q_ref|) or qd (max |qd_N - qd_ref|)", "", ""));
    return r;
  }();
  return rows;
}

KozlovConfig load_kozlov_config(const std::string& path, const std::vector<std::string>& sets,
                                const std::optional<std::string>& out_flag) {
  StudyConfig<KozlovSettings> study = read_study_config(path, sets, "kozlov", kozlov_options());
  const ConfigLayer& file = study.file;
  KozlovConfig c;
  c.settings = study.settings;
  KozlovSettings& k = c.settings;
  if (!study.given.count("theorem"))
    throw InputError("no kozlov.theorem given in " + path + " (1: penalty -> kkt, 2: added_mass -> vakonomic)");
  if (!study.given.count("N"))
    throw InputError("no kozlov.N given in " + path + " (e.g. N = 1e1 1e2 1e3 1e4 1e5 1e6)");
  if (!study.given.count("study")) {
    k.study = std::filesystem::path(path).stem().string();
    if (k.study.rfind("kozlov_", 0) == 0 && k.study.size() > 7) k.study = k.study.substr(7);
    for (char& ch : k.study)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-')) ch = '_';
  }
  if (k.fit_N_min > k.fit_N_max)
    throw InputError("kozlov.fit_N_min (" + format_number(k.fit_N_min) + ") is above kozlov.fit_N_max (" +
                     format_number(k.fit_N_max) + ")");
  const long in_range = std::count_if(k.N.begin(), k.N.end(), [&](double N) { return N >= k.fit_N_min && N <= k.fit_N_max; });
  if (in_range == 0)
    throw InputError("kozlov.fit_N_min .. kozlov.fit_N_max = [" + format_number(k.fit_N_min) + ", " +
                     format_number(k.fit_N_max) + "] holds none of kozlov.N; nothing to fit");

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
    r.limit_gap_estimate = false;  // the study measures the gap against the limit itself
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
  // The [formulation] options are the limit family's: the reference does not read most of them.
  PreparedRun reference = prepare_run(c.reference, log, /*warn_unused=*/false);
  std::vector<PreparedRun> limits = prepare_runs(c.limit_runs, log);

  const RunSpec& base = c.base.runs.front();
  out << "kozlov study " << k.study << ": Theorem " << k.theorem << ", " << base.problem << ", t in [0, "
      << format_number(base.t_end) << "]\n  limit " << base.formulation << " (" << base.integrator << ", rtol "
      << format_number(base.rtol) << ") -> reference " << c.reference.formulation << " (" << k.reference_integrator
      << ", rtol " << format_number(k.reference_rtol) << ")\n";

  // A closed-form vakonomic motion where the problem has one for these data (issue 13 item 5): a second
  // reference, against which the reference run itself and every limit run are measured too.
  const std::shared_ptr<const Model> reference_model = reference.model;
  const auto* closed = c.reference.formulation == "vakonomic" ? reference_model->capability<VakonomicClosedForm>()
                                                              : nullptr;
  const RunRecord ref = run_and_write(reference, writer, true);
  std::vector<double> closed_q;  // the closed form's q on the reference's grid; empty when it does not apply
  if (closed && ref.status == "ok") {
    Vec q, qd, lambda;
    for (size_t s = 0; s < ref.samples(); ++s) {
      if (!closed->motion(ref.t[s], ref.q0, ref.qd0, c.reference.options.lambda0, q, qd, lambda)) {
        closed_q.clear();
        break;
      }
      closed_q.insert(closed_q.end(), q.data(), q.data() + q.size());
    }
  }
  // max_k |q_k - q_cf(t_k)| of a run on the reference's grid; NaN when it did not reach t_end.
  auto closed_form_error = [&](const RunRecord& r) {
    return closed_q.empty() ? kNaN : max_row_distance(r, ref, r.q, closed_q);
  };
  std::vector<double> error_q_closed_form;
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
    const RunRecord r = run_and_write(run, writer, true);
    const double eq = max_row_distance(r, ref, r.q, ref.q);
    const double eqd = max_row_distance(r, ref, r.qd, ref.qd);
    const double cv = r.status == "ok" ? r.summary.max_drift_velocity : kNaN;
    error_q_closed_form.push_back(closed_form_error(r));
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
  if (result.fit_points < 2) {
    // A slope needs two points; "slope nan" read like a result (issue 21). The /kozlov attributes stay NaN.
    out << "  slope - (no fit: " << result.fit_points << " finite error" << (result.fit_points == 1 ? "" : "s")
        << " in the fit range; it needs at least 2 values of kozlov.N)\n";
  } else {
    std::snprintf(line, sizeof line,
                  "  slope %.4f (log10 error_%s vs log10 N, %d points, N in [%g, %g]), intercept %.4f, fit residual %.3g\n",
                  result.slope, k.fit_error.c_str(), result.fit_points, std::max(k.fit_N_min, *std::min_element(k.N.begin(), k.N.end())),
                  std::min(k.fit_N_max, *std::max_element(k.N.begin(), k.N.end())), result.intercept, result.fit_residual);
    out << line;
  }
  if (!closed_q.empty()) {
    out << "  second reference: " << closed->description() << "; reference run within "
        << short_number(closed_form_error(ref)) << "; error_q against it:";
    for (size_t i = 0; i < result.N.size(); ++i)
      out << " " << format_number(result.N[i]) << ": " << short_number(error_q_closed_form[i]) << (i + 1 < result.N.size() ? "," : "");
    out << "\n";
  }

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
  if (!closed_q.empty()) {
    g.numbers.push_back({"error_q_closed_form", error_q_closed_form});
    g.number_attributes.push_back({"reference_closed_form_error", closed_form_error(ref)});
    g.text_attributes.push_back({"closed_form_reference", closed->description()});
  }
  writer.write_group(g);
  return result;
}

std::string to_kozlov_config_text(const KozlovConfig& c) {
  const KozlovSettings& k = c.settings;
  std::ostringstream s;
  s << "# resolved clmbench kozlov study; run it again with: clmbench kozlov FILE.ini\n";
  std::string base = to_config_text(c.base);
  s << base.substr(base.find('\n') + 1);
  s << study_section_text("kozlov", kozlov_options(), k);
  return s.str();
}

std::string kozlov_keys_help() { return study_keys_help("kozlov", kozlov_options()); }

}  // namespace clm
