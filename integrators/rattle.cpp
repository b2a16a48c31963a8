#include "integrators/rattle.hpp"

#include "integrators/mechanical_system.hpp"

namespace clm {

std::string Rattle::refuses_formulation(const Formulation& f) const {
  if (std::string why = kkt_only_refusal(name(), f); !why.empty()) return why;
  const Model& model = f.model();
  if (std::string why = time_dependence_refusal(name(), model); !why.empty()) return why;
  if (!model.holonomic() && !model.mixed())
    return "integrator rattle: holonomic and mixed problems only (it needs position rows to hold at position "
           "level); problem " + model.name() + " has Pfaffian (nonholonomic) constraints only (use dla or nh_rattle)";
  if (f.options().baumgarte_alpha != 0 || f.options().baumgarte_beta != 0)
    return "integrator rattle keeps h(q) = 0 and A(q) qd = 0 itself; Baumgarte stabilization does not apply "
           "(set baumgarte_alpha = baumgarte_beta = 0)";
  return {};
}

void Rattle::do_initialize(const IntegratorSettings& s) {
  const Formulation& f = mechanical_system(name(), *sys_);
  if (const std::string why = refuses_formulation(f); !why.empty()) throw InputError(why);
  bind(f, Forcing{.constrain = true}, s);
  // Before the first step: the continuous multiplier of the initial state.
  continuous_multipliers(t_, y_, lambda_);
  lambda_mid_prev_ = lambda_;
  lambda_mid_ = lambda_;
  t_mid_prev_ = t_;
}

bool Rattle::do_step(double h) {
  const double t0 = t_;
  if (!VariationalIntegrator::do_step(h)) return false;
  // lambda_start and lambda_end are each O(h) from lambda(t) and lambda(t + h); their mean is the
  // SHAKE/RATTLE multiplier, O(h^2) from lambda at the midpoint. Extrapolated linearly from the previous
  // midpoint value (the continuous lambda(t0) before the first step) to the step end, where samples land.
  const double t_mid = t0 + 0.5 * h, t1 = step_end();
  lambda_mid_ = 0.5 * (lambda_start_ + lambda_end_);
  lambda_ = lambda_mid_ + ((t1 - t_mid) / (t_mid - t_mid_prev_)) * (lambda_mid_ - lambda_mid_prev_);
  lambda_mid_prev_ = lambda_mid_;
  t_mid_prev_ = t_mid;
  return true;
}

void Rattle::do_reset_state() {
  VariationalIntegrator::do_reset_state();
  continuous_multipliers(t_, y_, lambda_);
  lambda_mid_prev_ = lambda_;
  t_mid_prev_ = t_;
}

}  // namespace clm
