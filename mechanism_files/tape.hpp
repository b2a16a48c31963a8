// A flat register tape: the nodes of an ExpressionGraph that some outputs need, as straight-line code over
// registers, evaluated over any scalar type (double, ceres::Jet, the second-order scalars of core/), in the
// manner of CasADi's SX virtual machine. The tape is what a mechanism file's Problem (mechanism_files/
// tape_problem.hpp) runs for M(q), V(q, t), h(q, t), A(q), ...; automatic differentiation then happens by
// running it over a derivative-carrying scalar, exactly as for a zoo problem's templated functions.
//
// Registers 0 .. inputs-1 hold the inputs; the others are reused once their value is dead (linear scan over the
// instruction order), so a tape's scratch is far smaller than its graph. Evaluation allocates nothing: the
// registers are a buffer the caller keeps (scratch<T>() gives one per thread and scalar type).
#pragma once

#include <cmath>
#include <type_traits>
#include <vector>

#include "core/elementary_functions.hpp"
#include "mechanism_files/expression_graph.hpp"

namespace clm {

struct TapeInstruction {
  ExprOp op;
  int out, a, b;
  double value;  // kConst: the number; kPowConst: the exponent
};

class Tape {
 public:
  Tape() = default;
  // Straight-line code for the given output nodes of `graph` (any node: an input, a constant, an operation).
  Tape(const ExpressionGraph& graph, const std::vector<int>& outputs);

  int inputs() const { return inputs_; }
  int outputs() const { return static_cast<int>(output_registers_.size()); }
  int registers() const { return registers_; }
  int instructions() const { return static_cast<int>(code_.size()); }
  // Whether any output depends on input k (for the caller's checks: a velocity in V, t in A, ...).
  bool reads_input(int k) const { return k < static_cast<int>(reads_.size()) && reads_[k]; }

  // Runs the code on regs (at least registers() long, regs[0 .. inputs) set by the caller), then out[k] is
  // regs[output_register(k)].
  template <class T>
  void run(T* regs) const;
  int output_register(int k) const { return output_registers_[k]; }

  // Reverse mode (double) for gradients of scalars: the gradient of sum_k weights[k] out_k with respect to the
  // inputs, in O(instructions), by the tape's single-assignment twin (every instruction its own register, so
  // that the backward sweep sees every forward value). values and adjoints: buffers of ssa_registers() with
  // values[0 .. inputs) set by the caller; on return adjoints[0 .. inputs) is the gradient (and values, the
  // outputs at values[ssa_output_register(k)]). No heap allocation.
  void gradient(double* values, double* adjoints, const double* weights) const;
  // The two halves of gradient(), for a caller that wants the forward pass in another scalar (a dual number
  // along qd gives Mdot qd in the same pass, and its value parts are what the backward sweep reads):
  // run_single_assignment over T, then backward_sweep over the values it left (T = double or
  // ceres::Jet<double, 1>, whose value part is read).
  template <class T>
  void run_single_assignment(T* values) const {
    execute(ssa_code_, values);
  }
  template <class T>
  void backward_sweep(const T* values, double* adjoints, const double* weights) const;
  int ssa_registers() const { return ssa_registers_; }
  int ssa_output_register(int k) const { return ssa_outputs_[k]; }

  // A per-thread register buffer for scalar type T, at least `size` long (grows, never shrinks: no allocation
  // once a thread has evaluated its largest tape in T).
  template <class T>
  static T* scratch(int size) {
    thread_local std::vector<T> buffer;
    if (static_cast<int>(buffer.size()) < size) buffer.resize(size);
    return buffer.data();
  }

 private:
  int inputs_ = 0;
  int registers_ = 0;
  std::vector<TapeInstruction> code_;
  std::vector<int> output_registers_;
  std::vector<char> reads_;
  // The single-assignment twin of code_ (gradient()).
  std::vector<TapeInstruction> ssa_code_;
  std::vector<int> ssa_outputs_;
  int ssa_registers_ = 0;
  template <class T>
  static void execute(const std::vector<TapeInstruction>& code, T* regs);
};


template <class T>
void Tape::run(T* r) const {
  execute(code_, r);
}

template <class T>
void Tape::execute(const std::vector<TapeInstruction>& code, T* r) {
  using namespace elementary;
  for (const TapeInstruction& in : code) {
    T& out = r[in.out];
    switch (in.op) {
      case ExprOp::kConst: out = T(in.value); break;
      case ExprOp::kInput: break;
      case ExprOp::kAdd: out = r[in.a] + r[in.b]; break;
      case ExprOp::kSub: out = r[in.a] - r[in.b]; break;
      case ExprOp::kMul: out = r[in.a] * r[in.b]; break;
      case ExprOp::kDiv: out = r[in.a] / r[in.b]; break;
      case ExprOp::kNeg: out = -r[in.a]; break;
      case ExprOp::kPowConst: out = t_pow(r[in.a], in.value); break;
      case ExprOp::kPow: out = exp(r[in.b] * log(r[in.a])); break;
      case ExprOp::kSin: out = sin(r[in.a]); break;
      case ExprOp::kCos: out = cos(r[in.a]); break;
      case ExprOp::kTan: out = tan(r[in.a]); break;
      case ExprOp::kAsin: out = t_asin(r[in.a]); break;
      case ExprOp::kAcos: out = t_acos(r[in.a]); break;
      case ExprOp::kAtan: out = atan(r[in.a]); break;
      case ExprOp::kAtan2: out = atan2(r[in.a], r[in.b]); break;
      case ExprOp::kSinh: out = t_sinh(r[in.a]); break;
      case ExprOp::kCosh: out = t_cosh(r[in.a]); break;
      case ExprOp::kTanh: out = t_tanh(r[in.a]); break;
      case ExprOp::kExp: out = exp(r[in.a]); break;
      case ExprOp::kLog: out = log(r[in.a]); break;
      case ExprOp::kSqrt: out = sqrt(r[in.a]); break;
      case ExprOp::kAbs: out = abs(r[in.a]); break;
      case ExprOp::kMin: out = r[in.b] < r[in.a] ? r[in.b] : r[in.a]; break;
      case ExprOp::kMax: out = r[in.a] < r[in.b] ? r[in.b] : r[in.a]; break;
      case ExprOp::kSign: out = T(r[in.a] > T(0.0) ? 1.0 : (r[in.a] < T(0.0) ? -1.0 : 0.0)); break;
      case ExprOp::kStep: out = T(r[in.a] > T(0.0) ? 1.0 : 0.0); break;
    }
  }
}

}  // namespace clm
