#include "core/integrator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace clm {

namespace {

std::string number(double x) {
  std::ostringstream s;
  s.precision(10);
  s << x;
  return s.str();
}

}  // namespace

void Integrator::initialize(OdeSystem& sys, double t0, const Vec& y0, const IntegratorSettings& s) {
  const std::string who = name() + ": ";
  const bool constant = !adaptive() || s.fixed_step;
  if (constant && !(s.dt > 0 && std::isfinite(s.dt)))
    throw InputError(who + "dt must be a finite number > 0 for constant steps (got " + number(s.dt) + ")");
  switch (tolerance_use(s)) {
    case ToleranceUse::kNone:
      break;
    case ToleranceUse::kNonNegative:
      if (!(s.rtol >= 0) || !(s.atol >= 0) || !(s.rtol + s.atol > 0))
        throw InputError(who + "rtol and atol must be >= 0 and not both zero (got rtol = " + number(s.rtol) +
                         ", atol = " + number(s.atol) + ")");
      break;
    case ToleranceUse::kPositiveRtol:
      if (!(s.rtol > 0) || !(s.atol >= 0))
        throw InputError(who + "rtol must be > 0 and atol >= 0 (got rtol = " + number(s.rtol) +
                         ", atol = " + number(s.atol) + ")");
      break;
  }
  if (s.jacobian != "finite_difference" && s.jacobian != "autodiff" && s.jacobian != "auto")
    throw InputError(who + "jacobian must be 'finite_difference', 'autodiff' or 'auto' (got '" + s.jacobian + "')");
  if (const std::string why = refuses(s); !why.empty()) throw InputError(who + why);
  if (y0.size() != sys.dimension())
    throw InputError(who + "initial state has size " + std::to_string(y0.size()) + " but the system has dimension " +
                     std::to_string(sys.dimension()));

  sys.set_projection_in_step(false);  // after_step projects unless this integrator takes the projection
  sys_ = &sys;
  settings_ = s;
  constant_steps_ = constant;
  stats_ = {};  // statistics are per run
  t_ = t_end_ = t0;
  h_ = 0;
  y_ = y0;
  f_.resize(y0.size());
  eval_rhs(t_, y_, f_);
  do_initialize(s);
}

bool Integrator::step(double t_limit) {
  const double remaining = t_limit - t_;
  if (!(remaining > 0)) return true;  // nothing left to do before t_limit
  double h = h_;
  // Never step past t_limit. Constant steps: only absorb round-off, so that the steps stay exactly dt;
  // adaptive: stretch by up to 1% rather than leave a sliver (as DOPRI5 and RADAU5 do).
  // The round-off allowance of constant steps is also relative to t: the sum of k steps of dt misses
  // t0 + k dt by up to k ulp(t)/2 (2.8e-12 over 50 steps near t = 535), more than 1e-9 dt, and a time the
  // driver already counts as the output time (core/simulate.hpp: within 1e-12 |t_end|) must not leave a
  // sliver for the next step (a 5.6e-10 step that rattle's Newton could not take on closed_chain(8)).
  const double round_off = std::max(1e-9 * h, 1e-12 * std::max(1.0, std::abs(t_limit)));
  const bool lands = constant_steps_ ? (t_ + h >= t_limit - round_off) : (t_ + 1.01 * h >= t_limit);
  if (lands) h = remaining;
  t_end_ = lands ? t_limit : t_ + h;
  if (!do_step(h)) {
    ++stats_.rejected_steps;
    return false;
  }
  t_ = t_end_;
  ++stats_.steps;
  return true;
}

void Integrator::reset_state(const Vec& y) {
  y_ = y;
  eval_rhs(t_, y_, f_);
  do_reset_state();
}

double Integrator::weighted_rms_norm(const Vec& err, const Vec& y_old, const Vec& y_new, double rtol, double atol) {
  const long n = err.size();
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    const double sc = atol + rtol * std::max(std::abs(y_old[i]), std::abs(y_new[i]));
    const double r = err[i] / std::max(sc, std::numeric_limits<double>::min());
    sum += r * r;
  }
  return std::sqrt(sum / std::max<long>(n, 1));
}

double Integrator::weighted_rms_norm(const Vec& err, const Vec& sc) {
  const long n = err.size();
  double sum = 0;
  for (long i = 0; i < n; ++i) sum += (err[i] / sc[i]) * (err[i] / sc[i]);
  return std::sqrt(sum / std::max<long>(n, 1));
}

}  // namespace clm
