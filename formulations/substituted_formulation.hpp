// The substitution mistake of [seed-002, "Common Mistake"], kept as a deliberately wrong formulation so the
// suite can show how wrong it is (docs/design.md section 1, last paragraph). The constraint A(q) qd = 0 is solved
// for the velocities the problem eliminates (its kEliminated member), qd_D = -A_D^-1 A_I qd_I, substituted
// into L, and the unconstrained Euler-Lagrange equations of L_c(q, qd_I) are applied in the remaining
// coordinates (formulations/substitution.hpp, the model's SubstitutionCapability):
//
//   M_c vd = S^T F - c_c,   qd = S(q) v,   v = qd_I,   M_c = S^T M S.
//
// The state is y = (q, v), of dimension 2n - m. For holonomic constraints this is Lagrange's method in
// independent coordinates and agrees with kkt (pendulum_polar eliminating rd); for nonholonomic ones it
// does not (the sleigh, the disk, the skate).
//
// The multiplier is not defined by these equations (there is no constraint force in them): lambda is
// written as NaN. The one extra, "chart_rcond" = 1/(|A|_1 |A_D^-1|_1), shows how close the run is to the
// chart singularity.
//
// Chart singularity: solving for qd_D divides by A_D (the sleigh: cos(theta)). The run fails with
// NumericalFailure("substituted: chart singularity: ...") when chart_rcond drops below kChartRcondFloor
// (1e-4) at any evaluation, or when det A_D changes sign between accepted steps (a step jumped across the
// singular set, where the equations are not defined). The driver records the run as "failed" with that
// message and keeps the samples up to there.
#pragma once

#include "core/formulation.hpp"
#include "formulations/saddle_point.hpp"
#include "formulations/substitution.hpp"

namespace clm {

class SubstitutedFormulation final : public Formulation {
 public:
  // Smallest admissible 1/(|A|_1 |A_D^-1|_1). For the sleigh it is |cos(theta)| / max(|sin|, |cos|, |b|), so
  // the run stops about 1e-4 rad before theta = pi/2; cond(M_c) grows like 1/rcond^2 (1e8 at the floor).
  // Measured: with a floor of 1e-8, dopri5 (rtol 1e-12) never reached it; runs ended in step-size underflow
  // close to theta = pi/2 after ~20 s of ever smaller steps each. At 1e-4 every sleigh run tried (theta0 = 0.4
  // to 1.4) ends with the chart message within ~400 steps.
  static constexpr double kChartRcondFloor = 1e-4;

  SubstitutedFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "substituted"; }
  int dimension() const override { return n_ + k_; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;
  bool after_step(double t, Vec& y) override;
  std::vector<std::string> extra_names() const override { return {"chart_rcond"}; }

  // Why a model cannot use this formulation (empty if it can).
  static std::string refuses(const Model& model);

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // Substituted terms at (q_, v_); throws at a chart singularity.
  void substitute(double t);
  [[noreturn]] void chart_failure(double det, double rcond) const;

  int k_;
  const SubstitutionCapability* substitution_;
  std::vector<int> eliminated_;
  std::string chart_condition_;  // the problem's name for det A_D, quoted in the chart message
  double det_sign_ = 0;  // sign of det A_D where the run started (0 until known)
  Vec q_, v_, qd_, vd_, reduced_f_;
  SubstitutedTerms sub_;
  CholeskySolver llt_;  // M_c
};

}  // namespace clm
