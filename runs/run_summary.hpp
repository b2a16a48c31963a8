// The per-run numbers of /summary and `clmbench info`, accumulated sample by sample so that a run's
// summary needs no stored trajectory (memory does not grow with the number of samples; a reference run,
// when one is given, is the caller's and is read, not copied).
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "core/formulation.hpp"
#include "core/model.hpp"
#include "runs/growth_envelope.hpp"
#include "runs/reference_trajectory.hpp"
#include "runs/test_set_accuracy.hpp"

namespace clm {

// NaN where a quantity does not apply.
struct RunSummary {
  double final_drift_position = 0, max_drift_position = 0;  // NaN for Pfaffian problems
  double final_drift_velocity = 0, max_drift_velocity = 0;
  // max_k |E_k - E_0| / max(|E_0|, eps): the energy error of a run whose problem conserves energy. NaN ("-") where
  // the problem's own statement changes E (a time-dependent problem; generalized forces that did work): its
  // figure is max_energy_balance_residual.
  double max_rel_energy_error = 0;
  double q_error_vs_reference = 0;  // max_k |q_k - q_ref(t_k)| (Model::closed_form); NaN when none
  // The headline column, a distance from the true motion: the q error where the problem has a closed-form
  // motion, NaN ("-") otherwise. Never a multiplier residual: that can be 0 for a run that is badly wrong.
  double error_vs_reference = 0;
  std::string reference = "none";  // "q" | "none": what error_vs_reference compares
  // Multiplier consistency (not an error against the true motion): max_k |lambda_k - lambda*(t_k, q_k, qd_k)| /
  // max_k |lambda*|, lambda* the problem's own multipliers at the computed state: its closed-form multiplier
  // where it has one, else the KKT solve of its M, c, F, A at (t, q, qd) (minimum-norm for redundant rows). kkt
  // satisfies it by construction; penalty's estimate -N A qd is O(1/N) from it after its initial layer, rattle's discrete multipliers
  // O(h^2), a parasitic mode (nh_rattle's alternating lambda) far. NaN where the run has no multipliers
  // (substituted) or follows other equations (vakonomic, servo, a prescribed shape), and for m = 0.
  double lambda_consistency = 0;

  // Errors against the run's reference (work-precision, issue 10 item 6): the closed form where the problem
  // has one for this run, else a reference run compared sample by sample on the output grid. Euclidean
  // norms over the components (the norm of error_vs_reference and of the Kozlov studies), so with a closed
  // form q_error_max equals error_vs_reference. _max: over every sample the run produced; _final: at
  // t_end, NaN when the run stopped before. NaN when there is no reference or the run has no such values
  // (lambda of `substituted`).
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string reference_source = "none";  // "closed_form" | "reference_run" | "published" | "none"
  std::string reference_note;  // why the errors are NaN although a reference was asked for (else empty)
  // Why a problem's published values are not this run's reference (a parameter, the initial state or
  // t_end differs from the published case); empty when they are, or the problem has none.
  std::string published_withheld;
  double q_error_max = kNaN, q_error_final = kNaN;
  double qd_error_max = kNaN, qd_error_final = kNaN;
  double lambda_error_max = kNaN, lambda_error_final = kNaN;
  // Bari test-set figures at t_end over the 2n components (q, qd) (runs/test_set_accuracy.hpp);
  // lambda is left out: an algebraic variable, an estimate for penalty / added_mass, NaN for substituted.
  double scd = kNaN, mescd = kNaN;
  // A benchmark's reference point (Model::reference_point: IFToMM's P1, P3, B0): max over samples of the
  // Euclidean distance of its coordinates from the reference's, the IFToMM library's accuracy measure. NaN
  // without a reference point or a reference.
  double reference_point_error_max = kNaN;
  // With a published reference (reference_source "published"): the computed state at its time, for the
  // component-by-component comparison `clmbench run` prints. Empty otherwise.
  Vec published_q, published_qd, published_lambda;

  // Long-time behaviour (issue 11 item 7): the exponent p of the envelope of the relative energy error and
  // of the constraint drift (|h| for holonomic problems, |A qd| otherwise), max_{s<=t} e(s) ~ t^p over the
  // run's last two decades of time (runs/growth_envelope.hpp): ~0 bounded, ~1/2 random walk, ~1 linear.
  double energy_error_growth = kNaN, drift_growth = kNaN;

