#include "formulations/added_mass_formulation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace clm {

namespace {

void require_positive_N(const FormulationOptions& o) {
  if (!(o.N > 0) || !std::isfinite(o.N))
    throw InputError("added_mass: option N must be a finite number > 0 (got " + std::to_string(o.N) + ")");
}

// The constructors check N before the base classes use it (compliance 1/N).
const FormulationOptions& checked(const FormulationOptions& o) {
  require_positive_N(o);
  return o;
}

}  // namespace

AddedMassFormulation::AddedMassFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), checked(options)), llt_(n_) {
  H_ = Mat::Zero(n_, n_);
  violation_ = Vec::Zero(m_);
  force_ = Vec::Zero(n_);
  terms_.C = Mat::Zero(m_, n_);
  model_terms_ = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintCurvature;
  requires_independent_constraints_ = false;  // M + N A^T A is positive definite whatever the rank of A
}

void AddedMassFormulation::solve_accelerations() {
  const double N = options_.N;
  violation_.noalias() = terms_.A * qd_;
  lambda_ = -N * violation_;  // = -mu, vakonomic convention
  // (M + N A^T A) qdd = F - c + C^T lambda - N A^T (Adot qd)
  H_ = terms_.M;
  H_.noalias() += N * (terms_.A.transpose() * terms_.A);
  force_ = terms_.F - terms_.c;
  force_.noalias() += terms_.C.transpose() * lambda_;
  force_.noalias() -= N * (terms_.A.transpose() * terms_.Adot_qd);
  if (!llt_.compute(H_))
    throw NumericalFailure("added_mass: Cholesky of M + N A^T A failed (not positive definite)");
  qdd_ = force_;
  llt_.solve_in_place(qdd_);
  if (!qdd_.allFinite()) throw NumericalFailure("added_mass: non-finite accelerations");
}

bool AddedMassFormulation::has_jacobian() const {
  if (!model_->has_dynamics_derivatives()) return false;
  try {
    return !wants_sparse_linear_algebra(options_, *model_, name(), has_sparse_path());
  } catch (const InputError&) {
    return false;
  }
}

void AddedMassFormulation::jacobian(double t, const Vec& y, Mat& J) {
  const int n = n_, m = m_;
  const double N = options_.N;
  if (!jac_ready_) {
    jac_deriv_ = model_->make_derivatives(/*constraint_bias=*/true);
    jac_dcurv_ = Mat::Zero(n, n);
    jac_cols_ = Mat::Zero(n, 2 * n);
    jac_dH_ = Mat::Zero(n, n);
    jac_dy_ = Vec::Zero(2 * n);
    jac_dlambda_ = Vec::Zero(m);
    jac_ready_ = true;
  }
  rhs(t, y, jac_dy_);  // terms_ (M, c, A, Adot qd, C), H_, lambda_, qdd_ at y
  model_->dynamics_derivatives(q_, qd_, *ws_, jac_deriv_);
  model_->curvature_force_derivative(q_, qd_, lambda_, *ws_, jac_dcurv_);
  const bool forced = model_->has_generalized_force();
  if (forced) model_->generalized_force_derivatives(t, q_, qd_, *ws_, jac_deriv_.dF_dq, jac_deriv_.dF_dqd);
  const DynamicsDerivatives& d = jac_deriv_;
  const Mat& A = terms_.A;
  for (int l = 0; l < n; ++l) {
    // d/dq_l: -dc + d(C^T lambda)|lambda + C^T dlambda - N dA^T (Adot qd) - N A^T d(Adot qd) - dH qdd.
    auto col = jac_cols_.col(l);
    col = -d.dc_dq.col(l) + jac_dcurv_.col(l);
    if (forced) col += d.dF_dq.col(l);
    jac_dH_ = d.dM[l];
    if (m > 0) {
      jac_dlambda_.noalias() = -N * (d.dA[l] * qd_);
      col.noalias() += terms_.C.transpose() * jac_dlambda_;
      col.noalias() -= N * (d.dA[l].transpose() * terms_.Adot_qd);
      col.noalias() -= N * (A.transpose() * d.dbias_dq.col(l));
      jac_dH_.noalias() += N * (d.dA[l].transpose() * A);
      jac_dH_.noalias() += N * (A.transpose() * d.dA[l]);
    }
    col.noalias() -= jac_dH_ * qdd_;
    // d/dqd_l: -dc + (dC/dqd_l)^T lambda + C^T dlambda - N A^T d(Adot qd); H does not depend on qd.
    auto col_v = jac_cols_.col(n + l);
    col_v = -d.dc_dqd.col(l);
    if (forced) col_v += d.dF_dqd.col(l);
    if (m > 0) {
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int a = 0; a < m; ++a) acc += lambda_[a] * (d.dA[l](a, j) - d.dA[j](a, l));
        col_v[j] += acc;
      }
      jac_dlambda_.noalias() = -N * A.col(l);
      col_v.noalias() += terms_.C.transpose() * jac_dlambda_;
      col_v.noalias() -= N * (A.transpose() * d.dbias_dqd.col(l));
    }
  }
  llt_.solve_in_place(jac_cols_);  // the factor of M + N A^T A the rhs() at y left
  if (!jac_cols_.allFinite()) throw NumericalFailure("added_mass: non-finite Jacobian");
  J.setZero();
  J.topRightCorner(n, n).setIdentity();
  J.bottomRows(n) = jac_cols_;
}

void AddedMassFormulation::read_state(double t, const Vec& y, Observation& obs) {
  AccelerationFormulation::read_state(t, y, obs);
  const double added = 0.5 * options_.N * violation_.squaredNorm();
  model_->evaluate(t, q_, qd_, kEnergy, *ws_, terms_);
  obs.extras.assign(1, terms_.energy() + added);
}

AddedMassMultiplierFormulation::AddedMassMultiplierFormulation(std::shared_ptr<const Model> model,
                                                               FormulationOptions options)
    : VakonomicFormulation(std::move(model), checked(options), 1.0 / options.N) {}

void AddedMassMultiplierFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  model_->evaluate(0.0, q, qd, kConstraintJacobian, *ws_, terms_);
  y.resize(2 * n_ + m_);
  y.head(n_) = q;
  y.segment(n_, n_) = qd;
  y.tail(m_) = -options_.N * (terms_.A * qd);
}

void AddedMassMultiplierFormulation::read_state(double t, const Vec& y, Observation& obs) {
  VakonomicFormulation::read_state(t, y, obs);
  model_->evaluate(t, obs.q, obs.qd, kConstraintJacobian | kEnergy, *ws_, terms_);
  const Vec violation = terms_.A * obs.qd;
  const double residual = (obs.lambda + options_.N * violation).norm() / std::max(1.0, obs.lambda.norm());
  obs.extras = {terms_.energy() + 0.5 * options_.N * violation.squaredNorm(), residual};
}

std::unique_ptr<Formulation> make_added_mass(std::shared_ptr<const Model> model, const FormulationOptions& options) {
  if (options.added_mass_form == "direct") return std::make_unique<AddedMassFormulation>(std::move(model), options);
  if (options.added_mass_form == "multiplier")
    return std::make_unique<AddedMassMultiplierFormulation>(std::move(model), options);
  throw InputError("added_mass: option added_mass_form must be 'direct' or 'multiplier' (got '" +
                   options.added_mass_form + "')");
}

}  // namespace clm
