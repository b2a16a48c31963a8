// One line per formulation (docs/design.md section 3).
#include "core/formulation.hpp"
#include "formulations/added_mass_formulation.hpp"
#include "formulations/augmented_lagrangian.hpp"
#include "formulations/fernandez_bloch_formulation.hpp"
#include "formulations/kinematic_formulation.hpp"
#include "formulations/kkt_formulation.hpp"
#include "formulations/nullspace_formulation.hpp"
#include "formulations/penalty_formulation.hpp"
#include "formulations/prescribed_shape_formulation.hpp"
#include "formulations/schur_formulation.hpp"
#include "formulations/servo_formulation.hpp"
#include "formulations/substituted_formulation.hpp"
#include "formulations/vakonomic_formulation.hpp"

namespace clm {

namespace {
std::string applies_to_all(const Model&) { return {}; }
std::string needs_constraints(const Model& m) {
  return m.m() > 0 ? std::string() : "problem " + m.name() + " has no constraints to penalize or vary";
}
// Formulations written for h(q) = 0 / A(q) qd = 0 and V(q) only: a time-dependent problem (core/problem.hpp:
// h(q, t), A(q) qd + b(q, t) = 0, V(q, t)) is refused in one line rather than integrated wrongly, before the
// formulation's own test.
std::function<std::string(const Model&)> without_time_dependence(std::string formulation,
                                                                  std::function<std::string(const Model&)> next) {
  return [formulation = std::move(formulation), next = std::move(next)](const Model& m) -> std::string {
    if (m.time_dependent())
      return "formulation " + formulation + " does not support time-dependent constraints or potentials (problem " +
             m.name() + " has h(q, t), A qd + b(q, t) = 0 or V(q, t)); use kkt, schur, nullspace, penalty or "
                        "augmented_lagrangian";
    return next(m);
  };
}
}  // namespace

Registry<FormulationEntry>& formulation_registry() {
  static Registry<FormulationEntry> registry = [] {
    Registry<FormulationEntry> r("formulation");
    r.add({"kkt", "full KKT system [M -A^T; A 0], one (n+m) LU solve (seed 000 eq. 2.6)", applies_to_all,
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<KktFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "every row at acceleration level (h drifts as the integrator's error allows: projection = "
           "position or baumgarte_beta holds it)"});
    r.add({"schur",
           "Schur complement for lambda: (A M^-1 A^T) lambda = A M^-1 (c - F) - Adot qd, Cholesky of M and of "
           "the m x m Schur matrix (seed 000 eq. 2.9)",
           applies_to_all, [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<SchurFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/"every row at acceleration level, as kkt"});
    r.add({"nullspace",
           "null-space projection qd = S(q) v, (S^T M S) vd = S^T (F - c - M Sdot v); natural basis or "
           "coordinate partitioning re-picked when cond(A_D) grows (seed 000 eq. 2.17-2.18)",
           applies_to_all, [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<NullspaceFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "qd in the null space of all rows, h at acceleration level (projection = position holds it)"});
    r.add({"penalty",
           "Kozlov Thm 1: no constraint, viscous anisotropic friction R_N = N/2 |A qd + b|^2 (+ spring k/2 |h|^2), "
           "M qdd + c = F - N A^T (A qd + b); lambda = -N (A qd + b) - k h (seed 004; b of a moving constraint)",
           needs_constraints, [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<PenaltyFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "the friction N on every row, the spring k/2 |h|^2 on the position rows"});
    r.add({"added_mass",
           "Kozlov Thm 2: L_N = L + N/2 |A qd|^2 unconstrained; added_mass_form = direct (M + N A^T A on (q, "
           "qd)) or multiplier ((q, qd, lambda = -N A qd), vakonomic KKT with compliance 1/N) (seed 004)",
           without_time_dependence("added_mass", needs_constraints), [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return make_added_mass(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/"N/2 |A qd|^2 over every row (the position rows' A_h qd included)"});
    r.add({"vakonomic",
           "Lagrange's variational problem: [L] = F + lambda [Phi] + lambdadot A^T, state (q, qd, lambda), "
           "[M -A^T; A 0][qdd; lambdadot] = [F - c + C^T lambda; -Adot qd]; lambda(0) = lambda0 (seed 004)",
           without_time_dependence("vakonomic", needs_constraints), [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<VakonomicFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "every row in the vakonomic equations (a position row's vakonomic motion is its holonomic "
           "one)"});
    r.add({"substituted",
           "seed 002's mistake: solve A qd = 0 for the problem's eliminated velocities, substitute into L and "
           "apply the unconstrained Euler-Lagrange equations in the rest, M_c vd = S^T F - c_c; lambda = NaN",
           without_time_dependence("substituted", SubstitutedFormulation::refuses), [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<SubstitutedFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "the rows it eliminates solved at velocity level (the position rows as their derivatives)"});
    r.add({"fernandez_bloch",
           "restricted Lagrangian L~ = L - Phi_a v^a, Phi_a = qd^T M X_a (seed 003): M~ qdd + c~ = F unconstrained, "
           "M~ = M - (M X A + A^T X^T M) by pivoted LU; logs the theorem's condition residuals fb_condition_1/2",
           without_time_dependence("fernandez_bloch", [](const Model& m) -> std::string {
             if (m.m() == 0) return "problem " + m.name() + " has no constraints to restrict";
             if (m.holonomic())
               return "problem " + m.name() + " has holonomic constraints; fernandez_bloch (seed 003) is for "
                      "Pfaffian constraints";
             if (m.mixed())
               return "problem " + m.name() + " is mixed (" + std::to_string(m.position_rows()) +
                      " position rows besides its velocity rows); fernandez_bloch's transversal frame (seed 003) is "
                      "for Pfaffian constraints only";
             if (m.gyroscopic())
               return "problem " + m.name() + " has a gyroscopic term qd . a(q) in its Lagrangian, which the "
                      "restricted Lagrangian does not carry";
             return {};
           }),
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<FernandezBlochFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/"refused: its transversal frame is for Pfaffian rows only"});
    r.add({"augmented_lagrangian",
           "augmented Lagrangian (Bayo, Garcia de Jalon, Serna 1988): (M + alpha A^T A) qdd = F - c - A^T lambda* - "
           "alpha A^T (Adot qd + 2 xi omega (A qd + b) + omega^2 h), lambda* += alpha (A qdd + ...) a few times; "
           "redundant constraints as they are; time-dependent constraints; with trapezoidal: index-3 ALI3-P",
           needs_constraints,
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<AugmentedLagrangianFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "omega^2 h and (with trapezoidal, ALI3-P) the index-3 iteration on the position rows; the "
           "velocity rows at velocity level"});
    r.add({"servo",
           "Beghin's servo constraints: A qd = 0 realized by a control force B^T lambda along the problem's field "
           "B (servo_direction; B = A by default), [M -B^T; A 0] by Schur on A M^-1 B^T; logs and checks the "
           "realizability A M^-1 B^T != 0 (seed 004)",
           without_time_dependence("servo", ServoFormulation::refuses),
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<ServoFormulation>(std::move(m), o);
           },
           /*uses_shape=*/false, /*mixed_rows=*/
           "B = A over every row by default; baumgarte_beta on the position rows"});
    r.add({"kinematic",
           "kinematic systems (seed 000 eq. 2.14): m = n_p, the actuated coordinates prescribed by [shape], "
           "qd_p = -W_p^-1 W_a qd_a(t), first order in q_p (one n_p x n_p LU); fails where W_p loses rank",
           without_time_dependence("kinematic", KinematicFormulation::refuses),
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<KinematicFormulation>(std::move(m), o);
           },
           /*uses_shape=*/true, /*mixed_rows=*/
           "every row at velocity level (W = A split by the actuated coordinates)"});
    r.add({"prescribed_shape",
           "under-actuated, shape q_a(t) prescribed by the run's [shape]: unknowns (qdd_p, F_a, lambda) of "
           "M qdd + c = F + A^T lambda + E_a F_a, A qdd + Adot qd = 0, one (n+m) LU; state (q_p, qd_p); records "
           "/actuator_force and /actuator_power (seed 000 eq. 2.16)",
           PrescribedShapeFormulation::refuses,
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<PrescribedShapeFormulation>(std::move(m), o);
           },
           /*uses_shape=*/true, /*mixed_rows=*/"every row at acceleration level, as kkt"});
    return r;
  }();
  return registry;
}

}  // namespace clm
