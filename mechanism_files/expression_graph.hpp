// The expressions of a mechanism file as one graph (a DAG): every node is a number, an input (q_i, qd_i, t) or
// an operation on earlier nodes. Nodes are hash-consed (the same operation on the same operands is one node),
// so common subexpressions are merged as the graph is built, and constants are folded. Derivatives are taken
// symbolically on the graph (derivative(node, input)), so the mass matrix d2T/dqd2, the constraint rows' A and
// every other term a mechanism file implies are nodes of the same graph, sharing what they share. A Tape
// (mechanism_files/tape.hpp) flattens the nodes some outputs need into straight-line code over any scalar type.
//
// Nothing here evaluates text: the parser (mechanism_files/expression_parser.hpp) builds nodes by calling
// these methods.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace clm {

enum class ExprOp : std::uint8_t {
  kConst,
  kInput,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kNeg,
  kPowConst,  // a ^ value (a constant exponent: integers are multiplied out by the tape)
  kPow,       // a ^ b, b not constant: exp(b log a)
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kAtan2,  // atan2(a, b)
  kSinh,
  kCosh,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kMin,
  kMax,
  kSign,  // -1, 0, 1 (the derivative of abs; its own derivative is 0)
  kStep,  // 1 where a > 0, else 0 (the derivatives of min and max)
};

// The name an expression writes for each function (sin, atan2, ...), and its number of arguments; nullptr / 0
// for the operators.
const char* expr_function_name(ExprOp op);
int expr_arity(ExprOp op);

struct ExprNode {
  ExprOp op = ExprOp::kConst;
  int a = -1, b = -1;  // operands (node indices), -1 where unused
  double value = 0;    // kConst: the number; kPowConst: the exponent
  int input = -1;      // kInput: the input's index
};

class ExpressionGraph {
 public:
  explicit ExpressionGraph(int inputs);
  int inputs() const { return inputs_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  const ExprNode& node(int i) const { return nodes_[i]; }

  int constant(double v);
  int input(int i) const { return i; }  // inputs are the first nodes
  // An operation on existing nodes, simplified where that is exact (x + 0, x * 1, x * 0, constant folding,
  // -(-x), x ^ 1, x ^ 0) and merged with an equal node built before.
  int unary(ExprOp op, int a);
  int binary(ExprOp op, int a, int b);
  int pow_const(int a, double p);

  bool is_constant(int i, double v) const { return nodes_[i].op == ExprOp::kConst && nodes_[i].value == v; }
  bool is_constant(int i) const { return nodes_[i].op == ExprOp::kConst; }
  // The nodes `outputs` need, themselves included (one backward sweep: operands precede their node): what a tape
  // runs and what an exported header writes.
  std::vector<char> needed_by(const std::vector<int>& outputs) const;
  // Whether node i depends on input k (memoized per input).
  bool depends_on(int i, int k);
  // d node / d input k, a node of this graph (memoized per input).
  int derivative(int i, int k);
  // Node i with the inputs first .. first+count-1 replaced by 0, simplified (memoized; one range per graph:
  // a mechanism sets its velocities to 0 to read M, a, T0 and the constraint terms A, b).
  int at_zero(int i, int first, int count);

 private:
  int add_node(const ExprNode& n);
  // Node i and the nodes it reaches through operands for which follow(operand) holds, in increasing order.
  template <class Follow>
  std::vector<int> operands_first(int i, Follow follow) const;
  struct Key {
    ExprOp op;
    int a, b;
    std::uint64_t value_bits;
    int input;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  int inputs_;
  std::vector<ExprNode> nodes_;
  std::unordered_map<Key, int, KeyHash> index_;
  // Per input k: derivative node of each node (-1: not yet taken), and dependency (-1 unknown, 0, 1).
  std::vector<std::vector<int>> derivative_;
  std::vector<std::vector<signed char>> depends_;
  std::vector<int> settled_;  // per input: every node below this index has its depends_ entry
  int zero_first_ = -1, zero_count_ = 0;
  std::vector<int> zero_;
};

}  // namespace clm
