// The derivatives of the Euler-Lagrange terms of a Lagrangian quadratic in the velocities, for the exact
// Jacobian of G(q) qdd + c(q, qd) = F (k = n: the form acts on all velocities):
//
//   L(q, qd) = 1/2 qd^T G(q) qd - V(q),   c = Gdot qd - 1/2 d/dq(qd^T G qd) + dV/dq   (core/quadratic_lagrangian.hpp)
//
//   dG[l]  = dG/dq_l                    one Jet<K> pass over G per K coordinates,
//   dc/dqd = sum_k (dG_k(i,l) + dG_l(i,k) - dG_i(l,k)) qd_k   (c is quadratic in qd),
//   dc/dq  = d/dq_l (Gdot qd) + d^2 W / dq_i dq_l,  W = V - 1/2 qd^T G qd:
//            n hyper-dual passes q + e1 qd + e2 e_l over G, and n(n+1)/2 passes q + e1 e_i + e2 e_l over W.
//
// These are the passes of AutoDiffModel::dynamics_derivatives for G = M (which adds a gyroscopic term and the
// constraint derivatives), here for any form: the Fernandez-Bloch restricted mass M~ (which holds the frame
// X(q), so its derivatives are nested ones of A: formulations/restricted_lagrangian.hpp). The buffers are
// members, sized once; evaluate() does not touch the heap.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <vector>

#include "core/hyperdual.hpp"
#include "core/jet_passes.hpp"
#include "core/types.hpp"

namespace clm {

template <int N>
class QuadraticLagrangianSecondDerivatives {
 public:
  static constexpr int kChunk = (N != Eigen::Dynamic && N <= 16) ? N : 8;
  using JetC = ceres::Jet<double, kChunk>;

  explicit QuadraticLagrangianSecondDerivatives(int n) : n_(n) {
    qc_.resize(n);
    Gc_.resize(n, n);
    qh_.resize(n);
    Gh_.resize(n, n);
  }

  // form(q, G) and potential(q) are callables generic in the scalar type (JetC and HyperDual here). Outputs
  // (sized by the caller): dG (n matrices n x n), dc_dq and dc_dqd (n x n, column l the derivative along l).
  template <class FormFn, class PotentialFn>
  void evaluate(const VecN<double, N>& q, const VecN<double, N>& qd, FormFn&& form, PotentialFn&& potential,
                std::vector<Mat>& dG, Mat& dc_dq, Mat& dc_dqd) {
    const int n = n_;
    for (int start = 0; start < n; start += kChunk) {
      seed_chunk<kChunk>(qc_, q, n, start);
      form(qc_, Gc_);
      const int width = std::min(kChunk, n - start);
      for (int k = 0; k < width; ++k)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) dG[start + k](i, j) = Gc_(i, j).v[k];
    }
    for (int l = 0; l < n; ++l)
      for (int i = 0; i < n; ++i) {
        double acc = 0;
        for (int k = 0; k < n; ++k) acc += (dG[k](i, l) + dG[l](i, k) - dG[i](l, k)) * qd[k];
        dc_dqd(i, l) = acc;
      }
    // d/dq_l of Gdot qd = sum_j d^2 G_ij [qd, e_l] qd_j.
    for (int l = 0; l < n; ++l) {
      for (int i = 0; i < n; ++i) qh_[i] = HyperDual(q[i], qd[i], i == l ? 1.0 : 0.0, 0.0);
      form(qh_, Gh_);
      for (int i = 0; i < n; ++i) {
        double acc = 0;
        for (int j = 0; j < n; ++j) acc += Gh_(i, j).d * qd[j];
        dc_dq(i, l) = acc;
      }
    }
    // + d^2 W / dq_i dq_l, W = V - 1/2 qd^T G qd.
    for (int i = 0; i < n; ++i) {
      for (int l = i; l < n; ++l) {
        for (int k = 0; k < n; ++k) qh_[k] = HyperDual(q[k], k == i ? 1.0 : 0.0, k == l ? 1.0 : 0.0, 0.0);
        form(qh_, Gh_);
        const HyperDual W = potential(qh_) - 0.5 * quadratic_form<HyperDual>(Gh_, qd, n);
        dc_dq(i, l) += W.d;
        if (l != i) dc_dq(l, i) += W.d;
      }
    }
  }

 private:
  int n_;
  VecN<JetC, N> qc_;
  MatN<JetC, N, N> Gc_;
  VecN<HyperDual, N> qh_;
  MatN<HyperDual, N, N> Gh_;
};

}  // namespace clm
