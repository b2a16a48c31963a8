// The Formulation interface: one way of writing the constrained equations as y' = f(t, y), in the manner
// of RBDL's interchangeable constrained solvers. A formulation owns its Model workspace and every
// buffer the hot path needs, allocated once at construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/ode.hpp"
#include "core/registry.hpp"
#include "core/shape_schedule.hpp"

namespace clm {

// Options that apply across formulations ([formulation] section of a config).
struct FormulationOptions {
  double baumgarte_alpha = 0;  // velocity-level Baumgarte gain (kkt, schur): -2 alpha A qd
  double baumgarte_beta = 0;   // position-level gain (kkt, schur; holonomic): -beta^2 h
  double N = 1e4;              // penalty / added-mass coefficient (issue 3)
  double k = 0;                // penalty position spring for holonomic problems (issue 3)
  // nullspace with coordinate partitioning: re-pick the independent coordinates when |A|_1 |A_D^-1|_1
  // exceeds this. Measured: at 1e6 kkt and nullspace differ by 2e-7 on the sleigh (1e-2 on a slack
  // chain); at 10 by 1e-11 (5e-7), and a re-pick costs one QR of A.
  double repartition_threshold = 10;
  // vakonomic: initial multipliers lambda(0) (m values, vakonomic sign convention of docs/design.md section 1);
  // empty means zeros, the limit of added_mass started on the constraint [seed-004, Theorem 2].
  std::vector<double> lambda0;
  // added_mass: "direct" integrates (M + N A^T A) qdd = ... on (q, qd) (docs/design.md's form); "multiplier"
  // integrates (q, qd, lambda = -N A qd) with the vakonomic KKT matrix plus compliance 1/N (issue 3).
  std::string added_mass_form = "direct";
  // fernandez_bloch: start this far off the constraint on purpose, qd0 += offset X (1,..,1)/sqrt(m) after
  // the projection onto A qd = 0, so |A qd0| = offset (drift study of the restricted flow, issue 4).
  double initial_offset = 0;
  // Coordinate projection after every accepted step: none | position | velocity | both (position applies to
  // holonomic problems; formulations/coordinate_projection.hpp). Applied by the runner, not the formulation.
  std::string projection = "none";
  // augmented_lagrangian [BGS-1988] (formulations/augmented_lagrangian.hpp) and its index-3 form in the
  // trapezoidal integrator's ALI3-P [CCB-1997]: penalty alpha of the augmented Lagrangian, the
  // stabilization's damping ratio xi and natural frequency omega (1/s) of the acceleration-level form
  // (Bayo et al.'s values 1 and 10), and the multiplier fixed-point iteration per evaluation: at most
  // al_iterations updates lambda* += alpha (A qdd + ...), stopped when an update is below al_tolerance
  // relative to lambda*.
  double al_alpha = 1e7;
  double al_xi = 1;
  double al_omega = 10;
  long al_iterations = 10;
  double al_tolerance = 1e-10;
  // trapezoidal (ALI3-P): the Newton tangent on q. "full": M + (h^2/4) [alpha A^T A + sum_i (lambda* + alpha h)_i
  // d^2 h_i / dq^2] (the geometric stiffness by autodiff, integrators/constraint_hessian.hpp); "penalty": without
  // the geometric stiffness (the iteration then needs no second derivatives of h, and stalls at singular positions).
  std::string al_tangent = "full";
  // servo: the covector field B(q) along which the control force B^T lambda realizes the constraints
  // (formulations/servo_direction.hpp): "constraint" (B = A, the ideal reaction) or a field the problem names.
  std::string servo_direction = "constraint";
  // The prescribed shape q_a(t) of the run's [shape] section (core/shape_schedule.hpp): empty unless the run
  // has one; read by the formulations whose registry entry says uses_shape (prescribed_shape, kinematic).
  ShapeSchedule shape;
  // kkt, schur, augmented_lagrangian and trapezoidal (ALI3-P) on problems built from bodies and joints
  // (core/problem.hpp): "auto" solves with sparse algebra from kSparseCrossoverCoordinates coordinates on
  // (measured, docs/design.md "Sparse path"), "sparse" and "dense" force one path (sparse where the problem has
  // the structure; kkt and schur also need A of full rank).
  std::string linear_algebra = "auto";
};

// From this many coordinates "auto" takes the sparse path: on n_four_bar sparse wins at every size, from loops = 1
// (n = 9: kkt 1.3 vs 2.9 us, schur 1.7 vs 2.5; README "Performance"); nothing smaller has the structure.
inline constexpr int kSparseCrossoverCoordinates = 9;

// Whether `who` (a formulation or integrator; has_sparse_path: whether it has a sparse path at all) solves with
// sparse algebra on `model` under options.linear_algebra: "dense" never; "auto" when both have the structure and
// n >= kSparseCrossoverCoordinates; "sparse" always, or InputError in one line saying why it cannot.
bool wants_sparse_linear_algebra(const FormulationOptions& options, const Model& model, const std::string& who,
                                 bool has_sparse_path);

// What a run records at one sample time.
struct Observation {
  Vec q, qd, lambda;
  double energy = 0;
  double drift_position = 0;  // |h(q, t)| of the position rows (holonomic and mixed problems; 0 otherwise)
  double drift_velocity = 0;  // |A(q) qd|
  std::vector<double> extras;  // values for Formulation::extra_names()
  // The energy balance of a time-dependent run (core/energy_balance.hpp), filled by the runner, not by
  // observe(): the work W(t) since t0 by component and the residual E(t) - E(0) - W(t) (J); NaN for problems
  // without explicit time dependence, whose runs do not record it.
  double work_constraints = std::numeric_limits<double>::quiet_NaN();
  double work_explicit_time = std::numeric_limits<double>::quiet_NaN();
  double work_forces = std::numeric_limits<double>::quiet_NaN();
  double energy_balance_residual = std::numeric_limits<double>::quiet_NaN();
  // Formulations that prescribe the shape and compute the actuator forces (records_actuator_forces()):
  // F_a, one per actuated coordinate, and the power F_a . qd_a they spend. Empty / NaN otherwise.
  Vec actuator_force;
  double actuator_power = std::numeric_limits<double>::quiet_NaN();
  // The model's named points at (t, q) (Model::named_points), filled by the runner: every component in order.
  Vec points;
  // The model's body velocities at (t, q, qd) (Model::body_velocities), filled by the runner.
  Vec body_velocities;
};

class SingularPositionTest;

class Formulation : public OdeSystem {
 public:
  Formulation(std::shared_ptr<const Model> model, FormulationOptions options);
  ~Formulation() override;

