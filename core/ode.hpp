// The first-order ODE y' = f(t, y) a formulation presents to an integrator.
#pragma once

#include "core/types.hpp"

namespace clm {

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

  // The Jacobian-provider hook of the implicit integrators (IntegratorSettings::jacobian = "autodiff"):
  // a system that can differentiate its own rhs (ceres::Jet through a templated rhs, core/autodiff_ode.hpp;
  // the penalty formulation through Model::dynamics_derivatives) says so here and fills J = df/dy (n x n, already sized; no heap allocation) at (t, y).
  // Systems that do not are differentiated by finite differences (integrators/finite_difference_jacobian.hpp).
  virtual bool has_jacobian() const { return false; }
  virtual void jacobian(double /*t*/, const Vec& /*y*/, Mat& /*J*/) {
    throw InputError("this system provides no Jacobian; use jacobian = finite_difference");
  }
};

}  // namespace clm
