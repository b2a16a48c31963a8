// The Fernandez-Bloch restricted Lagrangian [seed-003, eq. 2.6 and section 4] in double-valued form, and
// its automatic-differentiation implementation for a Problem.
//
// A transversal frame X (n x m, columns X_a, A X = I) completes a basis of the constraint distribution
// D = ker A to a frame {X_a, S_alpha} of the configuration space; the quasi-velocities along X_a are then
// v^a = A_a qd ([seed-003, section 3]: "the condition for it to lie in C is simply v^a = 0"). With the
// natural choice Phi_a = (dL/dqd) . X_a = qd^T M X_a ([seed-003, section 5]: Phi_a = dL/dxd, dL/dyd for the
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
// Default when absent (or, for a mechanism file, when has_transversal_frame() says so): the pseudo-inverse
// frame X = A^T (A A^T)^-1, templated like the rest.
//
// Reached through Model::capability<RestrictedLagrangianFactory>() (null for holonomic problems), attached
// at registration by add_restricted_lagrangian below.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/quadratic_lagrangian.hpp"
#include "core/quadratic_lagrangian_second_derivatives.hpp"
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
    bool given = true;  // a mechanism file may not write one (has_transversal_frame)
    if constexpr (requires { p.has_transversal_frame(); }) given = p.has_transversal_frame();
    if (given) {
      p.template transversal_frame<T>(q, X);
      return;
    }
  }
  if constexpr (HasTransversalFrame<P> && P::kDof != Eigen::Dynamic && P::kConstraints != Eigen::Dynamic) {
    (void)A;
  } else if constexpr (P::kDof == Eigen::Dynamic || P::kConstraints == Eigen::Dynamic) {
    // Dynamic sizes (mechanism files): the same X without heap temporaries per call. Each row x of X solves
    // G x^T = (that column of A) by Cholesky of G = A A^T in a per-thread buffer that is sized once.
    (void)q;
    using std::sqrt;
    const Eigen::Index m = A.rows(), n = A.cols();
    thread_local MatN<T, Eigen::Dynamic, Eigen::Dynamic> L;
    if (L.rows() != m) L.resize(m, m);
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j <= i; ++j) {
        T s = T(0.0);
        for (Eigen::Index k = 0; k < n; ++k) s += A(i, k) * A(j, k);
        for (Eigen::Index k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
        L(i, j) = i == j ? sqrt(s) : s / L(j, j);
      }
    for (Eigen::Index r = 0; r < n; ++r) {
      for (Eigen::Index i = 0; i < m; ++i) {  // L y = a
        T s = A(i, r);
        for (Eigen::Index k = 0; k < i; ++k) s -= L(i, k) * X(r, k);
        X(r, i) = s / L(i, i);
      }
      for (Eigen::Index i = m - 1; i >= 0; --i) {  // L^T x = y
        T s = X(r, i);
        for (Eigen::Index k = i + 1; k < m; ++k) s -= L(k, i) * X(r, k);
        X(r, i) = s / L(i, i);
      }
    }
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
  // For the exact Jacobian of M~ qdd + c~ = F: dM~/dq_l into dMt[l] (n x n each), dc~/dq and dc~/dqd (n x n),
  // all sized by the caller (core/quadratic_lagrangian_second_derivatives.hpp). No heap allocation for
  // fixed-size problems.
  virtual void derivatives(const Vec& q, const Vec& qd, std::vector<Mat>& dMt, Mat& dc_dq, Mat& dc_dqd) = 0;
};

// Pfaffian problems only (a holonomic A = dh/dq would need nested Jets here). M~ and c~ come from the
// shared quadratic-Lagrangian passes (core/quadratic_lagrangian.hpp) with G = M~; the Jet<1> pass also
// leaves X and M X with their derivatives along qd, which give Phi and the qd-part of d/dt Phi.
template <Problem P>
class AutoDiffRestrictedLagrangian final : public RestrictedLagrangian {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;
  using Derivatives = QuadraticLagrangianDerivatives<N, N>;
  using Jet1 = typename Derivatives::Jet1;
  using JetC = typename Derivatives::JetC;
  // scratch<T>() keeps one buffer set per scalar type: the second-derivative passes use the same Jet<K>.
  static_assert(std::is_same_v<JetC, typename QuadraticLagrangianSecondDerivatives<N>::JetC>);

