// Added-mass formulation: Kozlov's Theorem 2 [seed-004, "Added masses"]. The constraint is dropped and
// the Lagrangian gets the added kinetic energy of the forbidden velocity,
//
//   L_N = L + N/2 |Phi|^2,   Phi = A(q) qd,
//
// integrated unconstrained. Its Euler-Lagrange equations, with [f] = d/dt(df/dqd) - df/dq and
// [1/2 Phi_a^2] = Phidot_a A_a^T + Phi_a [Phi_a] (Phi linear in qd, so [Phi_a] = C_a holds no qdd;
// C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k is the model term kConstraintCurvature):
//
//   [L] + N (A qdd + Adot qd)^T A + N C^T (A qd) = F
//   <=> (M + N A^T A) qdd = F - c - N A^T (Adot qd) - C^T mu,      mu = N A qd.
//
// Written as [L] = F + lambda_a [Phi_a] + lambdadot_a A_a^T this is the vakonomic equation with
// lambda = -mu = -N A qd, which is how the multiplier estimate is reported (vakonomic sign convention;
// -> the vakonomic lambda as N -> inf with lambda(0) = 0, Theorem 2).
//
// Two equivalent forms (FormulationOptions::added_mass_form):
//  - "direct" (AddedMassFormulation): state (q, qd), one Cholesky of M + N A^T A per evaluation. The
//    matrix has condition ~ N, and the force -C^T mu multiplies the O(1/N) constraint violation A qd by
//    N, so the integrator's error in A qd is amplified N times.
//  - "multiplier" (AddedMassMultiplierFormulation): state (q, qd, lambda) with lambda = -N A qd carried
//    as a variable; lambdadot = -N (A qdd + Adot qd) turns the equations into the vakonomic KKT system
//    with compliance 1/N:  [M -A^T; A I/N] [qdd; lambdadot] = [F - c + C^T lambda; -Adot qd].
//    lambda + N A qd is a first integral (0 on the added-mass motion); extras: invariant_residual
//    = |lambda + N A qd| / max(1, |lambda|).
// Exact Jacobian of the direct form (jacobian = autodiff / auto; where the model has dynamics derivatives):
//   H dqdd = dF' - dH qdd,  dH = dM + N (dA^T A + A^T dA),  F' = F - c + C^T lambda - N A^T (Adot qd),
// lambda = -N A qd; d(C^T lambda)/dq at fixed lambda is Model::curvature_force_derivative (second derivatives of
// A), d/dqd of C is dA[l](a, j) - dA[j](a, l). auto takes it where kkt would (n >= 6, terms by autodiff).
// Extras (both forms): modified_energy = T + V + N/2 |A qd|^2, the energy of L_N (conserved when F = 0).
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "formulations/saddle_point.hpp"
#include "formulations/vakonomic_formulation.hpp"

namespace clm {

class AddedMassFormulation final : public AccelerationFormulation {
 public:
  // Throws InputError for N <= 0.
  AddedMassFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "added_mass"; }
  bool vakonomic_motion() const override { return true; }
  std::vector<std::string> extra_names() const override { return {"modified_energy"}; }

  bool has_jacobian() const override;
  void jacobian(double t, const Vec& y, Mat& J) override;
  bool own_jacobian_is_cheaper() const override { return has_jacobian() && exact_jacobian_is_cheaper(); }

 protected:
  void solve_accelerations() override;
  void read_state(double t, const Vec& y, Observation& obs) override;

 private:
  // The Jacobian's buffers, sized on its first call (once per run).
  DynamicsDerivatives jac_deriv_;
  Mat jac_dcurv_, jac_cols_, jac_dH_;
  Vec jac_dy_, jac_dlambda_;
  bool jac_ready_ = false;

  Mat H_;  // M + N A^T A
  Vec violation_, force_;
  CholeskySolver llt_;  // M + N A^T A
};

class AddedMassMultiplierFormulation final : public VakonomicFormulation {
 public:
  // Throws InputError for N <= 0.
  AddedMassMultiplierFormulation(std::shared_ptr<const Model> model, FormulationOptions options);

  std::string name() const override { return "added_mass"; }
  // lambda(0) = -N A(q0) qd0 (zero when started on the constraint); no rank condition needed.
  void initial_state(const Vec& q, const Vec& qd, Vec& y) override;
  std::vector<std::string> extra_names() const override { return {"modified_energy", "invariant_residual"}; }

 protected:
  void read_state(double t, const Vec& y, Observation& obs) override;
};

// Factory for the registry: picks the form named by options.added_mass_form; InputError for other names.
std::unique_ptr<Formulation> make_added_mass(std::shared_ptr<const Model> model, const FormulationOptions& options);

}  // namespace clm
