// The model contracts (`clmbench check`, app/check_command.cpp): what every problem of the zoo is tested for
// (tests/model_test.cpp and the mechanism-file tests), as checks a researcher runs on a new mechanism, zoo
// problem or mechanism file, in seconds. Each check measures one figure, compares it with a tolerance and gives
// a verdict: ok, FAIL, or skipped ("-") with the reason it does not apply.
//
//   check                          figure                                                  tolerance  largest measured
//   initial state                  |h(q0)|, |A(q0) qd0 + b| of the default initial state   1e-12      1.2e-15
//   initial state, params +-10 %   the same for 8 parameter sets within +-10 %             1e-12      1.7e-15
//   mass matrix                    |M - M^T| / |M|; positive definite, cond <= 1e14         1e-12      5.6e-17 (cond 1.5e3)
//   A (, b) vs FD of h             A = dh/dq, b = dh/dt of holonomic constraints            1e-7       2.4e-11
//   Adot qd vs FD                  the acceleration bias vs d/ds (A qd + b) along (qd, 1)   1e-7       4.4e-11
//   dL/dq, p vs FD of L            the variational integrators' derivatives of L            1e-7       1.3e-11
//   c vs FD of L                   c vs d/dt(dL/dqd) - dL/dq at qdd = 0 (Euler-Lagrange)    1e-7       1.3e-11
//   derivatives vs FD              Model::dynamics_derivatives and                          1e-7       2.6e-12
//                                  ::generalized_force_derivatives (exact Jacobians)
//   analytic vs autodiff           hand-written terms (analytic_terms, reverse mode)        1e-11      2.8e-16
//   sparse vs dense                the bodies-and-joints terms vs the dense ones            1e-12      0
//   velocity basis                 |A S| / (|A| |S|); rank n - m; Sdot v vs FD (1e-7)       1e-12      5.7e-17 (Sdot 2.9e-13)
//   closed form                    a kkt + dopri5 run (rtol 1e-12) vs Model::closed_form    1e-8       2.5e-12
//   energy                         its max |E - E0| / max |E| where energy is conserved     1e-8       1.1e-11
//                                  (no explicit time dependence, no generalized force), its
//                                  energy balance residual with explicit time dependence
//
// Largest measured: over every zoo problem and every file under tests/data/mechanisms and mechanisms/, at their
// defaults, with 8 seeds of the random states (docs/design.md, "clmbench check"). The finite-difference
// references (analysis/finite_difference_terms.hpp) are accurate to about 1e-16 / step^2 = 1e-10 relative at worst,
// and a wrong term is off by O(1): 1e-7 leaves 3 decades above the largest figure and 6 below a 10 % error.
// Initial state: the runner's own threshold (runs/runner.cpp projects a default state above it). M symmetric:
// 1e-12 is a transposition's rounding; an asymmetric M written by hand is off by O(1). Analytic and sparse
// terms are the same terms in another order: rounding (n eps), 4 decades below. Closed form and energy: the run's
// integration error at rtol 1e-12 over t = 1, 3 decades below.
//
// The term checks run at the start (the default initial state, or --q0/--qd0 projected like a run's) and at
// random states near it (off the constraints: the identities hold everywhere).
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/problem_registry.hpp"
#include "runs/runner.hpp"

