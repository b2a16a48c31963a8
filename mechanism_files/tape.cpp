#include "mechanism_files/tape.hpp"

#include <ceres/jet.h>

#include <algorithm>
#include <limits>

namespace clm {

Tape::Tape(const ExpressionGraph& g, const std::vector<int>& outputs) : inputs_(g.inputs()) {
  const int size = g.size();
  const std::vector<char> needed = g.needed_by(outputs);
  reads_.assign(inputs_, 0);
  for (int k = 0; k < inputs_; ++k) reads_[k] = needed[k];
  // Last use of each node (an output lives to the end).
  constexpr int kForever = std::numeric_limits<int>::max();
  std::vector<int> last_use(size, -1);
  for (int i = inputs_; i < size; ++i) {
    if (!needed[i]) continue;
    const ExprNode& n = g.node(i);
    if (n.a >= 0) last_use[n.a] = std::max(last_use[n.a], i);
    if (n.b >= 0) last_use[n.b] = std::max(last_use[n.b], i);
  }
  for (int o : outputs) last_use[o] = kForever;
  // Linear scan: inputs keep registers 0 .. inputs-1 (the caller writes them); others take a free register.
  std::vector<int> reg(size, -1);
  for (int k = 0; k < inputs_; ++k) reg[k] = k;
  std::vector<int> free_list;
  int next = inputs_;
  for (int i = inputs_; i < size; ++i) {
    if (!needed[i]) continue;
    const ExprNode& n = g.node(i);
    // Operands whose last use is this node free their registers first, so that out may reuse one of them
    // (every op reads its operands before writing out).
    for (int operand : {n.a, n.b}) {
      if (operand >= inputs_ && last_use[operand] == i && reg[operand] >= 0) {
        free_list.push_back(reg[operand]);
        last_use[operand] = -2;  // freed once even when both operands are the same node
      }
    }
    if (!free_list.empty()) {
      reg[i] = free_list.back();
      free_list.pop_back();
    } else {
      reg[i] = next++;
    }
    code_.push_back({n.op, reg[i], n.a >= 0 ? reg[n.a] : -1, n.b >= 0 ? reg[n.b] : -1, n.value});
  }
  registers_ = next;
  for (int o : outputs) output_registers_.push_back(reg[o]);
  // The single-assignment twin: node i's value in its own register.
  std::vector<int> ssa(size, -1);
  for (int k = 0; k < inputs_; ++k) ssa[k] = k;
  int ssa_next = inputs_;
  for (int i = inputs_; i < size; ++i) {
    if (!needed[i]) continue;
    const ExprNode& n = g.node(i);
    ssa[i] = ssa_next++;
    ssa_code_.push_back({n.op, ssa[i], n.a >= 0 ? ssa[n.a] : -1, n.b >= 0 ? ssa[n.b] : -1, n.value});
  }
  ssa_registers_ = ssa_next;
  for (int o : outputs) ssa_outputs_.push_back(ssa[o]);
}

void Tape::gradient(double* v, double* g, const double* weights) const {
  execute(ssa_code_, v);
  backward_sweep(v, g, weights);
}

namespace {
double value_part(double x) { return x; }
double value_part(const ceres::Jet<double, 1>& x) { return x.a; }
}  // namespace

template <class T>
void Tape::backward_sweep(const T* v, double* g, const double* weights) const {
  using namespace elementary;
  std::fill(g, g + ssa_registers_, 0.0);
  for (std::size_t k = 0; k < ssa_outputs_.size(); ++k) g[ssa_outputs_[k]] += weights[k];
  // The adjoint of each instruction, last first: its output's adjoint pushed to its operands. The rules are the
  // derivatives of the forward operations as Tape::run computes them (also those of the expression graph's
  // symbolic derivative: abs' = sign, min and max select an operand, sign and step are flat).
  for (auto it = ssa_code_.rbegin(); it != ssa_code_.rend(); ++it) {
    const TapeInstruction& in = *it;
    const double w = g[in.out];
    if (w == 0.0) continue;
    const double out = value_part(v[in.out]);
    const double a = in.a >= 0 ? value_part(v[in.a]) : 0.0, b = in.b >= 0 ? value_part(v[in.b]) : 0.0;
    switch (in.op) {
      case ExprOp::kConst:
      case ExprOp::kInput:
      case ExprOp::kSign:
      case ExprOp::kStep: break;
      case ExprOp::kAdd: g[in.a] += w; g[in.b] += w; break;
      case ExprOp::kSub: g[in.a] += w; g[in.b] -= w; break;
      case ExprOp::kMul: g[in.a] += w * b; g[in.b] += w * a; break;
      case ExprOp::kDiv: g[in.a] += w / b; g[in.b] -= w * out / b; break;
      case ExprOp::kNeg: g[in.a] -= w; break;
      case ExprOp::kPowConst: g[in.a] += w * in.value * t_pow(a, in.value - 1.0); break;
      case ExprOp::kPow: g[in.a] += w * b * out / a; g[in.b] += w * out * std::log(a); break;
      case ExprOp::kSin: g[in.a] += w * std::cos(a); break;
      case ExprOp::kCos: g[in.a] -= w * std::sin(a); break;
      case ExprOp::kTan: g[in.a] += w * (1.0 + out * out); break;
      case ExprOp::kAsin: g[in.a] += w / std::sqrt(1.0 - a * a); break;
      case ExprOp::kAcos: g[in.a] -= w / std::sqrt(1.0 - a * a); break;
      case ExprOp::kAtan: g[in.a] += w / (1.0 + a * a); break;
      case ExprOp::kAtan2: {
        const double r2 = a * a + b * b;
        g[in.a] += w * b / r2;
        g[in.b] -= w * a / r2;
        break;
      }
      case ExprOp::kSinh: g[in.a] += w * std::cosh(a); break;
      case ExprOp::kCosh: g[in.a] += w * std::sinh(a); break;
      case ExprOp::kTanh: g[in.a] += w * (1.0 - out * out); break;
      case ExprOp::kExp: g[in.a] += w * out; break;
      case ExprOp::kLog: g[in.a] += w / a; break;
      case ExprOp::kSqrt: g[in.a] += w * 0.5 / out; break;
      case ExprOp::kAbs: g[in.a] += a > 0 ? w : (a < 0 ? -w : 0.0); break;
      case ExprOp::kMin: g[b < a ? in.b : in.a] += w; break;
      case ExprOp::kMax: g[a < b ? in.b : in.a] += w; break;
    }
  }
}

template void Tape::backward_sweep<double>(const double*, double*, const double*) const;
template void Tape::backward_sweep<ceres::Jet<double, 1>>(const ceres::Jet<double, 1>*, double*, const double*) const;

}  // namespace clm
