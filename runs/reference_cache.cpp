#include "runs/reference_cache.hpp"

#include <cmath>
#include <sstream>

#include "runs/run_options.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

// Keeps t, q, qd, lambda of every sample of the reference run (nothing else: energy, drift and extras
// are the run's own business).
class SampleCapture final : public RunObserver {
 public:
  explicit SampleCapture(ReferenceTrajectory& out, size_t expected) : out_(out), expected_(expected) {}
  void begin(const RunRecord& header) override {
    out_.n = header.n;
    out_.m = header.m;
    out_.t.reserve(expected_);
    out_.q.reserve(expected_ * static_cast<size_t>(header.n));
    out_.qd.reserve(expected_ * static_cast<size_t>(header.n));
    out_.lambda.reserve(expected_ * static_cast<size_t>(header.m));
  }
  void sample(double t, const Observation& obs, const SampleErrors&) override {
    out_.t.push_back(t);
    out_.q.insert(out_.q.end(), obs.q.data(), obs.q.data() + obs.q.size());
    out_.qd.insert(out_.qd.end(), obs.qd.data(), obs.qd.data() + obs.qd.size());
    out_.lambda.insert(out_.lambda.end(), obs.lambda.data(), obs.lambda.data() + obs.lambda.size());
  }
  void finish(const RunRecord&) override {}

 private:
  ReferenceTrajectory& out_;
  size_t expected_;
};

bool follows_vakonomic_motion(const PreparedRun& run) {
  return run.formulation && run.formulation->vakonomic_motion() && !run.model->holonomic();
}

std::string settings_text(const RunSpec& reference) {
  return reference.formulation + "/" + reference.integrator + ", rtol " + format_number(reference.rtol) + ", atol " +
         format_number(reference.atol);
}

}  // namespace

bool has_closed_form_reference(const PreparedRun& run) {
  if (follows_vakonomic_motion(run)) return false;  // the closed forms are nonholonomic motions
  if (follows_servo_motion(run.spec)) return false;
  Vec q, qd;
  return run.model->closed_form(0.0, run.q0, run.qd0, q, qd) &&
         closed_form_follows_shape(*run.model, run.q0, run.qd0, run.spec.options.shape, run.spec.t_end);
}

bool closed_form_follows_shape(const Model& model, const Vec& q0, const Vec& qd0, const ShapeSchedule& shape,
                               double t_end) {
  if (shape.empty()) return true;
  const Eigen::Index k = static_cast<Eigen::Index>(shape.coordinates.size());
  Vec qa(k), qda(k), qdda(k), q(model.n()), qd(model.n());
  constexpr int kTimes = 16;
  for (int i = 0; i <= kTimes; ++i) {
    const double t = t_end * i / kTimes;
    if (!model.closed_form(t, q0, qd0, q, qd)) return false;
    shape.evaluate(t, qa, qda, qdda);
    for (Eigen::Index j = 0; j < k; ++j) {
      const int c = shape.coordinates[static_cast<size_t>(j)];
      if (!(std::abs(q[c] - qa[j]) <= 1e-12 * (1 + std::abs(qa[j]))) ||
          !(std::abs(qd[c] - qda[j]) <= 1e-12 * (1 + std::abs(qda[j]))))
        return false;
    }
  }
  return true;
}

RunSpec reference_spec(const RunSpec& run, const Vec& q0, const Vec& qd0, bool vakonomic_motion) {
  RunSpec ref;  // every setting not copied below stays at its default: it must not split the key
  ref.run_id = "reference";
  ref.named = true;
  ref.problem = run.problem;
  ref.params = run.params;
  ref.formulation = vakonomic_motion ? "vakonomic" : run.reference.formulation;
  ref.integrator = run.reference.integrator;
  ref.rtol = run.reference.rtol;
  ref.atol = run.reference.atol;
  ref.t_end = run.t_end;
  ref.output_every = run.output_every;
  ref.dt = std::min(ref.dt, run.t_end);  // the first trial step of the adaptive reference integrator
  ref.timing_budget = 0;  // a reference is integrated once: its CPU time is not a figure of merit
  ref.q0 = std::vector<double>(q0.data(), q0.data() + q0.size());
  ref.qd0 = std::vector<double>(qd0.data(), qd0.data() + qd0.size());
  // The vakonomic motion depends on the initial multipliers: the run's, where its formulation reads them.
  const bool reads_lambda0 =
      run.formulation == "vakonomic" || (run.formulation == "added_mass" && run.options.added_mass_form == "multiplier");
  if (vakonomic_motion && reads_lambda0) ref.options.lambda0 = run.options.lambda0;
  if (!vakonomic_motion && follows_servo_motion(run)) {
    ref.formulation = "servo";
    ref.options.servo_direction = run.options.servo_direction;
  }
  // A prescribed shape is part of the motion: the reference follows the same schedule with the run's own
  // formulation (kkt with no actuator forces would not follow it).
  if (!run.shape.empty()) {
    ref.formulation = run.formulation;
    ref.shape = run.shape;
    ref.options.shape = run.options.shape;
  }
  return ref;
}

