// The Fernandez-Bloch restricted Lagrangian (seed 003, eq. 2.6 and section 4) in double-valued form, and
// its automatic-differentiation implementation for a Problem.
//
// A transversal frame X (n x m, columns X_a, A X = I) completes a basis of the constraint distribution
// D = ker A to a frame {X_a, S_alpha} of the configuration space; the quasi-velocities along X_a are then
// v^a = A_a qd (seed 003, section 3: "the condition for it to lie in C is simply v^a = 0"). With the
// natural choice Phi_a = (dL/dqd) . X_a = qd^T M X_a (seed 003, section 5: Phi_a = dL/dxd, dL/dyd for the
// disk), the restricted Lagrangian
//
//   L~ = L - Phi_a v^a = 1/2 qd^T M~ qd - V,     M~ = M - (M X A + A^T X^T M),
//
// is again quadratic in qd. In the frame [X S] (A S = 0) M~ is block diagonal, diag(-X^T M X, S^T M S)
// (the cross block S^T M X - S^T M X A X vanishes because A X = I): it is indefinite, and singular
// exactly where M degenerates on span X or on D (never for a positive-definite M).
//
// Optional problem member (detected at compile time):
//   template <class T> void transversal_frame(const VecN<T,kDof>& q, MatN<T,kDof,kConstraints>& X) const;
// Default when absent: the pseudo-inverse frame X = A^T (A A^T)^-1, templated like the rest.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <memory>

#include "core/problem.hpp"
#include "core/types.hpp"

namespace clm {

template <class P>
concept HasTransversalFrame = requires(const P& p, const VecN<double, P::kDof>& q,
                                       MatN<double, P::kDof, P::kConstraints>& X) {
  p.transversal_frame(q, X);
};

// X(q) for scalar T: the problem's frame or the pseudo-inverse default. A is A(q) in the same scalar.
template <class P, class T>
void transversal_frame(const P& p, const VecN<T, P::kDof>& q, const MatN<T, P::kConstraints, P::kDof>& A,
                       MatN<T, P::kDof, P::kConstraints>& X) {
  if constexpr (HasTransversalFrame<P>) {
    (void)A;
    p.template transversal_frame<T>(q, X);
  } else {
    (void)q;
    const MatN<T, P::kConstraints, P::kConstraints> G = A * A.transpose();
    X.noalias() = A.transpose() * G.inverse();
  }
}

// Everything fernandez_bloch needs at one state (q, qd), sized once by RestrictedLagrangian::make_terms.
struct RestrictedTerms {
  Mat M_tilde;  // n x n, M~(q)
  Vec c_tilde;  // n, M~dot qd - 1/2 d/dq(qd^T M~ qd) + dV/dq (the generalized force F is not included)
  Mat X;        // n x m, transversal frame X(q)
  Mat MX;       // n x m, M X: Phi = (M X)^T qd, and Gamma(Phi) = (M X)^T qdd + phi_dot_q
  Vec phi;      // m, Phi_a = qd^T M X_a
  Vec phi_dot_q;  // m, qd^T d/dt(M X) along qd: the part of d/dt Phi that does not involve qdd
};

// The double-valued interface (one object per formulation: it owns its autodiff buffers).
class RestrictedLagrangian {
 public:
  virtual ~RestrictedLagrangian() = default;
  virtual RestrictedTerms make_terms() const = 0;
  // Hot path: no heap allocation for fixed-size problems.
  virtual void evaluate(const Vec& q, const Vec& qd, RestrictedTerms& out) = 0;
};

// Pfaffian problems only (a holonomic A = dh/dq would need nested Jets here).
template <Problem P>
class AutoDiffRestrictedLagrangian final : public RestrictedLagrangian {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;
  static constexpr int K = (N != Eigen::Dynamic && N <= 16) ? N : 8;  // gradient chunk width
  using Jet1 = ceres::Jet<double, 1>;
  using JetK = ceres::Jet<double, K>;

  explicit AutoDiffRestrictedLagrangian(const P& problem)
      : p_(problem), n_(p_.dof()), m_(p_.constraints()) {
    q_.resize(n_); qd_.resize(n_);
    q1_.resize(n_); M1_.resize(n_, n_); A1_.resize(m_, n_); X1_.resize(n_, m_); MX1_.resize(n_, m_);
    Mt1_.resize(n_, n_);
    qk_.resize(n_); Mk_.resize(n_, n_); Ak_.resize(m_, n_); Xk_.resize(n_, m_); MXk_.resize(n_, m_);
    Mtk_.resize(n_, n_);
  }

