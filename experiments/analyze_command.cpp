// `clmbench analyze`: parses the flags, looks the problem up in the registry and prints its analysis.
#include "experiments/analyze_command.hpp"

#include <boost/program_options.hpp>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>

#include "core/problem_registry.hpp"
#include "experiments/value_parsing.hpp"

namespace clm {

namespace po = boost::program_options;

namespace {

po::options_description analyze_options() {
  po::options_description o("analyze options", 100, 50);
  o.add_options()
      ("problem", po::value<std::string>(), "problem name (clmbench list problems)")
      ("param", po::value<std::vector<std::string>>()->composing(), "name=value, repeatable: problem parameter")
      ("q0", po::value<std::string>(), "a,b,c: the configuration q to analyse (default: the problem's q0)")
      ("help,h", "this help");
  return o;
}

// "--q0 -0.1,0,0": Boost would read the value as an option; glue it to its flag ("--q0=-0.1,0,0").
std::vector<std::string> glue_negative_q0(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& next = i + 1 < args.size() ? args[i + 1] : std::string();
    const bool negative = next.size() > 1 && next[0] == '-' &&
                          (std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.');
    if (args[i] == "--q0" && negative) {
      out.push_back("--q0=" + next);
      ++i;
    } else {
      out.push_back(args[i]);
    }
  }
  return out;
}

}  // namespace

std::string analyze_help() {
  std::ostringstream s;
  s << "usage: clmbench analyze --problem P [--param name=value ...] [--q0 a,b,c]\n\n"
    << "Constraint analysis at the configuration q (default: the problem's q0): n, m, the rank of A(q)\n"
       "(SVD, singular values above 1e-9 x the largest), the degrees of freedom n - rank, and for Pfaffian\n"
       "problems whether the constraint distribution D = ker A is involutive (Frobenius: the Lie brackets\n"
       "[X_i, X_j] of a basis of D, by automatic differentiation, lie in D; the largest residual, the sine of\n"
       "the angle between a bracket and D, is printed, involutive below 1e-8), i.e. whether the constraints\n"
       "are holonomic in disguise, and the dimension reached by iterated brackets up to depth 3\n"
       "(accessibility; depth >= 2 by 4th-order central differences, span tolerance 1e-6) with the depth at\n"
       "which it was reached. Holonomic problems are integrable by construction (accessible dimension = DOF).\n"
       "The verdicts hold at the q analysed. Example: clmbench analyze --problem sphere_in_disguise --q0 1,2,2\n\n"
    << analyze_options();
  return s.str();
}

int analyze_command(const std::vector<std::string>& raw_args, std::ostream& out) {
  const po::options_description options = analyze_options();
  po::variables_map vm;
  try {
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(glue_negative_q0(raw_args)).options(options).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string(e.what()) + " (see clmbench analyze --help)");
  }
  if (vm.count("help")) {
    out << analyze_help();
    return 0;
  }
  if (!vm.count("problem")) throw InputError("analyze needs --problem P (see clmbench analyze --help)");
  const ProblemEntry& entry = problem_registry().get(vm["problem"].as<std::string>());
  std::map<std::string, double> overrides;
  if (vm.count("param")) {
    for (const auto& p : vm["param"].as<std::vector<std::string>>()) {
      const auto eq = p.find('=');
      const std::string name = eq == std::string::npos ? std::string() : trim(p.substr(0, eq));
      if (name.empty()) throw InputError("malformed --param '" + p + "' (expected name=value, e.g. --param m=2)");
      overrides[name] = parse_number(p.substr(eq + 1), "--param " + name);
    }
  }
  std::optional<Vec> q;
  if (vm.count("q0")) {
    const std::vector<double> values = parse_number_list(vm["q0"].as<std::string>(), "--q0");
    q = Vec(static_cast<Eigen::Index>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) (*q)[static_cast<Eigen::Index>(i)] = values[i];
  }
  out << format_constraint_analysis(entry.analyze(overrides, q));
  return 0;
}

}  // namespace clm