RunSpec reference_spec(const PreparedRun& run) {
  return reference_spec(run.spec, run.q0, run.qd0, follows_vakonomic_motion(run));
}

std::string reference_key(const RunSpec& reference) {
  std::string key;
  for (const auto& o : run_options()) {
    if (o.section == "run" && o.key == "max_output_gb") continue;  // a limit, not part of the motion
    key += o.qualified() + "=" + o.text(reference).value_or("-") + "\n";
  }
  for (const auto& [name, value] : reference.params) key += "param." + name + "=" + format_number(value) + "\n";
  for (const auto& [name, text] : reference.shape) key += "shape." + name + "=" + text + "\n";
  return key;
}

ReferenceTrajectory compute_reference_run(const RunSpec& reference, ProgressLine* progress) {
  ReferenceTrajectory out;
  out.formulation = reference.formulation;
  out.integrator = reference.integrator;
  out.rtol = reference.rtol;
  out.atol = reference.atol;
  const std::string what = "reference run " + settings_text(reference);
  if (!(reference.output_every > 0)) {
    out.description = "run.output_every = 0 (a sample per step): no output grid shared with a " + what;
    return out;
  }
  std::ostringstream quiet;  // the projection of already consistent data is not news
  PreparedRun prepared = prepare_run(reference, quiet, /*warn_unused=*/false);
  const size_t expected = static_cast<size_t>(std::floor(reference.t_end / reference.output_every)) + 2;
  SampleCapture capture(out, expected);
  const RunRecord record = execute_run(prepared, &capture, /*keep_samples=*/false, progress);
  out.steps = record.stats.steps;
  out.rhs_evals = record.stats.rhs_evals;
  out.cpu_time_s = record.cpu_time_s;
  if (record.status != "ok") {
    out.description = what + " " + record.status + " at t = " + format_number(record.t_reached) +
                      (record.message.empty() ? std::string() : ": " + record.message);
    out.t.clear();
    out.q.clear();
    out.qd.clear();
    out.lambda.clear();
    out.t.shrink_to_fit();
    out.q.shrink_to_fit();
    out.qd.shrink_to_fit();
    out.lambda.shrink_to_fit();
    return out;
  }
  out.source = ReferenceSource::kReferenceRun;
  out.description = what + ": " + std::to_string(record.stats.steps) + " steps, " +
                    std::to_string(record.stats.rhs_evals) + " rhs evaluations";
  return out;
}

void check_reference(const PreparedRun& run) {
  if (has_closed_form_reference(run)) return;
  const RunSpec ref = reference_spec(run);
  std::ostringstream quiet;
  try {
    prepare_run(ref, quiet, /*warn_unused=*/false);
  } catch (const InputError& e) {
    throw InputError("run " + run.spec.run_id + ": its reference run ([reference] " + settings_text(ref) +
                     ") cannot run: " + e.what());
  }
}

std::shared_ptr<const ReferenceTrajectory> ReferenceCache::get(const PreparedRun& run, ProgressLine* progress) {
  if (has_closed_form_reference(run)) {
    // Nothing to compute or store: RunSummaryAccumulator carries the closed form along the run.
    static const auto closed_form = [] {
      auto r = std::make_shared<ReferenceTrajectory>();
      r->source = ReferenceSource::kClosedForm;
      r->description = "closed-form motion";
      return std::shared_ptr<const ReferenceTrajectory>(std::move(r));
    }();
    return closed_form;
  }
  return get(reference_spec(run), progress);
}

std::shared_ptr<const ReferenceTrajectory> ReferenceCache::get(const RunSpec& reference, ProgressLine* progress) {
  const std::string key = reference_key(reference);
  std::promise<std::shared_ptr<const ReferenceTrajectory>> promise;
  std::shared_future<std::shared_ptr<const ReferenceTrajectory>> result;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = entries_.try_emplace(key);
    if (inserted) {
      it->second = promise.get_future().share();
      mine = true;
    }
    result = it->second;
  }
  // Computed outside the lock: other keys proceed in parallel, askers of this key wait on the future.
  if (mine) {
    try {
      auto computed = std::make_shared<const ReferenceTrajectory>(compute_reference_run(reference, progress));
      computations_.fetch_add(1);
      promise.set_value(std::move(computed));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return result.get();
}

size_t ReferenceCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void ReferenceCache::release(const RunSpec& reference) {
  const std::string key = reference_key(reference);
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.erase(key);
}

void ReferenceCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

}  // namespace clm
