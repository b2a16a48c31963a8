#include "formulations/coordinate_projection.hpp"

#include <sstream>

namespace clm {

ProjectionMode projection_mode(const std::string& text) {
  if (text == "none") return ProjectionMode::kNone;
  if (text == "position") return ProjectionMode::kPosition;
  if (text == "velocity") return ProjectionMode::kVelocity;
  if (text == "both") return ProjectionMode::kBoth;
  throw InputError("projection must be none, position, velocity or both, got '" + text + "'");
}

CoordinateProjection::CoordinateProjection(std::shared_ptr<const Model> model, ProjectionMode mode, bool sparse)
    : model_(std::move(model)), mode_(mode), ws_(model_->make_workspace()), terms_(model_->make_terms()), sparse_(sparse) {
  const int n = model_->n(), m = model_->m();
  if (sparse_) {
    sterms_ = model_->make_sparse_terms();
    schur_ = std::make_unique<SparseSchurSolver>(sterms_, model_->sparse_block_size());
  } else {
    llt_M_ = Eigen::LLT<Mat>(n);
    llt_S_ = Eigen::LLT<Mat>(m);
    MinvAt_.resize(n, m);
    S_.resize(m, m);
  }
  q_.resize(n);
  zero_ = Vec::Zero(n);
  mu_.resize(m);
  dq_.resize(n);
  position_rows_ = model_->position_rows();
  if (partial_position_rows()) {  // mixed models are not built from bodies and joints: the dense path
    const int mh = position_rows_;
    llt_S_h_ = Eigen::LLT<Mat>(mh);
    MinvAt_h_.resize(n, mh);
    S_h_.resize(mh, mh);
    mu_h_.resize(mh);
  }
}

void CoordinateProjection::evaluate(double t, const Vec& q, unsigned terms) {
  if (sparse_) {
    model_->evaluate_sparse(t, q, zero_, terms & ~kConstraintRate, *ws_, sterms_);
    if ((terms & kMassMatrix) && !schur_->invert_mass(sterms_.M))
      throw NumericalFailure("projection: mass matrix is not positive definite");
    return;
  }
  model_->evaluate(t, q, zero_, terms, *ws_, terms_);
  if (terms & kMassMatrix) {
    llt_M_.compute(terms_.M);
    if (llt_M_.info() != Eigen::Success) throw NumericalFailure("projection: mass matrix is not positive definite");
  }
}

void CoordinateProjection::factor_position_rows() {
  if (!partial_position_rows()) return factor_constraints();
  const auto A_h = terms_.A.topRows(position_rows_);
  MinvAt_h_ = A_h.transpose();
  llt_M_.solveInPlace(MinvAt_h_);
  S_h_.noalias() = A_h * MinvAt_h_;
  llt_S_h_.compute(S_h_);
  if (llt_S_h_.info() != Eigen::Success || !well_conditioned(pivot_ratio(llt_S_h_.matrixLLT().diagonal().cwiseAbs2())))
    throw NumericalFailure("projection: A_h M^-1 A_h^T of the position rows is singular (they lost rank)");
}

void CoordinateProjection::factor_constraints() {
  if (sparse_) {
    if (schur_->factor_schur(sterms_.A)) return;
    // A singular position: S regularized by kSingularS of its largest diagonal entry (see the header).
    if (!model_->has_singular_positions() || !schur_->factor_schur_regularized(sterms_.A, kSingularS))
      throw NumericalFailure("projection: A M^-1 A^T is singular (the constraints lost rank)");
    ++stats_.pseudo_inverse_factorizations;
    return;
  }
  MinvAt_ = terms_.A.transpose();
  llt_M_.solveInPlace(MinvAt_);
  S_.noalias() = terms_.A * MinvAt_;
  llt_S_.compute(S_);
  pseudo_inverse_ = false;
  if (llt_S_.info() != Eigen::Success || !well_conditioned(pivot_ratio(llt_S_.matrixLLT().diagonal().cwiseAbs2()))) {
    if (!model_->has_singular_positions())
      throw NumericalFailure("projection: A M^-1 A^T is singular (the constraints lost rank)");
    // A singular position: the minimum-norm correction by S's pseudo-inverse (see the header).
    if (!eig_S_) {
      eig_S_ = std::make_unique<Eigen::SelfAdjointEigenSolver<Mat>>(S_.rows());
      eig_work_ = Vec::Zero(S_.rows());
    }
    eig_S_->compute(S_);
    if (eig_S_->info() != Eigen::Success)
      throw NumericalFailure("projection: A M^-1 A^T is singular and its eigen-decomposition failed");
    pseudo_inverse_ = true;
    ++stats_.pseudo_inverse_factorizations;
  }
}

bool CoordinateProjection::project(double t, Eigen::Ref<Vec> q, Eigen::Ref<Vec> qd) {
  if (mode_ == ProjectionMode::kNone || model_->m() == 0) return false;
  ++stats_.projections;
  bool changed = false;
  const bool position = (mode_ == ProjectionMode::kPosition || mode_ == ProjectionMode::kBoth) && position_rows_ > 0;
  const bool velocity = mode_ == ProjectionMode::kVelocity || mode_ == ProjectionMode::kBoth;
  if (position) {
    q_ = q;
    const double tol = 1e-14 * std::max(1.0, q_.lpNorm<Eigen::Infinity>());
    bool converged = false;
    for (int it = 0; it < 20; ++it) {
      // M is frozen at the unprojected q (the metric of the correction), A follows the iterate.
      evaluate(t, q_, it == 0 ? (kMassMatrix | kConstraintJacobian | kConstraintValue)
                              : (kConstraintJacobian | kConstraintValue));
      if (constraint_value().lpNorm<Eigen::Infinity>() <= tol) {
        converged = true;
        break;
      }
      factor_position_rows();  // only for a step still to take (the converged check needs h alone)
      position_correction(nullptr);
      q_ -= dq_;
      ++stats_.iterations;
    }
    if (!converged) {
      evaluate(t, q_, kConstraintValue);
      if (!(constraint_value().lpNorm<Eigen::Infinity>() <= 1e3 * tol)) {
        std::ostringstream s;
        s << "projection: Gauss-Newton did not reach h(q) = 0 (|h| = " << constraint_value().lpNorm<Eigen::Infinity>()
          << " after 20 iterations)";
        throw NumericalFailure(s.str());
      }
    }
    const double correction = (q_ - q).lpNorm<Eigen::Infinity>();
    stats_.max_position_correction = std::max(stats_.max_position_correction, correction);
    if (correction > 0) {
      q = q_;
      changed = true;
    }
  }
  if (velocity) {
    q_ = q;
    evaluate(t, q_, kMassMatrix | kConstraintJacobian | kConstraintRate);
    factor_constraints();
    multiply_A(qd, mu_);
    if (!sparse_ && terms_.b.size() > 0) mu_ += terms_.b;  // A qd + b(q, t) = 0 of a time-dependent problem
    solve_S(mu_);
    correction(mu_, dq_);
    const double correction = dq_.lpNorm<Eigen::Infinity>();
    stats_.max_velocity_correction = std::max(stats_.max_velocity_correction, correction);
    if (correction > 0) {
      qd -= dq_;
      changed = true;
    }
  }
  return changed;
}

void CoordinateProjection::project_error(double t, const Eigen::Ref<const Vec>& q, Eigen::Ref<Vec> eq,
                                         Eigen::Ref<Vec> eqd) {
  if (!projects()) return;
  const bool position = (mode_ == ProjectionMode::kPosition || mode_ == ProjectionMode::kBoth) && position_rows_ > 0;
  const bool velocity = mode_ == ProjectionMode::kVelocity || mode_ == ProjectionMode::kBoth;
  q_ = q;
  evaluate(t, q_, kMassMatrix | kConstraintJacobian);
  // All rows for the velocity block; the position rows' own factors only where they are not all the rows.
  if (velocity || (position && !partial_position_rows())) factor_constraints();
  if (position) {  // the normal component of the position rows only
    if (partial_position_rows()) factor_position_rows();
    const Eigen::Ref<const Vec> e(eq);
    position_correction(&e);
    eq -= dq_;
  }
  if (velocity) {
    multiply_A(eqd, mu_);
    solve_S(mu_);
    correction(mu_, dq_);
    eqd -= dq_;
  }
}

void CoordinateProjection::position_correction(const Eigen::Ref<const Vec>* x) {
  if (partial_position_rows()) {
    if (x) mu_h_.noalias() = terms_.A.topRows(position_rows_) * *x;
    else mu_h_ = terms_.h;
    llt_S_h_.solveInPlace(mu_h_);
    dq_.noalias() = MinvAt_h_ * mu_h_;
  } else {
    if (x) multiply_A(*x, mu_);
    else mu_ = constraint_value();
    solve_S(mu_);
    correction(mu_, dq_);
  }
}

void CoordinateProjection::multiply_A(const Eigen::Ref<const Vec>& x, Vec& y) const {
  if (sparse_)
    y.noalias() = sterms_.A * x;
  else
    y.noalias() = terms_.A * x;
}

void CoordinateProjection::solve_S(Vec& x) {
  if (sparse_) {
    schur_->solve_schur(x);
  } else if (pseudo_inverse_) {
    const Vec& ev = eig_S_->eigenvalues();  // ascending
    const double cut = kSingularS * std::max(ev.cwiseAbs().maxCoeff(), 1e-300);
    eig_work_.noalias() = eig_S_->eigenvectors().transpose() * x;
    for (Eigen::Index i = 0; i < ev.size(); ++i) eig_work_[i] = ev[i] > cut ? eig_work_[i] / ev[i] : 0.0;
    x.noalias() = eig_S_->eigenvectors() * eig_work_;
  } else {
    llt_S_.solveInPlace(x);
  }
}

void CoordinateProjection::correction(const Vec& mu, Vec& dq) {
  if (sparse_) {
    schur_->minv_at(sterms_.A, mu, dq);
  } else {
    dq.noalias() = MinvAt_ * mu;
  }
}

ProjectedSystem::ProjectedSystem(Formulation& formulation, ProjectionMode mode)
    : f_(formulation),
      n_(formulation.model().n()),
      projection_(formulation.model_ptr(), mode,
                  mode != ProjectionMode::kNone && formulation.model().m() > 0 &&
                      wants_sparse_linear_algebra(formulation.options(), formulation.model(), "projection", true)) {
  // Positions kept on h(q) = 0: the formulation may pass singular positions (core/formulation.hpp).
  f_.set_positions_projected((mode == ProjectionMode::kPosition || mode == ProjectionMode::kBoth) &&
                             formulation.model().holonomic());  // a mixed model's velocity rows are not held so
}

bool ProjectedSystem::after_step(double t, Vec& y) {
  bool changed = f_.after_step(t, y);
  if (!in_step_) changed = projection_.project(t, y.head(n_), y.segment(n_, n_)) || changed;
  return changed;
}

void ProjectedSystem::project_in_step(double t, Eigen::Ref<Vec> y, Vec* error) {
  projection_.project(t, y.head(n_), y.segment(n_, n_));
  if (error) projection_.project_error(t, y.head(n_), error->head(n_), error->segment(n_, n_));
}

std::string projection_refusal(const Formulation& formulation, ProjectionMode mode) {
  if (mode == ProjectionMode::kNone) return {};
  if (!formulation.state_starts_with_q_qd())
    return "projection needs a formulation whose state is (q, qd, ...); " + formulation.name() +
           " integrates other coordinates (use kkt, schur, penalty, added_mass, vakonomic or fernandez_bloch)";
  if (mode == ProjectionMode::kPosition && !formulation.model().holonomic() && !formulation.model().has_position_rows())
    return "projection = position needs position constraints h(q) = 0, but problem " + formulation.model().name() +
           " is nonholonomic, velocity rows only (A(q) qd + b = 0): use projection = velocity";
  return {};
}

}  // namespace clm