  virtual std::string name() const = 0;
  // Maps a consistent (q, qd) to the formulation's state y.
  virtual void initial_state(const Vec& q, const Vec& qd, Vec& y) = 0;
  // Reads q, qd and lambda back out of y (not on the hot path); energy and drift are filled by the base.
  virtual void observe(double t, const Vec& y, Observation& obs);
  virtual std::vector<std::string> extra_names() const { return {}; }
  // True when observe() fills Observation::actuator_force / actuator_power (prescribed_shape): the run then
  // records /actuator_force and /actuator_power (docs/design.md section 5).
  virtual bool records_actuator_forces() const { return false; }
  // Which motion the formulation computes for nonholonomic constraints: the nonholonomic one (kkt, schur,
  // nullspace, penalty as N -> inf) or the vakonomic one (vakonomic, added_mass as N -> inf; Kozlov,
  // [seed-004]). A problem's closed form is the nonholonomic motion, so it is a reference only for the former.
  virtual bool vakonomic_motion() const { return false; }

  // The state y starts with (q, qd) (kkt, schur, penalty, added_mass, vakonomic, fernandez_bloch): what
  // coordinate projection needs (formulations/coordinate_projection.hpp). nullspace and substituted
  // integrate other velocity coordinates.
  virtual bool state_starts_with_q_qd() const { return false; }

  const Formulation* formulation() const override { return this; }

  // ---- Singular positions (problems with kSingularPositions, e.g. n_four_bar) ------------------------------
  // Where A(q) loses rank the branches of the configuration set meet. A formulation whose positions are not
  // kept on h(q) = 0 follows a level set h = drift != 0 instead, on which the meeting branches reconnect: it
  // leaves the singular position on a branch decided by the sign of its drift, not by the dynamics. So
  // after every accepted step a formulation of such a problem checks for a singular position and, unless
  // coordinate projection keeps h = 0 (set_positions_projected: by ProjectedSystem, and by the runner for integrators that keep h = 0 themselves), ends the run "failed"
  // there, naming it (NumericalFailure; the driver adds the time). With projection the run goes on.
  void set_positions_projected(bool on) { positions_projected_ = on; }
  bool positions_projected() const { return positions_projected_; }
  // Empty when A(q) has no more small singular values than its exact rank deficiency; otherwise one clause
  // "singular position of the constraints: A(q) has k singular values below 1e-3 of the largest (...)".
  // The test is core/singular_position.hpp's (a screen by inertia, the SVD only where the screen flags).
  std::string singular_position(const Eigen::Ref<const Vec>& q);
  // Appends that clause to a failed or diverged run's message (OdeSystem::failure_context).
  std::string failure_context(double t, const Vec& y) override;
  // The default after_step: the singular-position check above (formulations that override after_step call it).
  bool after_step(double t, Vec& y) override;

  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> model_ptr() const { return model_; }
  const FormulationOptions& options() const { return options_; }

