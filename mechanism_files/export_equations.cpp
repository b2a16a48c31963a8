#include "mechanism_files/export_equations.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

#include "core/types.hpp"
#include "core/value_parsing.hpp"
#include "mechanism_files/export_header.hpp"

namespace clm {

namespace {

// v = p/q with 1 <= q <= 12 and |p| < 1e6, where that is exact.
bool small_fraction(double v, long& p, long& q) {
  for (q = 1; q <= 12; ++q) {
    const double pq = v * static_cast<double>(q);
    if (std::abs(pq) >= 1e6) return false;
    p = std::lround(pq);
    if (static_cast<double>(p) == pq) return true;
  }
  return false;
}

enum Precedence { kSum = 1, kProduct = 2, kUnary = 3, kPower = 4, kAtom = 5 };

struct Printed {
  std::string text;
  int precedence = kAtom;
};

// Prints nodes of a symbolic mechanism's graph in one of two notations.
class EquationPrinter {
 public:
  enum class Style { kSympy, kLatex };
  // Too large to print a term inline (the graph shares what the text repeats): refused, the sympy module names
  // shared subexpressions instead.
  static constexpr std::size_t kMaxTermBytes = 1u << 20;

  EquationPrinter(const ExpressionGraph& g, std::vector<std::string> inputs, Style style)
      : g_(g), inputs_(std::move(inputs)), style_(style), memo_(g.size()), done_(g.size(), 0), temporary_(g.size(), 0) {}

  // The sympy module's temporaries: the nodes used twice or more by `outputs` (operations only), in order.
  std::vector<int> name_shared(const std::vector<int>& outputs) {
    const std::vector<char> needed = g_.needed_by(outputs);
    std::vector<int> uses(g_.size(), 0);
    for (int i = 0; i < g_.size(); ++i) {
      if (!needed[i]) continue;
      const ExprNode& nd = g_.node(i);
      if (nd.a >= 0) ++uses[nd.a];
      if (nd.b >= 0) ++uses[nd.b];
    }
    std::vector<int> shared;
    for (int i = 0; i < g_.size(); ++i) {
      const ExprOp op = g_.node(i).op;
      if (needed[i] && uses[i] >= 2 && op != ExprOp::kConst && op != ExprOp::kInput) shared.push_back(i);
    }
    return shared;
  }
  // The text of node i's operation (not its temporary's name), for the temporary's definition.
  std::string definition(int i) { return operation(i).text; }
  void mark_temporary(int i) { temporary_[i] = 1; }
  static std::string temporary_name(int i) { return "_e" + std::to_string(i); }

  Printed print(int i) {
    if (temporary_[i]) return {temporary_name(i), kAtom};
    if (done_[i]) return memo_[i];
    Printed p = operation(i);
    if (p.text.size() > kMaxTermBytes)
      throw InputError("mechanism export --format latex: a term is larger than " + std::to_string(kMaxTermBytes >> 20) +
                       " MB written out; use --format sympy (it names shared subexpressions)");
    done_[i] = 1;
    memo_[i] = p;
    return p;
  }
  std::string text(int i) { return print(i).text; }

 private:
  bool latex() const { return style_ == Style::kLatex; }

  std::string number(double v) const {
    long p = 0, q = 1;
    if (small_fraction(v, p, q)) {
      if (q == 1) return std::to_string(p);
      const std::string sign = p < 0 ? "-" : "";
      if (latex()) return sign + "\\frac{" + std::to_string(std::labs(p)) + "}{" + std::to_string(q) + "}";
      return "_sp.Rational(" + std::to_string(p) + ", " + std::to_string(q) + ")";
    }
    const std::string s = format_number(v);
    if (!latex()) return "_sp.Float(\"" + s + "\")";
    if (const auto e = s.find('e'); e != std::string::npos) {
      const int exponent = std::atoi(s.c_str() + e + 1);
      return s.substr(0, e) + " \\cdot 10^{" + std::to_string(exponent) + "}";
    }
    return s;
  }
  Printed leaf(int i) const {
    const ExprNode& nd = g_.node(i);
    if (nd.op == ExprOp::kConst) {
      const std::string s = number(nd.value);
      return {s, nd.value < 0 ? kUnary : kAtom};  // \frac{1}{2} and Rational(1, 2) are atoms
    }
    return {inputs_[nd.input], kAtom};
  }
  std::string wrap(const Printed& p, int below) const {
    if (p.precedence > below) return p.text;
    return latex() ? "\\left(" + p.text + "\\right)" : "(" + p.text + ")";
  }
  std::string call(const char* sympy, const char* tex, const std::string& a, const std::string& b = "") const {
    const std::string args = b.empty() ? a : a + ", " + b;
    if (latex()) return std::string(tex) + "\\left(" + args + "\\right)";
    return std::string("_sp.") + sympy + "(" + args + ")";
  }

