// The substituted Lagrangian of [seed-002, "Common Mistake"], derived by automatic differentiation.
//
// A problem may name, in an optional member `static constexpr std::array kEliminated = {...}` (indices into
// q, one per constraint row), the velocities it solves the constraint A(q) qd = 0 for. With D those
// indices, I the remaining ones and v = qd_I:
//
//   qd_D = -A_D(q)^-1 A_I(q) v,   i.e. qd = S(q) v with S_I = 1, S_D = -A_D^-1 A_I,
//   L_c(q, v) = L(q, S(q) v) = 1/2 v^T M_c(q) v - V(q),   M_c = S^T M S.
//
// The mistake is to then apply the unconstrained Euler-Lagrange equations to L_c in the coordinates q_I:
//
//   d/dt dL_c/dv - dL_c/dq_I = S^T F   =>   M_c vd + c_c = S^T F,
//   c_c = Mdot_c v - 1/2 d/dq_I (v^T M_c v) + d/dq_I V,
//
// where Mdot_c = dM_c/dq [qd] is taken along the full qd = S v (the eliminated coordinates move too), but
// the gradient is w.r.t. q_I only: L_c's dependence on q_D through A(q) is dropped. For an integrable
// (holonomic) constraint this is Lagrange's method in independent coordinates and is right; for a
// nonholonomic one it yields [seed-002]'s spurious terms.
//
// Two forward-mode passes (core/quadratic_lagrangian.hpp): Jet<1> along qd for M_c and Mdot_c, Jet<n> with
// the n coordinate directions for the gradients. M_c<T> is built from the problem's templated mass_matrix<T> and
// pfaffian<T>; for holonomic problems A = dh/dq and its derivatives (the Hessians of h) come from one
// Jet<n> pass and n(n+1)/2 Taylor2 passes (polarization) over constraint<T>. Fixed sizes only: every buffer
// is a fixed-size Eigen object on the stack, so no heap allocation.
//
// Reached through Model::capability<SubstitutionCapability>() (null when the problem eliminates no
// velocities), attached at registration by add_substitution below. A problem may also describe its chart
// condition det A_D in its own terms, `static constexpr const char* kChartCondition = "cos(theta)";`, which
// the substituted formulation's chart-singularity message quotes.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/quadratic_lagrangian.hpp"
#include "core/taylor2.hpp"
#include "core/types.hpp"

namespace clm {

template <class P>
concept HasEliminatedVelocities = requires { P::kEliminated.size(); };

// Double-valued output of the substitution at (q, v), sized by the caller (n x k, k x k, k).
struct SubstitutedTerms {
  Mat S;       // qd = S v
  Mat Mc;      // M_c = S^T M S
  Vec cc;      // c_c (see the header comment)
  double det_AD = 0;       // det A_D(q) (the sleigh eliminating yd: cos(theta))
  double chart_rcond = 0;  // 1 / (|A|_1 |A_D^-1|_1): how far the chart is from singular (0 at a singularity)
};

template <Problem P>
class Substitution {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;
  static constexpr int K = N - C;
  static_assert(N != Eigen::Dynamic && C != Eigen::Dynamic, "substitution needs fixed-size problems");
  static_assert(P::kEliminated.size() == static_cast<std::size_t>(C), "kEliminated: one index per constraint row");
  static constexpr bool kHolonomic = P::kConstraintKind == ConstraintKind::kHolonomic;
  using JetN = ceres::Jet<double, N>;

  static constexpr std::array<int, C> dependent() {
    std::array<int, C> d{};
    for (int i = 0; i < C; ++i) d[i] = P::kEliminated[i];
    return d;
  }
  static constexpr std::array<int, K> independent() {
    std::array<int, K> out{};
    int k = 0;
    for (int j = 0; j < N; ++j) {
      bool eliminated = false;
      for (int i = 0; i < C; ++i) eliminated = eliminated || P::kEliminated[i] == j;
      if (!eliminated && k < K) out[k++] = j;
    }
    return out;
  }
  static constexpr bool valid_indices() {
    for (int i = 0; i < C; ++i) {
      if (P::kEliminated[i] < 0 || P::kEliminated[i] >= N) return false;
      for (int j = 0; j < i; ++j)
        if (P::kEliminated[i] == P::kEliminated[j]) return false;
    }
    return true;
  }
  static_assert(valid_indices(), "kEliminated: distinct indices in [0, kDof)");

