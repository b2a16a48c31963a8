// The geometric stiffness of holonomic constraints, K = sum_i mu_i d^2 h_i / dq^2 for given weights mu: the
// derivative d(A(q)^T mu)/dq at fixed mu that a full Newton tangent of an index-3 method needs (ALI3-P,
// integrators/trapezoidal.hpp: mu = lambda* + alpha h). Computed from the problem's templated constraint by
// hyper-dual passes (core/hyperdual.hpp), compressed by the sparsity of the constraints: coordinates that
// never appear in one row together share a colour (a greedy colouring of the column-intersection graph of A,
// as Curtis, Powell and Reid compress a sparse Jacobian [CPR-1974]); one pass seeded along colour a (e1) and
// colour b (e2) gives, for every row i, d^2 h_i / dq_j dq_l for the one coordinate j of colour a and the one
// coordinate l of colour b in that row. So c(c + 1)/2 passes for c colours: n_four_bar's body coordinates
// (a row touches two bars) need a handful of colours whatever the number of loops, bricard's natural
// coordinates (24, dense rows of up to 9) a dozen; a dense Hessian by unit seeds would take n(n + 1)/2.
// The rows' supports are read from A at the state the workspace is made for, perturbed to a generic point
// (an entry that vanishes there by coincidence, sin(0) at the square position of n_four_bar, is not
// structural), united with A's support at the state itself. A coordinate with a nonzero second derivative in
// a row has a nonzero first derivative there at a generic point (analytic h), so the support covers the
// Hessians'.
//
// Reached through Model::capability<ConstraintHessian>() (null when the problem has no position rows or was not
// registered with its capabilities); attached by runs/problem_capabilities.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "core/hyperdual.hpp"
#include "core/model.hpp"
#include "core/problem.hpp"

namespace clm {

class ConstraintHessian : public Capability {
 public:
  // Per-run buffers and the colouring (made once, off the hot path, at a state q of the run).
  struct Workspace {
    virtual ~Workspace() = default;
    int colors = 0;  // c: c (c + 1) / 2 hyper-dual passes per evaluation
    // The structural entries (j, l), j <= l, of K: the pairs of coordinates that share a constraint row (the
    // sparse tangent's pattern, fixed for the run).
    std::vector<std::pair<int, int>> entries;
  };
  virtual std::unique_ptr<Workspace> make_workspace(double t, const Vec& q) const = 0;
  // K += scale sum_i mu_i d^2 h_i / dq^2 at (t, q). K is n x n; no heap allocation.
  virtual void add_weighted(double t, const Vec& q, const Vec& mu, double scale, Workspace& ws, Mat& K) const = 0;
  // The same sum on the sparse path: values[slot[e]] += scale K(j, l) for ws.entries[e] = (j, l) (the upper
  // triangle of a symmetric sparse matrix whose slots the caller mapped once). No heap allocation.
  virtual void add_weighted_entries(double t, const Vec& q, const Vec& mu, double scale, Workspace& ws,
                                    const std::vector<int>& slot, double* values) const = 0;
};

template <Problem P>
class ProblemConstraintHessian final : public ConstraintHessian {
 public:
  static constexpr int N = P::kDof;
  // The position rows: all of a holonomic problem's, the first of a mixed one's (the weights mu are then the
  // first entries of a vector over all rows).
  static constexpr int C = kPositionRowsOf<P>;

  explicit ProblemConstraintHessian(const P& p) : p_(p), n_(p_.dof()), m_(rows_of(p_)) {}

  struct Buffers : Workspace {
    VecN<HyperDual, N> qh;
    VecN<HyperDual, C> hh;
    std::vector<int> color;               // per coordinate
    Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic> column;  // m x c: row i's coordinate of colour a, or -1
    // m x c(c + 1)/2: for row i and colour pair (a <= b) in pass order, the index into entries of
    // (column(i, a), column(i, b)), or -1 when the row has no coordinate of colour a or b.
    Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic> entry;
  };

