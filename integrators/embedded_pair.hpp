// Explicit embedded Runge-Kutta pairs with a continuous extension, given as the data their sources print
// (dop853 [HNW-I, II.10], vern7 and vern9 [Verner-2010]): coefficients listed by stage number from 1, the
// dense Butcher matrices built from them (what tests/high_order_integrator_test.cpp checks the order conditions
// of), and the sparse stage rows the integrators step with.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace clm {

// a_ij (stage i from stage j), or r_ip (stage i, power p of theta) of an interpolant; stages numbered from 1.
struct TableauEntry {
  int i, j;
  double value;
};
// A weight of stage i (b_i, or an error weight e_i = b_i - b_hat_i).
struct WeightEntry {
  int i;
  double value;
};
// r_ip of an interpolant's weight b_i(theta) = sum_p r_ip theta^p, kept in long double: Verner's r reach 1e4 and
// cancel in b_i(theta) (a double would leave 1e-12 of |b_i| at theta = 1, above the tolerances these pairs serve).
struct InterpolantEntry {
  int i, p;
  long double value;
};
using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

struct EmbeddedPair {
  std::string name;
  int order = 0;           // of the solution b
  int error_order = 0;     // of the embedded solution b_hat = b - e that the error estimate e compares with
  int dense_order = 0;     // of the continuous extension
  int stages = 0;          // of a step; stage 1 is f at the step's start
  int dense_stages = 0;    // with the continuous extension's extra stages (stage `stages + 1` is f at the step's end)
  Mat a;                   // dense_stages x dense_stages, strictly lower triangular
  Vec c;                   // dense_stages
  Vec b, e;                // over `stages`: the weights and the error weights e = b - b_hat
  // Verner: the interpolant's weights b_i(theta) = sum_p r(i, p - 1) theta^p (dense_stages x degree).
  MatL r;
  // DOP853 only: the weights BHH of its 3rd-order second estimator, and its dense-output rows D4..D7
  // (4 x dense_stages) [HNW-I, II.10] (empty otherwise).
  Vec b3;
  Mat d;
};

// The pair from its listed coefficients (Verner-style: the interpolant's r; d and b3 stay empty).
EmbeddedPair make_embedded_pair(std::string name, int order, int error_order, int dense_order, int stages,
                                std::span<const double> c, std::span<const TableauEntry> a,
                                std::span<const WeightEntry> b, std::span<const WeightEntry> e,
                                std::span<const InterpolantEntry> r);

// The nonzero terms (stage index from 0, coefficient) of a weight vector, or of row i (from 0) of a.
using StageTerms = std::vector<std::pair<int, double>>;
StageTerms nonzero_terms(const Vec& w);
StageTerms stage_terms(const Mat& a, int i);

// out = y + h sum_q w_q k[j_q]: the sum is taken first and added to y once (the rounding of Hairer's codes:
// one rounding at |y| per stage, not one per term). No allocation.
inline void stage_value(const Vec& y, double h, const StageTerms& terms, const std::vector<Vec>& k, Vec& out) {
  const long n = y.size();
  for (long i = 0; i < n; ++i) {
    double s = 0;
    for (const auto& [j, w] : terms) s += w * k[j][i];
    out[i] = y[i] + h * s;
  }
}

// out = h sum_q w_q k[j_q] (an error estimate).
inline void weighted_sum(double h, const StageTerms& terms, const std::vector<Vec>& k, Vec& out) {
  const long n = out.size();
  for (long i = 0; i < n; ++i) {
    double s = 0;
    for (const auto& [j, w] : terms) s += w * k[j][i];
    out[i] = h * s;
  }
}

// Hairer's HINIT (the codes DOPRI5 and DOP853) for a method of order p: a step for which an explicit Euler step
// would have an error of about 0.01 in the scaled norm, refined with an estimate of the second derivative.
// rhs(t, y, dy) is called once (y1, f1: workspace of the state's size).
template <class Rhs>
double hairer_initial_step(double t, const Vec& y, const Vec& f, double rtol, double atol, double dt_max, int p,
                           Vec& y1, Vec& f1, Rhs&& rhs) {
  const long n = y.size();
  double dnf = 0, dny = 0;
  for (long i = 0; i < n; ++i) {
    const double sk = atol + rtol * std::abs(y[i]);
    dnf += (f[i] / sk) * (f[i] / sk);
    dny += (y[i] / sk) * (y[i] / sk);
  }
  dnf /= n;
  dny /= n;
  double h = (dnf <= 1e-10 || dny <= 1e-10) ? 1e-6 : 0.01 * std::sqrt(dny / dnf);
  h = std::min(h, dt_max);
  y1 = y + h * f;  // one explicit Euler step to estimate the second derivative
  rhs(t + h, y1, f1);
  double der2 = 0;
  for (long i = 0; i < n; ++i) {
    const double sk = atol + rtol * std::abs(y[i]);
    der2 += ((f1[i] - f[i]) / sk) * ((f1[i] - f[i]) / sk);
  }
  der2 = std::sqrt(der2 / n) / h;
  const double der12 = std::max(std::abs(der2), std::sqrt(dnf));
  const double h1 = der12 <= 1e-15 ? std::max(1e-6, h * 1e-3) : std::pow(0.01 / der12, 1.0 / p);
  h = std::min({100 * h, h1, dt_max});
  if (!std::isfinite(h) || !(h > 0)) h = 1e-6;
  return h;
}

}  // namespace clm