  // The energy balance of a time-dependent run (core/energy_balance.hpp): max_k |E_k - E_0 - W_k| divided by
  // the largest energy figure of the balance, max_k max(|E_k|, |W_c,k| + |W_t,k| + |W_f,k|) (never below
  // machine epsilon): the residual's rounding and truncation parts scale with the energies it subtracts, and
  // E_0 alone (max_rel_energy_error's scale) can be near zero while the table pumps energy in. NaN ("-") for
  // problems without explicit time dependence or generalized forces, whose runs record no balance.
  double max_energy_balance_residual = kNaN;

  // The energy figure the run's own check judges (runs/own_checks.hpp; not a /summary column): for a problem
  // that conserves E, max_k |E_k - E_0| / max(|E_0|, max_k T_k), T = 1/2 qd^T M qd, so that a start at E_0 = 0
  // (IFToMM's pendulum released level with its pivot) is judged against the energy in motion; otherwise
  // max_energy_balance_residual. NaN where neither applies.
  double energy_check = kNaN;
  // The multiplier figure the run's own check judges (not a /summary column): as lambda_consistency, but on the
  // constraint forces, max_k |A^T (lambda_k - lambda*_k)| / max_k |A^T lambda*_k|. Where A^T loses rank (A02's
  // singular positions, Bricard's redundant rows) lambda is not unique and only its force is the motion's: ALI3-P's
  // multipliers there were 0.28 .. 4.5 from the kkt solve's with the same force. NaN where lambda_consistency is.
  double constraint_force_consistency = kNaN;
  // The drift figure the run's own check judges (not a /summary column): the larger of max_k |A qd + b|_k /
  // max_k |A|_F |qd|_k and, for position rows, max_k |h|_k / max_k |A_h|_F |q|_k: each constraint's violation
  // against the size of the terms it is made of (dimensionless; for a pendulum x^2 + y^2 - L^2 the second is the
  // relative change of L^2 / 2). NaN without constraints or motion.
  double drift_check = kNaN;
};

// What the errors are measured against and with which tolerances (mescd uses the run's atol / rtol).
struct AccuracySettings {
  double t_end = std::numeric_limits<double>::quiet_NaN();  // the final-time figures belong to t_end
  double rtol = 1, atol = 0;
  // A reference run on the run's output grid (ReferenceSource::kReferenceRun), or a reference that could
  // not be computed (kNone: its description becomes the summary's reference_note). nullptr: the closed form
  // where the problem has one for this run. Must outlive the accumulator.
  const ReferenceTrajectory* reference = nullptr;
};

// One sample's errors against the run's reference (issue 24 item 3; /runs/<id>/error_vs_reference):
// Euclidean norms of q - q_ref, qd - qd_ref and lambda - lambda_ref at that sample, the figures whose maxima
// are q_error_max, qd_error_max and lambda_error_max. NaN where the sample was not compared (no reference, a
// published reference at another time, a reference that failed) or has no such values (lambda of
// `substituted`, a reference without multipliers).
struct SampleErrors {
  double q = RunSummary::kNaN, qd = RunSummary::kNaN, lambda = RunSummary::kNaN;
};

class RunSummaryAccumulator {
 public:
  // vakonomic_on_nonholonomic: the run follows the vakonomic motion of nonholonomic constraints, so the
  // problem's (nonholonomic) closed forms are not its reference.
  RunSummaryAccumulator(const Model& model, const Vec& q0, const Vec& qd0, bool vakonomic_on_nonholonomic,
                        const AccuracySettings& accuracy = {});
  // The problem's multipliers at (t, q, qd) for lambda_consistency where it has no closed-form multiplier: the
  // runner's KKT solve; false where it cannot be had there (a singular KKT matrix). Ignored where the run follows
  // other equations (vakonomic_on_nonholonomic) or the problem has a closed-form multiplier or no rows.
  using IdealMultipliers = std::function<bool(double t, const Vec& q, const Vec& qd, Vec& lambda)>;
  void use_ideal_multipliers(IdealMultipliers ideal);
  // No heap allocation after the first sample (fixed-size problems).
  void add(double t, const Observation& obs);
  RunSummary finish() const;
  // The errors of the sample last added (NaN before the first).
  const SampleErrors& latest_errors() const { return latest_; }
  // True when the reference is compared at every sample (a closed form or a reference run), so that the
  // run's error against time is worth recording; false for none and for a published reference (one time).
  bool compares_every_sample() const { return every_sample_; }