 protected:
  // Formulation-specific part of observe(): q, qd, lambda (and extras).
  virtual void read_state(double t, const Vec& y, Observation& obs) = 0;
  // Checks that A(q) has full row rank m; throws InputError naming the problem and the rank found (and that
  // kkt, schur and nullspace accept redundant constraints).
  void require_full_rank(const Vec& q) const;
  // numerical_rank of A(q) (0 when m = 0). Off the hot path.
  int constraint_rank(const Vec& q) const;

  // Throws NumericalFailure at a singular position unless positions are projected or the problem has none
  // (a no-op, without allocation, for every problem without kSingularPositions).
  void guard_singular_position(const Eigen::Ref<const Vec>& q);

  std::shared_ptr<const Model> model_;
  FormulationOptions options_;
  bool positions_projected_ = false;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  int n_, m_;

 private:
  Vec velocity_residual_;  // A qd + b of observe()
  std::unique_ptr<SingularPositionTest> singular_position_test_;  // made on first use
};

// ---- The suite's one rank test and one conditioning check -----------------------------------------------
//
// Rank: a singular value (or a pivot |R_ii| of a column-pivoted QR) counts when it exceeds
// kRankTolerance * max(rows, cols) times the largest one. Rounding in a computed Jacobian leaves
// O(n eps |A|) ~ 1e-15 |A| in the singular values of an exactly deficient A, five orders below the
// tolerance; the smallest relative singular value of A at every zoo problem's initial configuration is
// above 1e-3, seven orders above it. So "rank < m" means dependent constraints, not a bad configuration.
inline constexpr double kRankTolerance = 1e-10;
// The absolute threshold for A (rows x cols) with largest singular value (or pivot) s_max.
inline double rank_threshold(Eigen::Index rows, Eigen::Index cols, double s_max) {
  return double(std::max(rows, cols)) * s_max * kRankTolerance;
}
// Numerical rank of A by SVD with the tolerance above (0 for A = 0).
int numerical_rank(const Mat& A);

// Conditioning: a factorization is singular when its reciprocal condition number is below
// kConditionFloor (then eps / rcond > 1e-3: fewer than three correct digits in the solution). Off the hot
// path rcond is Eigen's estimate (PartialPivLU::rcond(), LLT::rcond(), an estimate of
// 1 / (|K|_1 |K^-1|_1)); on the hot path, where Eigen's estimator would allocate, the same floor applies
// to the pivot ratio min |u_ii| / max |u_ii| of the LU factor (L_ii^2 for Cholesky), which costs nothing.
inline constexpr double kConditionFloor = 1e-13;
// Singular positions: a singular value of A(q) below this fraction of the largest (and above the exact-rank
// threshold) counts as "near a rank drop". Measured on n_four_bar (tests/n_four_bar_test.cpp): its smallest
// ratio away from the horizontal position is 2.2e-2 (loops = 40, square position) and falls like
// 0.07 x the angle to it; 1e-3 flags the last ~0.02 rad before the singular position.
inline constexpr double kSingularPositionRatio = 1e-3;
inline bool well_conditioned(double rcond_or_pivot_ratio) { return rcond_or_pivot_ratio >= kConditionFloor; }
// Eigen's reciprocal condition estimate of the square matrix K (by PartialPivLU; allocates); 0 when the
// factor has a zero or non-finite pivot.
double reciprocal_condition(const Mat& K);
// min |d_i| / max |d_i| of a factor's diagonal, e.g. lu.matrixLU().diagonal() or, for Cholesky,
// llt.matrixLLT().diagonal().cwiseAbs2() (0 when empty or max = 0; NaN entries are skipped). No allocation.
template <class Diagonal>
double pivot_ratio(const Diagonal& d) {
  double lo = INFINITY, hi = 0;
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    const double v = std::abs(d[i]);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi > 0 ? lo / hi : 0.0;
}

struct FormulationEntry {
  std::string name;
  std::string description;
  // Empty when the formulation applies to the model, otherwise the reason it does not.
  std::function<std::string(const Model&)> refuses;
  std::function<std::unique_ptr<Formulation>(std::shared_ptr<const Model>, const FormulationOptions&)> make;
  // The formulation prescribes the problem's actuated coordinates from FormulationOptions::shape (a run's
  // [shape] section); a [shape] given to a formulation without it is refused in one line (runs/run_config.cpp).
  bool uses_shape = false;
  // What it does with a mixed model's rows (position rows h = 0 beside velocity rows; docs/design.md section 1,
  // "Mixed constraints"), one line for `clmbench list formulations`.
  std::string mixed_rows;
};

Registry<FormulationEntry>& formulation_registry();

}  // namespace clm
