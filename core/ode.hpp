// The first-order ODE y' = f(t, y) a formulation presents to an integrator.
#pragma once

#include <string>

#include "core/types.hpp"

namespace clm {

class Formulation;

class OdeSystem {
 public:
  virtual ~OdeSystem() = default;
  virtual int dimension() const = 0;
  // The hot path. Throws NumericalFailure when the system cannot be evaluated (singular matrix, chart
  // singularity); the run then ends with status "failed".
  virtual void rhs(double t, const Vec& y, Vec& dy) = 0;
  // Called after every accepted step; may change y (projection onto the constraints, re-picking a
  // coordinate partition). Returns true when it did, so that integrators drop cached derivatives.
  virtual bool after_step(double /*t*/, Vec& /*y*/) { return false; }
  // What the system can say about the state where a run failed or diverged (y: the last accepted state),
  // appended to the run's message by the driver; "" when nothing. Formulations name a singular position of
  // the constraints there (core/formulation.hpp). Off the hot path; may allocate.
  virtual std::string failure_context(double /*t*/, const Vec& /*y*/) { return {}; }

  // Projection inside the integrator's step. A system whose after_step projects onto an invariant manifold
  // (ProjectedSystem, formulations/coordinate_projection.hpp) says so here and can hand that projection to an
  // integrator that applies it within its own step and corrects its own history and error estimate (cvode
  // with BDF: CVodeSetProjFn) instead of being restarted by reset_state after every step. Integrator::
  // initialize hands it back (set_projection_in_step(false)); an integrator that takes it sets true, and
  // after_step then leaves the projection to the integrator's calls of project_in_step.
  virtual bool has_projection() const { return false; }
  virtual void set_projection_in_step(bool /*on*/) {}
  // Projects y onto the manifold in place; when `error` is given, replaces it by its projection onto the
  // manifold's tangent space at the projected y (the part of a local error estimate that the projection
  // keeps). No heap allocation; NumericalFailure when the projection fails.
  virtual void project_in_step(double /*t*/, Eigen::Ref<Vec> /*y*/, Vec* /*error*/) {}

  // The formulation behind this system (itself for a Formulation; the wrapped one for ProjectedSystem), or
  // nullptr for a bare ODE: how the methods that integrate the mechanical system (rattle, verlet, dla, ida;
  // integrators/mechanical_system.hpp) reach the Model without the integrators layer seeing formulations/.
  virtual const Formulation* formulation() const { return nullptr; }

  // The Jacobian-provider hook of the implicit integrators (IntegratorSettings::jacobian = "autodiff"):
  // a system that can differentiate its own rhs (ceres::Jet through a templated rhs, core/autodiff_ode.hpp;
  // the penalty formulation through Model::dynamics_derivatives) says so here and fills J = df/dy (n x n, already sized; no heap allocation) at (t, y).
  // Systems that do not are differentiated by finite differences (integrators/finite_difference_jacobian.hpp).
  virtual bool has_jacobian() const { return false; }
  // IntegratorSettings::jacobian = "auto": whether the system's own Jacobian costs less CPU per run than
  // forward differences, by a fixed rule from bench_integrators' JacobianRun (never a timing at run time; the
  // rule and its numbers are in docs/design.md, "The exact Jacobian"). Only asked when has_jacobian().
  virtual bool own_jacobian_is_cheaper() const { return false; }
  virtual void jacobian(double /*t*/, const Vec& /*y*/, Mat& /*J*/) {
    throw InputError("this system provides no Jacobian; use jacobian = finite_difference");
  }
};

}  // namespace clm
