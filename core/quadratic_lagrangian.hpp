// Euler-Lagrange terms of a Lagrangian quadratic in the velocities, by forward-mode automatic
// differentiation (ceres::Jet):
//
//   L(q, w) = 1/2 w^T G(q) w - V(q),   c = Gdot w - 1/2 d/dq(w^T G w) + dV/dq,   Gdot = dG/dq [qd],
//
// with G(q) a k x k matrix function of the n coordinates q, w the k velocities of the quadratic form and
// qd the motion of q ([seed-000, eq. 2.1]: for G = M, w = qd this is the seed's B + G). It serves the
// modified Lagrangians of the suite:
//   - the Fernandez-Bloch restricted Lagrangian (G = M~, w = qd; formulations/restricted_lagrangian.hpp),
//   - the substituted Lagrangian of [seed-002] (G = S^T M S, w = qd_I, qd = S w; formulations/substitution.hpp).
// AutoDiffModel's own M and c (the hot path of every formulation) keep the same two passes fused with its
// workspace: routed through this class they measured 53 -> 75 ns for the sleigh's model terms and
// 196 -> 230 ns for the slider-crank's (same machine, same build). The two share the passes' loops instead
// (core/jet_passes.hpp, inline templates over each one's own buffers).
//
//   Pass 1, Jet<1> at q + eps qd: G and Gdot w.
//   Pass 2, Jet<K> seeded with K coordinate directions at a time: d/dq of 1/2 w^T G w and of V. K = n for
//           fixed n <= 16 (one pass), else chunks of 8, the way Ceres' DynamicAutoDiffCostFunction strides.
// The Jet buffers are members, sized once, so evaluate() does not touch the heap.
#pragma once

#include <ceres/jet.h>

#include <algorithm>

#include "core/jet_passes.hpp"
#include "core/types.hpp"

namespace clm {

template <int N, int K>  // N: coordinates, K: size of the quadratic form (either may be Eigen::Dynamic)
class QuadraticLagrangianDerivatives {
 public:
  static constexpr int kChunk = (N != Eigen::Dynamic && N <= 16) ? N : 8;
  using Jet1 = ceres::Jet<double, 1>;
  using JetC = ceres::Jet<double, kChunk>;

  QuadraticLagrangianDerivatives(int n, int k) : n_(n), k_(k) {
    q1_.resize(n);
    G1_.resize(k, k);
    qc_.resize(n);
    Gc_.resize(k, k);
  }

  // form(q, G) and potential(q) are callables generic in the scalar type (e.g. generic lambdas calling the
  // problem's templated members). Outputs: G(q) [k x k], Gdot_w [k], and
  // grad [n] = -1/2 d/dq(w^T G w) + dV/dq, so that c = Gdot_w + grad (restricted to the rows of w's
  // coordinates when k < n).
  template <class FormFn, class PotentialFn, class GOut, class GdotOut, class GradOut>
  void evaluate(const VecN<double, N>& q, const VecN<double, N>& qd, const VecN<double, K>& w, FormFn&& form,
                PotentialFn&& potential, GOut& G, GdotOut& Gdot_w, GradOut& grad) {
    seed_along(q1_, q, qd, n_);
    form(q1_, G1_);
    split_along(G1_, w, k_, k_, G, Gdot_w);
    for (int start = 0; start < n_; start += kChunk) {
      seed_chunk<kChunk>(qc_, q, n_, start);
      form(qc_, Gc_);
      const JetC twice_t = quadratic_form<JetC>(Gc_, w, k_);
      const JetC V = potential(qc_);
      const int width = std::min(kChunk, n_ - start);
      for (int d = 0; d < width; ++d) grad[start + d] = -0.5 * twice_t.v[d] + V.v[d];
    }
  }

 private:
  int n_, k_;
  VecN<Jet1, N> q1_;
  MatN<Jet1, K, K> G1_;
  VecN<JetC, N> qc_;
  MatN<JetC, K, K> Gc_;
};

}  // namespace clm
