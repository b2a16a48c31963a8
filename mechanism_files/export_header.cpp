#include "mechanism_files/export_header.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

#include "core/value_parsing.hpp"

namespace clm {

namespace {

// A C++ string literal of s: quotes and backslashes escaped, control characters as three-digit octal escapes
// (a raw newline or carriage return would end the line; octal, unlike \x, stops after its three digits).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      const char octal[] = {'\\', char('0' + (u >> 6)), char('0' + ((u >> 3) & 7)), char('0' + (u & 7)), 0};
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A double literal that reads back to the same value.
std::string literal(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  std::string out = format_number(v);  // the shortest text that reads back to v
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// Names a parameter member may not take (issue 43: 23 headers that exit 0 and do not compile): the header's own
// identifiers and the Problem concept's members, every C++20 keyword and alternative token, the names the code
// calls unqualified (elementary functions, Eigen and clm types), and lowercase macros of the C library the header
// includes; an all-capital name with an underscore or three letters (M_PI, NULL, EOF, INFINITY) may be a macro
// and is mangled by rule (member_name), as are names the implementation reserves (a leading underscore and a capital, or "__").
const std::set<std::string> kReserved = {
    // the header's own identifiers, its templates' parameters and the Problem concept's members
    "q_in", "qd_in", "t_in", "out", "q_out", "qd_out", "q0", "qd0", "T", "Q", "Out", "kActuatedCoordinates",
    "kReferenceTime", "kReferenceQ", "kReferenceQd", "kReferenceLambda", "kReferenceSource", "kReferenceDescription",
    "kReferencePointName", "kReferencePointComponents", "kReferencePointUnit", "kPoints", "kBodyVelocities", "points",
    "point_positions", "body_velocities", "body_velocity_values", "dof", "constraints", "validate", "kName",
    "kDescription", "kDof", "kConstraints", "kConstraintKind", "kParameters", "kCoordinateNames", "kCoordinateUnits",
    "kPositionConstraints", "position_constraints", "mass_matrix", "potential", "constraint", "pfaffian",
    "affine_term", "gyroscopic", "generalized_force", "velocity_basis", "transversal_frame", "closed_form",
    "default_initial", "analytic_terms", "analytic_constraint_terms", "has_gyroscopic_term",
    // C++20 keywords and alternative tokens
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "final", "override", "import", "module",
    // called or named unqualified in the generated code
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log", "sqrt", "abs", "pow",
    "t_asin", "t_acos", "t_sinh", "t_cosh", "t_tanh", "t_pow", "elementary", "std", "Eigen", "clm", "Vec", "Mat",
    "VecN", "MatN", "InputError", "ParameterSpec", "PointSpec", "BodyVelocitySpec", "ConstraintKind",
    // lowercase macros of the C library
    "errno", "assert", "offsetof", "stdin", "stdout", "stderr", "setjmp", "va_arg", "va_start", "va_end",
    "va_copy", "math_errhandling", "isnan", "isinf", "isfinite", "signbit", "fpclassify", "isnormal"};

// The member a parameter becomes: its name where C++ lets it be one, otherwise p_<name> (more p_ until it is free).
std::string member_name(const std::string& name, const std::set<std::string>& taken) {
  // A macro's shape: capitals, digits and underscores, with an underscore or three letters (M_PI, NULL, EOF); the
  // physicist's I1, L2, EI stay themselves.
  const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  const auto letters = std::count_if(name.begin(), name.end(), upper);
  const bool capitals = name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos &&
                        letters > 0 && (name.find('_') != std::string::npos || letters >= 3);
  const bool implementation =
      (name.size() > 1 && name[0] == '_' && upper(name[1])) || name.find("__") != std::string::npos;
  // v<digits> would meet the code's own variables.
  const bool like_variable =
      name.size() > 1 && name[0] == 'v' && name.find_first_not_of("0123456789", 1) == std::string::npos;
  if (!kReserved.count(name) && !capitals && !implementation && !like_variable && !taken.count(name)) return name;
  std::string out = "p_" + name;
  for (std::size_t at; (at = out.find("__")) != std::string::npos;) out.replace(at, 2, "_0");  // the implementation's
  while (taken.count(out)) out = "p" + out;
  return out;
}

// Names of namespace clm (the headers the export includes, and the core's common ones) a struct may not take
// (issue 43: mechanisms named problem, vec, mat exported as Problem, Vec, Mat).
const std::set<std::string> kClmNames = {
    "Problem", "Vec", "Mat", "VecN", "MatN", "Model", "InputError", "NumericalFailure", "ParameterSpec", "PointSpec",
    "BodyVelocitySpec", "ConstraintKind", "AutoDiffModel", "Formulation", "Integrator", "Tape", "Mechanism",
    "MechanismFile", "CompiledMechanism", "ModelTerms", "ModelWorkspace", "DynamicsDerivatives", "HasGeneralizedForce",
    "HasDifferentiableGeneralizedForce", "IsTimeDependent", "RunSpec", "RunRecord"};


class Writer {
 public:
  Writer(const MechanismFile& f, const SymbolicMechanism& s) : g_(s.graph), n_(s.n) {
    std::set<std::string> taken;
    for (const auto& p : f.parameters) taken.insert(p.name);  // a mangled name may not meet another parameter
    for (const auto& p : f.parameters) {
      taken.erase(p.name);
      members_.push_back(member_name(p.name, taken));
      taken.insert(members_.back());
    }
  }

  // Straight-line code (one `const T vK = ...;` per operation the outputs need, in graph order) into body;
  // returns the expression of each output.
  std::vector<std::string> code(const std::vector<int>& outputs, std::ostringstream& body) const {
    const std::vector<char> need = g_.needed_by(outputs);
    for (int i = 0; i < g_.size(); ++i) {
      if (!need[i]) continue;
      const ExprNode& nd = g_.node(i);
      if (nd.op == ExprOp::kConst || nd.op == ExprOp::kInput) continue;
      body << "    const T v" << i << " = " << operation(nd) << ";\n";
    }
    std::vector<std::string> out;
    for (int i : outputs) out.push_back(ref(i));
    return out;
  }

  // The expression that names node i's value: an input, a constant or the variable of an operation.
  std::string ref(int i) const {
    const ExprNode& nd = g_.node(i);
    if (nd.op == ExprOp::kConst) return "T(" + literal(nd.value) + ")";
    if (nd.op == ExprOp::kInput) {
      const int k = nd.input;
      if (k < n_) return "q_in[" + std::to_string(k) + "]";
      if (k < 2 * n_) return "T(qd_in[" + std::to_string(k - n_) + "])";
      if (k == 2 * n_) return "t_in";
      return "T(" + members_[k - 2 * n_ - 1] + ")";
    }
    return "v" + std::to_string(i);
  }

  const std::vector<std::string>& members() const { return members_; }

 private:
  // The operation as Tape::run evaluates it (mechanism_files/tape.hpp), so that the two agree.
  std::string operation(const ExprNode& nd) const {
    const std::string a = nd.a >= 0 ? ref(nd.a) : "", b = nd.b >= 0 ? ref(nd.b) : "";
    switch (nd.op) {
      case ExprOp::kAdd: return a + " + " + b;
      case ExprOp::kSub: return a + " - " + b;
      case ExprOp::kMul: return a + " * " + b;
      case ExprOp::kDiv: return a + " / " + b;
      case ExprOp::kNeg: return "-" + a;
      case ExprOp::kPowConst: return "t_pow(" + a + ", " + literal(nd.value) + ")";
      case ExprOp::kPow: return "exp(" + b + " * log(" + a + "))";
      case ExprOp::kSin: return "sin(" + a + ")";
      case ExprOp::kCos: return "cos(" + a + ")";
      case ExprOp::kTan: return "tan(" + a + ")";
      case ExprOp::kAsin: return "t_asin(" + a + ")";
      case ExprOp::kAcos: return "t_acos(" + a + ")";
      case ExprOp::kAtan: return "atan(" + a + ")";
      case ExprOp::kAtan2: return "atan2(" + a + ", " + b + ")";
      case ExprOp::kSinh: return "t_sinh(" + a + ")";
      case ExprOp::kCosh: return "t_cosh(" + a + ")";
      case ExprOp::kTanh: return "t_tanh(" + a + ")";
      case ExprOp::kExp: return "exp(" + a + ")";
      case ExprOp::kLog: return "log(" + a + ")";
      case ExprOp::kSqrt: return "sqrt(" + a + ")";
      case ExprOp::kAbs: return "abs(" + a + ")";
      case ExprOp::kMin: return b + " < " + a + " ? " + b + " : " + a;
      case ExprOp::kMax: return a + " < " + b + " ? " + b + " : " + a;
      case ExprOp::kSign: return "T(" + a + " > T(0.0) ? 1.0 : (" + a + " < T(0.0) ? -1.0 : 0.0))";
      case ExprOp::kStep: return "T(" + a + " > T(0.0) ? 1.0 : 0.0)";
      case ExprOp::kConst:
      case ExprOp::kInput: break;
    }
    return ref(-1);  // unreachable
  }

  const ExpressionGraph& g_;
  int n_;
  std::vector<std::string> members_;
};

}  // namespace

std::string comment_text(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string exported_struct_name(const std::string& mechanism_name) {
  std::string out;
  bool upper = true;
  for (const char c : mechanism_name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Mechanism" + out;
  if (kClmNames.count(out) || kReserved.count(out)) out += "Mechanism";
  return out;
}

std::string export_header(const MechanismFile& f) {
  const SymbolicMechanism s = symbolic_mechanism(f);
  const Writer w(f, s);
  const std::string Name = exported_struct_name(f.name);
  const int n = s.n, m = s.m;
  const bool td = s.time_dependent;
  std::ostringstream h;
  h << "// " << Name << ": exported by `clmbench mechanism export` from the mechanism file\n"
    << "// " << comment_text(f.path) << " (sha256 " << f.sha256 << ").\n"
    << "// The terms the suite derives from the file (M = d2T/dqd2, V - T0"
    << (s.has_gyroscopic ? ", the gyroscopic a(q)" : "") << (s.holonomic ? ", h" : s.position_rows > 0 ? ", h, A, b" : ", A, b")
    << (s.has_forces ? ", the forces" : "") << ")\n"
    << "// as templated straight-line code; equal to the file's tapes to round-off (parameter products the tapes fold\n"
    << "// into constants are computed here). Do not edit: export again.\n"
    << "// Promote it to the zoo: problems/NAME.hpp, runs/zoo/NAME.cpp and a line in runs/zoo/zoo.def (docs/guide/extending.md).\n"
    << "#pragma once\n\n#include <array>\n#include <cmath>\n#include <limits>\n#include <string>\n#include <vector>\n\n"
    << "#include \"core/elementary_functions.hpp\"\n#include \"core/problem.hpp\"\n"
    << (f.points.empty() ? "" : "#include \"problems/point_spec.hpp\"\n")
    << (f.body_velocities.empty() ? "" : "#include \"problems/body_velocity_spec.hpp\"\n") << "\nnamespace clm {\n\n"
    << "struct " << Name << " {\n"
    << "  static constexpr const char* kName = " << quoted(f.name) << ";\n"
    << "  static constexpr const char* kDescription = " << quoted(f.description.empty() ? "mechanism " + f.name : f.description)
    << ";\n"
    << "  static constexpr int kDof = " << n << ";\n"
    << "  static constexpr int kConstraints = " << m << ";\n"
    << "  static constexpr ConstraintKind kConstraintKind = ConstraintKind::"
    << (s.holonomic ? "kHolonomic" : s.position_rows > 0 ? "kMixed" : "kPfaffian") << ";\n";
  const bool mixed = !s.holonomic && s.position_rows > 0;  // position rows first, then velocity rows
  if (mixed) h << "  static constexpr int kPositionConstraints = " << s.position_rows << ";\n";
  h << "  static constexpr const char* kCoordinateNames[] = {";
  for (int i = 0; i < n; ++i) h << (i ? ", " : "") << quoted(f.coordinates[i]);
  h << "};\n";
  if (const std::vector<std::string> names = f.constraint_names(); !names.empty()) {  // lambda's columns
    h << "  static constexpr const char* kConstraintNames[] = {";
    for (std::size_t k = 0; k < names.size(); ++k) h << (k ? ", " : "") << quoted(names[k]);
    h << "};\n";
  }
  if (!f.units.empty()) {
    h << "  static constexpr const char* kCoordinateUnits[] = {";
    for (int i = 0; i < n; ++i) h << (i ? ", " : "") << quoted(f.units[i]);
    h << "};\n";
  }
  if (!f.actuated.empty()) {
    h << "  static constexpr std::array kActuatedCoordinates = {";
    for (std::size_t k = 0; k < f.actuated.size(); ++k) h << (k ? ", " : "") << f.actuated[k];
    h << "};\n";
  }
  if (f.reference) {
    const auto& r = *f.reference;
    auto array = [&](const char* name, const std::vector<double>& v) {
      h << "  static constexpr std::array<double, " << v.size() << "> " << name << " = {";
      for (std::size_t k = 0; k < v.size(); ++k) h << (k ? ", " : "") << literal(v[k]);
      h << "};\n";
    };
    h << "  static constexpr double kReferenceTime = " << literal(r.t) << ";\n";
    array("kReferenceQ", r.q);
    array("kReferenceQd", r.qd);
    if (!r.lambda.empty()) array("kReferenceLambda", r.lambda);
    h << "  static constexpr const char* kReferenceSource = " << quoted(r.source) << ";\n"
      << "  static constexpr const char* kReferenceDescription = " << quoted(r.description) << ";\n";
  }
  if (!f.points.empty()) {
    const auto& p = f.points.front();
    h << "  static constexpr const char* kReferencePointName = " << quoted(p.name) << ";\n"
      << "  static constexpr std::array<const char*, " << p.position.size() << "> kReferencePointComponents = {"
      << (p.position.size() == 3 ? "\"x\", \"y\", \"z\"" : "\"x\", \"y\"") << "};\n"
      << "  static constexpr const char* kReferencePointUnit = " << quoted(p.unit) << ";\n";
  }
  h << "\n";
  const auto& members = w.members();
  for (std::size_t k = 0; k < f.parameters.size(); ++k) {
    const auto& p = f.parameters[k];
    h << "  double " << members[k] << " = " << literal(p.value) << ";\n";
  }
  if (f.parameters.empty()) {
    h << "  static constexpr std::array<ParameterSpec<" << Name << ">, 0> kParameters{};\n";
  } else {
    h << "  static constexpr std::array kParameters = {\n";
    for (std::size_t k = 0; k < f.parameters.size(); ++k) {
      const auto& p = f.parameters[k];
      std::string text = p.description;
      if (!p.unit.empty()) text += (text.empty() ? "[" : " [") + p.unit + "]";
      h << "      ParameterSpec<" << Name << ">{" << quoted(p.name) << ", &" << Name << "::" << members[k] << ", "
        << quoted(text) << "},\n";
    }
    h << "  };\n";
  }
  h << "\n  int dof() const { return " << n << "; }\n  int constraints() const { return " << m << "; }\n";
  if (mixed) h << "  int position_constraints() const { return " << s.position_rows << "; }\n";
  h << "  void validate() const {\n";
  for (std::size_t k = 0; k < f.parameters.size(); ++k) {
    const auto& p = f.parameters[k];
    const std::string& v = members[k];
    h << "    if (!std::isfinite(" << v << ")) throw InputError(" << quoted(f.name + ": parameter " + p.name + " must be finite")
      << ");\n";
    if (p.min)
      h << "    if (" << v << " < " << literal(*p.min) << ") throw InputError("
        << quoted(f.name + ": parameter " + p.name + " is below its min " + literal(*p.min)) << ");\n";
    if (p.max)
      h << "    if (" << v << " > " << literal(*p.max) << ") throw InputError("
        << quoted(f.name + ": parameter " + p.name + " is above its max " + literal(*p.max)) << ");\n";
  }
  h << "  }\n";

  // One templated function: signature, code, assignments.
  // template_head: the templated functions' line (the force's vectors are of any type: a run passes Eigen's dynamic
  // vectors, the exact Jacobian Jet vectors of the problem's size).
  auto function = [&](const std::string& signature, const std::vector<int>& outputs,
                      const std::function<std::string(std::size_t)>& target, bool returns, bool double_only,
                      const std::string& template_head = "template <class T>") {
    std::ostringstream body;
    const auto refs = w.code(outputs, body);
    h << "\n";
    if (!double_only) h << "  " << template_head << "\n";
    h << "  " << signature << " const {\n";
    if (double_only) h << "    using T = double;\n";
    h << "    using namespace elementary;\n" << body.str();
    if (returns) h << "    return " << refs[0] << ";\n";
    else
      for (std::size_t k = 0; k < refs.size(); ++k) h << "    " << target(k) << " = " << refs[k] << ";\n";
    h << "  }\n";
  };
  // out(k / cols, k % cols) := output k of a row-major matrix.
  auto matrix_target = [](int cols) {
    return [cols](std::size_t k) {
      return "out(" + std::to_string(k / cols) + ", " + std::to_string(k % cols) + ")";
    };
  };
  function("void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out)", s.mass,
           matrix_target(n), false, false);
  function(td ? "T potential([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in)" : "T potential([[maybe_unused]] const VecN<T, kDof>& q_in)",
           {s.potential}, nullptr, true, false);
  auto vector_target = [](std::size_t k) { return "out[" + std::to_string(k) + "]"; };
  if (s.holonomic || mixed) {
    const std::string rows = mixed ? "kPositionConstraints" : "kConstraints";
    function(td ? "void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in, VecN<T, " + rows + ">& out)"
                : "void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, " + rows + ">& out)",
             s.constraint, vector_target, false, false);
  }
  if (!s.holonomic) {
    const std::string rows = mixed ? "kConstraints - kPositionConstraints" : "kConstraints";
    function("void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, " + rows + ", kDof>& out)", s.pfaffian,
             matrix_target(n), false, false);
    if (td)
      function("void affine_term([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in, VecN<T, " + rows + ">& out)", s.affine,
               vector_target, false, false);
  }
  if (s.has_gyroscopic)
    function("void gyroscopic([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kDof>& out)", s.gyroscopic, vector_target, false,
             false);
  if (s.has_forces)
    function("void generalized_force([[maybe_unused]] const T& t_in, [[maybe_unused]] const Q& q_in, [[maybe_unused]] const Q& qd_in, Out& out)",
             s.force, vector_target, false, false, "template <class T, class Q, class Out>");
  if (!s.velocity_basis.empty())
    function("void velocity_basis([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, Eigen::Dynamic>& out)",
             s.velocity_basis, matrix_target(n - m), false, false);
  if (!s.transversal_frame.empty())
    function("void transversal_frame([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kConstraints>& out)",
             s.transversal_frame, matrix_target(m), false, false);
  if (!s.closed_form.empty()) {  // q_in, qd_in: the initial state; t_in: the time
    std::ostringstream body;
    const auto refs = w.code(s.closed_form, body);
    h << "\n  bool closed_form([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, [[maybe_unused]] const Vec& qd_in, "
         "Vec& q_out, Vec& qd_out) const {\n    using T = double;\n    using namespace elementary;\n"
      << body.str();
    for (int i = 0; i < n; ++i) h << "    q_out[" << i << "] = " << refs[i] << ";\n";
    for (int i = 0; i < n; ++i) h << "    qd_out[" << i << "] = " << refs[n + i] << ";\n";
    h << "    for (int i = 0; i < " << n << "; ++i)\n"
      << "      if (!std::isfinite(q_out[i]) || !std::isfinite(qd_out[i])) return false;  // a start it does not cover\n"
      << "    return true;\n  }\n";
  }
  if (!f.points.empty()) {
    const std::vector<int> first(s.point_positions.begin(),
                                 s.point_positions.begin() + static_cast<long>(f.points.front().position.size()));
    function("void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out)", first, vector_target, false, true);
    // Every point, for the plots (problems/point_spec.hpp); the reference point is declared above.
    h << "\n  const std::vector<PointSpec>& points() const {\n    static const std::vector<PointSpec> kPoints{";
    for (std::size_t k = 0; k < f.points.size(); ++k)
      h << (k ? ", " : "") << "{" << quoted(f.points[k].name) << ", " << quoted(f.points[k].unit) << ", "
        << f.points[k].position.size() << "}";
    h << "};\n    return kPoints;\n  }\n";
    function("void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out)",
             s.point_positions, vector_target, false, true);
  }
  if (!f.body_velocities.empty()) {  // problems/body_velocity_spec.hpp
    h << "\n  const std::vector<BodyVelocitySpec>& body_velocities() const {\n"
      << "    static const std::vector<BodyVelocitySpec> kBodyVelocities{";
    for (std::size_t k = 0; k < f.body_velocities.size(); ++k)
      h << (k ? ", " : "") << "{" << quoted(f.body_velocities[k].name) << ", " << quoted(f.body_velocities[k].unit)
        << ", " << quoted(f.body_velocities[k].description) << "}";
    h << "};\n    return kBodyVelocities;\n  }\n";
    function("void body_velocity_values([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, "
             "[[maybe_unused]] const Vec& qd_in, Vec& out)",
             s.body_velocities, vector_target, false, true);
  }
  // The initial state: q0 and qd0 (zero when the file gives none).
  {
    std::vector<int> nodes = s.q0;
    nodes.insert(nodes.end(), s.qd0.begin(), s.qd0.end());
    std::ostringstream body;
    const auto refs = w.code(nodes, body);
    h << "\n  void default_initial(Vec& q0, Vec& qd0) const {\n    using T = double;\n    using namespace elementary;\n"
      << "    q0.resize(" << n << ");\n    qd0.resize(" << n << ");\n" << body.str();
    for (int i = 0; i < n; ++i) h << "    q0[" << i << "] = " << refs[i] << ";\n";
    for (int i = 0; i < n; ++i)
      h << "    qd0[" << i << "] = " << (s.qd0.empty() ? std::string("0.0") : refs[n + i]) << ";\n";
    h << "  }\n";
  }
  h << "};\n\n}  // namespace clm\n";
  return h.str();
}

}  // namespace clm
