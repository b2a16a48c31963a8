#include "mechanism_files/native_terms.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "mechanism_files/graph_derivatives.hpp"

namespace clm {

namespace {

// sin and cos of sums and differences of coordinates by the angle-addition formulas: a chain written in relative or
// absolute angles has cos(theta_k - theta_l) for every pair, n(n - 1)/2 calls of a trigonometric function where the
// formulas need 2n (closed_chain at n = 16: 240 calls in c alone). Applied to the arguments that are sums and
// differences of inputs (and their negations); the result differs from the tape's by round-off (a few ulps of the
// products; sin(theta_k - theta_l) keeps the absolute accuracy of the rounded difference it replaces).
class AngleAddition {
 public:
  explicit AngleAddition(ExpressionGraph& g) : g_(g) {}

  // Every node the terms read, rebuilt with the formulas, and the term nodes mapped.
  void apply(std::vector<int>& nodes) {
    for (int& node : nodes)
      if (node >= 0) node = rebuilt(node);
  }

 private:
  // Sums nested at most kMaxDepth levels: the formulas' cost grows with the depth, and a sum of thousands of terms (a long
  // [let] chain) must not recurse that deep.
  static constexpr int kMaxDepth = 16;
  bool linear_in_inputs(int x, int depth = 0) {
    if (depth > kMaxDepth) return false;
    const ExprNode& n = g_.node(x);
    switch (n.op) {
      case ExprOp::kInput: return true;
      case ExprOp::kNeg: return linear_in_inputs(n.a, depth + 1);
      case ExprOp::kAdd:
      case ExprOp::kSub: return linear_in_inputs(n.a, depth + 1) && linear_in_inputs(n.b, depth + 1);
      default: return false;
    }
  }
  int trig(int x, bool cosine) {
    const ExprNode n = g_.node(x);
    auto mul = [&](int a, int b) { return g_.binary(ExprOp::kMul, a, b); };
    if (n.op == ExprOp::kNeg) return cosine ? trig(n.a, true) : g_.unary(ExprOp::kNeg, trig(n.a, false));
    if (n.op == ExprOp::kAdd || n.op == ExprOp::kSub) {
      const int ca = trig(n.a, true), sa = trig(n.a, false), cb = trig(n.b, true), sb = trig(n.b, false);
      const bool plus = n.op == ExprOp::kAdd;
      if (cosine) return g_.binary(plus ? ExprOp::kSub : ExprOp::kAdd, mul(ca, cb), mul(sa, sb));
      return g_.binary(plus ? ExprOp::kAdd : ExprOp::kSub, mul(sa, cb), mul(ca, sb));
    }
    return g_.unary(cosine ? ExprOp::kCos : ExprOp::kSin, x);
  }
  int rebuilt(int root) {
    if (static_cast<int>(map_.size()) < g_.size()) map_.resize(g_.size(), -1);
    if (map_[root] >= 0) return map_[root];
    const std::vector<char> needed = g_.needed_by({root});
    const int size = static_cast<int>(needed.size());
    for (int j = 0; j < size; ++j) {
      if (!needed[j] || map_[j] >= 0) continue;
      const ExprNode n = g_.node(j);
      int r;
      if (n.op == ExprOp::kInput || n.op == ExprOp::kConst) r = j;
      else if ((n.op == ExprOp::kSin || n.op == ExprOp::kCos) && linear_in_inputs(map_[n.a]) &&
               g_.node(map_[n.a]).op != ExprOp::kInput)
        r = trig(map_[n.a], n.op == ExprOp::kCos);
      else if (n.op == ExprOp::kPowConst) r = g_.pow_const(map_[n.a], n.value);
      else if (n.b < 0) r = g_.unary(n.op, map_[n.a]);
      else r = g_.binary(n.op, map_[n.a], map_[n.b]);
      if (static_cast<int>(map_.size()) < g_.size()) map_.resize(g_.size(), -1);
      map_[j] = r;
    }
    return map_[root];
  }

