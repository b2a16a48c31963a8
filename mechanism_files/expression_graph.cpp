#include "mechanism_files/expression_graph.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace clm {

namespace {

struct FunctionInfo {
  ExprOp op;
  const char* name;
  int arity;
};

constexpr FunctionInfo kFunctions[] = {
    {ExprOp::kSin, "sin", 1},   {ExprOp::kCos, "cos", 1},     {ExprOp::kTan, "tan", 1},   {ExprOp::kAsin, "asin", 1},
    {ExprOp::kAcos, "acos", 1}, {ExprOp::kAtan, "atan", 1},   {ExprOp::kAtan2, "atan2", 2},
    {ExprOp::kSinh, "sinh", 1}, {ExprOp::kCosh, "cosh", 1},   {ExprOp::kTanh, "tanh", 1}, {ExprOp::kExp, "exp", 1},
    {ExprOp::kLog, "log", 1},   {ExprOp::kSqrt, "sqrt", 1},   {ExprOp::kAbs, "abs", 1},   {ExprOp::kMin, "min", 2},
    {ExprOp::kMax, "max", 2},   {ExprOp::kPow, "pow", 2},     {ExprOp::kSign, "sign", 1},
};

// The value of op at constant operands (constant folding), in double as the tape would compute it.
double fold(ExprOp op, double a, double b) {
  switch (op) {
    case ExprOp::kAdd: return a + b;
    case ExprOp::kSub: return a - b;
    case ExprOp::kMul: return a * b;
    case ExprOp::kDiv: return a / b;
    case ExprOp::kNeg: return -a;
    case ExprOp::kPow: return std::pow(a, b);
    case ExprOp::kSin: return std::sin(a);
    case ExprOp::kCos: return std::cos(a);
    case ExprOp::kTan: return std::tan(a);
    case ExprOp::kAsin: return std::asin(a);
    case ExprOp::kAcos: return std::acos(a);
    case ExprOp::kAtan: return std::atan(a);
    case ExprOp::kAtan2: return std::atan2(a, b);
    case ExprOp::kSinh: return std::sinh(a);
    case ExprOp::kCosh: return std::cosh(a);
    case ExprOp::kTanh: return std::tanh(a);
    case ExprOp::kExp: return std::exp(a);
    case ExprOp::kLog: return std::log(a);
    case ExprOp::kSqrt: return std::sqrt(a);
    case ExprOp::kAbs: return std::abs(a);
    case ExprOp::kMin: return std::min(a, b);
    case ExprOp::kMax: return std::max(a, b);
    case ExprOp::kSign: return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);
    case ExprOp::kStep: return a > 0 ? 1.0 : 0.0;
    default: return 0;
  }
}

}  // namespace

const char* expr_function_name(ExprOp op) {
  for (const auto& f : kFunctions)
    if (f.op == op) return f.name;
  return nullptr;
}

int expr_arity(ExprOp op) {
  switch (op) {
    case ExprOp::kConst:
    case ExprOp::kInput: return 0;
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
    case ExprOp::kDiv:
    case ExprOp::kPow:
    case ExprOp::kAtan2:
    case ExprOp::kMin:
    case ExprOp::kMax: return 2;
    default: return 1;
  }
}

std::size_t ExpressionGraph::KeyHash::operator()(const Key& k) const {
  std::size_t h = static_cast<std::size_t>(k.op);
  auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.a)));
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.b)));
  mix(k.value_bits);
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.input)));
  return h;
}

ExpressionGraph::ExpressionGraph(int inputs) : inputs_(inputs) {
  for (int i = 0; i < inputs; ++i) {
    ExprNode n;
    n.op = ExprOp::kInput;
    n.input = i;
    add_node(n);
  }
}

int ExpressionGraph::add_node(const ExprNode& n) {
  // -0.0 and 0.0 are one constant; NaN constants (0/0 folded) keep their own bits.
  const double v = n.value == 0 ? 0.0 : n.value;
  const Key key{n.op, n.a, n.b, std::bit_cast<std::uint64_t>(v), n.input};
  if (auto it = index_.find(key); it != index_.end()) return it->second;
  nodes_.push_back(n);
  nodes_.back().value = v;
  const int id = static_cast<int>(nodes_.size()) - 1;
  index_.emplace(key, id);
  return id;
}