  // flatten: the hot path; inlining everything keeps its speed independent of the translation unit that
  // instantiates it (measured: without it, 20% slower when instantiated in the registration unit).
  [[gnu::flatten]] static void terms(const P& p, const Vec& q_in, const Vec& v_in, SubstitutedTerms& out) {
    constexpr auto I = independent();
    const VecN<double, N> q = q_in;
    const VecN<double, K> v = v_in;

    // Pass 1: Jet<1> along qd = S v. The direction needs S, so first the plain values.
    MatN<double, N, N> M;
    p.template mass_matrix<double>(q, M);
    MatN<double, C, N> A;
    jacobian_value(p, q, A);
    MatN<double, N, K> S;
    MatN<double, K, K> Mc;
    double det = 0;
    reduce<double>(M, A, S, Mc, det);
    const VecN<double, N> qd = S * v;

    // M_c, Mdot_c v along the full qd = S v, and the gradient in all coordinates, of which the I rows are
    // kept: the shared quadratic-Lagrangian passes with G = M_c (core/quadratic_lagrangian.hpp).
    QuadraticLagrangianDerivatives<N, K> derivatives(N, K);  // fixed sizes: on the stack
    MatN<double, K, K> Mc_ad;
    VecN<double, K> Mcdot_v;
    VecN<double, N> grad;
    derivatives.evaluate(
        q, qd, v,
        [&](const auto& qj, auto& Mcj) {
          using T = typename std::decay_t<decltype(Mcj)>::Scalar;
          MatN<T, N, N> Mj;
          p.mass_matrix(qj, Mj);
          MatN<T, C, N> Aj;
          jacobian_jet<T::DIMENSION>(p, q, qj, Aj);
          MatN<T, N, K> Sj;
          T detj;
          reduce<T>(Mj, Aj, Sj, Mcj, detj);
        },
        [&](const auto& qj) { return p.potential(qj); }, Mc_ad, Mcdot_v, grad);
    for (int a = 0; a < K; ++a) out.cc[a] = Mcdot_v[a] + grad[I[a]];
    // Element-wise: out's buffers are sized once by the formulation (no allocation here), and GCC 12
    // misreads Eigen's packet copy of a 1 x 1 fixed matrix as out of bounds (-Warray-bounds).
    for (int j = 0; j < K; ++j) {
      for (int i = 0; i < N; ++i) out.S(i, j) = S(i, j);
      for (int i = 0; i < K; ++i) out.Mc(i, j) = Mc(i, j);
    }
    out.det_AD = det;
    out.chart_rcond = chart_rcond(A);
  }

 private:
  static void jacobian_value(const P& p, const VecN<double, N>& q, MatN<double, C, N>& A) {
    if constexpr (kHolonomic) {
      VecN<JetN, N> qn;
      for (int i = 0; i < N; ++i) {
        qn[i] = JetN(q[i]);
        qn[i].v[i] = 1.0;
      }
      VecN<JetN, C> h;
      p.template constraint<JetN>(qn, h);
      for (int r = 0; r < C; ++r)
        for (int j = 0; j < N; ++j) A(r, j) = h[r].v[j];
    } else {
      p.template pfaffian<double>(q, A);
    }
  }

  // A(q) as Jet<D>, with the derivative parts of the seeded coordinates qj (qj[i].v = seed directions).
  template <int D>
  static void jacobian_jet(const P& p, const VecN<double, N>& q, const VecN<ceres::Jet<double, D>, N>& qj,
                           MatN<ceres::Jet<double, D>, C, N>& A) {
    if constexpr (kHolonomic) {
      // A_rj = d_j h_r; d/dseed A_rj = sum_k H_r(j, k) seed_k, H_r the Hessian of h_r by polarization of
      // second directional derivatives: d^T H d = 2 c2 of h(q + s d) in Taylor2.
      MatN<double, C, N> A0;
      jacobian_value(p, q, A0);
      std::array<MatN<double, N, N>, C> H;
      VecN<Taylor2, N> q2;
      VecN<Taylor2, C> h2;
      auto second = [&](int j, int k, std::array<double, C>& d2) {  // k = -1: direction e_j alone
        for (int i = 0; i < N; ++i) q2[i] = Taylor2(q[i], (i == j ? 1.0 : 0.0) + (i == k ? 1.0 : 0.0), 0.0);
        p.template constraint<Taylor2>(q2, h2);
        for (int r = 0; r < C; ++r) d2[r] = 2.0 * h2[r].c2;
      };
      std::array<std::array<double, C>, N> diag{};
      for (int j = 0; j < N; ++j) {
        second(j, -1, diag[j]);
        for (int r = 0; r < C; ++r) H[r](j, j) = diag[j][r];
      }
      for (int j = 0; j < N; ++j)
        for (int k = j + 1; k < N; ++k) {
          std::array<double, C> both{};
          second(j, k, both);
          for (int r = 0; r < C; ++r) H[r](j, k) = H[r](k, j) = 0.5 * (both[r] - diag[j][r] - diag[k][r]);
        }
      for (int r = 0; r < C; ++r)
        for (int j = 0; j < N; ++j) {
          A(r, j) = ceres::Jet<double, D>(A0(r, j));
          for (int d = 0; d < D; ++d) {
            double acc = 0;
            for (int k = 0; k < N; ++k) acc += H[r](j, k) * qj[k].v[d];
            A(r, j).v[d] = acc;
          }
        }
    } else {
      p.template pfaffian<ceres::Jet<double, D>>(qj, A);
    }
  }

