#include "analysis/finite_difference_terms.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clm {

namespace {

double norm_inf(const Vec& v) { return v.size() ? v.lpNorm<Eigen::Infinity>() : 0.0; }

Vec axis(int n, int j) { return Vec::Unit(n, j); }

}  // namespace

FiniteDifferenceTerms::FiniteDifferenceTerms(const Model& model)
    : model_(model), ws_(model.make_workspace()), terms_(model.make_terms()) {}

double FiniteDifferenceTerms::step_along(const Vec& q, const Vec& d) {
  // No coordinate moves by more than 1e-3 of its own size (at least 1e-3): along an axis e_j the step is
  // 1e-3 max(1, |q_j|).
  double step = std::numeric_limits<double>::infinity();
  for (int j = 0; j < d.size(); ++j)
    if (d[j] != 0) step = std::min(step, 1e-3 * std::max(1.0, std::abs(q[j])) / std::abs(d[j]));
  return std::isfinite(step) ? step : 1e-3;
}

double FiniteDifferenceTerms::motion_step(const Vec& q, const Vec& qd) {
  const double reach = 1e-3 * std::max(1.0, norm_inf(q));
  const double speed = norm_inf(qd);
  return speed * 1e-3 > reach ? reach / speed : 1e-3;
}

const ModelTerms& FiniteDifferenceTerms::evaluate(double t, const Vec& q, const Vec& qd, unsigned what) {
  model_.evaluate(t, q, qd, what, *ws_, terms_);
  return terms_;
}

Vec FiniteDifferenceTerms::constraint_jacobian_along(double t, const Vec& q, const Vec& d) {
  const Vec zero = Vec::Zero(model_.n());
  return richardson_derivative([&](double s) { return Vec(evaluate(t, q + s * d, zero, kConstraintValue).h); },
                               step_along(q, d));
}

Mat FiniteDifferenceTerms::constraint_jacobian(double t, const Vec& q) {
  const int n = model_.n();
  Mat A(model_.m(), n);
  for (int j = 0; j < n; ++j) A.col(j) = constraint_jacobian_along(t, q, axis(n, j));
  return A;
}

Vec FiniteDifferenceTerms::constraint_rate(double t, const Vec& q) {
  const Vec zero = Vec::Zero(model_.n());
  return richardson_derivative([&](double s) { return Vec(evaluate(t + s, q, zero, kConstraintValue).h); }, 1e-3);
}

Vec FiniteDifferenceTerms::constraint_bias(double t, const Vec& q, const Vec& qd) {
  const bool rate = model_.time_dependent();
  return richardson_derivative(
      [&](double s) {
        const ModelTerms& x = evaluate(t + s, q + s * qd, qd, kConstraintJacobian | (rate ? kConstraintRate : 0u));
        Vec v = x.A * qd;
        if (rate) v += x.b;
        return v;
      },
      motion_step(q, qd));
}

double FiniteDifferenceTerms::lagrangian(double t, const Vec& q, const Vec& qd) {
  const ModelTerms& x = evaluate(t, q, qd, kEnergy);
  return x.kinetic + x.gyroscopic - x.potential;
}

double FiniteDifferenceTerms::lagrangian_gradient_along(double t, const Vec& q, const Vec& qd, const Vec& d) {
  return richardson_derivative([&](double s) { return lagrangian(t, q + s * d, qd); }, step_along(q, d));
}

double FiniteDifferenceTerms::momentum_along(double t, const Vec& q, const Vec& qd, const Vec& d) {
  // L is quadratic in qd: the central difference is exact at any step but for rounding, which is least at a
  // step of the velocities' own size.
  const double size = norm_inf(d);
  const double e = std::max(1.0, norm_inf(qd)) / (size > 0 ? size : 1.0);
  return (lagrangian(t, q, qd + e * d) - lagrangian(t, q, qd - e * d)) / (2 * e);
}

Vec FiniteDifferenceTerms::lagrangian_gradient(double t, const Vec& q, const Vec& qd) {
  const int n = model_.n();
  Vec g(n);
  for (int j = 0; j < n; ++j) g[j] = lagrangian_gradient_along(t, q, qd, axis(n, j));
  return g;
}