int ExpressionGraph::constant(double v) {
  ExprNode n;
  n.op = ExprOp::kConst;
  n.value = v;
  return add_node(n);
}

int ExpressionGraph::unary(ExprOp op, int a) {
  const ExprNode& x = nodes_[a];
  if (x.op == ExprOp::kConst) return constant(fold(op, x.value, 0));
  if (op == ExprOp::kNeg && x.op == ExprOp::kNeg) return x.a;
  if ((op == ExprOp::kSign || op == ExprOp::kStep) && x.op == ExprOp::kConst) return constant(fold(op, x.value, 0));
  ExprNode n;
  n.op = op;
  n.a = a;
  return add_node(n);
}

int ExpressionGraph::pow_const(int a, double p) {
  if (p == 1) return a;
  if (p == 0) return constant(1);
  if (nodes_[a].op == ExprOp::kConst) return constant(std::pow(nodes_[a].value, p));
  ExprNode n;
  n.op = ExprOp::kPowConst;
  n.a = a;
  n.value = p;
  return add_node(n);
}

int ExpressionGraph::binary(ExprOp op, int a, int b) {
  const ExprNode &x = nodes_[a], &y = nodes_[b];
  if (x.op == ExprOp::kConst && y.op == ExprOp::kConst) return constant(fold(op, x.value, y.value));
  switch (op) {
    case ExprOp::kAdd:
      if (is_constant(a, 0)) return b;
      if (is_constant(b, 0)) return a;
      if (a > b) std::swap(a, b);  // commutative: one node for a + b and b + a
      break;
    case ExprOp::kSub:
      if (is_constant(b, 0)) return a;
      if (is_constant(a, 0)) return unary(ExprOp::kNeg, b);
      if (a == b) return constant(0);
      break;
    case ExprOp::kMul:
      if (is_constant(a, 0) || is_constant(b, 0)) return constant(0);
      if (is_constant(a, 1)) return b;
      if (is_constant(b, 1)) return a;
      if (is_constant(a, -1)) return unary(ExprOp::kNeg, b);
      if (is_constant(b, -1)) return unary(ExprOp::kNeg, a);
      if (a > b) std::swap(a, b);
      break;
    case ExprOp::kDiv:
      if (is_constant(a, 0)) return constant(0);
      if (is_constant(b, 1)) return a;
      break;
    case ExprOp::kPow:
      if (y.op == ExprOp::kConst) return pow_const(a, y.value);
      break;
    case ExprOp::kMin:
    case ExprOp::kMax:
      if (a == b) return a;
      if (a > b) std::swap(a, b);
      break;
    default:
      break;
  }
  ExprNode n;
  n.op = op;
  n.a = a;
  n.b = b;
  return add_node(n);
}

bool ExpressionGraph::depends_on(int i, int k) {
  if (static_cast<int>(depends_.size()) <= k) {
    depends_.resize(k + 1);
    settled_.resize(k + 1, 0);
  }
  auto& memo = depends_[k];
  if (static_cast<int>(memo.size()) < size()) memo.resize(size(), -1);
  if (i < settled_[k]) return memo[i] == 1;
  // Operands precede their node, so one pass in order settles every node on the way; nodes are only ever
  // appended, so the pass starts where the last one ended (amortized O(1) per node: without this, compiling a
  // 20-link chain spent most of its 56 ms rescanning settled prefixes).
  for (int j = settled_[k]; j <= i; ++j) {
    if (memo[j] >= 0) continue;
    const ExprNode& n = nodes_[j];
    if (n.op == ExprOp::kInput) memo[j] = n.input == k;
    else if (n.op == ExprOp::kConst) memo[j] = 0;
    else memo[j] = (n.a >= 0 && memo[n.a] == 1) || (n.b >= 0 && memo[n.b] == 1);
  }
  settled_[k] = i + 1;
  return memo[i] == 1;
}