  // S = [1; -A_D^-1 A_I] (permuted) and M_c = S^T M S; det = det A_D.
  template <class T>
  static void reduce(const MatN<T, N, N>& M, const MatN<T, C, N>& A, MatN<T, N, K>& S, MatN<T, K, K>& Mc, T& det) {
    constexpr auto D = dependent();
    constexpr auto I = independent();
    MatN<T, C, C> AD;
    MatN<T, C, K> AI;
    for (int r = 0; r < C; ++r) {
      for (int i = 0; i < C; ++i) AD(r, i) = A(r, D[i]);
      for (int i = 0; i < K; ++i) AI(r, i) = A(r, I[i]);
    }
    det = AD.determinant();
    const MatN<T, C, C> AD_inv = AD.inverse();  // closed-form cofactors for C <= 4 (no pivoting on Jets)
    const MatN<T, C, K> SD = -(AD_inv * AI);
    for (int a = 0; a < K; ++a) {
      for (int i = 0; i < K; ++i) S(I[i], a) = T(i == a ? 1.0 : 0.0);
      for (int r = 0; r < C; ++r) S(D[r], a) = SD(r, a);
    }
    const MatN<T, N, K> MS = M * S;
    Mc = S.transpose() * MS;
  }

  static double chart_rcond(const MatN<double, C, N>& A) {
    constexpr auto D = dependent();
    MatN<double, C, C> AD;
    for (int r = 0; r < C; ++r)
      for (int i = 0; i < C; ++i) AD(r, i) = A(r, D[i]);
    const double det = AD.determinant();
    if (!(std::abs(det) > 0) || !std::isfinite(det)) return 0.0;
    const MatN<double, C, C> inv = AD.inverse();
    const double norm_A = A.cwiseAbs().colwise().sum().maxCoeff();
    const double norm_inv = inv.cwiseAbs().colwise().sum().maxCoeff();
    return 1.0 / (norm_A * norm_inv);
  }
};

// The capability: the problem's eliminated velocities and the substituted terms at (q, v).
class SubstitutionCapability : public Capability {
 public:
  virtual std::vector<int> eliminated_velocities() const = 0;
  virtual void terms(const Vec& q, const Vec& v, SubstitutedTerms& out) const = 0;
  // What det A_D is in the problem's own terms ("cos(theta)" for the sleigh), empty when it says nothing.
  virtual std::string chart_condition() const = 0;
};

template <class P>
concept HasChartCondition = requires { { P::kChartCondition } -> std::convertible_to<const char*>; };

template <Problem P>
class ProblemSubstitution final : public SubstitutionCapability {
 public:
  explicit ProblemSubstitution(const P& p) : p_(p) {}
  std::vector<int> eliminated_velocities() const override { return {P::kEliminated.begin(), P::kEliminated.end()}; }
  void terms(const Vec& q, const Vec& v, SubstitutedTerms& out) const override {
    Substitution<P>::terms(p_, q, v, out);
  }
  std::string chart_condition() const override {
    if constexpr (HasChartCondition<P>) return P::kChartCondition;
    return {};
  }

 private:
  P p_;
};

// Registration: attaches the capability when P declares kEliminated and has no gyroscopic term (L_c is built
// from M and V; the substituted formulation refuses such problems).
template <Problem P>
void add_substitution(Model& model, const P& p) {
  if constexpr (HasEliminatedVelocities<P> && !HasGyroscopic<P>)
    model.add_capability<SubstitutionCapability>(std::make_shared<ProblemSubstitution<P>>(p));
}

}  // namespace clm
