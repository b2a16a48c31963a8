// One line per integrator (docs/design.md section 3).
#include "core/integrator.hpp"
#include "integrators/cvode_integrator.hpp"
#include "integrators/dla.hpp"
#include "integrators/dop853.hpp"
#include "integrators/dormand_prince.hpp"
#include "integrators/explicit_runge_kutta.hpp"
#include "integrators/ida_integrator.hpp"
#include "integrators/implicit_midpoint.hpp"
#include "integrators/nh_rattle.hpp"
#include "integrators/radau5.hpp"
#include "integrators/rattle.hpp"
#include "integrators/trapezoidal.hpp"
#include "integrators/verlet.hpp"
#include "integrators/verner.hpp"

namespace clm {

Registry<IntegratorEntry>& integrator_registry() {
  static Registry<IntegratorEntry> registry = [] {
    Registry<IntegratorEntry> r("integrator");
    r.add({"euler", "explicit Euler, fixed step, order 1",
           [] { return std::make_unique<ExplicitRungeKutta>(euler_tableau()); }});
    r.add({"rk4", "classical Runge-Kutta, fixed step, order 4",
           [] { return std::make_unique<ExplicitRungeKutta>(rk4_tableau()); }});
    r.add({"dopri5", "Dormand-Prince 5(4), adaptive (PI control), FSAL, 4th-order dense output",
           [] { return std::make_unique<DormandPrince5>(); }});
    r.add({"dop853", "Hairer's DOP853, explicit order 8 (error estimate of orders 5 and 3), adaptive, FSAL, "
           "7th-order dense output (3 extra stages, evaluated on the first sample of a step)",
           [] { return std::make_unique<Dop853>(); }});
    // Stiffness thresholds: 0.96 of the stability boundary on the negative real axis (-4.64, -4.48).
    r.add({"vern7", "Verner's 7(6) pair (2010), 10 stages, adaptive, 7th-order dense output (5 extra stages, "
           "evaluated on the first sample of a step)",
           [] { return std::make_unique<Verner>(vern7_pair(), 4.45); }});
    r.add({"vern9", "Verner's 9(8) pair (2010), 16 stages, adaptive, 9th-order dense output (9 extra stages, "
           "evaluated on the first sample of a step)",
           [] { return std::make_unique<Verner>(vern9_pair(), 4.3); }});
    r.add({"implicit_midpoint", "implicit midpoint rule, fixed step, order 2, symplectic; simplified Newton, FD Jacobian",
           [] { return std::make_unique<ImplicitMidpoint>(); }});
    r.add({"radau5", "Radau IIA 3-stage, order 5, adaptive, L-stable, for stiff systems (Hairer-Wanner RADAU5)",
           [] { return std::make_unique<Radau5>(); }});
    r.add({"cvode", "SUNDIALS CVODE: variable-order BDF (cvode_method = bdf, stiff, Newton + dense LU) or Adams "
           "(adams, non-stiff), adaptive",
           [] { return std::make_unique<CvodeIntegrator>(); }});
    r.add({"dla", "discrete Lagrange-d'Alembert (midpoint L_d, discrete constraint A(q_k+1/2)(q_k+1 - q_k) = 0), "
           "fixed step, order 2",
           [] { return std::make_unique<DiscreteLagrangeDalembert>(); }});
    r.add({"nh_rattle", "nonholonomic RATTLE (Ferraro-Iglesias-Martin de Diego; A(q) qd = 0 at every step), fixed "
           "step, order 2; caveat: a two-step method in disguise whose parasitic mode (lambda alternating in sign) "
           "grows on contracting systems (the Chaplygin sleigh, a towed trailer) whatever dt: watch "
           "lambda_consistency, or use dla",
           [] { return std::make_unique<NonholonomicRattle>(); }});
    r.add({"ida", "SUNDIALS IDA on the constrained system as a DAE (GGL stabilized index 2, multipliers algebraic; "
           "IDACalcIC), variable-order BDF 1-5, adaptive; formulation kkt only",
           [] { return std::make_unique<IdaIntegrator>(); }});
    r.add({"verlet", "variational integrator of the midpoint discrete Lagrangian (Stormer-Verlet type), fixed step, "
           "order 2, symplectic; penalty, or problems without constraints; Newton",
           [] { return std::make_unique<Verlet>(); }});
    r.add({"rattle", "RATTLE, constrained variational integrator (midpoint discrete Lagrangian), fixed step, order 2; "
           "kkt on holonomic and mixed problems, keeps h = 0 (the position rows) and A qd = 0; Newton",
           [] { return std::make_unique<Rattle>(); }});
    r.add({"trapezoidal", "trapezoidal rule as the index-3 augmented Lagrangian scheme with velocity and acceleration "
           "projections (ALI3-P, Cuadrado-Cardenal-Bayo 1997), fixed step, order 2; formulation augmented_lagrangian on "
           "holonomic problems; Newton on q",
           [] { return std::make_unique<Trapezoidal>(); }});
    return r;
  }();
  return registry;
}

}  // namespace clm
