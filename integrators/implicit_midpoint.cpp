#include "integrators/implicit_midpoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrators/hermite.hpp"

namespace clm {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxNewtonIterations = 10;
// Keep J (and the LU) for the next step while Newton contracted at least this fast; RADAU5's default is
// 1e-3, but here a Jacobian costs n rhs evaluations against one per Newton iteration.
constexpr double kReuseTheta = 0.1;
// Newton stops when the estimated remaining error is below this fraction of atol + rtol |y|.
constexpr double kNewtonFraction = 0.01;

}  // namespace

void ImplicitMidpoint::do_initialize(const IntegratorSettings& s) {
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_ = h_ = s.dt;
  // The Newton tolerance in the scaled norm: 1% of the tolerance, but never below what round-off in y
  // allows (|dz_i| ~ 10 eps |y_i| is |dz|_scaled ~ 10 eps / rtol).
  newton_tol_ = std::max(kNewtonFraction, rtol_ > 0 ? 10 * kEps / rtol_ : 0.0);
  const long n = y_.size();
  for (Vec* v : {&z_, &dz_, &ym_, &fm_, &res_, &scale_}) v->setZero(n);
  initialize_newton(s);
  newton_matrix_.setZero(n, n);
  lu_ = Eigen::PartialPivLU<Mat>(n);
  theta_ = 1.0;
  t_prev_ = t_;
  y_prev_ = y_;
  f_prev_ = f_;
}

bool ImplicitMidpoint::solve_stage(double h) {
  if (h != h_lu_) {
    newton_matrix_ = (-0.5 * h) * J_;
    newton_matrix_.diagonal().array() += 1.0;
    lu_.compute(newton_matrix_);
    h_lu_ = h;
  }
  const long n = y_.size();
  for (long i = 0; i < n; ++i) scale_[i] = atol_ + rtol_ * std::abs(y_[i]);
  z_ = h * f_;  // explicit Euler predictor, O(h^2) off
  double dn_old = 0;
  double eta = 1.0;
  for (int k = 0; k < kMaxNewtonIterations; ++k) {
    ym_ = y_ + 0.5 * z_;
    eval_rhs(t_ + 0.5 * h, ym_, fm_);
    ++stats_.newton_iterations;
    res_ = h * fm_ - z_;  // minus the residual of G(z) = z - h f(t + h/2, y + z/2)
    dz_ = lu_.solve(res_);
    z_ += dz_;
    const double dn = weighted_rms_norm(dz_, scale_);
    if (!std::isfinite(dn)) return false;
    if (k > 0) {
      theta_ = dn / dn_old;
      if (!(theta_ < 0.99)) return false;
      eta = theta_ / (1 - theta_);
      // The remaining iterations cannot reach the tolerance at this rate.
      if (eta * dn * std::pow(theta_, kMaxNewtonIterations - 1 - k) > newton_tol_) return false;
    }
    // At least two iterations, so that the rate of this step is measured (see radau5.cpp).
    if (k >= 1 && eta * dn <= newton_tol_) {
      return true;
    }
    dn_old = std::max(dn, kEps);
  }
  return false;
}

bool ImplicitMidpoint::do_step(double h) {
  if (!jac_valid_) update_jacobian();
  bool converged = solve_stage(h);
  if (!converged && !jac_fresh_) {  // a stale Jacobian may be the reason: one retry with a fresh one
    update_jacobian();
    converged = solve_stage(h);
  }
  jac_fresh_ = false;
  if (!converged) {
    h_ = 0.5 * h;
    return false;
  }
  y_prev_ = y_;
  f_prev_ = f_;
  t_prev_ = t_;
  y_ += z_;
  eval_rhs(step_end(), y_, f_);
  if (theta_ > kReuseTheta) jac_valid_ = false;
  if (h_ < dt_) h_ = std::min(dt_, 2 * h_);  // recover from a halving
  return true;
}

void ImplicitMidpoint::interpolate(double t, Vec& y) const {
  hermite_interpolate(t_prev_, y_prev_, f_prev_, t_, y_, f_, t, y);
}

}  // namespace clm
