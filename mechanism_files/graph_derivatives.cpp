#include "mechanism_files/graph_derivatives.hpp"

#include <utility>

namespace clm {

LocalPartials local_partials(ExpressionGraph& g, int j) {
  const ExprNode n = g.node(j);  // a copy: building nodes may reallocate the graph's nodes
  const int a = n.a, b = n.b;
  auto c = [&](double v) { return g.constant(v); };
  auto add = [&](int x, int y) { return g.binary(ExprOp::kAdd, x, y); };
  auto sub = [&](int x, int y) { return g.binary(ExprOp::kSub, x, y); };
  auto mul = [&](int x, int y) { return g.binary(ExprOp::kMul, x, y); };
  auto div = [&](int x, int y) { return g.binary(ExprOp::kDiv, x, y); };
  auto sq = [&](int x) { return g.pow_const(x, 2); };
  LocalPartials p;
  switch (n.op) {
    case ExprOp::kConst:
    case ExprOp::kInput: break;
    case ExprOp::kAdd: p = {c(1), c(1)}; break;
    case ExprOp::kSub: p = {c(1), c(-1)}; break;
    case ExprOp::kNeg: p.da = c(-1); break;
    case ExprOp::kMul: p = {b, a}; break;
    case ExprOp::kDiv: p = {div(c(1), b), g.unary(ExprOp::kNeg, div(j, b))}; break;  // 1/b, -(a/b)/b
    case ExprOp::kPowConst: p.da = mul(c(n.value), g.pow_const(a, n.value - 1)); break;
    case ExprOp::kPow: p = {div(mul(j, b), a), mul(j, g.unary(ExprOp::kLog, a))}; break;  // a^b b/a, a^b log a
    case ExprOp::kSin: p.da = g.unary(ExprOp::kCos, a); break;
    case ExprOp::kCos: p.da = g.unary(ExprOp::kNeg, g.unary(ExprOp::kSin, a)); break;
    case ExprOp::kTan: p.da = add(c(1), sq(j)); break;
    case ExprOp::kAsin:
    case ExprOp::kAcos: {
      const int r = div(c(1), g.unary(ExprOp::kSqrt, sub(c(1), sq(a))));
      p.da = n.op == ExprOp::kAsin ? r : g.unary(ExprOp::kNeg, r);
      break;
    }
    case ExprOp::kAtan: p.da = div(c(1), add(c(1), sq(a))); break;
    case ExprOp::kAtan2: {  // atan2(y = a, x = b): (x, -y) / (x^2 + y^2)
      const int r2 = add(sq(a), sq(b));
      p = {div(b, r2), g.unary(ExprOp::kNeg, div(a, r2))};
      break;
    }
    case ExprOp::kSinh: p.da = g.unary(ExprOp::kCosh, a); break;
    case ExprOp::kCosh: p.da = g.unary(ExprOp::kSinh, a); break;
    case ExprOp::kTanh: p.da = sub(c(1), sq(j)); break;
    case ExprOp::kExp: p.da = j; break;
    case ExprOp::kLog: p.da = div(c(1), a); break;
    case ExprOp::kSqrt: p.da = div(c(1), mul(c(2), j)); break;
    case ExprOp::kAbs: p.da = g.unary(ExprOp::kSign, a); break;
    case ExprOp::kMin:
    case ExprOp::kMax: {
      const int step = g.unary(ExprOp::kStep, sub(a, b));  // 1 where a > b
      const int other = sub(c(1), step);
      p = n.op == ExprOp::kMax ? LocalPartials{step, other} : LocalPartials{other, step};
      break;
    }
    case ExprOp::kSign:
    case ExprOp::kStep: p.da = c(0); break;
  }
  return p;
}

DirectionalDerivative::DirectionalDerivative(ExpressionGraph& g, std::vector<int> seeds)
    : g_(g), seeds_(std::move(seeds)) {}

std::vector<int> DirectionalDerivative::of(const std::vector<int>& outputs) {
  const int size = g_.size();
  const std::vector<char> needed = g_.needed_by(outputs);
  if (static_cast<int>(memo_.size()) < size) memo_.resize(size, -1);
  // Operands precede their node: one ascending sweep settles every needed node (nodes it builds are appended
  // above `size` and never visited).
  for (int j = 0; j < size; ++j) {
    if (!needed[j] || memo_[j] >= 0) continue;
    const ExprNode n = g_.node(j);
    int r;
    if (n.op == ExprOp::kInput) {
      r = n.input < static_cast<int>(seeds_.size()) && seeds_[n.input] >= 0 ? seeds_[n.input] : g_.constant(0);
    } else if (n.op == ExprOp::kConst) {
      r = g_.constant(0);
    } else {
      const bool moves_a = n.a >= 0 && !g_.is_constant(memo_[n.a], 0);
      const bool moves_b = n.b >= 0 && !g_.is_constant(memo_[n.b], 0);
      if (!moves_a && !moves_b) {
        r = g_.constant(0);
      } else {
        const LocalPartials p = local_partials(g_, j);
        r = g_.constant(0);
        if (moves_a) r = g_.binary(ExprOp::kAdd, r, g_.binary(ExprOp::kMul, p.da, memo_[n.a]));
        if (moves_b) r = g_.binary(ExprOp::kAdd, r, g_.binary(ExprOp::kMul, p.db, memo_[n.b]));
      }
    }
    if (static_cast<int>(memo_.size()) < g_.size()) memo_.resize(g_.size(), -1);
    memo_[j] = r;
  }
  std::vector<int> out;
  out.reserve(outputs.size());
  for (int o : outputs) out.push_back(memo_[o]);
  return out;
}

std::vector<int> graph_gradient(ExpressionGraph& g, int output, int first, int count) {
  const int size = g.size();
  const std::vector<char> needed = g.needed_by({output});
  std::vector<int> adjoint(size, -1);
  adjoint[output] = g.constant(1);
  auto accumulate = [&](int operand, int partial, int adj) {
    const int contribution = g.binary(ExprOp::kMul, adj, partial);
    adjoint[operand] = adjoint[operand] < 0 ? contribution : g.binary(ExprOp::kAdd, adjoint[operand], contribution);
  };
  for (int j = size - 1; j >= 0; --j) {
    if (!needed[j] || adjoint[j] < 0) continue;
    const ExprNode n = g.node(j);
    if (n.op == ExprOp::kInput || n.op == ExprOp::kConst) continue;
    if (g.is_constant(adjoint[j], 0)) continue;
    const int adj = adjoint[j];
    const LocalPartials p = local_partials(g, j);
    if (n.a >= 0) accumulate(n.a, p.da, adj);
    if (n.b >= 0) accumulate(n.b, p.db, adj);
  }
  std::vector<int> out;
  out.reserve(count);
  for (int k = first; k < first + count; ++k) out.push_back(adjoint[k] < 0 ? g.constant(0) : adjoint[k]);
  return out;
}

}  // namespace clm