 private:
  void compare(double t, const Observation& obs, const Vec& q_ref, const Vec& qd_ref, const Vec* lambda_ref);

  const Model& model_;
  AccuracySettings accuracy_;
  Vec q0_, qd0_, q_ref_, qd_ref_, q_next_, qd_next_, lambda_ref_, lambda_at_ref_;
  Vec run_q_, run_qd_, run_lambda_;  // views of the reference run's sample k (copied: Vec, not Map)
  double t_ref_ = 0;  // the time q_ref_, qd_ref_ belong to
  bool holonomic_;      // every row a position row: the drift's growth is that of |h|, else of |A qd + b|
  bool position_rows_;  // |h| of the position rows recorded (holonomic and mixed problems)
  long samples_ = 0;
  double max_dp_ = 0, last_dp_ = 0, max_dv_ = 0, last_dv_ = 0;
  double energy0_ = 0, max_rel_energy_ = 0;
  double t0_ = 0;
  GrowthEnvelope energy_growth_, drift_growth_;
  bool balance_recorded_ = false;  // a sample carried the energy balance (time-dependent and forced problems)
  // The generalized forces did work (W_f != 0 at a sample): with time dependence, what makes E not conserved by
  // the problem's statement (forces identically zero, fx = 0 on pendulum_polar, leave it conserved).
  bool forces_worked_ = false;
  GrowthEnvelope balance_growth_;  // |E - E0 - W| / max(|E0|, eps): energy_error_growth of a non-conserving run
  double max_balance_residual_ = 0, balance_scale_ = 0;
  bool q_reference_ = false, lambda_reference_ = false;
  bool vakonomic_on_nonholonomic_ = false;
  // T = 1/2 qd^T M qd at each sample, for energy_check's scale (one mass-matrix evaluation per sample).
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  Vec m_qd_;
  double max_kinetic_ = 0, max_energy_change_ = 0;
  IdealMultipliers ideal_;        // lambda* where the problem has no closed-form multiplier (lambda_consistency)
  bool ideal_consistency_ = false;  // lambda_consistency from ideal_ (else from the closed form, or none)
  bool lambda_missing_ = false;   // a sample's multipliers were NaN (substituted): no consistency figure
  Vec ideal_lambda_;
  bool terms_at_sample_ = false;  // terms_ holds A at the sample being added
  Vec star_force_, force_diff_;   // A^T lambda*, A^T (lambda - lambda*)
  double force_err_ = 0, force_scale_ = 0;
  bool force_compared_ = false;
  double velocity_scale_ = 0;     // max_k |A|_F |qd|_k (drift_check)
  double position_scale_ = 0;     // max_k |A_h|_F |q|_k of the position rows (drift_check)
  double q_err_ = 0, lambda_err_ = 0, lambda_scale_ = 0;

  // Errors against the reference of the work-precision figures.
  ReferenceSource source_ = ReferenceSource::kNone;
  std::string note_;
  std::string withheld_;  // RunSummary::published_withheld
  bool lambda_known_ = false;  // the reference has multipliers
  double e_q_max_ = 0, e_qd_max_ = 0, e_lambda_max_ = 0, e_point_max_ = 0;
  const ReferencePoint* point_ = nullptr;  // the model's reference point, if any
  Vec point_run_, point_ref_;              // its position in the run and in the reference (sized once)
  double e_q_last_ = RunSummary::kNaN, e_qd_last_ = RunSummary::kNaN, e_lambda_last_ = RunSummary::kNaN;
  double t_last_ = RunSummary::kNaN;
  SampleErrors latest_;
  bool every_sample_ = false;
  double scd_last_ = RunSummary::kNaN, mescd_last_ = RunSummary::kNaN;
  const PublishedReference* published_ = nullptr;  // source_ == kPublished
  bool published_compared_ = false;                // a sample at the published time was compared
  Vec published_q_, published_qd_, published_lambda_;
};

}  // namespace clm
