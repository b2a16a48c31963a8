// Making the references of issue 10 item 6 and computing each one once.
//
// A run is compared with the closed-form motion of its problem where there is one for it (Model::
// closed_form, not for runs that follow the vakonomic motion of nonholonomic constraints), otherwise with a
// reference run: the same problem, parameters, consistent initial data, t_end and output grid, integrated
// with the [reference] settings (formulation, integrator, rtol, atol; RunSpec::reference). Runs that follow
// the vakonomic motion of nonholonomic constraints (vakonomic, added_mass) get a vakonomic reference run
// with their lambda0, whatever reference.formulation says: their limit is the vakonomic motion.
//
// The reference run depends only on that key, never on the run's own step, tolerances, integrator or
// formulation options, so every run of a sweep over those shares one reference. A reference run that
// fails, diverges or cannot share the run's output grid (output_every = 0) is a ReferenceTrajectory with
// source kNone whose description says why; execute_run then records NaN errors and that reason as a
// warning, never 0.
//
// Usage (one run):
//     ReferenceCache cache;
//     PreparedRun run = prepare_run(spec, log);
//     std::shared_ptr<const ReferenceTrajectory> ref = cache.get(run);   // computed here, or shared
//     RunRecord record = execute_run(run, &observer, false, nullptr, ref.get());
// get() is thread-safe: workers of a sweep (--jobs) may ask for the same key at once; one computes, the
// others wait for it and share the result. Deterministic: the same key gives bit-identical samples in
// any thread or MPI rank (each rank may keep its own cache).
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runs/reference_trajectory.hpp"
#include "runs/run_config.hpp"
#include "runs/runner.hpp"

namespace clm {

// True when the run's errors come from its problem's closed form (no reference run is needed).
bool has_closed_form_reference(const PreparedRun& run);
// A problem's closed form is its free motion; under a prescribed shape it is the run's motion only where the
// schedule moves the actuated coordinates as the free motion does (the kinematic car's constant steering and
// wheel rate). True when the run has no [shape], or when the closed form exists and its actuated coordinates and
// their rates equal the schedule's to 1e-12 (relative) at 17 equally spaced times of [0, t_end].
bool closed_form_follows_shape(const Model& model, const Vec& q0, const Vec& qd0, const ShapeSchedule& shape,
                               double t_end);

// The RunSpec of the reference run for `run` (which started from the consistent q0, qd0): problem,
// parameters, q0, qd0, t_end, output_every from the run; formulation, integrator, rtol, atol from
// run.reference (vakonomic with the run's lambda0 when vakonomic_motion); every other setting at its
// default, so that runs differing only in step, tolerances or method share the reference.
RunSpec reference_spec(const RunSpec& run, const Vec& q0, const Vec& qd0, bool vakonomic_motion);
RunSpec reference_spec(const PreparedRun& run);

// The cache key of a reference spec: every option and parameter as exact text.
std::string reference_key(const RunSpec& reference);

// Runs `reference` (a reference_spec) and keeps t, q, qd, lambda of every sample. Numerical trouble is not
// an exception: a failed or diverged run gives source kNone and the reason. InputError only for settings
// that cannot run at all (a refused formulation / problem pairing); ReferenceCache checks those before.
// `progress` (may be null) shows the reference run while it integrates (a tight reference can take far
// longer than the runs compared with it).
ReferenceTrajectory compute_reference_run(const RunSpec& reference, ProgressLine* progress = nullptr);

// Checks, before anything runs, that the reference of `run` can be made: one InputError line naming the
// [reference] setting otherwise (e.g. reference.formulation = fernandez_bloch for a holonomic problem).
void check_reference(const PreparedRun& run);

class ReferenceCache {
 public:
  // The reference of a prepared run: a closed-form marker (nothing computed, no samples) when the problem
  // has a closed form for it, else the reference run of reference_spec(run), computed once per key.
  // `progress` (may be null) is used only by the caller that computes.
  std::shared_ptr<const ReferenceTrajectory> get(const PreparedRun& run, ProgressLine* progress = nullptr);
  // The reference run of a reference spec, computed once per reference_key.
  std::shared_ptr<const ReferenceTrajectory> get(const RunSpec& reference, ProgressLine* progress = nullptr);

  long computations() const { return computations_.load(); }  // reference runs computed so far
  size_t size() const;
  // Drops the cached reference of one key (a run loop that knows no later run needs it frees its memory;
  // holders of the shared_ptr keep theirs), or every cached reference.
  void release(const RunSpec& reference);
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const ReferenceTrajectory>>> entries_;
  std::atomic<long> computations_{0};
};

}  // namespace clm
