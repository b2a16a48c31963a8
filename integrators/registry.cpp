// One line per integrator (DESIGN.md section 3).
#include "core/integrator.hpp"
#include "integrators/explicit_runge_kutta.hpp"

namespace clm {

Registry<IntegratorEntry>& integrator_registry() {
  static Registry<IntegratorEntry> registry = [] {
    Registry<IntegratorEntry> r("integrator");
    r.add({"euler", "explicit Euler, fixed step, order 1",
           [] { return std::make_unique<ExplicitRungeKutta>(euler_tableau()); }});
    r.add({"rk4", "classical Runge-Kutta, fixed step, order 4",
           [] { return std::make_unique<ExplicitRungeKutta>(rk4_tableau()); }});
    return r;
  }();
  return registry;
}

}  // namespace clm
