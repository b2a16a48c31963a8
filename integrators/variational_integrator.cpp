#include "integrators/variational_integrator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "integrators/newton_iteration.hpp"

namespace clm {

namespace {

constexpr double kEps = kNewtonEps;
constexpr int kMaxNewtonIterations = 10;
// Keep the difference matrix for the next step while Newton contracted at least this fast (as
// implicit_midpoint: a matrix costs n residual evaluations against one per iteration).
constexpr double kReuseTheta = 0.1;

}  // namespace

void VariationalIntegrator::bind(const Formulation& f, const Forcing& forcing, const IntegratorSettings& s) {
  model_ = &f.model();
  forcing_ = forcing;
  n_ = model_->n();
  if (y_.size() != 2 * n_)
    throw InputError(name() + ": needs a state (q, qd) of size 2n = " + std::to_string(2 * n_) + "; formulation " +
                     f.name() + " has " + std::to_string(y_.size()));
  mc_ = forcing_.constrain ? model_->m() : 0;
  // The rows held at position level (h(q1) = 0): all of a holonomic model's, the first position_rows() of a
  // mixed one; its velocity rows get the midpoint discrete constraint A(q_m) (q1 - q0)/h = 0 instead.
  mh_ = forcing_.constrain ? (model_->mixed() ? model_->position_rows() : mc_) : 0;
  const bool penalty = forcing_.penalty_N > 0 || forcing_.penalty_k > 0;
  const bool spring = forcing_.penalty_k > 0;
  mid_terms_ = kMomentum | kLagrangianGradient | kForce | ((penalty || mc_ > mh_) ? kConstraintJacobian : 0u) |
               (spring ? kConstraintValue : 0u);
  point_terms_ = kMomentum | ((forcing_.constrain || penalty) ? kConstraintJacobian : 0u);
  ws_ = model_->make_workspace();
  mid_ = model_->make_terms();
  point_ = model_->make_terms();
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_ = h_ = s.dt;
  newton_tol_ = newton_tolerance(rtol_);  // in the weighted norm of q
  const int k = n_ + mc_;
  for (Vec* v : {&q0_, &p0_, &qm_, &v_, &g_, &zero_}) v->setZero(n_);
  for (Vec* v : {&x_, &dx_, &R_, &Rp_, &xp_, &s_rhs_, &s_sol_, &sc_}) v->setZero(k);
  av_.setZero(model_->m());
  A0_.setZero(model_->m(), n_);
  Jq_.setZero(k, n_);
  K_.setZero(k, k);
  S_.setZero(k, k);
  lu_ = Eigen::PartialPivLU<Mat>(k);
  lu_end_ = Eigen::PartialPivLU<Mat>(k);
  lambda_start_.setZero(mc_);
  lambda_end_.setZero(mc_);
  jq_valid_ = jq_fresh_ = false;
  h_jq_ = 0;
  theta_ = 1;
  prev_.keep(t_, y_, f_);
  start_from_state();
}

void VariationalIntegrator::start_from_state() {
  q0_ = y_.head(n_);
  v_ = y_.tail(n_);
  model_->evaluate(t_, q0_, v_, point_terms_, *ws_, point_);
  p0_ = point_.p;
  if (point_terms_ & kConstraintJacobian) A0_ = point_.A;
}

void VariationalIntegrator::continuous_multipliers(double t, const Vec& y, Vec& lambda) {
  // The bound system is the kkt formulation (mechanical_system); its observe() is that KKT solve (one LU of
  // [M -A^T; A 0], formulations/saddle_point.hpp), so the integrator does not repeat it.
  auto* kkt = dynamic_cast<Formulation*>(sys_);
  if (!kkt) throw InputError(name() + ": needs the kkt formulation to read the initial multipliers");
  Observation obs;
  kkt->observe(t, y, obs);
  lambda = obs.lambda;
  start_from_state();
}

void VariationalIntegrator::do_reset_state() {
  start_from_state();
  jq_fresh_ = false;
}

void VariationalIntegrator::residual(double h, const Vec& x, Vec& R) {
  ++stats_.rhs_evals;
  const auto q1 = x.head(n_);
  qm_ = 0.5 * (q0_ + q1);
  v_ = (q1 - q0_) / h;
  model_->evaluate(t0_ + 0.5 * h, qm_, v_, mid_terms_, *ws_, mid_);
  g_ = mid_.dL_dq + mid_.F;
  if (forcing_.penalty_N > 0) {  // Rayleigh dissipation R_N = N/2 |A qd|^2: force -N A^T A v
    av_.noalias() = mid_.A * v_;
    g_.noalias() -= forcing_.penalty_N * (mid_.A.transpose() * av_);
  }
  // -d/dq k/2 |h|^2 of the position rows (the first rows of a mixed model's A).
  if (forcing_.penalty_k > 0) g_.noalias() -= forcing_.penalty_k * (mid_.A.topRows(mid_.h.size()).transpose() * mid_.h);
  auto R1 = R.head(n_);
  R1 = mid_.p - p0_;
  R1 -= (0.5 * h) * g_;
  if (mc_ > 0) {
    R1.noalias() -= A0_.transpose() * x.tail(mc_);
    // The velocity rows of a mixed model at the midpoint, A_v(q_m) v = 0 (v_ is still (q1 - q0)/h): the
    // discrete nonholonomic constraint of [MP-2006], consistent to O(h^2) and symmetric like the rest.
    if (mc_ > mh_) R.segment(n_ + mh_, mc_ - mh_).noalias() = mid_.A.bottomRows(mc_ - mh_) * v_;
    if (mh_ > 0) {
      v_ = x.head(n_);  // h(q1) at q1 (v_ reused as the point)
      model_->evaluate(t0_ + h, v_, zero_, kConstraintValue, *ws_, point_);
      R.segment(n_, mh_) = point_.h / h;
    }
  }
}

void VariationalIntegrator::difference_matrix(double h, const Vec& x) {
  ++stats_.jacobian_evals;
  residual(h, x, R_);
  xp_ = x;
  for (int j = 0; j < n_; ++j) {
    // The increments of the RADAU5 code [HW-II, IV.8]: sqrt(eps max(1e-5, |x_j|)).
    const double delta = std::sqrt(kEps * std::max(1e-5, std::abs(x[j])));
    xp_[j] = x[j] + delta;
    residual(h, xp_, Rp_);
    Jq_.col(j) = (Rp_ - R_) / delta;
    xp_[j] = x[j];
  }
  // Kept: the part that changes slowly from step to step; the leading part is evaluated afresh every step.
  add_leading_part(h, x, -1.0, Jq_);
  jq_valid_ = jq_fresh_ = true;
  h_jq_ = h;
}

void VariationalIntegrator::add_leading_part(double h, const Vec& x, double sign, Mat& K) {
  const bool penalty = forcing_.penalty_N > 0;
  qm_ = 0.5 * (q0_ + x.head(n_));
  model_->evaluate(t0_ + 0.5 * h, qm_, zero_, kMassMatrix | (penalty ? kConstraintJacobian : 0u), *ws_, point_);
  auto top = K.topLeftCorner(n_, n_);
  top += (sign / h) * point_.M;
  if (penalty) top.noalias() += (sign * 0.5 * forcing_.penalty_N) * (point_.A.transpose() * point_.A);
  if (mc_ > 0) {
    v_ = x.head(n_);
    model_->evaluate(t0_ + h, v_, zero_, kConstraintJacobian, *ws_, point_);
    K.bottomLeftCorner(mc_, n_) += (sign / h) * point_.A;
  }
}

bool VariationalIntegrator::solve(double h) {
  K_.leftCols(n_) = Jq_;
  if (mc_ > 0) {
    K_.topRightCorner(n_, mc_) = -A0_.transpose();
    K_.bottomRightCorner(mc_, mc_).setZero();
  }
  add_leading_part(h, x_, 1.0, K_);
  lu_.compute(K_);
  if (!well_conditioned(pivot_ratio(lu_.matrixLU().diagonal()))) {
    failure_.note({t_, h, 0, 0, newton_tol_, "the Newton matrix is singular (redundant constraints, or a singular position)"});
    return false;
  }
  // Weights of q1 and of nu: both must have converged (a small q-increment after a large nu-error is not
  // convergence: the nu-error moves q in the next iteration).
  // The impulse nu moves q1 by h M^-1 A^T nu: its weight grows like 1/h below the run's step dt, so that a
  // short step (the sliver before an output time after halvings; h = 5e-10 on closed_chain(8) at t = 535)
  // does not ask nu for an accuracy round-off in the h-scaled system cannot give. Unchanged at h = dt.
  const double nu_scale = std::max(1.0, dt_ / h);
  for (int i = 0; i < n_ + mc_; ++i)
    sc_[i] = i < n_ ? atol_ + rtol_ * std::abs(q0_[i]) : (atol_ + rtol_ * std::abs(x_[i])) * nu_scale;
  NewtonRateTest test(kMaxNewtonIterations, newton_tol_);
  for (int k = 0; k < kMaxNewtonIterations; ++k) {
    residual(h, x_, R_);
    ++stats_.newton_iterations;
    R_ = -R_;
    dx_ = lu_.solve(R_);
    x_ += dx_;
    const auto verdict = test.after(k, weighted_rms_norm(dx_, sc_), theta_);
    if (verdict == NewtonRateTest::kFailed) failure_.note({t_, h, k + 1, test.last_increment(), newton_tol_, test.why()});
    if (verdict != NewtonRateTest::kIterate) return verdict == NewtonRateTest::kConverged;
  }
  failure_.note({t_, h, kMaxNewtonIterations, test.last_increment(), newton_tol_, "no convergence within the iterations"});
  return false;
}

bool VariationalIntegrator::do_step(double h) {
  t0_ = t_;
  // Predictor: the Taylor polynomial from the formulation's (qd, qdd) at the start, with the third
  // derivative from the change of qdd over the last step (error O(h^4): fewer Newton iterations), and the
  // last nu.
  const double h_prev = t_ - prev_.t;
  auto predict = [&] {
    x_.head(n_) = q0_ + h * f_.head(n_) + (0.5 * h * h) * f_.tail(n_);
    if (h_prev > 0) x_.head(n_) += (h * h * h / (6 * h_prev)) * (f_.tail(n_) - prev_.f.tail(n_));
    if (mc_ > 0) x_.tail(mc_) = (0.5 * h) * lambda_start_;
  };
  predict();
  // The difference matrix depends on h through v = (q1 - q0)/h: a new one when h changed by more than 10%.
  if (!jq_valid_ || std::abs(h - h_jq_) > 0.1 * h_jq_) difference_matrix(h, x_);
  bool converged = solve(h);
  if (!converged && !jq_fresh_) {  // a stale matrix may be the reason: one retry with a fresh one
    predict();
    difference_matrix(h, x_);
    converged = solve(h);
  }
  jq_fresh_ = false;
  if (!converged) {
    h_ = 0.5 * h;
    return false;
  }
  if (theta_ > kReuseTheta) jq_valid_ = false;

  // p1 = D2 L_d + h/2 g_m = p0 + h g_m + A0^T nu (from R1 = 0). g_m is that of the last iterate, before
  // the last Newton update dq: off by h (dg/dq + dg/dv / h) dq, negligible (h L |dq|) for forces that do
  // not depend on the velocity, but N |dq| for penalty's -N A^T A v, which at N = 1e9 turned a 1e-10 update
  // into O(1) velocity errors: with penalty forcing g_m is evaluated again at the converged q1.
  if (forcing_.penalty_N > 0) residual(h, x_, R_);
  // Then the velocity constraint at q1 with its multiplier mu:
  //   [M1  -A1^T] [qd1]   [p1 - a(q1)]
  //   [A1    0  ] [mu ] = [    0     ].
  const auto q1 = x_.head(n_);
  auto p1 = s_rhs_.head(n_);
  p1 = p0_ + h * g_;
  if (mc_ > 0) p1.noalias() += A0_.transpose() * x_.tail(mc_);
  v_ = q1;
  model_->evaluate(step_end(), v_, zero_, point_terms_, *ws_, point_);  // M1, a(q1) = p(q1, 0), A1
  p1 -= point_.p;
  S_.topLeftCorner(n_, n_) = point_.M;
  if (mc_ > 0) {
    S_.topRightCorner(n_, mc_) = -point_.A.transpose();
    S_.bottomLeftCorner(mc_, n_) = point_.A;
    S_.bottomRightCorner(mc_, mc_).setZero();
    s_rhs_.tail(mc_).setZero();
  }
  lu_end_.compute(S_);
  if (!well_conditioned(pivot_ratio(lu_end_.matrixLU().diagonal())))
    throw NumericalFailure(name() + ": singular end-point matrix [M -A^T; A 0] at t = " + std::to_string(step_end()) +
                           " (singular M or dependent constraints)");
  s_sol_ = lu_end_.solve(s_rhs_);
  if (!s_sol_.allFinite()) throw NumericalFailure(name() + ": non-finite velocities at t = " + std::to_string(step_end()));

  if (mc_ > 0) {
    lambda_start_ = (2.0 / h) * x_.tail(mc_);
    lambda_end_ = (2.0 / h) * s_sol_.tail(mc_);
  }
  prev_.keep(t_, y_, f_);
  y_.head(n_) = q1;
  y_.tail(n_) = s_sol_.head(n_);
  // The next step starts from the momentum of the state written: p = M1 qd1 + a(q1).
  q0_ = q1;
  p0_ = point_.p;
  p0_.noalias() += point_.M * s_sol_.head(n_);
  if (point_terms_ & kConstraintJacobian) A0_ = point_.A;
  eval_rhs(step_end(), y_, f_);
  failure_ = {};  // a step was accepted: the next failure starts a new sequence of halvings
  h_ = recovered_step(h_, dt_);  // recover from a halving
  return true;
}

}  // namespace clm
