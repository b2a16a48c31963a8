// Finite-difference references of the model terms that automatic differentiation derives (core/model.hpp):
// each term recomputed from the functions it is derived from, by differences of Model::evaluate only, so that
// a term is checked against its definition and not against the same derivative by another route. Used by
// `clmbench check` (runs/model_checks.hpp) and the model tests (tests/model_test.cpp).
//
//   A = dh/dq, b = dh/dt           of a holonomic h(q, t), by differences of h;
//   Adot qd (the acceleration bias) d/ds [A(q + s qd, t + s) qd + b(q + s qd, t + s)] at s = 0: the second time
//                                  derivative of the constraints along a motion with qdd = 0, for every kind
//                                  (holonomic, Pfaffian, time-dependent);
//   dL/dq, p = dL/dqd              of L = T + qd . a - V (kEnergy's kinetic + gyroscopic - potential);
//   c                              the Euler-Lagrange expression at qdd = 0, d/ds p(q + s qd, qd, t + s) - dL/dq,
//                                  so M qdd + c = d/dt(dL/dqd) - dL/dq (the seed's B + G, gyroscopic terms and
//                                  the explicit time dependence of V included);
//   dM/dq, dA/dq, dc/dq, dc/dqd, d(Adot qd)/dq, d(Adot qd)/dqd   Model::dynamics_derivatives' reference;
//   dF/dq, dF/dqd                  Model::generalized_force_derivatives' reference (at t = 0 or a given t).
//
// Each comes whole (a column per coordinate: n differences) or along one direction d (the Jacobian times d: a
// few differences whatever n, what `clmbench check` uses on large models).
// Every derivative in q or t is a Richardson-extrapolated central difference, (4 D(s/2) - D(s)) / 3 with
// D(s) = (f(s) - f(-s)) / 2s, truncation O(s^4), at s = 1e-3 scaled to the coordinates (1e-3 max(1, |q_j|) in
// each coordinate along an axis or a direction d) or, along qd, to the motion (s |qd| <= 1e-3 max(1, |q|), s <= 1e-3).
// Derivatives in qd of L, which is quadratic in qd, are plain central differences at step max(1, |qd|): exact
// but for rounding. The rounding error of a reference is about 1e-16 |f| / s, so around 1e-12 relative to the
// terms it compares: a wrong term shows as O(1).
#pragma once

#include <memory>
#include <type_traits>

#include "core/model.hpp"

namespace clm {

// (4 D(s/2) - D(s)) / 3, D(h) = (f(h) - f(-h)) / 2h: f'(0) to O(s^4). f returns a double or any Eigen dense type.
template <class F>
auto richardson_derivative(F&& f, double s) {
  using Result = std::decay_t<decltype(f(0.0))>;
  if constexpr (std::is_arithmetic_v<Result>) {
    const double d1 = (f(s) - f(-s)) / (2 * s), d2 = (f(s / 2) - f(-s / 2)) / s;
    return (4 * d2 - d1) / 3;
  } else {
    using R = typename Result::PlainObject;
    const R d1 = (R(f(s)) - R(f(-s))) / (2 * s);
    const R d2 = (R(f(s / 2)) - R(f(-s / 2))) / s;
    return R((4 * d2 - d1) / 3);
  }
}

class FiniteDifferenceTerms {
 public:
  explicit FiniteDifferenceTerms(const Model& model);

  // The step along d in q: the largest s with s |d_j| <= 1e-3 max(1, |q_j|) for every j (d = e_j: 1e-3 max(1,
  // |q_j|)); along qd: s with s |qd|_inf <= 1e-3 max(1, |q|_inf), s <= 1e-3.
  static double step_along(const Vec& q, const Vec& d);
  static double motion_step(const Vec& q, const Vec& qd);

  // Holonomic models: A = dh/dq (m x n), A d, and b = dh/dt (m; time-dependent models) at (t, q).
  Mat constraint_jacobian(double t, const Vec& q);
  Vec constraint_jacobian_along(double t, const Vec& q, const Vec& d);
  Vec constraint_rate(double t, const Vec& q);
  // d/ds [A(q + s qd, t + s) qd + b(q + s qd, t + s)] at s = 0: ModelTerms::Adot_qd.
  Vec constraint_bias(double t, const Vec& q, const Vec& qd);

  // L = kinetic + gyroscopic - potential at (t, q, qd).
  double lagrangian(double t, const Vec& q, const Vec& qd);
  Vec lagrangian_gradient(double t, const Vec& q, const Vec& qd);  // dL/dq
  Vec momentum(double t, const Vec& q, const Vec& qd);             // p = dL/dqd
  double lagrangian_gradient_along(double t, const Vec& q, const Vec& qd, const Vec& d);  // dL/dq . d
  double momentum_along(double t, const Vec& q, const Vec& qd, const Vec& d);             // p . d
  // The Euler-Lagrange expression at qdd = 0, c = dp_dt - dL_dq; both parts are kept because c is their
  // difference (its rounding scales with them, not with c). Whole, or dotted with d.
  struct EulerLagrange {
    Vec dp_dt, dL_dq;
    Vec c() const { return dp_dt - dL_dq; }
  };
  EulerLagrange euler_lagrange(double t, const Vec& q, const Vec& qd);
  struct EulerLagrangeAlong {
    double dp_dt = 0, dL_dq = 0;
    double c() const { return dp_dt - dL_dq; }
  };
  EulerLagrangeAlong euler_lagrange_along(double t, const Vec& q, const Vec& qd, const Vec& d);

  // Model::dynamics_derivatives' reference at t = 0 (models that have them are time-independent; F, which may read
  // t, at t = 0), shaped like Model::make_derivatives(constraint_bias).
  DynamicsDerivatives dynamics_derivatives(const Vec& q, const Vec& qd, bool constraint_bias);
  // The same along d in q (in_q) or in qd: sum_l d_l dM/dx_l, sum_l d_l dA/dx_l, dc/dx d, dF/dx d (F at t = time,
  // the only term that reads t in a model with derivatives), d(Adot qd)/dx d.
  struct TermsAlong {
    Mat M, A;
    Vec c, F, bias;
  };
  TermsAlong dynamics_derivative_along(const Vec& q, const Vec& qd, const Vec& d, bool in_q, double time = 0.0);

 private:
  const ModelTerms& evaluate(double t, const Vec& q, const Vec& qd, unsigned what);

  const Model& model_;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
};

}  // namespace clm