namespace clm {

struct ModelCheck {
  enum class Verdict { kOk, kFail, kSkipped };
  std::string name;
  std::string measured;  // the figures (with the tolerance), or why the check was skipped
  double value = std::numeric_limits<double>::quiet_NaN();  // the figure compared with the tolerance
  double tolerance = std::numeric_limits<double>::quiet_NaN();
  Verdict verdict = Verdict::kSkipped;
  double seconds = 0;  // how long the check took (check_model fills it)
};

// A check whose figure is `value` (ok when value <= tolerance; NaN fails), and a skipped one.
ModelCheck judged_check(const std::string& name, const std::string& measured, double value, double tolerance);
ModelCheck skipped_check(const std::string& name, const std::string& why);

// Tolerances (the table above says what each was chosen from).
constexpr double kInitialStateTolerance = 1e-12;  // the runner's: above it a run projects the default state
constexpr double kSymmetryTolerance = 1e-12;
constexpr double kConditionLimit = 1e14;          // M numerically singular beyond
constexpr double kFiniteDifferenceTolerance = 1e-7;
constexpr double kAnalyticTolerance = 1e-11;
constexpr double kSparseTolerance = 1e-12;
constexpr double kBasisTolerance = 1e-12;
constexpr double kIntegrationTolerance = 1e-8;
constexpr int kDerivativeCoordinates = 64;  // derivatives vs FD: dense n^3 cost, checked up to this n
constexpr long kRunStepBudget = 5000;  // attempted steps of the run of the closed-form and energy checks

// |h(q, t)| (holonomic models; 0 otherwise) and |A(q) qd + b(q, t)|, Euclidean norms.
struct ConstraintResidual {
  double position = 0, velocity = 0;
};
ConstraintResidual constraint_residual(const Model& model, double t, const Vec& q, const Vec& qd);

// M's symmetry (max |M - M^T| / max |M|) and extreme eigenvalues (of its symmetric part).
struct MassMatrixSpectrum {
  double asymmetry = 0, min_eigenvalue = 0, max_eigenvalue = 0;
  double condition() const;
  bool positive_definite() const;  // min > 0 and condition() <= kConditionLimit
};
MassMatrixSpectrum mass_matrix_spectrum(const Mat& M);

// A state at which the term checks run.
struct CheckState {
  double t = 0;
  Vec q, qd;
  unsigned seed = 0;  // of check_states, from which the checks also draw their random directions
};
// The start, then `count` random states near it (q_j + 0.2 u max(1, |q_j|), qd_j + u max(1, |qd|), u uniform
// in [-1, 1]; at t = 0.3 k for a time-dependent model), fixed by `seed`; a state where a term is not finite
// (outside a file's domain) is drawn again, up to 10 times.
std::vector<CheckState> check_states(const Model& model, const Vec& q0, const Vec& qd0, int count, unsigned seed);

// The checks, one function each (the table above).
ModelCheck check_initial_state(const Model& model);
ModelCheck check_perturbed_initial_states(const ProblemEntry& entry, const Model& model, int sets, double spread,
                                          unsigned seed);
ModelCheck check_mass_matrix(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_constraint_jacobian(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_constraint_bias(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_lagrangian_derivatives(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_bias(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_dynamics_derivatives(const Model& model, const std::vector<CheckState>& states);
// `autodiff`: the same problem made with use_analytic = false (ProblemEntry::make); null when uses_analytic_terms()
// is false.
ModelCheck check_analytic_terms(const Model& model, const Model* autodiff, const std::vector<CheckState>& states);
ModelCheck check_sparse_terms(const Model& model, const std::vector<CheckState>& states);
ModelCheck check_velocity_basis(const Model& model, const std::vector<CheckState>& states);
// From a run of the model (execute_run, keep_samples): its errors against the closed form, and its energy.
ModelCheck check_closed_form(const Model& model, const RunRecord& run);
ModelCheck check_energy(const Model& model, const RunRecord& run, const std::vector<CheckState>& states);

struct ModelCheckSettings {
  std::map<std::string, double> overrides;     // --param
  std::optional<std::vector<double>> q0, qd0;  // --q0, --qd0: the start (projected onto the constraints)
  double t_end = 1.0;                          // of the integration checks
  int parameter_sets = 8;
  double parameter_spread = 0.1;
  int random_states = 4;
  unsigned seed = 24;
};

struct ModelCheckReport {
  std::string problem;
  std::vector<std::string> notes;  // what was checked: the model, its parameters, the start
  std::vector<ModelCheck> checks;
  int count(ModelCheck::Verdict v) const;
  bool passed() const { return count(ModelCheck::Verdict::kFail) == 0; }
};

// Every check on a problem name or mechanism file. InputError for a bad name, parameter or state.
ModelCheckReport check_model(const std::string& problem, const ModelCheckSettings& settings);

}  // namespace clm
