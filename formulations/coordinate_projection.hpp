// Coordinate projection after each accepted step ([formulation] projection = none | position | velocity |
// both; Hairer-Lubich-Wanner, GNI IV.4 and VII.2; Eich 1993): q is moved back onto h(q) = 0 (the position rows
// of holonomic and mixed problems) and qd onto A(q) qd = 0 (every row), each in the mass-matrix metric, i.e. the
// correction that changes the kinetic energy least:
//   position:  q <- q - M^-1 A^T (A M^-1 A^T)^-1 h(q), iterated (Gauss-Newton, A at the iterate, M frozen at
//              the unprojected q) until |h|_inf <= 1e-14 max(1, |q|_inf);
//   velocity:  qd <- qd - M^-1 A^T (A M^-1 A^T)^-1 A qd with M, A at the (projected) q: exact in one step.
// For a mixed problem the position step's A is the position rows' A_h = dh/dq (the velocity rows hold no
// positions), the velocity step's all rows.
// For time-dependent problems (core/problem.hpp) both at the step's time t: h(q, t) = 0 and A qd + b(q, t) = 0
// (A qd + b replaces A qd above).
// It applies to every formulation whose state starts with (q, qd) (Formulation::state_starts_with_q_qd) and
// to every integrator; ProjectedSystem wraps the formulation so that the driver sees the projection as the
// system's after_step, which makes the integrators drop cached derivatives (Integrator::reset_state).
// Every buffer is allocated at construction: no heap allocation per step.
// Sparse path (problems built from bodies and joints, formulation.linear_algebra as for kkt; docs/design.md
// "Sparse path"): M^-1 block by block and S = A M^-1 A^T as a fixed-pattern sparse L D L^T (the sparse schur
// solver's kernels), O(n) per iteration instead of the dense path's O(n^3): on A02 at 40 loops the projection
// was most of a kkt + projection run's time.
#pragma once

#include <memory>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "core/formulation.hpp"
#include "formulations/sparse_acceleration_solver.hpp"

namespace clm {

enum class ProjectionMode { kNone, kPosition, kVelocity, kBoth };
ProjectionMode projection_mode(const std::string& text);  // "none" | "position" | "velocity" | "both"

struct ProjectionStatistics {
  long projections = 0;          // steps projected (inside CVODE: also attempts its error test then rejects)
  long iterations = 0;           // Gauss-Newton iterations of the position projection, summed
  double max_position_correction = 0;  // max over steps of |dq|_inf
  double max_velocity_correction = 0;  // max over steps of |dqd|_inf
  long pseudo_inverse_factorizations = 0;  // S factored by its pseudo-inverse at a singular position (issue 39)
};

class CoordinateProjection {
 public:
  // sparse: take the sparse path (the model must have sparse terms; wants_sparse_linear_algebra decides).
  CoordinateProjection(std::shared_ptr<const Model> model, ProjectionMode mode, bool sparse = false);
  bool uses_sparse_path() const { return sparse_; }
  // Projects in place; true when q or qd changed. Throws NumericalFailure when A M^-1 A^T is singular or
  // Gauss-Newton does not reach the tolerance in 20 iterations (the step left the constraint too far).
  bool project(double t, Eigen::Ref<Vec> q, Eigen::Ref<Vec> qd);
  // The tangent-space part of a local error estimate (eq, eqd) at a projected q: each block that project()
  // corrects loses its component normal to the constraint in the same metric,
  // e <- e - M^-1 A^T (A M^-1 A^T)^-1 A e (eq: holonomic position projection; eqd: velocity projection).
  // For integrators that project inside their step (cvode: CVodeSetProjFn's error projection).
  void project_error(double t, const Eigen::Ref<const Vec>& q, Eigen::Ref<Vec> eq, Eigen::Ref<Vec> eqd);
  bool projects() const { return mode_ != ProjectionMode::kNone && model_->m() > 0; }
  const ProjectionStatistics& statistics() const { return stats_; }

