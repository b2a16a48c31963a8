// The loops of the forward-mode passes that AutoDiffModel (core/autodiff_model.hpp) and
// QuadraticLagrangianDerivatives (core/quadratic_lagrangian.hpp) both run over their own Jet buffers: the
// seeds, the split of a Jet<1> matrix into value and rate, and the quadratic form w^T G w. Inline templates,
// so each class keeps its buffers and its code (the hot path of every formulation) is what it was.
#pragma once

#include <algorithm>

namespace clm {

// x1 = x + eps v (x1 a vector of ceres::Jet<double, 1>; n entries).
template <class JetVector, class X, class V>
void seed_along(JetVector& x1, const X& x, const V& v, int n) {
  using Jet = typename JetVector::Scalar;
  for (int i = 0; i < n; ++i) {
    x1[i] = Jet(x[i]);
    x1[i].v[0] = v[i];
  }
}

// xk = x seeded with the K coordinate directions start .. start + K - 1 (xk a vector of ceres::Jet<double, K>).
template <int K, class JetVector, class X>
void seed_chunk(JetVector& xk, const X& x, int n, int start) {
  using Jet = typename JetVector::Scalar;
  for (int i = 0; i < n; ++i) {
    xk[i] = Jet(x[i]);
    const int k = i - start;
    if (k >= 0 && k < K) xk[i].v[k] = 1.0;
  }
}

// From F(x + eps v) (rows x cols, Jet<1>): value = F(x) and rate = (dF/dx[v]) w, i.e.
// rate_r = sum_j (d/deps F_rj) w_j summed in order of j (Mdot qd from M, Adot qd from A, Gdot w from G).
template <class JetMatrix, class W, class Value, class Rate>
void split_along(const JetMatrix& F, const W& w, int rows, int cols, Value& value, Rate& rate) {
  for (int r = 0; r < rows; ++r) {
    double acc = 0;
    for (int j = 0; j < cols; ++j) {
      value(r, j) = F(r, j).a;
      acc += F(r, j).v[0] * w[j];
    }
    rate[r] = acc;
  }
}

// w^T G w (k x k, G in a Jet type), summed row by row: sum_i (sum_j G_ij w_j) w_i.
template <class Jet, class G, class W>
Jet quadratic_form(const G& g, const W& w, int k) {
  Jet total(0.0);
  for (int i = 0; i < k; ++i) {
    Jet row(0.0);
    for (int j = 0; j < k; ++j) row += g(i, j) * w[j];
    total += row * w[i];
  }
  return total;
}

}  // namespace clm
