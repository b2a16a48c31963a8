// dla: the discrete Lagrange-d'Alembert integrator for Pfaffian constraints A(q) qd = 0 [Cortes-Martinez-2001],
// [MP-2006], with the midpoint discrete Lagrangian and the midpoint discrete constraint
//   D2 L_d(q_{k-1}, q_k) + D1 L_d(q_k, q_{k+1}) + f_d^+ + f_d^- + h A(q_k)^T lambda_k = 0,
//   A(q_{k+1/2}) (q_{k+1} - q_k) = 0,   q_{k+1/2} = (q_k + q_{k+1})/2,
// solved for (q_{k+1}, lambda_k) by Newton (integrators/midpoint_discrete_mechanics.hpp): the discrete
// constraint holds to the Newton tolerance at every step (max_discrete_residual()). Order 2. A holonomic
// constraint is Pfaffian with A = dh/dq, so holonomic problems run too (h(q) then drifts at O(h^2)).
//
// The velocity. The two-step method advances positions only; qd_k, which the suite's state (q, qd) and its
// samples need, is the discrete Legendre transform p_k^- = D2 L_d(q_{k-1}, q_k) + f_d^+ completed by half the
// impulse at q_k and put on the constraint: qd_k = M^-1 (p_k^- + A(q_k)^T nu - p(q_k, 0)) with
// A(q_k) qd_k = 0 (one linear KKT solve). Why not qd_k = M^-1 p_k^- alone: p_k^- lacks half of the impulse
// h A^T lambda_k at q_k, so it is only first-order accurate and off the constraint. Completed and projected
// it is second-order accurate, satisfies A(q_k) qd_k = 0, and it differs from p_k^- only by an element of
// the range of A(q_k)^T, which the next step's multiplier absorbs: the position sequence is exactly the
// two-step method's, and the method is a one-step map of (q, qd) (a run started from any sample (q_k,
// qd_k) continues identically). On the vertical rolling disk this velocity is the exact one, so energy and
// the two angular velocities are kept to round-off (odelab's VerticalRollingDisk test, [sw-odelab]).
//
// The written multiplier of a step is lambda at its end t_{k+1}, extrapolated linearly from the
// second-order step-midpoint values (lambda_k + lambda_{k+1})/2 (lambda_{k+1} = 2 nu / h, the half impulse
// that completes the Legendre transform, is only first-order accurate by itself).
#pragma once

#include "integrators/midpoint_discrete_mechanics.hpp"

namespace clm {

class DiscreteLagrangeDalembert final : public MidpointDiscreteMechanics {
 public:
  std::string name() const override { return "dla"; }

 private:
  bool solves_for_kick_multiplier() const override { return true; }
  // lambda at t_{k+1} by linear extrapolation of the step-midpoint values (lambda_k + lambda_{k+1})/2, which
  // are second-order accurate at t_{k+1/2} (the end value lambda_{k+1} alone is first order); the first
  // step extrapolates from the continuous lambda(t0).
  void written_multiplier(double t_k, double t_k1, Vec& out) override {
    const double t_mid = 0.5 * (t_k + t_k1);
    const double s = (t_k1 - t_mid) / (t_mid - t_anchor_);
    out = 0.5 * (lambda_kick_ + lambda_end_);
    out += s * (out - lambda_anchor_);
    lambda_anchor_ = 0.5 * (lambda_kick_ + lambda_end_);
    t_anchor_ = t_mid;
  }
};

}  // namespace clm
