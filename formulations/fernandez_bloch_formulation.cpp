#include "formulations/fernandez_bloch_formulation.hpp"

#include <cmath>
#include <sstream>

#include "formulations/acceleration_formulation.hpp"

namespace clm {


FernandezBlochFormulation::FernandezBlochFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : Formulation(std::move(model), options), saddle_(n_, m_), lu_(n_) {
  if (m_ == 0) throw InputError("fernandez_bloch: problem " + model_->name() + " has no constraints");
  if (model_->holonomic())
    throw InputError("fernandez_bloch: problem " + model_->name() +
                     " has holonomic constraints; the restricted Lagrangian (seed 003) is built for Pfaffian "
                     "(nonholonomic) constraints");
  // L~ is built from M and V alone (formulations/restricted_lagrangian.hpp): a term qd . a(q) would be dropped.
  if (model_->gyroscopic())
    throw InputError("fernandez_bloch: problem " + model_->name() +
                     " has a gyroscopic term qd . a(q) in its Lagrangian, which the restricted Lagrangian does "
                     "not carry");
  if (const auto* factory = model_->capability<RestrictedLagrangianFactory>()) restricted_ = factory->make();
  if (!restricted_)
    throw InputError("fernandez_bloch: model " + model_->name() + " supplies no restricted Lagrangian");
  rt_ = restricted_->make_terms();
  nh_terms_ = model_->make_terms();
  force_nh_.resize(n_);
  q_.resize(n_);
  qd_.resize(n_);
  qdd_.resize(n_);
  b_.resize(n_);
}

void FernandezBlochFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  require_full_rank(q);
  y.resize(2 * n_);
  y.head(n_) = q;
  y.tail(n_) = qd;
  restricted_->evaluate(q, qd, rt_);
  if (const double rcond = reciprocal_condition(rt_.M_tilde); !well_conditioned(rcond)) {
    std::ostringstream msg;
    msg << "fernandez_bloch: restricted mass matrix M~ is singular at q0 for problem " << model_->name()
        << " (reciprocal condition number " << rcond
        << "; M~ = diag(-X^T M X, S^T M S) in the frame [X S], so M is degenerate on the frame)";
    throw InputError(msg.str());
  }
  if (options_.initial_offset != 0) {
    const Vec along = rt_.X * Vec::Constant(m_, options_.initial_offset / std::sqrt(double(m_)));
    y.tail(n_) += along;
  }
}

void FernandezBlochFormulation::rhs(double t, const Vec& y, Vec& dy) {
  q_ = y.head(n_);
  qd_ = y.tail(n_);
  restricted_->evaluate(q_, qd_, rt_);
  model_->evaluate(t, q_, qd_, kForce, *ws_, terms_);
  b_ = terms_.F - rt_.c_tilde;
  lu_.matrix() = rt_.M_tilde;
  if (!well_conditioned(lu_.solve_in_place(b_)))
    throw NumericalFailure("fernandez_bloch: restricted mass matrix M~ became singular during the run");
  qdd_ = b_;
  if (!qdd_.allFinite()) throw NumericalFailure("fernandez_bloch: non-finite accelerations");
  dy.head(n_) = qd_;
  dy.tail(n_) = qdd_;
}

bool FernandezBlochFormulation::own_jacobian_is_cheaper() const {
  return has_jacobian() && exact_jacobian_is_cheaper(*model_);  // kkt's rule, never a timing at run time
}

