// nh_rattle: the nonholonomic RATTLE of Ferraro, Iglesias and Martin de Diego [FIMdD-2008], [FIMdD-2009],
// the one-step form of their geometric nonholonomic integrator
//   D2 L_d(q_{k-1}, q_k) + D1 L_d(q_k, q_{k+1}) + f_d^+ + f_d^- + h A(q_k)^T lambda_k = 0,
//   the average of the two discrete momenta at q_k, p_k = (p_k^- + p_k^+)/2, on the constraint:
//   A(q_k) M(q_k)^-1 (p_k - p(q_k, 0)) = 0,
// with the midpoint discrete Lagrangian. In one-step form (integrators/midpoint_discrete_mechanics.hpp):
//   p_k + h/2 A(q_k)^T lambda_k + D1 L_d(q_k, q_{k+1}) + f_d^- = 0        (n equations for q_{k+1})
//   p_{k+1} = D2 L_d(q_k, q_{k+1}) + f_d^+ + h/2 A(q_{k+1})^T lambda_{k+1},  A(q_{k+1}) qd_{k+1} = 0,
// where lambda_k is the multiplier of the second half kick of the previous step (both half kicks at a node
// share it, as in the two-step form); at t0 it is the continuous multiplier of the KKT system at (q0, qd0).
// So A(q_k) qd_k = 0 holds to round-off at every step (max_velocity_residual()), no discretization of
// the constraint is needed, and the only nonlinear solve is the n-dimensional discrete Euler-Lagrange
// equation. Order 2 [FIMdD-2009]. The written multiplier of a step is lambda_{k+1}.
//
// Carrying lambda_k makes it a two-step method in disguise (the nonholonomic SHAKE of [FIMdD-2009]): it has
// a parasitic mode, lambda alternating in sign, which follows the time-reversed flow. Where that flow is
// unstable it grows: on the Chaplygin sleigh like exp(beta c t), the rate at which the sleigh's reversed
// motion leaves u = c (measured in tests/dla_test.cpp). At h = 0.1 it spoils the run by t ~ 15 (relative
// energy error 0.96 at t = 20, dla's 9e-5); at h = 0.01 the error at t = 10 is still O(h^2) (8.8e-5, dla's
// 2.1e-5). dla has no such mode.
#pragma once

#include "integrators/midpoint_discrete_mechanics.hpp"

namespace clm {

class NonholonomicRattle final : public MidpointDiscreteMechanics {
 public:
  std::string name() const override { return "nh_rattle"; }

 private:
  bool solves_for_kick_multiplier() const override { return false; }
  void written_multiplier(double, double, Vec& out) override { out = lambda_end_; }
};

}  // namespace clm
