// J = df/dy by forward-mode automatic differentiation (ceres::Jet) for an OdeSystem whose right-hand side
// is written once for a generic scalar. A system derives from AutoDiffOdeSystem<Derived, N> (N fixed, so
// that the Jets live on the stack: no heap allocation) and supplies
//
//   template <class T> void evaluate(double t, const Eigen::Matrix<T, N, 1>& y, Eigen::Matrix<T, N, 1>& dy) const;
//
// rhs() then runs it with T = double and jacobian() with T = ceres::Jet<double, N> seeded with the N unit
// directions: one evaluation gives all of J exactly (to round-off), where finite differences cost N
// evaluations and carry an O(sqrt(eps)) relative error. Implicit integrators use it with
// IntegratorSettings::jacobian = "autodiff".
//
// Formulations are double-only (Model::evaluate), so they cannot use this directly; the penalty formulation
// instead assembles J from Model::dynamics_derivatives (dM/dq, dA/dq by Jet; dc/dq, dc/dqd and a holonomic
// dA/dq by hyper-dual numbers, core/hyperdual.hpp, since c already holds first derivatives of M and V and
// Ceres 2.1's Jet<Jet> does not compile through Eigen reductions, core/taylor2.hpp).
#pragma once

#include <ceres/jet.h>

#include "core/ode.hpp"

namespace clm {

template <int N, class F>
void autodiff_jacobian(const F& evaluate, double t, const Vec& y, Mat& J) {
  static_assert(N > 0, "autodiff_jacobian needs a fixed dimension (stack-allocated Jets)");
  using Jet = ceres::Jet<double, N>;
  Eigen::Matrix<Jet, N, 1> yj, dyj;
  for (int i = 0; i < N; ++i) yj[i] = Jet(y[i], i);
  evaluate(t, yj, dyj);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) J(i, j) = dyj[i].v[j];
}

template <class Derived, int N>
class AutoDiffOdeSystem : public OdeSystem {
 public:
  int dimension() const override { return N; }
  void rhs(double t, const Vec& y, Vec& dy) override {
    Eigen::Matrix<double, N, 1> yf = y, dyf;
    self().evaluate(t, yf, dyf);
    dy = dyf;
  }
  bool has_jacobian() const override { return true; }
  void jacobian(double t, const Vec& y, Mat& J) override {
    autodiff_jacobian<N>([this](double tt, const auto& yy, auto& dd) { self().evaluate(tt, yy, dd); }, t, y, J);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace clm
