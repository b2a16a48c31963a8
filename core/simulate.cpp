#include "core/simulate.hpp"

#include <chrono>
#include <cmath>
#include <sstream>
#include <vector>

namespace clm {

namespace {

std::string at_time(const char* what, double t) {
  std::ostringstream s;
  s.precision(10);
  s << what << " at t = " << t;
  return s.str();
}

}  // namespace

SimulationResult simulate(OdeSystem& sys, Integrator& integrator, const Vec& y0, const SimulationSettings& sim,
                          const IntegratorSettings& settings_in, const SampleCallback& sample) {
  SimulationResult result;
  const auto wall_start = std::chrono::steady_clock::now();
  IntegratorSettings settings = settings_in;
  const double span = sim.t_end - sim.t0;
  const double dt_out = sim.output_every;
  // Fixed steps that divide the output spacing land exactly on the samples; a step coarser than the
  // spacing is kept and the samples are interpolated.
  if (!integrator.adaptive() && dt_out > 0 && settings.dt <= dt_out) {
    const double k = std::ceil(dt_out / settings.dt - 1e-9);
    settings.dt = dt_out / k;
  }
  const double eps_t = 1e-12 * std::max(1.0, std::abs(sim.t_end));
  std::vector<double> times{sim.t0};  // the output grid, t_end always included
  if (dt_out > 0) {
    const long n_samples = static_cast<long>(std::floor(span / dt_out + 1e-9));
    for (long k = 1; k <= n_samples; ++k) times.push_back(sim.t0 + k * dt_out);
    if (times.back() < sim.t_end - eps_t) times.push_back(sim.t_end);
    times.back() = std::max(times.back(), sim.t_end);
  }
  size_t next = 1;  // index of the next sample time
  Vec y_sample(y0.size()), y_mod;

  try {
    integrator.initialize(sys, sim.t0, y0, settings);
    sample(sim.t0, y0);
    long steps = 0;
    while (integrator.time() < sim.t_end - eps_t) {
      const double t_limit = (!integrator.adaptive() && dt_out > 0 && settings.dt <= dt_out && next < times.size())
                                 ? times[next]
                                 : sim.t_end;
      if (!integrator.step(t_limit)) {
        if (integrator.current_step() < settings.dt_min * std::max(1.0, std::abs(integrator.time()))) {
          result.status = "failed";
          result.message = at_time("step size underflow", integrator.time());
          break;
        }
        continue;
      }
      if (++steps > sim.max_steps) {
        result.status = "failed";
        result.message = at_time("step limit reached", integrator.time());
        break;
      }
      const Vec& y = integrator.state();
      const double t = integrator.time();
      if (!y.allFinite()) {
        result.status = "diverged";
        result.message = at_time("state became non-finite", t);
        break;
      }
      if (y.lpNorm<Eigen::Infinity>() > sim.divergence_threshold) {
        result.status = "diverged";
        std::ostringstream s;
        s << "|y| exceeded " << sim.divergence_threshold << " at t = " << t;
        result.message = s.str();
        break;
      }
      if (dt_out > 0) {
        while (next < times.size() && times[next] <= t + eps_t) {
          const double ts = times[next];
          if (std::abs(ts - t) <= eps_t) {
            sample(ts, y);
          } else {
            integrator.interpolate(ts, y_sample);
            sample(ts, y_sample);
          }
          ++next;
        }
      } else {
        sample(t, y);
      }
      y_mod = y;
      if (sys.after_step(t, y_mod)) integrator.reset_state(y_mod);
    }
  } catch (const NumericalFailure& e) {
    result.status = "failed";
    result.message = at_time(e.what(), integrator.time());
  }
  result.t_reached = integrator.time();
  result.stats = integrator.statistics();
  result.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace clm
