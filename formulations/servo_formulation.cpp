#include "formulations/servo_formulation.hpp"

#include <cmath>
#include <sstream>

#include "formulations/saddle_point.hpp"

namespace clm {

namespace {

// log |det| of an LLT factor's matrix: 2 sum log L_ii.
double log_det(const Eigen::LLT<Mat>& llt) {
  double s = 0;
  for (Eigen::Index i = 0; i < llt.rows(); ++i) s += std::log(llt.matrixLLT()(i, i));
  return 2 * s;
}

}  // namespace

std::string ServoFormulation::refuses(const Model& model) {
  if (model.m() == 0) return "problem " + model.name() + " has no constraints to realize";
  return {};
}

ServoFormulation::ServoFormulation(std::shared_ptr<const Model> model, FormulationOptions options)
    : AccelerationFormulation(std::move(model), options), llt_M_(n_), llt_SA_(m_), llt_SB_(m_), lu_R_(m_) {
  if (const std::string why = refuses(*model_); !why.empty()) throw InputError("servo: " + why);
  directions_ = model_->capability<ServoDirections>();
  if (options_.servo_direction != kServoConstraintDirection) {
    std::string known = kServoConstraintDirection;
    if (directions_) {
      const auto names = directions_->names();
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == options_.servo_direction) which_ = static_cast<int>(i);
        known += ", " + names[i];
      }
    }
    if (which_ < 0)
      throw InputError("servo: problem " + model_->name() + " has no servo direction '" + options_.servo_direction +
                       "' (formulation.servo_direction: " + known + ")");
    directions_ws_ = directions_->make_workspace();
  }
  B_ = Mat::Zero(m_, n_);
  X_ = Mat::Zero(n_, m_);
  Y_ = Mat::Zero(n_, m_);
  R_ = Mat::Zero(m_, m_);
  SA_ = Mat::Zero(m_, m_);
  SB_ = Mat::Zero(m_, m_);
  z_ = Vec::Zero(n_);
  gamma_ = Vec::Zero(m_);
}

bool ServoFormulation::factor() {
  llt_M_.compute(terms_.M);
  if (llt_M_.info() != Eigen::Success || !well_conditioned(pivot_ratio(llt_M_.matrixLLT().diagonal().cwiseAbs2())))
    return false;
  X_ = terms_.A.transpose();
  llt_M_.matrixL().solveInPlace(X_);
  if (which_ < 0) {  // B = A: Y = X
    B_ = terms_.A;
    Y_ = X_;
  } else {
    directions_->evaluate(which_, q_, *directions_ws_, B_);
    Y_ = B_.transpose();
    llt_M_.matrixL().solveInPlace(Y_);
  }
  R_.noalias() = X_.transpose() * Y_;
  SA_.noalias() = X_.transpose() * X_;
  SB_.noalias() = Y_.transpose() * Y_;
  lu_R_.compute(R_);
  llt_SA_.compute(SA_);
  llt_SB_.compute(SB_);
  // |det R| / sqrt(det SA det SB) in logarithms (no overflow for large m); 0 when B (or A) is rank deficient.
  realizability_ = 0;
  if (llt_SA_.info() == Eigen::Success && llt_SB_.info() == Eigen::Success) {
    double log_r = 0;
    for (Eigen::Index i = 0; i < m_; ++i) log_r += std::log(std::abs(lu_R_.matrixLU()(i, i)));
    realizability_ = std::exp(log_r - 0.5 * (log_det(llt_SA_) + log_det(llt_SB_)));
    if (!std::isfinite(realizability_)) realizability_ = 0;
  }
  return true;
}

std::string ServoFormulation::failure_text() const {
  std::ostringstream s;
  s << "the realizability condition A M^-1 B^T != 0 (seed 004, condition (*)) fails for problem " << model_->name()
    << " with servo_direction = " << options_.servo_direction << ": servo_realizability = " << realizability_
    << " < " << kServoRealizabilityFloor;
  return s.str();
}

void ServoFormulation::initial_state(const Vec& q, const Vec& qd, Vec& y) {
  AccelerationFormulation::initial_state(q, qd, y);  // A(q0) of full rank
  q_ = q;
  qd_ = qd;
  model_->evaluate(0.0, q_, qd_, kMassMatrix | kConstraintJacobian, *ws_, terms_);
  if (!factor())
    throw InputError("servo: mass matrix M of problem " + model_->name() + " is not positive definite at q0");
  if (!(realizability_ >= kServoRealizabilityFloor)) throw InputError("servo: " + failure_text() + " at q0");
}

void ServoFormulation::solve_accelerations() {
  if (!factor()) throw NumericalFailure("servo: Cholesky of the mass matrix M failed");
  if (!(realizability_ >= kServoRealizabilityFloor)) throw NumericalFailure("servo: " + failure_text());
  // lambda = (X^T Y)^-1 (gamma - X^T z), z = L^-1 (F - c).
  z_ = terms_.F - terms_.c;
  llt_M_.matrixL().solveInPlace(z_);
  constraint_acceleration_rhs(gamma_);
  gamma_.noalias() -= X_.transpose() * z_;
  lambda_ = lu_R_.solve(gamma_);
  // qdd = L^-T (z + Y lambda): M qdd = F - c + B^T lambda.
  z_.noalias() += Y_ * lambda_;
  llt_M_.matrixU().solveInPlace(z_);
  qdd_ = z_;
}

const std::vector<Mat>& ServoFormulation::reaction_derivatives(const DynamicsDerivatives& d) {
  if (which_ < 0) return d.dA;  // B = A
  directions_->derivative(which_, q_, *directions_ws_, dB_);
  return dB_;
}

void ServoFormulation::size_linearized_solver() {
  if (which_ >= 0) dB_.assign(n_, Mat::Zero(m_, n_));
  jac_z_ = Mat::Zero(n_, 2 * n_);
  jac_w_ = Mat::Zero(m_, 2 * n_);
  jac_v_ = Mat::Zero(m_, 2 * n_);
}

// [M -B^T; A 0][dqdd; dlambda] = [r1; r2] (jac_rhs_) on the rhs's factors at y, as solve_accelerations solves.
void ServoFormulation::solve_linearized() {
  jac_z_ = jac_rhs_.topRows(n_);
  llt_M_.matrixL().solveInPlace(jac_z_);
  jac_w_ = jac_rhs_.bottomRows(m_);
  jac_w_.noalias() -= X_.transpose() * jac_z_;
  lu_solve_into(lu_R_, jac_w_, jac_v_);
  jac_z_.noalias() += Y_ * jac_v_;
  llt_M_.matrixU().solveInPlace(jac_z_);
  if (!jac_z_.allFinite()) throw NumericalFailure("servo: singular realizability matrix in the Jacobian");
  jac_rhs_.topRows(n_) = jac_z_;
}

void ServoFormulation::read_state(double t, const Vec& y, Observation& obs) {
  AccelerationFormulation::read_state(t, y, obs);
  obs.extras = {realizability_};
}

}  // namespace clm
