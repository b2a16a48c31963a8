// Vakonomic formulation [seed-004, "Vakonomic (variational axiomatic kind) model"]: the motion is an
// extremal of the action under the constraint Phi = A(q) qd = 0 (Lagrange's problem), i.e. the
// Euler-Lagrange equations of L - lambda_a Phi_a with lambda(t) an unknown function:
//
//   [L] = F + lambda_a [Phi_a] + lambdadot_a A_a^T,     A qd = 0,
//
// [f] = d/dt(df/dqd) - df/dq the Lagrangian derivative ([L] = M qdd + c) and [Phi_a] = C_a the row
// C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k (Model term kConstraintCurvature; zero for holonomic
// constraints). Differentiating A qd = 0 once gives the KKT structure with lambdadot as unknown:
//
//   [M  -A^T] [qdd      ]   [F - c + C^T lambda]
//   [A   e I] [lambdadot] = [-Adot qd          ],    e = 0 here,
//
// state y = (q, qd, lambda), one (n+m) LU solve per evaluation (formulations/saddle_point.hpp). lambda is part of the initial data
// (FormulationOptions::lambda0, zeros by default: the limit of added_mass started on the constraint).
// Sign convention: the same as kkt's M qdd + c = F + A^T lambda; for holonomic constraints C = 0, and
// the equations are kkt's with lambdadot in the place of lambda (the same motion for any lambda0).
// Baumgarte options apply to the constraint row as for kkt: -Adot qd - 2 alpha A qd - beta^2 h.
//
// The same system with compliance e = 1/N > 0 is added_mass in its multiplier form
// (added_mass_formulation.hpp), which is why the compliance is a constructor argument here.
#pragma once

#include "core/formulation.hpp"
#include "formulations/saddle_point.hpp"

namespace clm {

class VakonomicFormulation : public Formulation {
 public:
  // Throws InputError when lambda0 is given with a size other than m.
  VakonomicFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "vakonomic"; }
  bool vakonomic_motion() const override { return true; }
  int dimension() const override { return 2 * n_ + m_; }
  bool state_starts_with_q_qd() const override { return true; }
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  void rhs(double t, const Vec& y, Vec& dy) override;

 protected:
  // compliance e >= 0: the bottom-right block e I of the acceleration matrix.
  VakonomicFormulation(std::shared_ptr<const Model> model, FormulationOptions options, double compliance);
  void read_state(double t, const Vec& y, Observation& obs) override;

  double compliance_;
  unsigned terms_needed_;
  Vec q_, qd_, lambda_, qdd_, lambdadot_;

 private:
  SaddlePointWorkspace saddle_;
  ConstraintStabilization stabilization_;  // zero gains with compliance
  Vec force_;                              // F - c + C^T lambda
};

}  // namespace clm