void FernandezBlochFormulation::jacobian(double t, const Vec& y, Mat& J) {
  const int n = n_;
  if (!jac_sized_) {
    jac_dMt_.assign(n, Mat::Zero(n, n));
    jac_dc_dq_ = Mat::Zero(n, n);
    jac_dc_dqd_ = Mat::Zero(n, n);
    jac_dF_dq_ = Mat::Zero(n, n);
    jac_dF_dqd_ = Mat::Zero(n, n);
    jac_rhs_ = Mat::Zero(n, 2 * n);
    jac_x_ = Mat::Zero(n, 2 * n);
    jac_lu_ = Eigen::PartialPivLU<Mat>(n);
    jac_dy_ = Vec::Zero(2 * n);
    jac_sized_ = true;
  }
  rhs(t, y, jac_dy_);  // qdd_ and rt_ (M~) at y
  restricted_->derivatives(q_, qd_, jac_dMt_, jac_dc_dq_, jac_dc_dqd_);
  // b = F - c~: the generalized force's derivatives, where the problem has one.
  const bool forced = model_->has_generalized_force();
  if (forced) model_->generalized_force_derivatives(t, q_, qd_, *ws_, jac_dF_dq_, jac_dF_dqd_);
  for (int l = 0; l < n; ++l) {
    auto col = jac_rhs_.col(l);
    col = -jac_dc_dq_.col(l);
    if (forced) col += jac_dF_dq_.col(l);
    col.noalias() -= jac_dMt_[l] * qdd_;
  }
  jac_rhs_.rightCols(n) = -jac_dc_dqd_;
  if (forced) jac_rhs_.rightCols(n) += jac_dF_dqd_;
  jac_lu_.compute(rt_.M_tilde);
  lu_solve_into(jac_lu_, jac_rhs_, jac_x_);
  if (!jac_x_.allFinite()) throw NumericalFailure("fernandez_bloch: singular M~ in the Jacobian");
  J.setZero();
  J.topRightCorner(n, n).setIdentity();
  J.bottomRows(n) = jac_x_;
}

void FernandezBlochFormulation::nonholonomic(double t, const Vec& q, const Vec& qd, Vec& qdd, Vec& lambda) {
  // [M -A^T; A 0][qdd; lambda] = [F - c; -Adot qd] [seed-000, eq. 2.6], kkt's system without Baumgarte terms.
  model_->evaluate(t, q, qd, kDynamics, *ws_, nh_terms_);
  force_nh_ = nh_terms_.F - nh_terms_.c;
  qdd.resize(n_);
  lambda.resize(m_);
  if (!solve_saddle_point(nh_terms_, force_nh_, qd, 0.0, ConstraintStabilization{}, saddle_, qdd, lambda))
    throw NumericalFailure("kkt: singular KKT matrix (dependent constraints or singular M)");
}

void FernandezBlochFormulation::condition_residuals(double t, const Vec& q, const Vec& qd, Vec& cond1, Vec& cond2,
                                                    Vec& defect) {
  Vec qdd_nh, lambda;
  nonholonomic(t, q, qd, qdd_nh, lambda);
  condition_residuals(t, q, qd, qdd_nh, lambda, cond1, cond2, defect);
}

void FernandezBlochFormulation::condition_residuals(double t, const Vec& q, const Vec& qd, const Vec& qdd_nh,
                                                    const Vec& lambda, Vec& cond1, Vec& cond2, Vec& defect) {
  const Mat& A = nh_terms_.A;  // at (q, qd), left by nonholonomic()
  const Vec& F = nh_terms_.F;
  restricted_->evaluate(q, qd, rt_);
  const Vec qd_D = qd - rt_.X * (A * qd);
  ModelTerms curv = model_->make_terms();
  curv.C = Mat::Zero(m_, n_);
  model_->evaluate(t, q, qd_D, kConstraintCurvature, *ws_, curv);
  const Vec Ct_phi = curv.C.transpose() * rt_.phi;
  const Mat P_D = Mat::Identity(n_, n_) - A.transpose() * (A * A.transpose()).ldlt().solve(A);
  cond1 = P_D * Ct_phi;
  const Vec gamma_phi = rt_.MX.transpose() * qdd_nh + rt_.phi_dot_q;
  cond2 = gamma_phi + rt_.X.transpose() * Ct_phi - lambda;
  defect = rt_.M_tilde * qdd_nh + rt_.c_tilde - F;
}

void FernandezBlochFormulation::read_state(double t, const Vec& y, Observation& obs) {
  obs.q = y.head(n_);
  obs.qd = y.tail(n_);
  Vec qdd_nh;
  nonholonomic(t, obs.q, obs.qd, qdd_nh, obs.lambda);  // one reference solve per sample
  Vec c1, c2, d;
  condition_residuals(t, obs.q, obs.qd, qdd_nh, obs.lambda, c1, c2, d);
  obs.extras = {c1.norm(), c2.norm()};
}

}  // namespace clm
