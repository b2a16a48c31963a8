#include "integrators/implicit_integrator.hpp"

#include "integrators/finite_difference_jacobian.hpp"

namespace clm {

void ImplicitIntegrator::initialize_newton(const IntegratorSettings& s) {
  // "auto": the system's own Jacobian where it has one and it was measured cheaper in CPU than differences.
  system_jacobian_ = s.jacobian == "autodiff" ||
                     (s.jacobian == "auto" && sys_->has_jacobian() && sys_->own_jacobian_is_cheaper());
  if (system_jacobian_ && !sys_->has_jacobian())
    throw InputError(name() + ": jacobian = autodiff, but this system provides no Jacobian of its own "
                              "(use jacobian = finite_difference)");
  const long n = y_.size();
  J_.setZero(n, n);
  y_work_.setZero(n);
  f_work_.setZero(n);
  jac_valid_ = jac_fresh_ = false;
  h_lu_ = 0;
}

void ImplicitIntegrator::update_jacobian() {
  if (system_jacobian_)
    sys_->jacobian(t_, y_, J_);
  else
    stats_.rhs_evals += finite_difference_jacobian(*sys_, t_, y_, f_, y_work_, f_work_, J_);
  ++stats_.jacobian_evals;
  jac_fresh_ = jac_valid_ = true;
  h_lu_ = 0;
}

}  // namespace clm
