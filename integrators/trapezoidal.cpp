#include "integrators/trapezoidal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "integrators/newton_iteration.hpp"
#include "integrators/constraint_hessian.hpp"

namespace clm {

namespace {

// The iteration is linear (an approximate tangent, and the multiplier update converges at
// 1/(1 + alpha h^2/4 sigma)), so it gets more iterations than the full-Newton methods' 10; each costs one
// model evaluation and one Cholesky of an n x n matrix.
constexpr int kMaxNewtonIterations = 30;
// Steps below dt / kMaxHalvings that still fail end the run (see do_step).
constexpr double kMaxHalvings = 16;

}  // namespace

std::string Trapezoidal::refuses_formulation(const Formulation& f) const {
  if (f.name() != "augmented_lagrangian")
    return "integrator trapezoidal is the index-3 augmented Lagrangian scheme ALI3-P and runs with formulation "
           "augmented_lagrangian (for an implicit order-2 method on the ODE of " + f.name() +
           " use implicit_midpoint)";
  if (!f.model().holonomic() && !f.model().mixed())
    return "integrator trapezoidal (ALI3-P, index 3) needs position constraints h(q) = 0; problem " + f.model().name() +
           " has Pfaffian constraints only (use augmented_lagrangian with dopri5 or radau5)";
  return {};
}

void Trapezoidal::do_initialize(const IntegratorSettings& s) {
  const Formulation* f = sys_->formulation();
  if (!f || f != sys_)
    throw InputError("integrator trapezoidal integrates the constrained system itself and needs formulation "
                     "augmented_lagrangian (without coordinate projection), not a bare ODE");
  if (const std::string why = refuses_formulation(*f); !why.empty()) throw InputError(why);
  model_ = &f->model();
  n_ = model_->n();
  m_ = model_->m();
  mh_ = model_->mixed() ? model_->position_rows() : m_;
  alpha_ = f->options().al_alpha;
  if (!(alpha_ > 0) || !std::isfinite(alpha_))
    throw InputError("integrator trapezoidal: formulation.al_alpha must be a finite number > 0");
  const std::string& tangent = f->options().al_tangent;
  if (tangent != "full" && tangent != "penalty")
    throw InputError("integrator trapezoidal: formulation.al_tangent must be full or penalty (got '" + tangent + "')");
  hessian_ = nullptr;
  hessian_ws_.reset();
  if (tangent == "full") {
    hessian_ = model_->capability<ConstraintHessian>();
    if (!hessian_)
      throw InputError("integrator trapezoidal: problem " + model_->name() +
                       " has no constraint Hessian for the full ALI3-P tangent (a model made without its "
                       "capabilities; use formulation.al_tangent = penalty)");
    hessian_ws_ = hessian_->make_workspace(t_, y_.head(model_->n()));
  }
  ws_ = model_->make_workspace();
  terms_ = model_->make_terms();
  sparse_ = wants_sparse_linear_algebra(f->options(), *model_, "integrator trapezoidal (ALI3-P)", true);
  if (sparse_ && mh_ < m_)
    throw InputError("integrator trapezoidal: the sparse path is for holonomic problems built from bodies and joints; "
                     "problem " + model_->name() + " is mixed (set formulation.linear_algebra = dense)");
  sparse_tangent_.reset();
  hessian_slot_.clear();
  if (sparse_) {
    sterms_ = model_->make_sparse_terms();
    sparse_tangent_ = std::make_unique<SparseAugmentedMass>(
        sterms_, hessian_ws_ ? hessian_ws_->entries : std::vector<std::pair<int, int>>{});
    if (hessian_ws_)
      for (auto [j, l] : hessian_ws_->entries) hessian_slot_.push_back(sparse_tangent_->slot(j, l));
  }
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_ = h_ = s.dt;
  newton_tol_ = newton_tolerance(rtol_);
  for (Vec* v : {&q0_, &qd0_, &qdd0_, &qdh_, &qddh_, &q1_, &qd1_, &qdd1_, &dq_, &res_, &sc_, &tmp_}) v->setZero(n_);
  for (Vec* v : {&lambda_star_, &lambda_star_prev_, &lambda_, &lambda_eff_, &g_}) v->setZero(m_);
  // The dense path's matrices (n x n) only when it is taken.
  const int dense_n = sparse_ ? 0 : n_;
  T_.setZero(dense_n, dense_n);
  llt_ = Eigen::LLT<Mat>(dense_n);
  ldlt_ = Eigen::LDLT<Mat>(dense_n);
  start_from_state();
}

void Trapezoidal::start_from_state() {
  // qdd from the formulation's rhs at the state (f_ = f(t, y) is current after initialize and reset_state),
  // lambda* = -lambda from its multipliers (minimum-norm for redundant constraints). Off the hot path.
  auto* f = dynamic_cast<Formulation*>(sys_);
  Observation obs;
  f->observe(t_, y_, obs);
  lambda_ = obs.lambda;
  lambda_star_ = -lambda_;
  lambda_star_prev_ = lambda_star_;
  q0_ = y_.head(n_);
  qd0_ = y_.tail(n_);
  qdd0_ = f_.tail(n_);
  prev_.keep(t_, y_, f_);
}

void Trapezoidal::do_reset_state() { start_from_state(); }

bool Trapezoidal::solve(double h) {
  const double beta = 0.25 * h * h * alpha_;
  // One scale for every coordinate, atol + rtol |q|_inf: a coordinate passing near 0 (four_bar's y) would
  // otherwise ask its increment for atol / 100, below what the multiplier updates' rounding (alpha times the
  // rounding of h) lets the iteration reach, and the step would fail.
  const double scale = atol_ + rtol_ * q0_.lpNorm<Eigen::Infinity>();
  sc_.setConstant(scale);
  // |h(q)| at the tolerance of q: h is in units of q (or q^2 for quadratic constraints of unit-sized
  // coordinates, as natural coordinates are). Not the 1% of the increments: on bricard a residual ~1e-12 in
  // the redundant direction contracts very slowly.
  h_tol_ = scale;
  for (int k = 0; k < kMaxNewtonIterations; ++k) {
    qd1_ = (2.0 / h) * q1_ + qdh_;
    qdd1_ = (4.0 / (h * h)) * q1_ + qddh_;
    evaluate(t_ + h, kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintValue | velocity_row_rate());
    ++stats_.rhs_evals;
    ++stats_.newton_iterations;
    const Vec& hq = constraint_residual(h);
    // lambda* += alpha h(q) after each update of q (none before the first iteration: lambda* is the last step's).
    if (k > 0) lambda_star_.noalias() += alpha_ * hq;
    // The constraint residual at this iterate: converged only when it is at the tolerance of q too. The
    // increments dq alone do not show it: after the first iteration they contract at Newton's rate while h(q)
    // is corrected only through lambda*, at ~1/(1 + alpha h^2/4 sigma) per iteration (measured on bricard at
    // dt = 1e-3: with the dq test alone, |h| grew from 1e-12 to 6e-4 in 60 steps and Newton then diverged).
    const double hn = hq.lpNorm<Eigen::Infinity>();
    // -(h^2/4) [M qdd + c - F + A^T (lambda* + alpha h)]: the penalty alpha h on top of lambda*, which at
    // k > 0 already holds this iterate's update (as [CCB-1997]: lambda*_{i+1} = lambda*_i + alpha h(q_{i+1}),
    // then the residual at q_{i+1} with lambda*_{i+1}); the tangent's (h^2/4) alpha A^T A is that penalty's.
    // (Without it at k > 0 the tangent over-corrects: measured a period-3 cycle of |h| at alpha dt^2/4 = 1e5.)
    lambda_eff_ = lambda_star_;
    lambda_eff_.noalias() += alpha_ * hq;
    residual(h);
    if (!factor(h, beta, hessian_ != nullptr)) return false;
    dq_ = res_;
    solve_in_place(dq_);
    q1_ += dq_;
    const double dn = weighted_rms_norm(dq_, sc_);
    if (!std::isfinite(dn)) return false;
    // Two nested iterations in one loop: Newton for q at fixed lambda* (contracting fast), and the multiplier
    // update, which moves q again by a jump each time; so the ratio of successive increments is not a Newton
    // rate (a rate test rejected converging steps on four_bar at alpha dt^2/4 = 1e5) and is not used.
    // Converged when both the increment and the constraint residual are within the tolerance.
    if (k >= 1 && dn <= newton_tol_ && hn <= h_tol_) {
      // The last update of q gets its multiplier update too: lambda* + alpha h(q_{n+1}) is the force at q_{n+1}.
      if (mh_ < m_) {  // the velocity rows at the last q's trapezoidal velocity
        qd1_ = (2.0 / h) * q1_ + qdh_;
        evaluate(t_ + h, kConstraintValue | kConstraintJacobian | velocity_row_rate());
      } else {
        evaluate(t_ + h, kConstraintValue);
      }
      lambda_star_.noalias() += alpha_ * constraint_residual(h);
      return true;
    }
  }
  return false;
}

bool Trapezoidal::do_step(double h) {
  qdh_ = (-2.0 / h) * q0_ - qd0_;
  qddh_ = (-4.0 / (h * h)) * q0_ - (4.0 / h) * qd0_ - qdd0_;
  q1_ = q0_ + h * qd0_ + (0.5 * h * h) * qdd0_;
  lambda_star_prev_ = lambda_star_;
  if (!solve(h)) {
    lambda_star_ = lambda_star_prev_;
    // Halving helps a Newton that failed on a nonlinear step, but it shrinks alpha h^2/4 and with it the
    // multiplier iteration's rate: after a few halvings the run ends, saying what to change.
    if (h < dt_ / kMaxHalvings) {
      std::ostringstream s;
      // (The driver appends the time.)
      s << "trapezoidal (ALI3-P): Newton on q and lambda* did not converge with steps down to h = "
        << h << " (alpha h^2/4 = " << 0.25 * alpha_ * h * h << "; a larger al_alpha or dt speeds up the iteration)";
      throw NumericalFailure(s.str());
    }
    h_ = 0.5 * h;
    return false;
  }
  // Projections at q_{n+1}: (M + P) qd = M qd*, (M + P) qdd = M qdd* - beta A^T Adot qd, P = beta A^T A.
  const double beta = 0.25 * h * h * alpha_;
  qd1_ = (2.0 / h) * q1_ + qdh_;
  qdd1_ = (4.0 / (h * h)) * q1_ + qddh_;
  // A moving constraint h(q, t) (no sparse terms then): its velocity constraint is A qd + b = 0, b = dh/dt.
  const bool moving = model_->time_dependent();
  evaluate(step_end(), kMassMatrix | kConstraintJacobian | (moving ? kConstraintRate : 0u));
  ++stats_.rhs_evals;
  if (!factor(h, beta, false))
    throw NumericalFailure("trapezoidal: Cholesky of M + (h^2/4) alpha A^T A failed at t = " +
                           std::to_string(step_end()) + " (M not positive definite)");
  mass_times(qd1_, tmp_);
  if (moving) subtract_At_times(beta, terms_.b, tmp_);
  qd1_ = tmp_;
  solve_in_place(qd1_);
  mass_times(qdd1_, tmp_);
  evaluate(step_end(), kConstraintBias);
  ++stats_.rhs_evals;
  subtract_At_times(beta, sparse_ ? sterms_.Adot_qd : terms_.Adot_qd, tmp_);
  qdd1_ = tmp_;
  solve_in_place(qdd1_);
  if (!q1_.allFinite() || !qd1_.allFinite() || !qdd1_.allFinite())
    throw NumericalFailure("trapezoidal: non-finite state at t = " + std::to_string(step_end()));

  prev_.keep(t_, y_, f_);
  y_.head(n_) = q1_;
  y_.tail(n_) = qd1_;
  f_.head(n_) = qd1_;
  f_.tail(n_) = qdd1_;
  q0_ = q1_;
  qd0_ = qd1_;
  qdd0_ = qdd1_;
  lambda_ = -lambda_star_;
  h_ = recovered_step(h_, dt_);  // recover from a halving
  return true;
}

unsigned Trapezoidal::velocity_row_rate() const {
  return mh_ < m_ && model_->time_dependent() ? kConstraintRate : 0u;
}

const Vec& Trapezoidal::constraint_residual(double h) {
  if (mh_ == m_) return constraint_value();
  // Position rows h(q); velocity rows (h/2)(A_v qd + b_v) at the trapezoidal qd: their penalty alpha h/2 (A_v qd +
  // b_v) adds (h^2/4) alpha A_v^T A_v to the tangent through dqd/dq = 2/h, the position rows' alpha A_h^T A_h
  // weight, so one tangent and one pair of projections serve both kinds of rows.
  const int mv = m_ - mh_;
  g_.head(mh_) = terms_.h;
  g_.tail(mv).noalias() = terms_.A.bottomRows(mv) * qd1_;
  if (terms_.b.size() == m_) g_.tail(mv) += terms_.b.tail(mv);
  g_.tail(mv) *= 0.5 * h;
  return g_;
}

void Trapezoidal::evaluate(double t, unsigned what) {
  if (sparse_)
    model_->evaluate_sparse(t, q1_, qd1_, what, *ws_, sterms_);
  else
    model_->evaluate(t, q1_, qd1_, what, *ws_, terms_);
}

void Trapezoidal::residual(double h) {
  // The same expression on ModelTerms (dense M, A) and SparseModelTerms (sparse M, A).
  auto index3_residual = [&](const auto& t) {
    res_.noalias() = t.M * qdd1_;
    res_ += t.c - t.F;
    res_.noalias() += t.A.transpose() * lambda_eff_;
  };
  if (sparse_)
    index3_residual(sterms_);
  else
    index3_residual(terms_);
  res_ *= -0.25 * h * h;
}

bool Trapezoidal::factor(double h, double beta, bool with_geometric_stiffness) {
  if (sparse_) {
    sparse_tangent_->assemble(sterms_, beta);
    if (with_geometric_stiffness)
      hessian_->add_weighted_entries(t_ + h, q1_, lambda_eff_, 0.25 * h * h, *hessian_ws_, hessian_slot_,
                                     sparse_tangent_->values());
    return sparse_tangent_->factorize();
  }
  T_ = terms_.M;
  T_.noalias() += beta * (terms_.A.transpose() * terms_.A);
  if (with_geometric_stiffness) {
    hessian_->add_weighted(t_ + h, q1_, lambda_eff_, 0.25 * h * h, *hessian_ws_, T_);
    ldlt_.compute(T_);
    use_llt_ = false;
    return ldlt_.info() == Eigen::Success;
  }
  // Without G the matrix is positive definite: Cholesky (the projections, al_tangent = penalty).
  llt_.compute(T_);
  use_llt_ = true;
  return llt_.info() == Eigen::Success;
}

void Trapezoidal::solve_in_place(Vec& x) {
  if (sparse_)
    sparse_tangent_->solve_in_place(x);
  else if (use_llt_)
    llt_.solveInPlace(x);
  else
    ldlt_.solveInPlace(x);
}

void Trapezoidal::mass_times(const Vec& x, Vec& y) const {
  if (sparse_)
    y.noalias() = sterms_.M * x;
  else
    y.noalias() = terms_.M * x;
}

void Trapezoidal::subtract_At_times(double s, const Vec& v, Vec& y) const {
  if (sparse_)
    y.noalias() -= s * (sterms_.A.transpose() * v);
  else
    y.noalias() -= s * (terms_.A.transpose() * v);
}

}  // namespace clm
