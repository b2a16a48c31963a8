#include "mechanism_files/tape.hpp"

#include <algorithm>
#include <limits>

namespace clm {

Tape::Tape(const ExpressionGraph& g, const std::vector<int>& outputs) : inputs_(g.inputs()) {
  const int size = g.size();
  // The nodes the outputs need (operands precede their node: one backward sweep marks them).
  std::vector<char> needed(size, 0);
  for (int o : outputs) needed[o] = 1;
  for (int i = size - 1; i >= 0; --i) {
    if (!needed[i]) continue;
    const ExprNode& n = g.node(i);
    if (n.a >= 0) needed[n.a] = 1;
    if (n.b >= 0) needed[n.b] = 1;
  }
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
}

}  // namespace clm
