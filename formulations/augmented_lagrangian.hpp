// The augmented Lagrangian formulation at acceleration level [BGS-1988] (Bayo, Garcia de Jalon and Serna),
// as an ODE y = (q, qd) for any integrator. The constraint forces come from a penalty alpha on the
// stabilized acceleration constraint plus multipliers lambda* corrected by a fixed-point iteration, in
// Bayo's sign convention M qdd + c + A^T lambda* = F:
//
//   (M + alpha A^T A) qdd_i = F - c - A^T lambda*_i - alpha A^T g,   g = Adot qd + 2 xi omega (A qd + b) + omega^2 h
//   lambda*_{i+1} = lambda*_i + alpha (A qdd_i + g)
//
// (omega^2 h only for holonomic problems; b and the time derivatives in Adot qd only for time-dependent ones,
// h(q, t) and A qd + b(q, t) = 0, core/problem.hpp). Then M qdd_i + c - F = -A^T lambda*_{i+1} exactly, so the
// multiplier written is lambda = -lambda*_{i+1} in the suite's convention M qdd + c = F + A^T lambda
// (docs/design.md section 1) and qdd_i with it is an exact solution of the dynamics; only A qdd_i + g is
// left, shrinking by (I + alpha A M^-1 A^T)^-1 per iteration (about 1/(1 + alpha sigma) for sigma the
// smallest nonzero eigenvalue of A M^-1 A^T). M + alpha A^T A is positive definite whatever the rank of A,
// so redundant constraints need no special treatment: one Cholesky per evaluation, one pair of triangular
// solves per iteration. Each evaluation starts from lambda*_0 = 0, not from the last evaluation's value:
// the rhs is then a function of (t, y) alone (an integrator's stages and rejected steps do not leak into
// it), and every iterate stays in the range of A, so with redundant constraints the iteration tends to the
// minimum-norm multipliers, as kkt's and schur's (docs/design.md section 1). The stabilization terms vanish
// on the constraint manifold: the exact motion is kkt's.
//
// Cost of the penalty: M + alpha A^T A has condition number ~ alpha |A|^2 / |M|, so the tangential part of
// qdd carries a rounding error of order alpha eps relative (1e-9 at alpha = 1e7).
//
// Sparse path (problems built from bodies and joints, FormulationOptions::linear_algebra; docs/design.md
// "Sparse path"): the same iteration with M + alpha A^T A as a sparse L D L^T of fixed pattern
// (core/sparse_augmented_mass.hpp), O(n) per evaluation and allocation-free; redundant constraints included.
//
// Exact Jacobian (jacobian = autodiff / auto; AccelerationFormulation::saddle_jacobian): the derivative of the
// iteration's limit, which is kkt's motion with Baumgarte gains alpha = xi omega, beta = omega. Its linearized
// saddle-point system is solved by the same iteration on the factor of M + alpha A^T A the rhs left, so that
// redundant constraints need nothing special here either. Where the rhs stopped short of the limit (iterations
// exhausted) the Jacobian is that of the limit, which a Newton iteration tolerates. Not provided where kkt's is
// not (time-dependent problems, generalized forces, the sparse path).
//
// The trapezoidal integrator recognizes this formulation and runs the index-3 form with projections
// (ALI3-P [CCB-1997], integrators/trapezoidal.hpp) on the same model and options.
#pragma once

#include "formulations/acceleration_formulation.hpp"
#include "core/sparse_augmented_mass.hpp"
#include "formulations/saddle_point.hpp"

namespace clm {

class AugmentedLagrangianFormulation final : public AccelerationFormulation {
 public:
  // Throws InputError for alpha <= 0, xi < 0, omega < 0, iterations < 1 or tolerance < 0.
  AugmentedLagrangianFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "augmented_lagrangian"; }
  // Multiplier updates of the last evaluation (tests, diagnostics).
  int last_iterations() const { return last_iterations_; }

  bool has_jacobian() const override { return saddle_jacobian_available(); }
  void jacobian(double t, const Vec& y, Mat& J) override { saddle_jacobian(t, y, J); }
  // jacobian = auto takes it wherever it is available, unlike kkt's size rule: differences of this rhs carry its
  // al_alpha eps rounding divided by the step (~1e-9 / 1e-8, an O(0.1) error in J at al_alpha 1e7), so radau5
  // with them rejects steps: closed_chain(8), rtol 1e-8, 4,797 steps (1,204 rejected) and 338 ms against 1,923
  // (441) and 236 ms exact, four_bar 23.0 against 19.0 ms, the sleigh at parity (bench_integrators JacobianRun).
  bool own_jacobian_is_cheaper() const override { return has_jacobian(); }

  // The options check, shared with the trapezoidal integrator's ALI3-P (one line naming the option).
  static void validate(const FormulationOptions& o);

 protected:
  void solve_accelerations() override;
  bool has_sparse_path() const override { return true; }
  void make_sparse_solver() override;
  void solve_sparse() override;
  void stabilization_gains(double& alpha, double& beta2) const override {
    alpha = options_.al_xi * options_.al_omega;
    beta2 = model_->has_position_rows() ? options_.al_omega * options_.al_omega : 0.0;
  }
  void size_linearized_solver() override;
  void solve_linearized() override;

 private:
  std::unique_ptr<SparseAugmentedMass> sparse_mbar_;
  // The iteration itself, shared by both paths (augmented_lagrangian.cpp).
  template <class Terms, class Factor, class Solve>
  void iterate(const Terms& t, const Vec& force, Factor factor, Solve solve);
  CholeskySolver llt_;  // M + alpha A^T A
  Mat mbar_;
  Vec g_, base_, rhs_, r_, lambda_star_, dlambda_;
  int last_iterations_ = 0;
  // The Jacobian's iteration with 2n right-hand sides (solve_linearized).
  Mat jac_base_, jac_x_, jac_mu_, jac_update_;
};

}  // namespace clm
