// Forward and reverse derivatives of many nodes at once on an ExpressionGraph, as new nodes of the same graph: what
// the native evaluation of a mechanism file (mechanism_files/native_terms.hpp) derives its bias terms with.
// ExpressionGraph::derivative takes one partial derivative d node / d input at a time; the dynamics need
//   - directional derivatives along a state direction (Mdot qd = d/ds M(q + s qd) qd, the constraint bias
//     d/ds (A(q + s qd) qd + b(q + s qd, t + s))): one forward sweep over the graph, the seeds given per input;
//   - gradients of one scalar with respect to many inputs (dL/dq): one reverse sweep.
// Both build nodes through ExpressionGraph's simplifying constructors, so products with 0 and 1 vanish and equal
// subexpressions are shared (hash-consing) across every term derived on the graph.
#pragma once

#include <vector>

#include "mechanism_files/expression_graph.hpp"

namespace clm {

// The local partial derivatives of node j with respect to its operands a and b, as nodes (-1 where the node has
// no such operand). Non-smooth functions take the derivative of the branch they are on (abs: sign(a); min, max:
// step(a - b)); sign and step have zero derivatives.
struct LocalPartials {
  int da = -1, db = -1;
};
LocalPartials local_partials(ExpressionGraph& g, int j);

// d/ds node(inputs + s seeds) at s = 0 for every requested node: seeds[k] is the node by which input k moves
// (-1: it does not move). One sweep over the nodes the outputs need, memoized across calls.
class DirectionalDerivative {
 public:
  DirectionalDerivative(ExpressionGraph& g, std::vector<int> seeds);
  // The derivative nodes of `outputs`, in their order.
  std::vector<int> of(const std::vector<int>& outputs);
  int of(int output) { return of(std::vector<int>{output}).front(); }

 private:
  ExpressionGraph& g_;
  std::vector<int> seeds_;
  std::vector<int> memo_;  // per node: its derivative node, -1 not yet taken
};

// d output / d input k for k in [first, first + count), by one reverse sweep (nodes of the graph; constant 0 where
// the output does not depend on an input).
std::vector<int> graph_gradient(ExpressionGraph& g, int output, int first, int count);

}  // namespace clm
