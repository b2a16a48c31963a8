// The reference a run's errors are measured against (issue 10 item 6): the problem's closed-form motion
// where one exists, otherwise a reference run at tight tolerance, sampled on the run's output grid.
//
// A reference run's samples are held here: t, q, qd and lambda on the grid t0 + k output_every (then t_end)
// that simulate() produces for every run with the same t_end and output_every, so sample k of a run is
// compared with sample k of the reference. This is the only memory that grows with the number of samples:
// K (1 + 2 n + m) doubles per reference (ReferenceCache keeps one per key). A closed-form reference holds no
// samples: RunSummaryAccumulator carries the closed form from sample to sample as it goes.
#pragma once

#include <string>
#include <vector>

namespace clm {

enum class ReferenceSource {
  kNone,          // no reference: the errors are NaN ("-"); `description` says why
  kClosedForm,    // the problem's closed-form motion (Model::closed_form_from) and multipliers
  kReferenceRun,  // a run at the [reference] settings, samples below
  kPublished,     // values a benchmark published at one time (Model::published_reference), for t_end = that time
};

// "none" | "closed_form" | "reference_run" | "published": the run attribute and /summary column reference_source.
inline const char* reference_source_name(ReferenceSource source) {
  switch (source) {
    case ReferenceSource::kClosedForm: return "closed_form";
    case ReferenceSource::kReferenceRun: return "reference_run";
    case ReferenceSource::kPublished: return "published";
    default: return "none";
  }
}

struct ReferenceTrajectory {
  ReferenceSource source = ReferenceSource::kNone;
  // What the reference is ("kkt/dopri5, rtol 1e-12, atol 1e-14: 2841 steps") or, for kNone, why there is
  // none ("reference run kkt/dopri5 failed at t = 3.2: ..."). Deterministic: no timings.
  std::string description;
  std::string formulation, integrator;  // of a reference run
  double rtol = 0, atol = 0;
  int n = 0, m = 0;
  // Row-major samples of a reference run: t[k], q[k n + i], qd[k n + i], lambda[k m + j].
  std::vector<double> t, q, qd, lambda;
  long steps = 0, rhs_evals = 0;
  double cpu_time_s = 0;  // the reference run's integration CPU time (not part of `description`)

  size_t samples() const { return t.size(); }
};

}  // namespace clm
