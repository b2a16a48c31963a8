#include "core/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

namespace clm {

namespace {

std::string at_time(const std::string& what, double t) {
  std::ostringstream s;
  s.precision(10);
  s << what << " at t = " << t;
  return s.str();
}

// The output grid t0 + k * dt_out (k = 0 .. last), whose last point is t_end exactly. Computed on the
// fly (no per-sample storage) and always as t0 + k * dt_out, never by accumulation.
class OutputGrid {
 public:
  OutputGrid(double t0, double t_end, double dt_out, double eps_t) : t0_(t0), t_end_(t_end), dt_out_(dt_out) {
    if (dt_out <= 0) return;
    const double ratio = (t_end - t0) / dt_out;
    const long n = static_cast<long>(std::floor(ratio + 1e-9));
    // A grid point within round-off of t_end is t_end; otherwise t_end is appended.
    last_ = (t0 + n * dt_out >= t_end - eps_t) ? n : n + 1;
  }
  long last() const { return last_; }
  double time(long k) const { return k >= last_ ? t_end_ : t0_ + k * dt_out_; }

 private:
  double t0_, t_end_, dt_out_;
  long last_ = 0;
};

}  // namespace

SimulationResult simulate(OdeSystem& sys, Integrator& integrator, const Vec& y0, const SimulationSettings& sim,
                          const IntegratorSettings& settings_in, const SampleCallback& sample,
                          const ProgressCallback& progress, const StepCallback& on_step) {
  SimulationResult result;
  const auto wall_start = std::chrono::steady_clock::now();
  IntegratorSettings settings = settings_in;
  const bool fixed = !integrator.adaptive() || settings.fixed_step;
  const double dt_out = sim.output_every;

  if (y0.size() != sys.dimension()) {
    std::ostringstream s;
    s << "initial state has size " << y0.size() << " but the system has dimension " << sys.dimension();
    throw InputError(s.str());
  }
  if (!std::isfinite(sim.t0) || !std::isfinite(sim.t_end) || sim.t_end < sim.t0)
    throw InputError("t_end must be finite and >= t0");
  if (!std::isfinite(dt_out)) throw InputError("output_every must be finite");
  if (fixed && !(settings.dt > 0 && std::isfinite(settings.dt)))
    throw InputError("dt must be > 0 for fixed-step integration with " + integrator.name());

  // Fixed steps that divide the output spacing land exactly on the samples; a step coarser than the
  // spacing is kept and the samples are interpolated.
  const bool land_on_grid = fixed && dt_out > 0 && settings.dt <= dt_out;
  if (land_on_grid) {
    // dt far below dt_out: the ratio overflows (1e-2 / 1e-320 = inf), and dt_out / inf gave dt = 0.
    const double steps = std::ceil(dt_out / settings.dt - 1e-9);
    if (std::isfinite(steps) && steps < 9007199254740992.0) settings.dt = dt_out / steps;
  }
  result.dt_effective = fixed ? settings.dt : 0;

  const double eps_t = 1e-12 * std::max({1.0, std::abs(sim.t0), std::abs(sim.t_end)});
  const OutputGrid grid(sim.t0, sim.t_end, dt_out, eps_t);
  long next = 1;        // index of the next grid sample
  double t_now = sim.t0;  // time of the last accepted step (messages, t_reached)
  Vec y_sample(y0.size()), y_after(y0.size());
  auto emit = [&](double t, const Vec& y) {
    sample(t, y);
    ++result.samples;
  };
  // Divergence: non-finite or beyond the threshold. Sets the status; returns true when the run must end.
  auto diverged = [&](const Vec& y, double t) {
    if (!y.allFinite()) {
      result.status = "diverged";
      result.message = at_time("state became non-finite", t);
      return true;
    }
    if (y.lpNorm<Eigen::Infinity>() > sim.divergence_threshold) {
      std::ostringstream s;
      s << "|y| exceeded " << sim.divergence_threshold;
      result.status = "diverged";
      result.message = at_time(s.str(), t);
      return true;
    }
    return false;
  };

  long attempts = 0;
  try {
    if (diverged(y0, sim.t0)) {
      result.message = "initial " + result.message;
    } else {
      integrator.initialize(sys, sim.t0, y0, settings);
      emit(sim.t0, y0);
      while (integrator.time() < sim.t_end - eps_t) {
        if (progress && attempts % kProgressEvery == 0) progress({sim.t0, t_now, sim.t_end, attempts, false});
        if (++attempts > sim.max_steps) {
          result.status = "failed";
          result.message =
              at_time("step limit (max_steps = " + std::to_string(sim.max_steps) + ") reached", t_now);
          break;
        }
        const double t_before = integrator.time();
        const double t_limit = (land_on_grid && next <= grid.last()) ? grid.time(next) : sim.t_end;
        if (!integrator.step(t_limit)) {
          if (integrator.current_step() < settings.dt_min * std::max(1.0, std::abs(integrator.time()))) {
            std::ostringstream s;
            s << "step size underflow (h = " << integrator.current_step() << ")";
            result.status = "failed";
            result.message = at_time(s.str(), t_now);
            break;
          }
          continue;
        }
        const double t = integrator.time();
        t_now = t;
        if (!(t > t_before)) {
          result.status = "failed";
          result.message = at_time("step size underflow (time did not advance)", t);
          break;
        }
        if (diverged(integrator.state(), t)) break;
        if (on_step) on_step(t_before, t);
        // Grid times strictly inside the step: the step's interpolant (before any projection).
        if (dt_out > 0) {
          while (next <= grid.last() && grid.time(next) < t - eps_t) {
            integrator.interpolate(grid.time(next), y_sample);
            emit(grid.time(next), y_sample);
            ++next;
          }
        }
        y_after = integrator.state();
        if (sys.after_step(t, y_after)) {
          integrator.reset_state(y_after);
          if (diverged(integrator.state(), t)) break;
        }
        if (dt_out <= 0) {
          emit(t, integrator.state());
        } else if (next <= grid.last() && std::abs(grid.time(next) - t) <= eps_t) {
          emit(grid.time(next), integrator.state());
          ++next;
        }
      }
    }
  } catch (const InputError&) {
    throw;
  } catch (const AbortRun&) {
    throw;
  } catch (const NumericalFailure& e) {
    result.status = "failed";
    result.message = at_time(e.what(), t_now);
  } catch (const std::exception& e) {
    result.status = "failed";
    result.message = at_time(std::string("unexpected error: ") + e.what(), t_now);
  }
  // Where it stopped, in the system's terms (a singular position of the constraints), unless already said.
  if (result.status != "ok" && result.message.find("singular position") == std::string::npos) {
    try {
      result.message += sys.failure_context(t_now, integrator.state());
    } catch (const std::exception&) {
    }
  }
  result.t_reached = t_now;
  if (progress) progress({sim.t0, t_now, sim.t_end, std::min(attempts, sim.max_steps), true});
  result.stats = integrator.statistics();
  result.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace clm
