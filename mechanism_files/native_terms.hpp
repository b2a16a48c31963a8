// The terms a run evaluates at every right-hand side, derived symbolically on a mechanism file's expression graph
// (issue 40: native evaluation), as the nodes that mechanism_files/native_source.hpp prints as straight-line C:
//
//   M(q)                  the file's d2T/dqd2
//   c(q, qd, t)           d/ds (p + a)(q + s qd) - dL/dq,  p = M qd, L = 1/2 qd . p + qd . a - W  (W = V - T0)
//                         (= Mdot qd - 1/2 d/dq(qd^T M qd) + dW/dq + (Da - Da^T) qd, core/model.hpp's kBias)
//   F(q, qd, t)           the [forces]
//   A(q, t)               position rows: dh/dq (reverse sweeps); velocity rows: the file's dr/dqd
//   bias                  d/ds r(q + s qd, qd, t + s) of each row's velocity form r (h: hdot = dh/dq qd + dh/dt;
//                         velocity rows: A qd + b), qd held fixed: the bias of A qdd + bias = 0 (kConstraintBias)
//   h, b                  the position rows' values; b = dh/dt and the velocity rows' affine term (time-dependent)
//   energy                1/2 qd . M qd, W, qd . a, dW/dt
//
// exactly what AutoDiffModel computes from the tapes by Jet, Taylor2 and dual passes, so the two evaluations agree
// to round-off (tests/native_evaluation_test.cpp). The inputs are those of SymbolicMechanism: q (n), qd (n), t, then
// the parameters in the file's order (not folded in: one compiled object serves every parameter set).
#pragma once

#include <vector>

#include "mechanism_files/expression_graph.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace clm {

struct NativeTermGraph {
  ExpressionGraph graph{0};
  int n = 0, m = 0, position_rows = 0, parameters = 0;
  bool time_dependent = false, has_forces = false, has_gyroscopic = false;
  std::vector<int> mass;             // n x n, row-major
  std::vector<int> bias;             // n: c
  std::vector<int> force;            // n (empty without [forces])
  std::vector<int> jacobian;         // m x n, row-major, position rows first
  std::vector<int> constraint_bias;  // m
  std::vector<int> constraint;       // position_rows: h
  std::vector<int> rate;             // m: b (empty unless time_dependent)
  std::vector<int> energy;           // 4: kinetic, W, qd . a, dW/dt
};

// The terms of `s` (its graph is moved in and extended).
NativeTermGraph native_terms(SymbolicMechanism s, int parameters);

}  // namespace clm
