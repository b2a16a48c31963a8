#include "integrators/implicit_midpoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrators/finite_difference_jacobian.hpp"
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

void ImplicitMidpoint::initialize(OdeSystem& sys, double t0, const Vec& y0, const IntegratorSettings& s) {
  if (!(s.dt > 0) || !std::isfinite(s.dt)) throw InputError("implicit_midpoint: dt must be > 0");
  if (!(s.rtol >= 0) || !(s.atol >= 0) || !(s.rtol + s.atol > 0))
    throw InputError("implicit_midpoint: rtol and atol must be >= 0 and not both zero");
  sys_ = &sys;
  stats_ = {};
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_ = h_ = s.dt;
  // The Newton tolerance in the scaled norm: 1% of the tolerance, but never below what round-off in y
  // allows (|dz_i| ~ 10 eps |y_i| is |dz|_scaled ~ 10 eps / rtol).
  newton_tol_ = std::max(kNewtonFraction, rtol_ > 0 ? 10 * kEps / rtol_ : 0.0);
  const int n = sys.dimension();
  for (Vec* v : {&y_, &f_, &y_prev_, &f_prev_, &z_, &dz_, &ym_, &fm_, &res_, &scale_, &y_work_, &f_work_})
    v->setZero(n);
  J_.setZero(n, n);
  newton_matrix_.setZero(n, n);
  lu_ = Eigen::PartialPivLU<Mat>(n);
  h_lu_ = 0;
  jac_valid_ = jac_fresh_ = false;
  theta_ = 1.0;
  t_ = t_prev_ = t0;
  reset_state(y0);
  y_prev_ = y_;
  f_prev_ = f_;
}

void ImplicitMidpoint::reset_state(const Vec& y) {
  y_ = y;
  sys_->rhs(t_, y_, f_);
  ++stats_.rhs_evals;
  // J stays: simplified Newton only needs an approximation, and the rate test catches a poor one.
}

void ImplicitMidpoint::update_jacobian() {
  stats_.rhs_evals += finite_difference_jacobian(*sys_, t_, y_, f_, y_work_, f_work_, J_);
  ++stats_.jacobian_evals;
  jac_valid_ = jac_fresh_ = true;
  h_lu_ = 0;
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
    sys_->rhs(t_ + 0.5 * h, ym_, fm_);
    ++stats_.rhs_evals;
    ++stats_.newton_iterations;
    res_ = h * fm_ - z_;  // minus the residual of G(z) = z - h f(t + h/2, y + z/2)
    dz_ = lu_.solve(res_);
    z_ += dz_;
    double dn = 0;
    for (long i = 0; i < n; ++i) dn += (dz_[i] / scale_[i]) * (dz_[i] / scale_[i]);
    dn = std::sqrt(dn / std::max<long>(n, 1));
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

bool ImplicitMidpoint::step(double t_limit) {
  const double remaining = t_limit - t_;
  if (!(remaining > 0)) return true;
  double h = h_;
  bool lands = false;
  if (t_ + h >= t_limit - 1e-9 * h) {  // land exactly on t_limit (round-off of the grid absorbed)
    h = remaining;
    lands = true;
  }
  if (!jac_valid_) update_jacobian();
  bool converged = solve_stage(h);
  if (!converged && !jac_fresh_) {  // a stale Jacobian may be the reason: one retry with a fresh one
    update_jacobian();
    converged = solve_stage(h);
  }
  jac_fresh_ = false;
  if (!converged) {
    ++stats_.rejected_steps;
    h_ = 0.5 * h;
    return false;
  }
  y_prev_ = y_;
  f_prev_ = f_;
  t_prev_ = t_;
  y_ += z_;
  t_ = lands ? t_limit : t_ + h;
  sys_->rhs(t_, y_, f_);
  ++stats_.rhs_evals;
  ++stats_.steps;
  if (theta_ > kReuseTheta) jac_valid_ = false;
  if (h_ < dt_) h_ = std::min(dt_, 2 * h_);  // recover from a halving
  return true;
}

void ImplicitMidpoint::interpolate(double t, Vec& y) const {
  hermite_interpolate(t_prev_, y_prev_, f_prev_, t_, y_, f_, t, y);
}

}  // namespace clm
