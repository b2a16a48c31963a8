// `clmbench analyze --problem P [--param ...] --q0 ... --qd0 ... --equilibrium [--out F.h5]`
// (app/analyze_equilibrium.hpp; the analysis is analysis/equilibrium_analysis.hpp).
#include "app/analyze_equilibrium.hpp"

#include <sstream>

#include "core/problem_registry.hpp"
#include "analysis/equilibrium_analysis.hpp"
#include "io/results_file.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

Vec vector_flag(const po::variables_map& vm, const std::string& flag) {
  const std::vector<double> values = parse_number_list(vm[flag].as<std::string>(), "--" + flag);
  Vec v(static_cast<Eigen::Index>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) v[static_cast<Eigen::Index>(i)] = values[i];
  return v;
}

std::string full(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

std::string list_text(const Vec& v) {
  std::string s;
  for (int i = 0; i < v.size(); ++i) {
    if (i) s += ' ';
    s += full(v[i]);
  }
  return s;
}

}  // namespace

void add_equilibrium_flags(po::options_description& o) {
  o.add_options()
      ("qd0", po::value<std::string>(), "a,b,c: the velocities of the state (--equilibrium; default: the problem's qd0)")
      ("equilibrium", "check that (q0, qd0) is a relative equilibrium and print the eigenvalues of its linearization")
      ("equilibrium-tol", po::value<std::string>(), "largest |vd| of an equilibrium, and the relative tolerance of the eigenvalues' real parts (default 1e-9)")
      ("out", po::value<std::string>(), "F.h5: also write the analysis under /analysis (constraint analysis: q, span_by_depth, input_fields, brackets; --equilibrium: equilibrium_*; --speed: speed, eigenvalues_real, eigenvalues_imag)");
}

std::string equilibrium_help() {
  return "With --equilibrium: the reduced velocities v of [seed-000, eq. 2.17-2.18] (qd = S(q) v, S the problem's\n"
         "velocity_basis), vd = g(q, v); (q0, qd0) must be a relative equilibrium, |vd| <= tol (else one line with\n"
         "|vd|), with vd independent of the coordinates that move (checked numerically; they are printed as the\n"
         "group coordinates). J = dvd/dv (automatic differentiation of c; Sdot v differentiated exactly by\n"
         "polarization) and its eigenvalues are printed with one verdict: unstable (an eigenvalue with Re > tol),\n"
         "stable (every eigenvalue Re < -tol except the one zero forced by energy conservation along the family\n"
         "of equilibria), marginal (otherwise). --out F.h5 writes /analysis (docs/design.md section 5).\n"
         "Example: clmbench analyze --problem chaplygin_sleigh --q0 0,0,0 --qd0 1,0,0 --equilibrium\n\n";
}

int run_equilibrium_analysis(const CommandInvocation& call, const po::variables_map& vm, const std::string& problem,
                             const std::map<std::string, double>& overrides, const std::optional<Vec>& q_given) {
  EquilibriumOptions options;
  if (vm.count("equilibrium-tol")) {
    const double tol = parse_number(vm["equilibrium-tol"].as<std::string>(), "--equilibrium-tol");
    if (!(tol > 0) || !std::isfinite(tol))
      throw InputError("--equilibrium-tol must be a finite number > 0, got " + vm["equilibrium-tol"].as<std::string>());
    options.residual_tol = options.eigenvalue_tol = tol;
  }
  const auto model = make_model(problem, overrides, /*use_analytic=*/false);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  const Vec q = q_given ? *q_given : q0;
  const Vec qd = vm.count("qd0") ? vector_flag(vm, "qd0") : qd0;
  std::unique_ptr<ResultsFile> writer;
  if (vm.count("out")) writer = std::make_unique<ResultsFile>(vm["out"].as<std::string>());

  const EquilibriumAnalysis a = analyze_equilibrium(*model, q, qd, options);
  call.out << format_equilibrium_analysis(a);

  if (writer) {
    ResultGroup g;
    g.path = "analysis";
    std::vector<double> re, im;
    for (const auto& l : a.eigenvalues) {
      re.push_back(l.real());
      im.push_back(l.imag());
    }
    g.numbers = {{"equilibrium_eigenvalues_real", re},
                 {"equilibrium_eigenvalues_imag", im},
                 {"equilibrium_q", std::vector<double>(a.q.data(), a.q.data() + a.q.size())},
                 {"equilibrium_qd", std::vector<double>(a.qd.data(), a.qd.data() + a.qd.size())},
                 {"equilibrium_v", std::vector<double>(a.v.data(), a.v.data() + a.v.size())}};
    g.number_attributes = {{"equilibrium_residual", a.residual},
                           {"equilibrium_tolerance", a.tolerance},
                           {"equilibrium_forced_zeros", double(a.forced_zeros)}};
    g.text_attributes = {{"equilibrium_verdict", a.verdict}, {"equilibrium_reason", a.reason}, {"problem", problem}};
    for (const auto& [name, value] : model->parameters()) g.number_attributes.push_back({"param." + name, value});
    writer->write_group(g);
    std::ostringstream config;
    config << "[analyze]\nproblem = " << problem << "\nq0 = " << list_text(a.q) << "\nqd0 = " << list_text(a.qd)
           << "\nequilibrium = true\nequilibrium_tol = " << full(options.residual_tol) << "\n[param]\n";
    for (const auto& [name, value] : model->parameters()) config << name << " = " << full(value) << "\n";
    writer->commit({call.command_line, config.str(), ""});
  }
  return kExitOk;
}

}  // namespace clm