  std::unique_ptr<Workspace> make_workspace(double t, const Vec& q) const override {
    auto ws = std::make_unique<Buffers>();
    ws->qh.resize(n_);
    ws->hh.resize(m_);
    // Row supports: d h / dq_j by one hyper-dual pass per coordinate (e1 = e_j), at q and at a generic point
    // near it (a fixed pseudo-random offset of 0.1 per coordinate).
    std::vector<std::vector<int>> rows_of(n_), support(m_);
    std::vector<char> in(static_cast<size_t>(n_) * m_, 0);
    for (int pass = 0; pass < 2; ++pass) {
      for (int j = 0; j < n_; ++j) {
        for (int k = 0; k < n_; ++k) {
          const double offset = pass == 0 ? 0.0 : 0.1 * std::sin(12.9898 * (k + 1) + 4.1414);
          ws->qh[k] = HyperDual(q[k] + offset, k == j ? 1.0 : 0.0, 0.0, 0.0);
        }
        constraint(ws->qh, t, ws->hh);
        for (int i = 0; i < m_; ++i) {
          const double d = ws->hh[i].b;
          if ((d != 0 || !std::isfinite(d)) && !in[static_cast<size_t>(i) * n_ + j]) {
            in[static_cast<size_t>(i) * n_ + j] = 1;
            support[i].push_back(j);
            rows_of[j].push_back(i);
          }
        }
      }
    }
    // Greedy colouring: a coordinate takes the smallest colour no coordinate sharing a row with it has.
    ws->color.assign(n_, -1);
    std::vector<char> taken;
    int colors = 0;
    for (int j = 0; j < n_; ++j) {
      taken.assign(colors + 1, 0);
      for (int i : rows_of[j])
        for (int l : support[i])
          if (ws->color[l] >= 0) taken[ws->color[l]] = 1;
      int a = 0;
      while (taken[a]) ++a;
      ws->color[j] = a;
      colors = std::max(colors, a + 1);
    }
    ws->colors = colors;
    ws->column.setConstant(m_, colors, -1);
    for (int i = 0; i < m_; ++i)
      for (int j : support[i]) ws->column(i, ws->color[j]) = j;
    std::map<std::pair<int, int>, int> index;
    ws->entry.setConstant(m_, colors * (colors + 1) / 2, -1);
    for (int i = 0; i < m_; ++i) {
      int pass = 0;
      for (int a = 0; a < colors; ++a)
        for (int b = a; b < colors; ++b, ++pass) {
          const int j = ws->column(i, a), l = ws->column(i, b);
          if (j < 0 || l < 0) continue;
          const auto key = std::minmax(j, l);
          auto [it, inserted] = index.emplace(key, int(ws->entries.size()));
          if (inserted) ws->entries.push_back(key);
          ws->entry(i, pass) = it->second;
        }
    }
    return ws;
  }

  void add_weighted(double t, const Vec& q, const Vec& mu, double scale, Workspace& base, Mat& K) const override {
    auto& ws = static_cast<Buffers&>(base);
    const int c = ws.colors;
    for (int a = 0; a < c; ++a) {
      for (int b = a; b < c; ++b) {
        for (int k = 0; k < n_; ++k)
          ws.qh[k] = HyperDual(q[k], ws.color[k] == a ? 1.0 : 0.0, ws.color[k] == b ? 1.0 : 0.0, 0.0);
        constraint(ws.qh, t, ws.hh);
        for (int i = 0; i < m_; ++i) {
          const int j = ws.column(i, a), l = ws.column(i, b);
          if (j < 0 || l < 0 || mu[i] == 0) continue;
          const double v = scale * mu[i] * ws.hh[i].d;
          K(j, l) += v;
          if (a != b) K(l, j) += v;
        }
      }
    }
  }

  void add_weighted_entries(double t, const Vec& q, const Vec& mu, double scale, Workspace& base,
                            const std::vector<int>& slot, double* values) const override {
    auto& ws = static_cast<Buffers&>(base);
    const int c = ws.colors;
    int pass = 0;
    for (int a = 0; a < c; ++a) {
      for (int b = a; b < c; ++b, ++pass) {
        for (int k = 0; k < n_; ++k)
          ws.qh[k] = HyperDual(q[k], ws.color[k] == a ? 1.0 : 0.0, ws.color[k] == b ? 1.0 : 0.0, 0.0);
        constraint(ws.qh, t, ws.hh);
        for (int i = 0; i < m_; ++i) {
          const int e = ws.entry(i, pass);
          if (e < 0 || mu[i] == 0) continue;
          values[slot[e]] += scale * mu[i] * ws.hh[i].d;
        }
      }
    }
  }

 private:
  static int rows_of(const P& p) {
    if constexpr (P::kConstraintKind == ConstraintKind::kMixed) return p.position_constraints();
    else return p.constraints();
  }
  void constraint(const VecN<HyperDual, N>& q, double t, VecN<HyperDual, C>& h) const {
    if constexpr (HasTimeDependentConstraint<P>) {
      p_.template constraint<HyperDual>(q, HyperDual(t), h);
    } else {
      (void)t;
      p_.template constraint<HyperDual>(q, h);
    }
  }

  P p_;
  int n_, m_;
};

// Attaches ProblemConstraintHessian<P> to holonomic and mixed problems (Pfaffian ones have no h to differentiate).
template <Problem P>
void add_constraint_hessian(Model& model, const P& p) {
  if constexpr (P::kConstraintKind != ConstraintKind::kPfaffian)
    model.add_capability<ConstraintHessian>(std::make_shared<ProblemConstraintHessian<P>>(p));
}

}  // namespace clm