  explicit AutoDiffRestrictedLagrangian(const P& problem)
      : p_(problem),
        n_(p_.dof()),
        m_(p_.constraints()),
        derivatives_(n_, n_),
        second_derivatives_(n_),
        s1_(n_, m_),
        sc_(n_, m_),
        sh_(n_, m_) {
    q_.resize(n_);
    qd_.resize(n_);
    grad_.resize(n_);
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

  // flatten: see Substitution<P>::terms (formulations/substitution.hpp).
  [[gnu::flatten]] void evaluate(const Vec& q, const Vec& qd, RestrictedTerms& out) override {
    q_ = q;
    qd_ = qd;
    derivatives_.evaluate(q_, qd_, qd_, restricted_form(), potential(), out.M_tilde, out.c_tilde, grad_);
    for (int i = 0; i < n_; ++i) out.c_tilde[i] += grad_[i];
    for (int a = 0; a < m_; ++a) {
      double phi = 0, dphi = 0;
      for (int i = 0; i < n_; ++i) {
        out.X(i, a) = s1_.X(i, a).a;
        out.MX(i, a) = s1_.MX(i, a).a;
        phi += s1_.MX(i, a).a * qd_[i];
        dphi += s1_.MX(i, a).v[0] * qd_[i];
      }
      out.phi[a] = phi;
      out.phi_dot_q[a] = dphi;
    }
  }

  void derivatives(const Vec& q, const Vec& qd, std::vector<Mat>& dMt, Mat& dc_dq, Mat& dc_dqd) override {
    q_ = q;
    qd_ = qd;
    second_derivatives_.evaluate(q_, qd_, restricted_form(), potential(), dMt, dc_dq, dc_dqd);
  }

 private:
  // M~ in whatever scalar a pass runs (its intermediates in that scalar's scratch), and V: the callables the
  // first- and second-derivative passes both take.
  auto restricted_form() {
    return [this](const auto& qj, auto& Mt) {
      using T = typename std::decay_t<decltype(Mt)>::Scalar;
      auto& s = scratch<T>();
      restricted_mass<T>(qj, s.M, s.A, s.X, s.MX, Mt);
    };
  }
  auto potential() const {
    return [this](const auto& qj) { return p_.potential(qj); };
  }

  // Intermediates of M~ in scalar T (one set per Jet type, so the Jet<1> pass's X and M X survive).
  template <class T>
  struct Scratch {
    Scratch(int n, int m) {
      M.resize(n, n);
      A.resize(m, n);
      X.resize(n, m);
      MX.resize(n, m);
    }
    MatN<T, N, N> M;
    MatN<T, C, N> A;
    MatN<T, N, C> X, MX;
  };
  template <class T>
  Scratch<T>& scratch() {
    if constexpr (std::is_same_v<T, Jet1>) {
      return s1_;
    } else if constexpr (std::is_same_v<T, HyperDual>) {
      return sh_;
    } else {
      return sc_;
    }
  }

  // M~(q) = M - (M X A + (M X A)^T) in scalar T; the buffers are the caller's (no temporaries on the heap).
  template <class T>
  void restricted_mass(const VecN<T, N>& q, MatN<T, N, N>& M, MatN<T, C, N>& A, MatN<T, N, C>& X,
                       MatN<T, N, C>& MX, MatN<T, N, N>& Mt) const {
    p_.template mass_matrix<T>(q, M);
    p_.template pfaffian<T>(q, A);
    transversal_frame<P, T>(p_, q, A, X);
    Mt = M;
    if constexpr (N == Eigen::Dynamic) {  // coefficient-wise products: no heap blocking space per call
      MX.noalias() = M.lazyProduct(X);
      Mt.noalias() -= MX.lazyProduct(A);
      Mt.noalias() -= A.transpose().lazyProduct(MX.transpose());
    } else {
      MX.noalias() = M * X;
      Mt.noalias() -= MX * A;
      Mt.noalias() -= A.transpose() * MX.transpose();
    }
  }

  P p_;
  int n_, m_;
  Derivatives derivatives_;
  QuadraticLagrangianSecondDerivatives<N> second_derivatives_;  // the exact Jacobian's (derivatives())
  Scratch<Jet1> s1_;
  Scratch<JetC> sc_;
  Scratch<HyperDual> sh_;
  VecN<double, N> q_, qd_, grad_;
};

// The capability: a fresh evaluator (it owns its buffers) per formulation.
class RestrictedLagrangianFactory : public Capability {
 public:
  virtual std::shared_ptr<RestrictedLagrangian> make() const = 0;
};

template <Problem P>
class ProblemRestrictedLagrangianFactory final : public RestrictedLagrangianFactory {
 public:
  explicit ProblemRestrictedLagrangianFactory(const P& p) : p_(p) {}
  std::shared_ptr<RestrictedLagrangian> make() const override {
    return std::make_shared<AutoDiffRestrictedLagrangian<P>>(p_);
  }

 private:
  P p_;
};

// Registration: Pfaffian problems get the capability (holonomic ones would need nested Jets); not problems
// with a gyroscopic term qd . a(q), which L~ (built from M and V) does not carry (fernandez_bloch refuses them).
// A problem that declares the member may still have no such term (a mechanism file whose T has no part linear
// in qd: its TapeProblem always writes a(q) and says at run time, Model::gyroscopic(), whether it is zero).
// Also not a potential V(q, t) (a time-dependent mechanism file's): L~ has no t.
template <class P>
concept HasTimeFreePotential = requires(const P& p, const VecN<double, P::kDof>& q) { p.potential(q); };

template <Problem P>
void add_restricted_lagrangian(Model& model, const P& p) {
  if constexpr (P::kConstraintKind == ConstraintKind::kPfaffian && HasTimeFreePotential<P>) {
    if (HasGyroscopic<P> && model.gyroscopic()) return;
    model.add_capability<RestrictedLagrangianFactory>(std::make_shared<ProblemRestrictedLagrangianFactory<P>>(p));
  }
}

}  // namespace clm