  Printed operation(int i) {
    const ExprNode& nd = g_.node(i);
    if (nd.op == ExprOp::kConst || nd.op == ExprOp::kInput) return leaf(i);
    const Printed a = nd.a >= 0 ? print(nd.a) : Printed{};
    const Printed b = nd.b >= 0 ? print(nd.b) : Printed{};
    switch (nd.op) {
      case ExprOp::kAdd: return {a.text + " + " + (b.precedence == kUnary ? wrap(b, kUnary) : b.text), kSum};
      case ExprOp::kSub: return {a.text + " - " + wrap(b, kSum), kSum};
      case ExprOp::kMul: {
        // a (b c) is a b c; a (-b) keeps its parentheses.
        const std::string right = b.precedence == kUnary ? wrap(b, kUnary) : wrap(b, kSum);
        if (!latex()) return {wrap(a, kSum) + "*" + right, kProduct};
        const bool dot = !right.empty() && (std::isdigit(static_cast<unsigned char>(right[0])) || right[0] == '-' ||
                                            right.rfind("\\frac", 0) == 0);
        return {wrap(a, kSum) + (dot ? " \\cdot " : " ") + right, kProduct};
      }
      case ExprOp::kDiv:
        if (latex()) return {"\\frac{" + a.text + "}{" + b.text + "}", kAtom};
        return {wrap(a, kSum) + "/" + wrap(b, kProduct), kProduct};
      case ExprOp::kNeg: return {"-" + wrap(a, kSum), kUnary};
      case ExprOp::kPowConst: {
        if (latex()) {
          if (nd.value == 0.5) return {"\\sqrt{" + a.text + "}", kAtom};
          return {"{" + wrap(a, kPower) + "}^{" + number(nd.value) + "}", kPower};
        }
        const std::string e = number(nd.value);
        return {wrap(a, kPower) + "**" + (nd.value < 0 || e.find('_') != std::string::npos ? "(" + e + ")" : e), kPower};
      }
      case ExprOp::kPow:
        if (latex()) return {"{" + wrap(a, kPower) + "}^{" + b.text + "}", kPower};
        return {wrap(a, kPower) + "**" + wrap(b, kPower), kPower};
      case ExprOp::kSin: return {call("sin", "\\sin", a.text), kAtom};
      case ExprOp::kCos: return {call("cos", "\\cos", a.text), kAtom};
      case ExprOp::kTan: return {call("tan", "\\tan", a.text), kAtom};
      case ExprOp::kAsin: return {call("asin", "\\arcsin", a.text), kAtom};
      case ExprOp::kAcos: return {call("acos", "\\arccos", a.text), kAtom};
      case ExprOp::kAtan: return {call("atan", "\\arctan", a.text), kAtom};
      case ExprOp::kAtan2: return {call("atan2", "\\operatorname{atan2}", a.text, b.text), kAtom};
      case ExprOp::kSinh: return {call("sinh", "\\sinh", a.text), kAtom};
      case ExprOp::kCosh: return {call("cosh", "\\cosh", a.text), kAtom};
      case ExprOp::kTanh: return {call("tanh", "\\tanh", a.text), kAtom};
      case ExprOp::kExp: return {call("exp", "\\exp", a.text), kAtom};
      case ExprOp::kLog: return {call("log", "\\ln", a.text), kAtom};
      case ExprOp::kSqrt:
        if (latex()) return {"\\sqrt{" + a.text + "}", kAtom};
        return {call("sqrt", "", a.text), kAtom};
      case ExprOp::kAbs:
        if (latex()) return {"\\left|" + a.text + "\\right|", kAtom};
        return {call("Abs", "", a.text), kAtom};
      case ExprOp::kMin: return {call("Min", "\\min", a.text, b.text), kAtom};
      case ExprOp::kMax: return {call("Max", "\\max", a.text, b.text), kAtom};
      case ExprOp::kSign: return {call("sign", "\\operatorname{sgn}", a.text), kAtom};
      // The step is the derivative of min and max: 1 where a > 0, 0 elsewhere (sympy's Heaviside at 0 is 1/2).
      case ExprOp::kStep: return {latex() ? "\\Theta\\left(" + a.text + "\\right)" : "_sp.Heaviside(" + a.text + ", 0)", kAtom};
      case ExprOp::kConst:
      case ExprOp::kInput: break;
    }
    return leaf(i);
  }

