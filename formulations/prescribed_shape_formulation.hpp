// Prescribed shape [seed-000, eq. 2.16] (issue 13 item 1): an under-actuated mechanism whose actuated (shape)
// coordinates q_a(t) follow the run's [shape] schedule (core/shape_schedule.hpp), with the passive (body)
// coordinates q_p free. Per evaluation one (n + m) LU solve for the unknowns (qdd_p, F_a, lambda) of
//
//   M qdd + c = F + A^T lambda + E_a F_a,   A qdd + Adot qd = 0,   qdd_a = the schedule's acceleration,
//
// E_a the columns of the identity at the actuated coordinates: F_a is the generalized force the actuators
// must exert to keep the shape on schedule, and F_a . qd_a the power they spend (recorded as
// /actuator_force and /actuator_power, docs/design.md section 5). The sign convention is kkt's.
//
// State: y = (q_p, qd_p), the passive coordinates only (2 n_p). The shape is not integrated: q_a, qd_a, qdd_a
// are read from the schedule at the evaluation's t, so the shape is exact at every step and the integrator's
// error control acts only on what is integrated (a full (q, qd) state with q_a slaved would carry q_a
// components whose integration error the observation would have to overwrite). Consequently coordinate
// projection (which works on a (q, qd) state) does not apply to it, and it runs with the ODE integrators.
#pragma once

#include "core/formulation.hpp"
#include "formulations/saddle_point.hpp"

namespace clm {

class PrescribedShapeFormulation final : public Formulation {
 public:
  PrescribedShapeFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "prescribed_shape"; }
  // One line when the problem has no actuated coordinates (the registry's refusal).
  static std::string refuses(const Model& model);

  int dimension() const override { return 2 * np_; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  bool records_actuator_forces() const override { return true; }

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // Fills q_, qd_ from y and the schedule at t, and qdd_a_; evaluates the model and solves for
  // (qdd_p, F_a, lambda).
  void solve(double t, const Vec& y);

  int na_, np_;
  std::vector<int> passive_, actuated_;  // indices into q
  SquareLuSolver lu_;                    // (n + m) x (n + m): columns qdd_p, F_a, lambda
  Vec q_, qd_, qdd_, lambda_, force_;
  Vec qa_, qda_, qdda_;  // the schedule at t
  Vec rhs_;              // right-hand side, then the solution (qdd_p, F_a, lambda)
};

}  // namespace clm