  ExpressionGraph& g_;
  std::vector<int> map_;
};

// c's part quadratic in the velocities, Mdot qd - 1/2 d/dq (qd^T M qd), from the derivatives of M's entries collected
// per monomial qd_a qd_b: for every entry M_ij and every coordinate l it reads, D = dM_ij/dq_l adds D qd_l qd_j to
// c_i (Mdot qd) and -1/2 D qd_i qd_j to c_l. The coefficients of one monomial that are the same node combine as
// numbers, so the terms that cancel in the Christoffel symbols cancel exactly (1 - 1/2 - 1/2 = 0) instead of being
// computed and subtracted: a chain whose entries read two coordinates each (closed_chain: M_kl of theta_k - theta_l)
// gets c_i = sum_l dM_il/dtheta_l qd_l^2, O(n^2) nodes, where the directional derivative of M qd and the gradient of
// 1/2 qd . M qd built both halves (57,000 statements of c at n = 64). Where M's entries read every coordinate the
// monomials are O(n^3): native_terms keeps whichever form needs fewer nodes.
std::vector<int> quadratic_terms_by_monomials(ExpressionGraph& g, const std::vector<int>& mass, int n) {
  std::vector<std::map<std::pair<int, int>, std::map<int, double>>> terms(n);
  auto add_term = [&](int target, int a, int b, int node, double coefficient) {
    terms[target][{std::min(a, b), std::max(a, b)}][node] += coefficient;
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const int entry = mass[i * n + j];
      if (g.is_constant(entry)) continue;
      for (int l = 0; l < n; ++l) {
        if (!g.depends_on(entry, l)) continue;
        const int d = g.derivative(entry, l);
        if (g.is_constant(d, 0.0)) continue;
        add_term(i, l, j, d, 1.0);
        add_term(l, i, j, d, -0.5);
      }
    }
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) {
    int sum = g.constant(0);
    for (const auto& [monomial, nodes] : terms[i]) {
      int coefficient = g.constant(0);
      for (const auto& [node, k] : nodes) {
        if (k == 0) continue;  // cancelled exactly (the coefficients are sums of 1 and -1/2)
        const int term = k == 1 ? node : k == -1 ? g.unary(ExprOp::kNeg, node) : g.binary(ExprOp::kMul, g.constant(k), node);
        coefficient = g.binary(ExprOp::kAdd, coefficient, term);
      }
      if (g.is_constant(coefficient, 0.0)) continue;
      const int velocities = g.binary(ExprOp::kMul, g.input(n + monomial.first), g.input(n + monomial.second));
      sum = g.binary(ExprOp::kAdd, sum, g.binary(ExprOp::kMul, coefficient, velocities));
    }
    out[i] = sum;
  }
  return out;
}

// The operations (not inputs or numbers) `outputs` need: the statements a C function of them has.
int operations(const ExpressionGraph& g, const std::vector<int>& outputs) {
  const std::vector<char> needed = g.needed_by(outputs);
  int count = 0;
  for (int i = 0; i < g.size(); ++i)
    count += needed[i] && g.node(i).op != ExprOp::kConst && g.node(i).op != ExprOp::kInput;
  return count;
}

}  // namespace

