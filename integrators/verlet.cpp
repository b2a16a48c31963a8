#include "integrators/verlet.hpp"

#include "integrators/mechanical_system.hpp"


namespace clm {

std::string Verlet::refuses_formulation(const Formulation& f) const {
  const Model& model = f.model();
  const std::string fname = f.name();
  if (std::string why = time_dependence_refusal(name(), model); !why.empty()) return why;
  if (model.m() == 0 && f.state_starts_with_q_qd() && f.dimension() == 2 * model.n()) return {};
  if (fname == "penalty") return {};
  if (fname == "kkt" || fname == "schur") {
    if (model.holonomic())
      return "integrator verlet ignores position constraints; use rattle (formulation " + fname + " on problem " +
             model.name() + ")";
    return "integrator verlet ignores the constraints; use dla or nh_rattle, or formulation penalty (formulation " +
           fname + " on problem " + model.name() + ")";
  }
  return "integrator verlet integrates an unconstrained Lagrangian: formulation penalty, or a problem without "
         "constraints; not formulation " + fname + " on problem " + model.name() + " (m = " +
         std::to_string(model.m()) + ")";
}

void Verlet::do_initialize(const IntegratorSettings& s) {
  // The formulation itself, or the one coordinate projection wraps (after_step then moves y, and
  // reset_state restarts the momentum from it).
  const Formulation* f = sys_->formulation();  // also through coordinate projection
  if (!f)
    throw InputError("integrator verlet reads the Lagrangian through a formulation and cannot run a bare ODE");
  if (const std::string why = refuses_formulation(*f); !why.empty()) throw InputError(why);
  Forcing forcing;
  if (f->name() == "penalty" && f->model().m() > 0) {
    forcing.penalty_N = f->options().N;
    forcing.penalty_k = f->options().k;
  }
  bind(*f, forcing, s);
}

}  // namespace clm
