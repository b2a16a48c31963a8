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
// AutoDiffModel::dynamics_derivatives runs them for G = M (adding its gyroscopic term through the hooks, and the
// constraint derivatives after), the Fernandez-Bloch restricted Lagrangian for G = M~ (which holds the frame X(q),
// so its derivatives are nested ones of A: formulations/restricted_lagrangian.hpp). No heap allocation.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <vector>

#include "core/hyperdual.hpp"
#include "core/jet_passes.hpp"
#include "core/types.hpp"

namespace clm {

// The passes, over buffers the caller keeps (qc, Gc: Jet<K> coordinates and form; qh, Gh: hyper-dual ones, all
// sized n), so that AutoDiffModel runs them in its workspace and adds its gyroscopic term through two hooks:
// rate(qh, l, dc_dq) after column l of the rate passes (qh seeded q + e1 qd + e2 e_l), and curvature(qh, W)
// on each W = V - 1/2 qd^T G qd before its e1 e2 part is taken (qh seeded q + e1 e_i + e2 e_l).
template <int K, class Q, class QD, class Form, class Potential, class QC, class GC, class QH, class GH, class Rate,
          class Curvature>
void quadratic_lagrangian_second_derivatives(int n, const Q& q, const QD& qd, Form&& form, Potential&& potential,
                                             QC& qc, GC& Gc, QH& qh, GH& Gh, std::vector<Mat>& dG, Mat& dc_dq,
                                             Mat& dc_dqd, Rate&& rate, Curvature&& curvature) {
  for (int start = 0; start < n; start += K) {
    seed_chunk<K>(qc, q, n, start);
    form(qc, Gc);
    const int width = std::min(K, n - start);
    for (int k = 0; k < width; ++k)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) dG[start + k](i, j) = Gc(i, j).v[k];
  }
  for (int l = 0; l < n; ++l)
    for (int i = 0; i < n; ++i) {
      double acc = 0;
      for (int k = 0; k < n; ++k) acc += (dG[k](i, l) + dG[l](i, k) - dG[i](l, k)) * qd[k];
      dc_dqd(i, l) = acc;
    }
  // d/dq_l of Gdot qd = sum_j d^2 G_ij [qd, e_l] qd_j.
  for (int l = 0; l < n; ++l) {
    for (int i = 0; i < n; ++i) qh[i] = HyperDual(q[i], qd[i], i == l ? 1.0 : 0.0, 0.0);
    form(qh, Gh);
    for (int i = 0; i < n; ++i) {
      double acc = 0;
      for (int j = 0; j < n; ++j) acc += Gh(i, j).d * qd[j];
      dc_dq(i, l) = acc;
    }
    rate(qh, l, dc_dq);
  }
  // + d^2 W / dq_i dq_l, W = V - 1/2 qd^T G qd.
  for (int i = 0; i < n; ++i) {
    for (int l = i; l < n; ++l) {
      for (int k = 0; k < n; ++k) qh[k] = HyperDual(q[k], k == i ? 1.0 : 0.0, k == l ? 1.0 : 0.0, 0.0);
      form(qh, Gh);
      HyperDual W = potential(qh) - 0.5 * quadratic_form<HyperDual>(Gh, qd, n);
      curvature(qh, W);
      dc_dq(i, l) += W.d;
      if (l != i) dc_dq(l, i) += W.d;
    }
  }
}

// The same with buffers of its own and no hooks (the Fernandez-Bloch restricted Lagrangian's M~).
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
    quadratic_lagrangian_second_derivatives<kChunk>(
        n_, q, qd, form, potential, qc_, Gc_, qh_, Gh_, dG, dc_dq, dc_dqd, [](const auto&, int, Mat&) {},
        [](const auto&, HyperDual&) {});
  }

 private:
  int n_;
  VecN<JetC, N> qc_;
  MatN<JetC, N, N> Gc_;
  VecN<HyperDual, N> qh_;
  MatN<HyperDual, N, N> Gh_;
};

}  // namespace clm
