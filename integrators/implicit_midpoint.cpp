#include "integrators/implicit_midpoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrators/newton_iteration.hpp"

namespace clm {

namespace {

constexpr int kMaxNewtonIterations = 10;
// Keep J (and the LU) for the next step while Newton contracted at least this fast; RADAU5's default is
// 1e-3, but here a Jacobian costs n rhs evaluations against one per Newton iteration.
constexpr double kReuseTheta = 0.1;

}  // namespace

void ImplicitMidpoint::do_initialize(const IntegratorSettings& s) {
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_ = h_ = s.dt;
  newton_tol_ = newton_tolerance(rtol_);
  const long n = y_.size();
  for (Vec* v : {&z_, &dz_, &ym_, &fm_, &res_, &scale_}) v->setZero(n);
  initialize_newton(s);
  newton_matrix_.setZero(n, n);
  lu_ = Eigen::PartialPivLU<Mat>(n);
  theta_ = 1.0;
  prev_.keep(t_, y_, f_);
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
  NewtonRateTest test(kMaxNewtonIterations, newton_tol_);
  for (int k = 0; k < kMaxNewtonIterations; ++k) {
    ym_ = y_ + 0.5 * z_;
    eval_rhs(t_ + 0.5 * h, ym_, fm_);
    ++stats_.newton_iterations;
    res_ = h * fm_ - z_;  // minus the residual of G(z) = z - h f(t + h/2, y + z/2)
    dz_ = lu_.solve(res_);
    z_ += dz_;
    const auto verdict = test.after(k, weighted_rms_norm(dz_, scale_), theta_);
    if (verdict == NewtonRateTest::kFailed) failure_.note({t_, h, k + 1, test.last_increment(), newton_tol_, test.why()});
    if (verdict != NewtonRateTest::kIterate) return verdict == NewtonRateTest::kConverged;
  }
  failure_.note({t_, h, kMaxNewtonIterations, test.last_increment(), newton_tol_, "no convergence within the iterations"});
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
  prev_.keep(t_, y_, f_);
  y_ += z_;
  eval_rhs(step_end(), y_, f_);
  if (theta_ > kReuseTheta) jac_valid_ = false;
  failure_ = {};  // a step was accepted: the next failure starts a new sequence of halvings
  h_ = recovered_step(h_, dt_);  // recover from a halving
  return true;
}

}  // namespace clm