std::vector<char> ExpressionGraph::needed_by(const std::vector<int>& outputs) const {
  std::vector<char> needed(size(), 0);
  for (int o : outputs) needed[o] = 1;
  for (int i = size() - 1; i >= 0; --i) {
    if (!needed[i]) continue;
    if (nodes_[i].a >= 0) needed[nodes_[i].a] = 1;
    if (nodes_[i].b >= 0) needed[nodes_[i].b] = 1;
  }
  return needed;
}

template <class Follow>
std::vector<int> ExpressionGraph::operands_first(int i, Follow follow) const {
  std::vector<int> order, stack{i};
  std::vector<char> seen(size(), 0);
  seen[i] = 1;
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    order.push_back(j);
    for (int operand : {nodes_[j].a, nodes_[j].b})
      if (operand >= 0 && !seen[operand] && follow(operand)) {
        seen[operand] = 1;
        stack.push_back(operand);
      }
  }
  std::sort(order.begin(), order.end());  // operands precede their node
  return order;
}

int ExpressionGraph::derivative(int i, int k) {
  if (!depends_on(i, k)) return constant(0);
  if (static_cast<int>(derivative_.size()) <= k) derivative_.resize(k + 1);
  // The nodes i depends on through input k, in increasing order (operands first).
  const std::vector<int> order = operands_first(i, [&](int operand) { return depends_on(operand, k); });
  for (int j : order) {
    if (static_cast<int>(derivative_[k].size()) < size()) derivative_[k].resize(size(), -1);
    if (derivative_[k][j] >= 0) continue;
    const ExprNode n = nodes_[j];  // a copy: building nodes may reallocate nodes_
    auto d = [&](int operand) {
      return depends_on(operand, k) ? derivative_[k][operand] : constant(0);
    };
    const int a = n.a, b = n.b;
    int r = -1;
    switch (n.op) {
      case ExprOp::kInput: r = constant(n.input == k ? 1 : 0); break;
      case ExprOp::kConst: r = constant(0); break;
      case ExprOp::kAdd: r = binary(ExprOp::kAdd, d(a), d(b)); break;
      case ExprOp::kSub: r = binary(ExprOp::kSub, d(a), d(b)); break;
      case ExprOp::kNeg: r = unary(ExprOp::kNeg, d(a)); break;
      case ExprOp::kMul:
        r = binary(ExprOp::kAdd, binary(ExprOp::kMul, d(a), b), binary(ExprOp::kMul, a, d(b)));
        break;
      case ExprOp::kDiv: {
        // d(a / b) = da / b - (a / b) db / b
        const int first = binary(ExprOp::kDiv, d(a), b);
        const int second = binary(ExprOp::kDiv, binary(ExprOp::kMul, j, d(b)), b);
        r = binary(ExprOp::kSub, first, second);
        break;
      }
      case ExprOp::kPowConst:
        r = binary(ExprOp::kMul, binary(ExprOp::kMul, constant(n.value), pow_const(a, n.value - 1)), d(a));
        break;
      case ExprOp::kPow: {
        // d(a^b) = a^b (db log a + b da / a)
        const int t1 = binary(ExprOp::kMul, d(b), unary(ExprOp::kLog, a));
        const int t2 = binary(ExprOp::kDiv, binary(ExprOp::kMul, b, d(a)), a);
        r = binary(ExprOp::kMul, j, binary(ExprOp::kAdd, t1, t2));
        break;
      }
      case ExprOp::kSin: r = binary(ExprOp::kMul, unary(ExprOp::kCos, a), d(a)); break;
      case ExprOp::kCos: r = unary(ExprOp::kNeg, binary(ExprOp::kMul, unary(ExprOp::kSin, a), d(a))); break;
      case ExprOp::kTan:  // (1 + tan^2) da
        r = binary(ExprOp::kMul, binary(ExprOp::kAdd, constant(1), pow_const(j, 2)), d(a));
        break;
      case ExprOp::kAsin:
      case ExprOp::kAcos: {  // +-da / sqrt(1 - a^2)
        const int root = unary(ExprOp::kSqrt, binary(ExprOp::kSub, constant(1), pow_const(a, 2)));
        r = binary(ExprOp::kDiv, d(a), root);
        if (n.op == ExprOp::kAcos) r = unary(ExprOp::kNeg, r);
        break;
      }
      case ExprOp::kAtan:
        r = binary(ExprOp::kDiv, d(a), binary(ExprOp::kAdd, constant(1), pow_const(a, 2)));
        break;
      case ExprOp::kAtan2: {  // atan2(y, x): (x dy - y dx) / (x^2 + y^2)
        const int num = binary(ExprOp::kSub, binary(ExprOp::kMul, b, d(a)), binary(ExprOp::kMul, a, d(b)));
        r = binary(ExprOp::kDiv, num, binary(ExprOp::kAdd, pow_const(a, 2), pow_const(b, 2)));
        break;
      }
      case ExprOp::kSinh: r = binary(ExprOp::kMul, unary(ExprOp::kCosh, a), d(a)); break;
      case ExprOp::kCosh: r = binary(ExprOp::kMul, unary(ExprOp::kSinh, a), d(a)); break;
      case ExprOp::kTanh:
        r = binary(ExprOp::kMul, binary(ExprOp::kSub, constant(1), pow_const(j, 2)), d(a));
        break;
      case ExprOp::kExp: r = binary(ExprOp::kMul, j, d(a)); break;
      case ExprOp::kLog: r = binary(ExprOp::kDiv, d(a), a); break;
      case ExprOp::kSqrt: r = binary(ExprOp::kDiv, d(a), binary(ExprOp::kMul, constant(2), j)); break;
      case ExprOp::kAbs: r = binary(ExprOp::kMul, unary(ExprOp::kSign, a), d(a)); break;
      case ExprOp::kMin:
      case ExprOp::kMax: {
        // min: da + (db - da) step(a - b); max: db + (da - db) step(a - b)
        const int step = unary(ExprOp::kStep, binary(ExprOp::kSub, a, b));
        const int first = n.op == ExprOp::kMin ? d(a) : d(b), second = n.op == ExprOp::kMin ? d(b) : d(a);
        r = binary(ExprOp::kAdd, first, binary(ExprOp::kMul, binary(ExprOp::kSub, second, first), step));
        break;
      }
      case ExprOp::kSign:
      case ExprOp::kStep: r = constant(0); break;
    }
    if (static_cast<int>(derivative_[k].size()) < size()) derivative_[k].resize(size(), -1);
    derivative_[k][j] = r;
  }
  return derivative_[k][i];
}