  const ExpressionGraph& g_;
  std::vector<std::string> inputs_;
  Style style_;
  std::vector<Printed> memo_;
  std::vector<char> done_, temporary_;
};

const std::set<std::string>& python_keywords() {
  static const std::set<std::string> k = {"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                                          "class", "continue", "def", "del", "elif", "else", "except", "finally", "for",
                                          "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
                                          "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return k;
}

// A Python identifier for a file's name: keywords and the module's own names (a parameter named a or h would be
// rebound by the term of that name before the terms after it read it) get a trailing '_'; the sympy symbol keeps the
// file's name.
std::string python_name(const std::string& name) {
  static const std::set<std::string> kModule = {"T", "V", "M", "a", "F", "h", "A", "b", "coordinates", "velocities",
                                                "accelerations", "parameters", "multipliers", "constraint_names",
                                                "equations_of_motion", "_lagrange", "_sp", "_terms", "_symbols"};
  const bool temporary = name.size() > 2 && name.rfind("_e", 0) == 0 &&
                         name.find_first_not_of("0123456789", 2) == std::string::npos;
  return python_keywords().count(name) || kModule.count(name) || temporary ? name + "_" : name;
}

// A name as LaTeX writes it: Greek letters as themselves, a trailing number or _suffix as a subscript, other
// names of more than one letter upright.
std::string latex_name(const std::string& name) {
  static const std::set<std::string> kGreek = {
      "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
      "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "Gamma", "Delta",
      "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega", "varphi", "vartheta"};
  std::string base = name, sub;
  if (const auto u = name.find('_'); u != std::string::npos && u > 0 && u + 1 < name.size()) {
    base = name.substr(0, u);
    sub = name.substr(u + 1);
  } else {
    std::size_t k = name.size();
    while (k > 1 && std::isdigit(static_cast<unsigned char>(name[k - 1]))) --k;
    base = name.substr(0, k);
    sub = name.substr(k);
  }
  auto escape = [](const std::string& s) {
    std::string out;
    for (const char c : s) out += c == '_' ? std::string("\\_") : std::string(1, c);
    return out;
  };
  auto word = [&](const std::string& s) {
    if (kGreek.count(s)) return "\\" + s;
    if (s.size() == 1) return s;
    return "\\mathrm{" + escape(s) + "}";
  };
  std::string out = word(base);
  if (!sub.empty()) out += "_{" + (std::all_of(sub.begin(), sub.end(), ::isdigit) ? sub : word(sub)) + "}";
  return out;
}

std::string latex_dot(const std::string& name) {
  const std::string s = latex_name(name);
  const auto sub = s.find("_{");
  if (sub == std::string::npos) return "\\dot{" + s + "}";
  return "\\dot{" + s.substr(0, sub) + "}" + s.substr(sub);
}

// The graph's input names: q, qd, t, then the parameters (symbolic_mechanism's order).
std::vector<std::string> input_names(const MechanismFile& f, bool latex) {
  std::vector<std::string> names;
  for (const auto& c : f.coordinates) names.push_back(latex ? latex_name(c) : python_name(c));
  for (const auto& c : f.coordinates) names.push_back(latex ? latex_dot(c) : python_name(c + "_dot"));
  names.push_back("t");
  for (const auto& p : f.parameters) names.push_back(latex ? latex_name(p.name) : python_name(p.name));
  return names;
}

std::string header_comment(const MechanismFile& f, const char* format, const char* comment) {
  std::ostringstream h;
  h << comment << " " << f.name << ": the terms clmbench derives from the mechanism file " << comment_text(f.path) << "\n"
    << comment << " (sha256 " << f.sha256 << ")\n"
    << comment << " by `clmbench mechanism export --format " << format << "`. Do not edit: export again.\n";
  return h.str();
}

}  // namespace

std::string export_sympy(const MechanismFile& f) {
  const SymbolicMechanism s = symbolic_mechanism(f);
  const int n = s.n;
  EquationPrinter p(s.graph, input_names(f, false), EquationPrinter::Style::kSympy);
  std::vector<int> outputs = {s.kinetic, s.potential_energy};
  for (const auto* v : {&s.mass, &s.gyroscopic, &s.force, &s.constraint, &s.pfaffian, &s.affine})
    outputs.insert(outputs.end(), v->begin(), v->end());
  std::ostringstream o;
  o << header_comment(f, "sympy", "#")
    << "# T, V: the energies as stated; M = d2T/dqd2; a: T's part linear in the velocities, dT/dqd at qd = 0 (None\n"
    << "# where T has none); F: the generalized forces (None where none); h: the position rows; A, b: the velocity\n"
    << "# rows A qd + b = 0 (None where absent). equations_of_motion: Lagrange's equations with multipliers.\n"
    << "import sympy as _sp\n\n"
    << "# What this module defines (clmbench.Equations reads these two lists, in this order).\n"
    << "_terms = (\"T\", \"V\", \"M\", \"a\", \"F\", \"h\", \"A\", \"b\")\n"
    << "_symbols = (\"coordinates\", \"velocities\", \"accelerations\", \"t\", \"parameters\", \"multipliers\",\n"
    << "            \"constraint_names\", \"equations_of_motion\")\n\n";
  auto symbols = [&](const std::vector<std::string>& names, const std::vector<std::string>& shown) {
    std::string lhs, rhs;
    for (std::size_t k = 0; k < names.size(); ++k) {
      lhs += (k ? ", " : "") + names[k];
      rhs += (k ? " " : "") + shown[k];
    }
    return lhs + (names.size() == 1 ? "," : "") + " = _sp.symbols(\"" + rhs + "\", real=True, seq=True)\n";
  };
  std::vector<std::string> q, qd, qdd, shown_q, shown_qd, shown_qdd, par, shown_par;
  for (const auto& c : f.coordinates) {
    q.push_back(python_name(c));
    qd.push_back(python_name(c + "_dot"));
    qdd.push_back(python_name(c + "_ddot"));
    shown_q.push_back(c);
    shown_qd.push_back(c + "_dot");
    shown_qdd.push_back(c + "_ddot");
  }
  for (const auto& prm : f.parameters) {
    par.push_back(python_name(prm.name));
    shown_par.push_back(prm.name);
  }
  o << "t = _sp.Symbol(\"t\", real=True)\n" << symbols(q, shown_q) << symbols(qd, shown_qd) << symbols(qdd, shown_qdd);
  if (!par.empty()) o << symbols(par, shown_par);
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return "[" + out + "]";
  };
  o << "coordinates = " << list(q) << "\nvelocities = " << list(qd) << "\naccelerations = " << list(qdd) << "\n";
  o << "parameters = {";
  for (std::size_t k = 0; k < f.parameters.size(); ++k)
    o << (k ? ", " : "") << par[k] << ": " << format_number(f.parameters[k].value);
  o << "}\n\n";
  // Shared subexpressions once, by name, in the order they are built.
  const std::vector<int> shared = p.name_shared(outputs);
  for (const int i : shared) {
    o << EquationPrinter::temporary_name(i) << " = " << p.definition(i) << "\n";
    p.mark_temporary(i);
  }
  if (!shared.empty()) o << "\n";
  auto vector = [&](const std::vector<int>& nodes) {
    std::string out;
    for (const int i : nodes) out += (out.empty() ? "" : ", ") + p.text(i);
    return "_sp.Matrix([" + out + "])";
  };
  auto matrix = [&](const std::vector<int>& nodes, int cols) {
    if (nodes.empty()) return std::string("_sp.zeros(0, ") + std::to_string(cols) + ")";
    std::string out;
    for (std::size_t r = 0; r < nodes.size() / cols; ++r) {
      std::string row;
      for (int c = 0; c < cols; ++c) row += (c ? ", " : "") + p.text(nodes[r * cols + c]);
      out += (r ? ", " : "") + ("[" + row + "]");
    }
    return "_sp.Matrix([" + out + "])";
  };
  o << "T = " << p.text(s.kinetic) << "\nV = " << p.text(s.potential_energy) << "\n";
  o << "M = " << matrix(s.mass, n) << "\n";
  o << "a = " << (s.has_gyroscopic ? vector(s.gyroscopic) : "None") << "\n";
  o << "F = " << (s.has_forces ? vector(s.force) : "None") << "\n";
  o << "h = " << (s.constraint.empty() ? "None" : vector(s.constraint)) << "\n";
  o << "A = " << (s.pfaffian.empty() ? "None" : matrix(s.pfaffian, n)) << "\n";
  o << "b = " << (s.affine.empty() ? "None" : vector(s.affine)) << "\n";
  o << "constraint_names = [";
  const auto names = f.constraint_names();
  for (std::size_t k = 0; k < names.size(); ++k) o << (k ? ", " : "") << "\"" << names[k] << "\"";
  o << "]\n";
  o << "multipliers = list(_sp.symbols(\"lambda_1:" << s.m + 1 << "\", real=True))\n\n";
  o << "def _lagrange():\n"
    << "    q, qd, qdd = _sp.Matrix(coordinates), _sp.Matrix(velocities), _sp.Matrix(accelerations)\n"
    << "    p = _sp.Matrix([_sp.diff(T, v) for v in velocities])  # dT/dqd\n"
    << "    eq = p.jacobian(q) * qd + p.jacobian(qd) * qdd - _sp.Matrix([_sp.diff(T - V, x) for x in coordinates])\n"
    << "    if F is not None:\n"
    << "        eq -= F\n"
    << "    rows = [r for r in (h.jacobian(q) if h is not None else None, A) if r is not None]\n"
    << "    if rows:\n"
    << "        C = _sp.Matrix.vstack(*rows)\n"
    << "        eq -= C.T * _sp.Matrix(multipliers)\n"
    << "    return list(eq)\n\n"
    << "# d/dt dT/dqd - dT/dq + dV/dq - F - C^T lambda = 0, one per coordinate (C: dh/dq over A)\n"
    << "equations_of_motion = _lagrange()\n";
  return o.str();
}

std::string export_latex(const MechanismFile& f) {
  const SymbolicMechanism s = symbolic_mechanism(f);
  const int n = s.n;
  EquationPrinter p(s.graph, input_names(f, true), EquationPrinter::Style::kLatex);
  std::ostringstream o;
  o << header_comment(f, "latex", "%");
  o << "% q = (";
  for (int i = 0; i < n; ++i) o << (i ? ", " : "") << f.coordinates[i];
  o << "); entries of M, A that are 0 are left out; M is symmetric (upper triangle shown).\n";
  std::vector<std::string> lines;
  auto line = [&](const std::string& lhs, int node) {
    if (s.graph.is_constant(node, 0.0) && lhs != "T" && lhs != "V") return;
    lines.push_back(lhs + " &= " + p.text(node));
  };
  line("T", s.kinetic);
  line("V", s.potential_energy);
  auto index = [&](const char* letter, int i, int j) {  // M_{i,j} or a_{i}, 1-based
    std::string s(letter);
    s.append("_{");
    s.append(std::to_string(i + 1));
    if (j >= 0) s.append(",").append(std::to_string(j + 1));
    s.push_back('}');
    return s;
  };
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) line(index("M", i, j), s.mass[i * n + j]);
  if (s.has_gyroscopic)
    for (int i = 0; i < n; ++i) line(index("a", i, -1), s.gyroscopic[i]);
  if (s.has_forces)
    for (int i = 0; i < n; ++i) line(index("F", i, -1), s.force[i]);
  for (std::size_t k = 0; k < s.constraint.size(); ++k) line(index("h", static_cast<int>(k), -1), s.constraint[k]);
  const int velocity_rows = n > 0 ? static_cast<int>(s.pfaffian.size()) / n : 0;
  for (int r = 0; r < velocity_rows; ++r) {
    for (int j = 0; j < n; ++j) line(index("A", r, j), s.pfaffian[r * n + j]);
    line(index("b", r, -1), s.affine[r]);
  }
  o << "\\begin{align*}\n";
  for (std::size_t k = 0; k < lines.size(); ++k) o << lines[k] << (k + 1 < lines.size() ? " \\\\\n" : "\n");
  o << "\\end{align*}\n";
  return o.str();
}

}  // namespace clm
