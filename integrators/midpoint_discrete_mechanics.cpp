#include "integrators/midpoint_discrete_mechanics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "integrators/mechanical_system.hpp"
#include "integrators/newton_iteration.hpp"

namespace clm {

namespace {

constexpr double kEps = kNewtonEps;
constexpr int kMaxNewtonIterations = 12;
// Keep the Jacobian (and its LU) for the next step while Newton contracted at least this fast (a
// Jacobian costs n model evaluations against one per iteration; at this rate Newton still reaches
// round-off within the iteration limit from the O(h^3) predictor).
constexpr double kReuseTheta = 0.02;
// Newton runs to round-off: converged when the increment is below kRoundoff eps |dq|_inf, or when it has
// stopped shrinking (rate > 0.5) below kStagnation eps |dq|_inf (the noise floor of the residual).
constexpr double kRoundoff = 8;
constexpr double kStagnation = 1e3;
// A step rejected at h below this fraction of dt (20 halvings) ends the run "failed".
constexpr double kSmallestStepFraction = 0x1p-20;

// |v|_inf, 0 for an empty vector.
double max_abs(const Vec& v) { return v.size() ? v.lpNorm<Eigen::Infinity>() : 0.0; }

}  // namespace

std::string MidpointDiscreteMechanics::refuses_formulation(const Formulation& f) const {
  if (std::string why = kkt_only_refusal(name(), f); !why.empty()) return why;
  if (std::string why = time_dependence_refusal(name(), f.model()); !why.empty()) return why;
  if (f.options().baumgarte_alpha != 0 || ((f.model().holonomic() || f.model().has_position_rows()) && f.options().baumgarte_beta != 0))
    return "integrator " + name() + " keeps the constraints itself; Baumgarte stabilization (formulation."
           "baumgarte_alpha/beta) does not apply to it (set both to 0)";
  return {};
}

void MidpointDiscreteMechanics::do_initialize(const IntegratorSettings& s) {
  const Formulation& f = mechanical_system(name(), *sys_);
  if (const std::string why = refuses_formulation(f); !why.empty()) throw InputError(why);
  model_ = &f.model();
  n_ = model_->n();
  m_ = model_->m();
  if (y_.size() != 2 * n_)
    throw InputError(name() + ": the state must be kkt's (q, qd) of size " + std::to_string(2 * n_));
  nz_ = n_ + (solves_for_kick_multiplier() ? m_ : 0);
  ws_ = model_->make_workspace();
  terms_ = model_->make_terms();

  dt_ = h_ = s.dt;
  theta_ = 1;
  jac_valid_ = jac_fresh_ = false;
  h_jac_ = 0;

  for (Vec* v : {&q_, &qd_, &p_k_, &kick_, &zero_, &qm_, &vm_, &p_minus_, &dq_}) v->setZero(n_);
  for (Vec* v : {&z_, &dz_, &r_, &r_work_, &z_work_}) v->setZero(nz_);
  for (Vec* v : {&lambda_kick_, &lambda_end_, &lambda_out_, &res_m_}) v->setZero(m_);
  rhs_kkt_.setZero(n_ + m_);
  sol_kkt_.setZero(n_ + m_);
  A_k_.setZero(m_, n_);
  A_jac_.setZero(m_, n_);
  J_.setZero(nz_, nz_);
  kkt_.setZero(n_ + m_, n_ + m_);
  lu_ = Eigen::PartialPivLU<Mat>(nz_);
  kkt_lu_ = Eigen::PartialPivLU<Mat>(n_ + m_);

  // p_0, A(q0) and the continuous multiplier at (q0, qd0): [M A^T; A 0] [qdd; -lambda] = [F - c; -Adot qd].
  q_ = y_.head(n_);
  qd_ = y_.tail(n_);
  model_->evaluate(t_, q_, qd_, kDynamics | kMomentum, *ws_, terms_);
  ++stats_.rhs_evals;
  p_k_ = terms_.p;
  A_k_ = terms_.A;
  kkt_.topLeftCorner(n_, n_) = terms_.M;
  kkt_.topRightCorner(n_, m_) = terms_.A.transpose();
  kkt_.bottomLeftCorner(m_, n_) = terms_.A;
  kkt_lu_.compute(kkt_);
  if (!well_conditioned(pivot_ratio(kkt_lu_.matrixLU().diagonal())))
    throw NumericalFailure(name() + ": singular KKT matrix [M A^T; A 0] at the initial state (dependent "
                           "constraints or singular M)");
  rhs_kkt_.head(n_) = terms_.F - terms_.c;
  rhs_kkt_.tail(m_) = -terms_.Adot_qd;
  sol_kkt_ = kkt_lu_.solve(rhs_kkt_);
  lambda_end_ = -sol_kkt_.tail(m_);
  lambda_kick_ = lambda_end_;
  lambda_out_ = lambda_end_;
  lambda_anchor_ = lambda_end_;
  t_anchor_ = t_;
  max_velocity_residual_ = max_abs(terms_.A * qd_);
  max_discrete_residual_ = 0;

  prev_.keep(t_, y_, f_);
}

void MidpointDiscreteMechanics::do_reset_state() {
  // The state was replaced: momentum and A at the new (q, qd); the carried multiplier stays the best guess.
  q_ = y_.head(n_);
  qd_ = y_.tail(n_);
  model_->evaluate(t_, q_, qd_, kMomentum | kConstraintJacobian, *ws_, terms_);
  ++stats_.rhs_evals;
  p_k_ = terms_.p;
  A_k_ = terms_.A;
  jac_valid_ = false;
}

void MidpointDiscreteMechanics::residual(double h, const Vec& z, Vec& r) {
  // The unknown is the displacement dq = q_{k+1} - q_k, not q_{k+1}: v_m = dq/h then carries no
  // cancellation error of order eps |q| / h, which would show in the velocities of a long run.
  const auto dq = z.head(n_);
  qm_ = q_ + 0.5 * dq;
  vm_ = dq / h;
  model_->evaluate(t_ + 0.5 * h, qm_, vm_, kLagrangianGradient | kMomentum | kForce | kConstraintJacobian, *ws_,
                   terms_);
  ++stats_.rhs_evals;
  r.head(n_) = h * kick_ + (0.5 * h * h) * (terms_.dL_dq + terms_.F) - h * terms_.p;
  if (nz_ > n_) {
    // The unknown part of the kick, h * h/2 A_k^T lambda_k, and the discrete constraint.
    r.head(n_).noalias() += (0.5 * h * h) * (A_k_.transpose() * z.tail(m_));
    r.tail(m_).noalias() = terms_.A * dq;
  }
}

void MidpointDiscreteMechanics::update_jacobian(double h) {
  // Forward differences in dq (the increment actually represented, as finite_difference_jacobian.cpp), on
  // the scale of the whole displacement; r_ holds the residual at z_.
  if (nz_ > n_) A_jac_ = terms_.A;  // A(q_m) at z_, from the residual just evaluated
  z_work_ = z_;
  const double size = std::max(z_.head(n_).lpNorm<Eigen::Infinity>(), 1e-8);
  for (int j = 0; j < n_; ++j) {
    const double delta = std::sqrt(kEps) * std::max(size, std::abs(z_[j]));
    z_work_[j] = z_[j] + delta;
    const double step = z_work_[j] - z_[j];
    residual(h, z_work_, r_work_);
    J_.col(j) = (r_work_ - r_) / step;
    z_work_[j] = z_[j];
  }
  if (nz_ > n_) {
    J_.topRightCorner(n_, m_) = (0.5 * h * h) * A_k_.transpose();
    J_.bottomRightCorner(m_, m_).setZero();
  }
  lu_.compute(J_);
  ++stats_.jacobian_evals;
  jac_valid_ = jac_fresh_ = true;
  h_jac_ = h;
}

bool MidpointDiscreteMechanics::solve_step(double h) {
  auto fail = [this](const char* why) {
    failure_ = why;
    return false;
  };
  // Predictor: dq = h qd + h^2/2 qdd from the end-point derivative f_ = (qd, qdd), O(h^3) off; lambda_k as
  // given.
  z_.head(n_) = h * f_.head(n_) + (0.5 * h * h) * f_.tail(n_);
  if (nz_ > n_) z_.tail(m_) = lambda_kick_;
  double dn_old = 0;
  bool converged = false;
  theta_ = 0;  // the rate of this step's Newton (0 when the first increment is already at round-off)
  for (int k = 0; k <= kMaxNewtonIterations; ++k) {
    residual(h, z_, r_);
    if (converged) return true;  // terms_ hold the model at the accepted q_{k+1}
    if (k == kMaxNewtonIterations) break;
    if (!r_.allFinite()) return fail("the residual is not finite");
    if (!jac_valid_ || h != h_jac_) {
      update_jacobian(h);
    } else if (k == 0 && nz_ > n_) {
      // dla reusing an older Jacobian: its exact multiplier columns h^2/2 A(q_k)^T and the leading part
      // A(q_m) of the constraint rows move with q from step to step; bring them up to date (one LU of
      // size n + m, cheap against the model evaluations), which keeps Newton's rate at that of the
      // unconstrained part.
      J_.topRightCorner(n_, m_) = (0.5 * h * h) * A_k_.transpose();
      J_.bottomLeftCorner(m_, n_) += terms_.A - A_jac_;
      A_jac_ = terms_.A;
      lu_.compute(J_);
    }
    if (!well_conditioned(pivot_ratio(lu_.matrixLU().diagonal()))) {
      jac_valid_ = false;
      return fail("singular Newton matrix");
    }
    dz_ = lu_.solve(r_);
    z_ -= dz_;
    ++stats_.newton_iterations;
    // The increment in units of eps |dq|_inf.
    const double size = z_.head(n_).lpNorm<Eigen::Infinity>();
    const double step = dz_.head(n_).lpNorm<Eigen::Infinity>();
    if (!std::isfinite(step)) return fail("the Newton increment is not finite");
    const double dn = step == 0 ? 0.0 : step / (kEps * std::max(size, std::numeric_limits<double>::min()));
    if (dn <= kRoundoff) {
      converged = true;
      continue;
    }
    if (k > 0) {
      const double theta = dn / dn_old;
      if (theta > 0.5 && dn <= kStagnation) {  // at the noise floor of the residual: not a rate of Newton
        converged = true;
        continue;
      }
      theta_ = theta;
      if (!(theta_ < 0.99)) return fail("Newton diverges (rate >= 0.99)");
      // The remaining iterations cannot reach the noise floor at this rate.
      if (dn * std::pow(theta_, kMaxNewtonIterations - 1 - k) > kStagnation) return fail("Newton converges too slowly");
    }
    dn_old = dn;
  }
  return fail("Newton did not converge in 12 iterations");
}

void MidpointDiscreteMechanics::legendre_onto_constraint(const Vec& q, const Vec& p_minus, double h, Vec& qd,
                                                         Vec& lambda) {
  // p(q, qd) = M(q) qd + p(q, 0) is affine in qd: M qd - h/2 A^T lambda = p^- - p(q, 0), A qd = 0.
  model_->evaluate(step_end(), q, zero_, kMomentum | kConstraintJacobian, *ws_, terms_);
  ++stats_.rhs_evals;
  kkt_.topLeftCorner(n_, n_) = terms_.M;
  kkt_.topRightCorner(n_, m_) = terms_.A.transpose();
  kkt_.bottomLeftCorner(m_, n_) = terms_.A;
  kkt_lu_.compute(kkt_);
  if (!well_conditioned(pivot_ratio(kkt_lu_.matrixLU().diagonal())))
    throw NumericalFailure(name() + ": singular KKT matrix [M A^T; A 0] at the new position (dependent "
                           "constraints or singular M)");
  rhs_kkt_.head(n_) = p_minus - terms_.p;
  rhs_kkt_.tail(m_).setZero();
  sol_kkt_ = kkt_lu_.solve(rhs_kkt_);
  qd = sol_kkt_.head(n_);
  lambda = (-2.0 / h) * sol_kkt_.tail(m_);
}

bool MidpointDiscreteMechanics::do_step(double h) {
  // The known part of the first half kick: p_k (+ h/2 A_k^T lambda_k when lambda_k is carried).
  // lambda_k: nh_rattle's is the one of the previous step's second half kick; dla starts Newton from it.
  kick_ = p_k_;
  lambda_kick_ = lambda_end_;
  if (nz_ == n_ && m_ > 0) kick_.noalias() += (0.5 * h) * (A_k_.transpose() * lambda_kick_);
  bool ok = solve_step(h);
  if (!ok && !jac_fresh_) {  // a stale Jacobian may be the reason: one retry with a fresh one
    jac_valid_ = false;
    ok = solve_step(h);
  }
  jac_fresh_ = false;
  if (!ok) {
    // Halving stops being a remedy long before dt_min: end the run saying what failed.
    if (h < dt_ * kSmallestStepFraction) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3g", h);
      throw NumericalFailure(name() + ": Newton on the discrete equations failed at h = " + buf +
                             " (dt halved 20 times): " + failure_);
    }
    h_ = 0.5 * h;
    return false;
  }
  if (theta_ > kReuseTheta) jac_valid_ = false;

  // terms_ hold the model at the accepted (t_m, q_m, v_m): the discrete constraint and p^- = D2 L_d + f_d^+.
  dq_ = z_.head(n_);
  res_m_.noalias() = terms_.A * dq_;
  max_discrete_residual_ = std::max(max_discrete_residual_, max_abs(res_m_));
  p_minus_ = terms_.p + (0.5 * h) * (terms_.dL_dq + terms_.F);
  if (nz_ > n_) lambda_kick_ = z_.tail(m_);

  prev_.keep(t_, y_, f_);
  q_ += dq_;
  legendre_onto_constraint(q_, p_minus_, h, qd_, lambda_end_);
  p_k_ = p_minus_;
  p_k_.noalias() += (0.5 * h) * (terms_.A.transpose() * lambda_end_);
  A_k_ = terms_.A;
  res_m_.noalias() = A_k_ * qd_;
  max_velocity_residual_ = std::max(max_velocity_residual_, max_abs(res_m_));
  written_multiplier(prev_.t, step_end(), lambda_out_);

  y_.head(n_) = q_;
  y_.tail(n_) = qd_;
  eval_rhs(step_end(), y_, f_);
  h_ = recovered_step(h_, dt_);  // recover from a halving
  return true;
}

}  // namespace clm