Vec FiniteDifferenceTerms::momentum(double t, const Vec& q, const Vec& qd) {
  const int n = model_.n();
  Vec p(n);
  for (int j = 0; j < n; ++j) p[j] = momentum_along(t, q, qd, axis(n, j));
  return p;
}

FiniteDifferenceTerms::EulerLagrange FiniteDifferenceTerms::euler_lagrange(double t, const Vec& q, const Vec& qd) {
  EulerLagrange el;
  el.dp_dt = richardson_derivative([&](double s) { return momentum(t + s, q + s * qd, qd); }, motion_step(q, qd));
  el.dL_dq = lagrangian_gradient(t, q, qd);
  return el;
}

FiniteDifferenceTerms::EulerLagrangeAlong FiniteDifferenceTerms::euler_lagrange_along(double t, const Vec& q,
                                                                                     const Vec& qd, const Vec& d) {
  EulerLagrangeAlong el;
  el.dp_dt = richardson_derivative([&](double s) { return momentum_along(t + s, q + s * qd, qd, d); },
                                   motion_step(q, qd));
  el.dL_dq = lagrangian_gradient_along(t, q, qd, d);
  return el;
}

FiniteDifferenceTerms::TermsAlong FiniteDifferenceTerms::dynamics_derivative_along(const Vec& q, const Vec& qd,
                                                                                  const Vec& d, bool in_q,
                                                                                  double time) {
  const int n = model_.n(), m = model_.m();
  const unsigned what = kMassMatrix | kBias | kForce | (m > 0 ? kConstraintJacobian | kConstraintBias : 0u);
  // All terms at once per step, as one stacked vector: M (n n), A (m n), c (n), F (n), Adot qd (m).
  auto stacked = [&](double s) {
    const ModelTerms& t = in_q ? evaluate(time, q + s * d, qd, what) : evaluate(time, q, qd + s * d, what);
    Vec v(n * n + m * n + 2 * n + m);
    v.head(n * n) = Eigen::Map<const Vec>(t.M.data(), n * n);
    if (m > 0) v.segment(n * n, m * n) = Eigen::Map<const Vec>(t.A.data(), m * n);
    v.segment(n * n + m * n, n) = t.c;
    v.segment(n * n + m * n + n, n) = t.F;
    if (m > 0) v.tail(m) = t.Adot_qd;
    return v;
  };
  const Vec x = richardson_derivative(stacked, step_along(in_q ? q : qd, d));
  TermsAlong r;
  r.M = Eigen::Map<const Mat>(x.data(), n, n);
  r.A = Eigen::Map<const Mat>(x.data() + n * n, m, n);
  r.c = x.segment(n * n + m * n, n);
  r.F = x.segment(n * n + m * n + n, n);
  r.bias = x.tail(m);
  return r;
}

DynamicsDerivatives FiniteDifferenceTerms::dynamics_derivatives(const Vec& q, const Vec& qd, bool constraint_bias) {
  DynamicsDerivatives d = model_.make_derivatives(constraint_bias);
  const int n = model_.n(), m = model_.m();
  for (int l = 0; l < n; ++l) {
    const TermsAlong dq = dynamics_derivative_along(q, qd, axis(n, l), true);
    d.dM[l] = dq.M;
    if (m > 0) d.dA[l] = dq.A;
    d.dc_dq.col(l) = dq.c;
    if (d.dF_dq.size()) d.dF_dq.col(l) = dq.F;
    if (constraint_bias && m > 0) d.dbias_dq.col(l) = dq.bias;
    const TermsAlong dqd = dynamics_derivative_along(q, qd, axis(n, l), false);
    d.dc_dqd.col(l) = dqd.c;
    if (d.dF_dqd.size()) d.dF_dqd.col(l) = dqd.F;
    if (constraint_bias && m > 0) d.dbias_dqd.col(l) = dqd.bias;
  }
  return d;
}

}  // namespace clm