NativeTermGraph native_terms(SymbolicMechanism s, int parameters) {
  NativeTermGraph out;
  out.graph = std::move(s.graph);
  ExpressionGraph& g = out.graph;
  {
    AngleAddition angles(g);
    angles.apply(s.mass);
    std::vector<int> one{s.potential};
    angles.apply(one);
    s.potential = one.front();
    for (std::vector<int>* v : {&s.gyroscopic, &s.force, &s.constraint, &s.pfaffian, &s.affine}) angles.apply(*v);
  }
  const int n = s.n, m = s.m, mh = s.position_rows, ma = m - mh;
  out.n = n;
  out.m = m;
  out.position_rows = mh;
  out.parameters = parameters;
  out.time_dependent = s.time_dependent;
  out.has_forces = s.has_forces;
  out.has_gyroscopic = s.has_gyroscopic;
  const int t = g.input(2 * n);
  auto qd = [&](int i) { return g.input(n + i); };
  auto add = [&](int x, int y) { return g.binary(ExprOp::kAdd, x, y); };
  auto mul = [&](int x, int y) { return g.binary(ExprOp::kMul, x, y); };

  // The state direction: q moves along qd, t along 1 where anything reads it (AutoDiffModel seeds t only then).
  std::vector<int> along(2 * n + 1, -1);
  for (int k = 0; k < n; ++k) along[k] = qd(k);
  if (s.time_dependent) along[2 * n] = g.constant(1);
  DirectionalDerivative along_motion(g, along);

  // Dynamics: p = M qd, K = 1/2 qd . p, G = qd . a, L = K + G - W.
  out.mass = s.mass;
  std::vector<int> p(n);
  int K = g.constant(0), G = g.constant(0);
  for (int i = 0; i < n; ++i) {
    int acc = g.constant(0);
    for (int j = 0; j < n; ++j) acc = add(acc, mul(s.mass[i * n + j], qd(j)));
    p[i] = acc;
    K = add(K, mul(qd(i), acc));
    if (s.has_gyroscopic) G = add(G, mul(qd(i), s.gyroscopic[i]));
  }
  K = mul(g.constant(0.5), K);
  const int W = s.potential;
  const int L = g.binary(ExprOp::kSub, add(K, G), W);
  std::vector<int> momentum(n);
  for (int i = 0; i < n; ++i) momentum[i] = s.has_gyroscopic ? add(p[i], s.gyroscopic[i]) : p[i];
  // d/ds of the momentum along qd with qd held and t fixed: M and a are functions of q alone.
  std::vector<int> q_only(2 * n + 1, -1);
  for (int k = 0; k < n; ++k) q_only[k] = qd(k);
  DirectionalDerivative along_q(g, q_only);
  const std::vector<int> momentum_rate = along_q.of(momentum);
  const std::vector<int> dL_dq = graph_gradient(g, L, 0, n);
  for (int i = 0; i < n; ++i) out.bias.push_back(g.binary(ExprOp::kSub, momentum_rate[i], dL_dq[i]));
  // The same c with its quadratic part collected by monomials, kept where M and c then need fewer operations:
  // c = [Mdot qd - dK/dq] + [d/ds a - dG/dq] + dW/dq.
  {
    std::vector<int> bias = quadratic_terms_by_monomials(g, s.mass, n);
    const std::vector<int> dW_dq = graph_gradient(g, W, 0, n);
    std::vector<int> gyroscopic_rate, dG_dq;
    if (s.has_gyroscopic) {
      gyroscopic_rate = along_q.of(s.gyroscopic);
      dG_dq = graph_gradient(g, G, 0, n);
    }
    for (int i = 0; i < n; ++i) {
      if (s.has_gyroscopic)
        bias[i] = add(bias[i], g.binary(ExprOp::kSub, gyroscopic_rate[i], dG_dq[i]));
      bias[i] = add(bias[i], dW_dq[i]);
    }
    std::vector<int> with_mass = s.mass, old_with_mass = s.mass;
    with_mass.insert(with_mass.end(), bias.begin(), bias.end());
    old_with_mass.insert(old_with_mass.end(), out.bias.begin(), out.bias.end());
    if (operations(g, with_mass) < operations(g, old_with_mass)) out.bias = bias;
  }
  if (s.has_forces) out.force = s.force;

  // Constraints: the position rows, then the velocity rows.
  out.constraint = s.constraint;
  for (int r = 0; r < mh; ++r) {
    const std::vector<int> row = graph_gradient(g, s.constraint[r], 0, n);
    out.jacobian.insert(out.jacobian.end(), row.begin(), row.end());
    const int hdot = along_motion.of(s.constraint[r]);  // dh/dq qd + dh/dt
    out.constraint_bias.push_back(along_motion.of(hdot));
    if (s.time_dependent) out.rate.push_back(g.derivative(s.constraint[r], 2 * n));
  }
  for (int r = 0; r < ma; ++r) {
    int velocity_form = s.time_dependent ? s.affine[r] : g.constant(0);
    for (int j = 0; j < n; ++j) {
      out.jacobian.push_back(s.pfaffian[r * n + j]);
      velocity_form = add(velocity_form, mul(s.pfaffian[r * n + j], qd(j)));
    }
    out.constraint_bias.push_back(along_motion.of(velocity_form));
    if (s.time_dependent) out.rate.push_back(s.affine[r]);
  }

  out.energy = {K, W, G, s.time_dependent ? g.derivative(W, 2 * n) : g.constant(0)};
  (void)t;
  return out;
}

}  // namespace clm