int ExpressionGraph::at_zero(int i, int first, int count) {
  if (zero_first_ != first || zero_count_ != count) {
    zero_first_ = first;
    zero_count_ = count;
    zero_.clear();
  }
  if (static_cast<int>(zero_.size()) < size()) zero_.resize(size(), -1);
  if (zero_[i] >= 0) return zero_[i];
  // The nodes i reaches that are not rebuilt yet, operands first; each rebuilt from its rebuilt operands (which
  // simplifies).
  const std::vector<int> order = operands_first(i, [&](int operand) { return zero_[operand] < 0; });
  for (int j : order) {
    if (static_cast<int>(zero_.size()) < size()) zero_.resize(size(), -1);
    if (zero_[j] >= 0) continue;
    const ExprNode n = nodes_[j];
    int r;
    if (n.op == ExprOp::kInput) r = (n.input >= first && n.input < first + count) ? constant(0) : j;
    else if (n.op == ExprOp::kConst) r = j;
    else if (n.op == ExprOp::kPowConst) r = pow_const(zero_[n.a], n.value);
    else if (expr_arity(n.op) == 1) r = unary(n.op, zero_[n.a]);
    else r = binary(n.op, zero_[n.a], zero_[n.b]);
    if (static_cast<int>(zero_.size()) < size()) zero_.resize(size(), -1);
    zero_[j] = r;
  }
  return zero_[i];
}

}  // namespace clm