 private:
  void evaluate(double t, const Vec& q, unsigned terms);  // model terms at q; the LLT of M when asked
  void factor_constraints();  // M^-1 A^T and the LLT of S = A M^-1 A^T from the current terms
  // The position step's: the same with A_h, the position rows of a mixed model, into the *_h_ buffers (a holonomic
  // model's position rows are all its rows: factor_constraints itself).
  void factor_position_rows();
  bool partial_position_rows() const { return position_rows_ > 0 && position_rows_ < model_->m(); }
  // dq_ = M^-1 A_h^T S_h^-1 r after factor_position_rows(), with r = A_h x (x given: an error's normal part) or
  // r = h(q) (x null: the Gauss-Newton step); A_h is all of A for a holonomic model.
  void position_correction(const Eigen::Ref<const Vec>* x);
  // Both paths: h(q), A x into mu_, mu_ := S^-1 mu_, dq_ = M^-1 A^T mu_.
  const Vec& constraint_value() const { return sparse_ ? sterms_.h : terms_.h; }
  void multiply_A(const Eigen::Ref<const Vec>& x, Vec& y) const;
  void solve_S(Vec& x);
  void correction(const Vec& mu, Vec& dq);

  std::shared_ptr<const Model> model_;
  ProjectionMode mode_;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  bool sparse_ = false;
  SparseModelTerms sterms_;
  std::unique_ptr<SparseSchurSolver> schur_;  // M^-1 by blocks, S = A M^-1 A^T and its L D L^T (the schur path's)
  Eigen::LLT<Mat> llt_M_, llt_S_;
  Mat MinvAt_, S_;
  Vec q_, zero_, mu_, dq_;
  int position_rows_ = 0;  // Model::position_rows
  Eigen::LLT<Mat> llt_S_h_;  // the position rows of a mixed model: S_h = A_h M^-1 A_h^T
  Mat MinvAt_h_, S_h_;
  Vec mu_h_;
  ProjectionStatistics stats_;
  // At a singular position (a problem with kSingularPositions) S loses rank. The dense path then applies its
  // pseudo-inverse, the eigenvalues of S below kSingularS of the largest dropped (their directions are those in
  // which the constraints are dependent there; 1e-12 on S is a singular value of A near 1e-6 of the largest,
  // above S's rounding); the sparse path factors S + kSingularS max_i S_ii I instead (Tikhonov, the same cut
  // made smooth, without a dense eigen-decomposition). The minimum-norm correction (issue 39), counted in
  // pseudo_inverse_factorizations; the eigen-solver is made at the first such factorization.
  static constexpr double kSingularS = 1e-12;
  bool pseudo_inverse_ = false;
  std::unique_ptr<Eigen::SelfAdjointEigenSolver<Mat>> eig_S_;
  Vec eig_work_;
};

// The formulation seen by the driver, with the projection as its after_step (after the formulation's own),
// or, for an integrator that takes it (OdeSystem::set_projection_in_step; cvode with BDF), inside the
// integrator's step through project_in_step. The statistics count every projection either way (inside
// CVODE also those of step attempts its error test then rejects).
class ProjectedSystem final : public OdeSystem {
 public:
  ProjectedSystem(Formulation& formulation, ProjectionMode mode);
  int dimension() const override { return f_.dimension(); }
  void rhs(double t, const Vec& y, Vec& dy) override { f_.rhs(t, y, dy); }
  bool after_step(double t, Vec& y) override;
  std::string failure_context(double t, const Vec& y) override { return f_.failure_context(t, y); }
  bool has_projection() const override { return projection_.projects(); }
  void set_projection_in_step(bool on) override { in_step_ = on && projection_.projects(); }
  void project_in_step(double t, Eigen::Ref<Vec> y, Vec* error) override;
  bool has_jacobian() const override { return f_.has_jacobian(); }
  bool own_jacobian_is_cheaper() const override { return f_.own_jacobian_is_cheaper(); }
  void jacobian(double t, const Vec& y, Mat& J) override { f_.jacobian(t, y, J); }
  const ProjectionStatistics& statistics() const { return projection_.statistics(); }
  bool uses_sparse_path() const { return projection_.uses_sparse_path(); }
  // The wrapped formulation (integrators that read the Model through it: verlet).
  const Formulation* formulation() const override { return &f_; }

 private:
  Formulation& f_;
  int n_;
  CoordinateProjection projection_;
  bool in_step_ = false;  // the integrator projects inside its step; after_step does not
};

// Why `projection = mode` cannot run with this formulation on this model, or "" when it can: the state must
// start with (q, qd), and position projection needs holonomic constraints.
std::string projection_refusal(const Formulation& formulation, ProjectionMode mode);

}  // namespace clm
