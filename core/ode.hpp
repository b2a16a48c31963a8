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
};

}  // namespace clm