  RestrictedTerms make_terms() const override {
    RestrictedTerms t;
    t.M_tilde = Mat::Zero(n_, n_);
    t.c_tilde = Vec::Zero(n_);
    t.X = Mat::Zero(n_, m_);
    t.MX = Mat::Zero(n_, m_);
    t.phi = Vec::Zero(m_);
    t.phi_dot_q = Vec::Zero(m_);
    return t;
  }

  void evaluate(const Vec& q, const Vec& qd, RestrictedTerms& out) override {
    q_ = q;
    qd_ = qd;
    // Pass 1, Jet<1> at q + eps qd: M~, M~dot qd, X, M X and d/dt(M X).
    for (int i = 0; i < n_; ++i) {
      q1_[i] = Jet1(q_[i]);
      q1_[i].v[0] = qd_[i];
    }
    restricted_mass<Jet1>(q1_, M1_, A1_, X1_, MX1_, Mt1_);
    for (int i = 0; i < n_; ++i) {
      double acc = 0;
      for (int j = 0; j < n_; ++j) {
        out.M_tilde(i, j) = Mt1_(i, j).a;
        acc += Mt1_(i, j).v[0] * qd_[j];
      }
      out.c_tilde[i] = acc;
      for (int a = 0; a < m_; ++a) {
        out.X(i, a) = X1_(i, a).a;
        out.MX(i, a) = MX1_(i, a).a;
      }
    }
    for (int a = 0; a < m_; ++a) {
      double phi = 0, dphi = 0;
      for (int i = 0; i < n_; ++i) {
        phi += MX1_(i, a).a * qd_[i];
        dphi += MX1_(i, a).v[0] * qd_[i];
      }
      out.phi[a] = phi;
      out.phi_dot_q[a] = dphi;
    }
    // Pass 2, Jet<K> over coordinate directions: -1/2 d/dq(qd^T M~ qd) + dV/dq.
    for (int start = 0; start < n_; start += K) {
      for (int i = 0; i < n_; ++i) {
        qk_[i] = JetK(q_[i]);
        const int k = i - start;
        if (k >= 0 && k < K) qk_[i].v[k] = 1.0;
      }
      restricted_mass<JetK>(qk_, Mk_, Ak_, Xk_, MXk_, Mtk_);
      JetK T(0.0);
      for (int i = 0; i < n_; ++i) {
        JetK row(0.0);
        for (int j = 0; j < n_; ++j) row += Mtk_(i, j) * qd_[j];
        T += row * qd_[i];
      }
      const JetK V = p_.template potential<JetK>(qk_);
      const int width = std::min(K, n_ - start);
      for (int k = 0; k < width; ++k) out.c_tilde[start + k] += -0.5 * T.v[k] + V.v[k];
    }
  }

 private:
  // M~(q) = M - (M X A + (M X A)^T) in scalar T; the buffers are the caller's (no temporaries on the heap).
  template <class T>
  void restricted_mass(const VecN<T, N>& q, MatN<T, N, N>& M, MatN<T, C, N>& A, MatN<T, N, C>& X,
                       MatN<T, N, C>& MX, MatN<T, N, N>& Mt) const {
    p_.template mass_matrix<T>(q, M);
    p_.template pfaffian<T>(q, A);
    transversal_frame<P, T>(p_, q, A, X);
    MX.noalias() = M * X;
    Mt = M;
    Mt.noalias() -= MX * A;
    Mt.noalias() -= A.transpose() * MX.transpose();
  }

  P p_;
  int n_, m_;
  VecN<double, N> q_, qd_;
  VecN<Jet1, N> q1_;
  MatN<Jet1, N, N> M1_, Mt1_;
  MatN<Jet1, C, N> A1_;
  MatN<Jet1, N, C> X1_, MX1_;
  VecN<JetK, N> qk_;
  MatN<JetK, N, N> Mk_, Mtk_;
  MatN<JetK, C, N> Ak_;
  MatN<JetK, N, C> Xk_, MXk_;
};

}  // namespace clm
