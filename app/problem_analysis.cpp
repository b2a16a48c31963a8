// The analyses of `clmbench analyze` for a registered problem: the model from the registry, the analysis
// (analysis/), and its numbers written as /analysis of a results file that holds nothing else.
#include "app/problem_analysis.hpp"

#include <cmath>
#include <map>

#include "core/problem_registry.hpp"
#include "io/results_file.hpp"

namespace clm {

ConstraintAnalysis analyze_problem(const std::string& problem, const std::map<std::string, double>& overrides,
                                   const std::optional<Vec>& q) {
  const auto model = make_model(problem, overrides, /*use_analytic=*/false);
  const auto* analyzer = model->capability<ConstraintAnalyzer>();
  if (!analyzer) throw InputError("problem " + problem + " was registered without a constraint analysis");
  return analyzer->analyze(q);
}

SpeedAnalysis analyze_problem_speeds(const std::string& problem, const std::map<std::string, double>& overrides,
                                     const std::vector<double>& speeds) {
  const auto model = make_model(problem, overrides);
  const auto* lin = model->capability<SteadyMotionLinearizer>();
  if (!lin) {
    std::string with;
    for (const auto* e : problem_registry().all())
      if (e->make({}, true)->capability<SteadyMotionLinearizer>()) with += (with.empty() ? "" : ", ") + e->name;
    throw InputError("--speed: problem " + problem + " declares no steady motion to linearize about (problems that do: " +
                     (with.empty() ? "none" : with) + ")");
  }
  SpeedAnalysis a = analyze_speeds(problem, *lin, speeds);
  a.parameters = model->parameters();
  return a;
}

void write_constraint_analysis(const std::string& out_path, const ConstraintAnalysis& a, const std::string& command_line) {
  ResultsFile writer(out_path);
  ResultGroup g;
  g.path = "analysis";
  g.numbers.emplace_back("q", std::vector<double>(a.q.data(), a.q.data() + a.q.size()));
  g.numbers.emplace_back("singular_values", a.singular_values);
  g.integers.emplace_back("span_by_depth", std::vector<long>(a.span_by_depth.begin(), a.span_by_depth.end()));
  g.text_attributes.emplace_back("problem", a.problem);
  g.text_attributes.emplace_back("verdict", a.verdict);
  std::string names;
  for (const auto& n : a.coordinate_names) names += (names.empty() ? "" : " ") + n;
  g.text_attributes.emplace_back("coordinate_names", names);
  g.number_attributes.emplace_back("rank", a.rank);
  g.number_attributes.emplace_back("dof", a.dof);
  g.number_attributes.emplace_back("integrable", a.integrable ? 1 : 0);
  g.number_attributes.emplace_back("max_bracket_residual", a.max_bracket_residual);
  g.number_attributes.emplace_back("accessible_dimension", a.accessible_dimension);
  if (!a.actuated.empty()) {
    std::string act;
    for (int i : a.actuated) act += (act.empty() ? "" : " ") + a.coordinate_names[i];
    g.text_attributes.emplace_back("actuated_coordinates", act);
  }
  if (a.input_fields_analysed) {
    // Row-major [k, n] and [pairs, n]: one field per row.
    const size_t n = static_cast<size_t>(a.n);
    ResultGroup::Matrix fields{"input_fields", static_cast<size_t>(a.input_fields.cols()), n, {}};
    for (Eigen::Index j = 0; j < a.input_fields.cols(); ++j)
      for (Eigen::Index i = 0; i < a.n; ++i) fields.data.push_back(a.input_fields(i, j));
    ResultGroup::Matrix br{"brackets", a.bracket_pairs.size(), n, {}};
    std::vector<std::string> bracket_names;
    for (size_t p = 0; p < a.bracket_pairs.size(); ++p) {
      for (Eigen::Index i = 0; i < a.n; ++i) br.data.push_back(a.brackets(i, static_cast<Eigen::Index>(p)));
      bracket_names.push_back("[g" + std::to_string(a.bracket_pairs[p].first + 1) + ", g" +
                              std::to_string(a.bracket_pairs[p].second + 1) + "]");
    }
    g.matrices.push_back(std::move(fields));
    g.matrices.push_back(std::move(br));
    g.strings.emplace_back("bracket_names", bracket_names);
    g.number_attributes.emplace_back("controllability_rank_depth1", a.controllability_rank_depth1);
    g.number_attributes.emplace_back("controllability_rank", a.accessible_dimension);
  } else if (!a.input_fields_note.empty()) {
    g.text_attributes.emplace_back("input_fields_note", a.input_fields_note);
  }
  writer.write_group(g);
  writer.commit({command_line, "", ""});
}

void write_speed_analysis(const std::string& out_path, const SpeedAnalysis& a, const std::string& command_line) {
  ResultsFile writer(out_path);
  ResultGroup g;
  g.path = "analysis";
  g.numbers.emplace_back("speed", a.speeds);
  const size_t K = a.speeds.size(), w = a.eigenvalues.empty() ? 0 : a.eigenvalues.front().size();
  ResultGroup::Matrix re{"eigenvalues_real", K, w, {}}, im{"eigenvalues_imag", K, w, {}};
  for (const auto& ev : a.eigenvalues)
    for (const auto& e : ev) {
      re.data.push_back(e.real());
      im.data.push_back(e.imag());
    }
  g.matrices.push_back(std::move(re));
  g.matrices.push_back(std::move(im));
  g.text_attributes.emplace_back("problem", a.problem);
  g.text_attributes.emplace_back("speed_unit", a.speed_unit);
  std::string names;
  for (const auto& n : a.state_names) names += (names.empty() ? "" : " ") + n;
  g.text_attributes.emplace_back("state_names", names);
  for (const auto& [name, value] : a.parameters) g.number_attributes.emplace_back("param." + name, value);
  std::map<std::string, int> seen;  // a second crossing of the same kind: weave_speed_2
  for (const auto& c : a.changes) {
    const int k = ++seen[c.name];
    const std::string key = c.name + "_speed" + (k > 1 ? "_" + std::to_string(k) : "");
    g.number_attributes.emplace_back(key, c.speed);
    // The published value beside it (only the first crossing of a kind, and only at the problem's default
    // parameters, where the benchmark's numbers apply), so that reports read both from the file.
    if (k == 1 && std::isfinite(c.published)) {
      g.number_attributes.emplace_back("published_" + key, c.published);
      g.text_attributes.emplace_back("published_" + key + "_source", c.source);
    }
  }
  writer.write_group(g);
  writer.commit({command_line, "", ""});
}

}  // namespace clm
