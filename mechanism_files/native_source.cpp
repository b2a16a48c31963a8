#include "mechanism_files/native_source.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace clm {

namespace {

std::string literal(double v) {
  if (std::isnan(v)) return "(0.0 / 0.0)";
  if (std::isinf(v)) return v > 0 ? "(1.0 / 0.0)" : "(-1.0 / 0.0)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

std::string expression(const ExprNode& nd, const std::string& a, const std::string& b) {
  switch (nd.op) {
    case ExprOp::kAdd: return a + " + " + b;
    case ExprOp::kSub: return a + " - " + b;
    case ExprOp::kMul: return a + " * " + b;
    case ExprOp::kDiv: return a + " / " + b;
    case ExprOp::kNeg: return "-" + a;
    case ExprOp::kPowConst:
      // Integer exponents multiplied out, as the tape does (core/elementary_functions.hpp t_pow).
      return nd.value == std::round(nd.value) && std::abs(nd.value) <= 64
                 ? "clm_powi(" + a + ", " + std::to_string(static_cast<long>(nd.value)) + ")"
                 : "pow(" + a + ", " + literal(nd.value) + ")";
    case ExprOp::kPow: return "exp(" + b + " * log(" + a + "))";
    case ExprOp::kSin: return "sin(" + a + ")";
    case ExprOp::kCos: return "cos(" + a + ")";
    case ExprOp::kTan: return "tan(" + a + ")";
    case ExprOp::kAsin: return "asin(" + a + ")";
    case ExprOp::kAcos: return "acos(" + a + ")";
    case ExprOp::kAtan: return "atan(" + a + ")";
    case ExprOp::kAtan2: return "atan2(" + a + ", " + b + ")";
    case ExprOp::kSinh: return "sinh(" + a + ")";
    case ExprOp::kCosh: return "cosh(" + a + ")";
    case ExprOp::kTanh: return "tanh(" + a + ")";
    case ExprOp::kExp: return "exp(" + a + ")";
    case ExprOp::kLog: return "log(" + a + ")";
    case ExprOp::kSqrt: return "sqrt(" + a + ")";
    case ExprOp::kAbs: return "fabs(" + a + ")";
    case ExprOp::kMin: return b + " < " + a + " ? " + b + " : " + a;
    case ExprOp::kMax: return a + " < " + b + " ? " + b + " : " + a;
    case ExprOp::kSign: return "(double)((" + a + " > 0.0) - (" + a + " < 0.0))";
    case ExprOp::kStep: return "(" + a + " > 0.0 ? 1.0 : 0.0)";
    case ExprOp::kConst:
    case ExprOp::kInput: break;
  }
  return {};
}

// Statements per C function. A C compiler's optimizer is superlinear in the length of straight-line code (gcc -O2
// took 116 s, -O1 98 s on closed_chain at n = 64 as one function of 64,000 statements): longer term groups are cut
// into parts of this many statements, the values one part hands to a later one kept in the caller's scratch array
// (its size: clm_native_scratch()), all others in locals.
constexpr int kStatementsPerPart = 1500;

// One function `void NAME(const double* x, double* out, double* s)`: the nodes the outputs need, in increasing
// order (operands first), each computed once.
// Values of the parameters alone (a mass's m L^2 / 12, a chain's coefficients): computed once per parameter set by
// clm_native_parameters into x after the parameters (x[hoisted_base + k]), not per call.
struct Hoisted {
  int base = 0;
  std::vector<int> index;  // per node: its slot in x after hoisted_base, -1 when not hoisted
};

int emit_function(std::ostringstream& out, const ExpressionGraph& g, const std::string& name,
                  const std::vector<int>& outputs, const Hoisted& hoisted, bool is_static = false) {
  const std::vector<char> needed = g.needed_by(outputs);
  std::vector<int> statements;
  for (int i = 0; i < g.size(); ++i)
    if (needed[i] && g.node(i).op != ExprOp::kConst && g.node(i).op != ExprOp::kInput && hoisted.index[i] < 0)
      statements.push_back(i);
  const int parts = std::max<int>(1, (static_cast<int>(statements.size()) + kStatementsPerPart - 1) / kStatementsPerPart);
  std::vector<int> part_of(g.size(), -1), slot(g.size(), -1);
  for (std::size_t k = 0; k < statements.size(); ++k) part_of[statements[k]] = static_cast<int>(k) / kStatementsPerPart;
  // A value read by a later part lives in the scratch array.
  int slots = 0;
  for (int j : statements) {
    const ExprNode& nd = g.node(j);
    for (int operand : {nd.a, nd.b})
      if (operand >= 0 && part_of[operand] >= 0 && part_of[operand] < part_of[j] && slot[operand] < 0)
        slot[operand] = slots++;
  }
  std::vector<std::vector<int>> outputs_of(g.size());
  for (std::size_t k = 0; k < outputs.size(); ++k) outputs_of[outputs[k]].push_back(static_cast<int>(k));
  auto ref = [&](int i, int part) -> std::string {
    const ExprNode& nd = g.node(i);
    if (nd.op == ExprOp::kConst) return literal(nd.value);
    if (nd.op == ExprOp::kInput) return "x[" + std::to_string(nd.input) + "]";
    if (hoisted.index[i] >= 0) return "x[" + std::to_string(hoisted.base + hoisted.index[i]) + "]";
    if (part_of[i] != part) return "s[" + std::to_string(slot[i]) + "]";
    return "v" + std::to_string(i);
  };
  for (int p = 0; p < parts; ++p) {
    out << (parts > 1 || is_static ? "static " : "") << "void " << name << (parts > 1 ? "_part" + std::to_string(p) : "")
        << "(const double* x, double* out, double* s) {\n  (void)x;\n  (void)out;\n  (void)s;\n";
    const std::size_t first = static_cast<std::size_t>(p) * kStatementsPerPart;
    for (std::size_t k = first; k < statements.size() && k < first + kStatementsPerPart; ++k) {
      const int j = statements[k];
      const ExprNode& nd = g.node(j);
      out << "  const double v" << j << " = "
          << expression(nd, nd.a >= 0 ? ref(nd.a, p) : "", nd.b >= 0 ? ref(nd.b, p) : "") << ";\n";
      if (slot[j] >= 0) out << "  s[" << slot[j] << "] = v" << j << ";\n";
      for (int o : outputs_of[j]) out << "  out[" << o << "] = v" << j << ";\n";
    }
    if (parts == 1)  // outputs that are inputs or numbers
      for (std::size_t k = 0; k < outputs.size(); ++k)
        if (part_of[outputs[k]] < 0) out << "  out[" << k << "] = " << ref(outputs[k], 0) << ";\n";
    out << "}\n\n";
  }
  if (parts > 1) {
    out << (is_static ? "static " : "") << "void " << name << "(const double* x, double* out, double* s) {\n";
    for (int p = 0; p < parts; ++p) out << "  " << name << "_part" << p << "(x, out, s);\n";
    for (std::size_t k = 0; k < outputs.size(); ++k)
      if (part_of[outputs[k]] < 0) out << "  out[" << k << "] = " << ref(outputs[k], -2) << ";\n";
    out << "}\n\n";
  }
  return slots;
}

template <class... Parts>
std::vector<int> concat(const Parts&... parts) {
  std::vector<int> all;
  (all.insert(all.end(), parts.begin(), parts.end()), ...);
  return all;
}

}  // namespace

std::string native_c_source(const NativeTermGraph& t, const std::string& origin) {
  std::ostringstream out;
  out << "/* Generated by clmbench from " << origin << " (mechanism_files/native_source.cpp): the native evaluation\n"
      << "   of a mechanism file. n = " << t.n << ", m = " << t.m << ", position rows " << t.position_rows
      << ", parameters " << t.parameters << ", graph nodes " << t.graph.size() << ". */\n"
      << "#include <math.h>\n\n"
      << "static inline double clm_powi(double x, long p) {\n"
      << "  unsigned long n = p < 0 ? (unsigned long)(-p) : (unsigned long)p;\n"
      << "  double result = 1.0, base = x;\n"
      << "  int first = 1;\n"
      << "  while (n > 0) {\n"
      << "    if (n & 1u) { result = first ? base : result * base; first = 0; }\n"
      << "    n >>= 1;\n"
      << "    if (n > 0) base = base * base;\n"
      << "  }\n"
      << "  return p < 0 ? 1.0 / result : result;\n"
      << "}\n\n"
      << "int clm_native_abi(void) { return " << kNativeAbi << "; }\n\n";
  const ExpressionGraph& g = t.graph;
  const std::vector<int> all = concat(t.mass, t.bias, t.force, t.jacobian, t.constraint_bias, t.constraint, t.rate,
                                      t.energy);
  // The parameter-only nodes the terms need, hoisted (state inputs: q, qd, t = the first 2n + 1).
  Hoisted hoisted;
  hoisted.base = 2 * t.n + 1 + t.parameters;
  hoisted.index.assign(g.size(), -1);
  {
    const std::vector<char> needed = g.needed_by(all);
    std::vector<char> parameter_only(g.size(), 0);
    std::vector<int> order;
    for (int i = 0; i < g.size(); ++i) {
      const ExprNode& nd = g.node(i);
      if (nd.op == ExprOp::kConst) parameter_only[i] = 1;
      else if (nd.op == ExprOp::kInput) parameter_only[i] = nd.input > 2 * t.n;
      else parameter_only[i] = parameter_only[nd.a] && (nd.b < 0 || parameter_only[nd.b]);
      if (needed[i] && parameter_only[i] && nd.op != ExprOp::kConst && nd.op != ExprOp::kInput) {
        hoisted.index[i] = static_cast<int>(order.size());
        order.push_back(i);
      }
    }
    out << "void clm_native_parameters(double* x) {\n";
    for (int i : order) {
      const ExprNode& nd = g.node(i);
      auto r = [&](int j) {
        const ExprNode& o = g.node(j);
        if (o.op == ExprOp::kConst) return literal(o.value);
        if (o.op == ExprOp::kInput) return "x[" + std::to_string(o.input) + "]";
        return "x[" + std::to_string(hoisted.base + hoisted.index[j]) + "]";
      };
      out << "  x[" << hoisted.base + hoisted.index[i] << "] = "
          << expression(nd, nd.a >= 0 ? r(nd.a) : "", nd.b >= 0 ? r(nd.b) : "") << ";\n";
    }
    out << "}\n\nint clm_native_hoisted(void) { return " << order.size() << "; }\n\n";
  }
  int scratch = 1;
  auto emit = [&](const std::string& name, const std::vector<int>& outputs, bool is_static = false) {
    scratch = std::max(scratch, emit_function(out, g, name, outputs, hoisted, is_static));
  };
  emit("clm_native_mass", t.mass);
  if (t.has_forces) {
    emit("clm_native_dynamics", concat(t.mass, t.bias, t.force));
    emit("clm_native_force", t.force);
  } else {  // M and c, then F = 0 (no [forces])
    emit("clm_native_dynamics_mc", concat(t.mass, t.bias), true);
    out << "void clm_native_dynamics(const double* x, double* out, double* s) {\n  clm_native_dynamics_mc(x, out, s);\n"
        << "  for (int i = 0; i < " << t.n << "; ++i) out[" << t.n * t.n + t.n << " + i] = 0.0;\n}\n\n"
        << "void clm_native_force(const double* x, double* out, double* s) {\n  (void)x;\n  (void)s;\n"
        << "  for (int i = 0; i < " << t.n << "; ++i) out[i] = 0.0;\n}\n\n";
  }
  emit("clm_native_constraints", concat(t.jacobian, t.constraint_bias, t.constraint, t.rate));
  emit("clm_native_energy", t.energy);
  out << "int clm_native_scratch(void) { return " << scratch << "; }\n";
  return out.str();
}

}  // namespace clm
