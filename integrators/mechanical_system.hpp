// The constrained mechanical system as the structure-preserving integrators see it (rattle, verlet's
// variational form, dla, nh_rattle, ida): not a formulation's ODE but the Model itself, M(q) qdd + c = F +
// A^T lambda with h(q) = 0 or A(q) qd = 0, reached through the kkt formulation that names it on the command
// line (docs/design.md section 3). The state they advance is kkt's y = (q, qd).
#pragma once

#include <string>

#include "core/formulation.hpp"
#include "core/ode.hpp"

namespace clm {

// "" when `method` can run with formulation f, else one line: these methods run with --formulation kkt only.
std::string kkt_only_refusal(const std::string& method, const Formulation& f);

// "" when `method` can integrate the model, else one line: the structure-preserving methods (rattle, verlet,
// dla, nh_rattle) and ida are written for h(q) = 0 / A(q) qd = 0 and V(q); time-dependent problems
// (core/problem.hpp: h(q, t), A(q) qd + b(q, t) = 0, V(q, t)) are refused rather than integrated wrongly.
std::string time_dependence_refusal(const std::string& method, const Model& model);

// The kkt formulation behind the system an integrator was bound to; InputError (the refusal above) when
// the system is anything else.
const Formulation& mechanical_system(const std::string& method, const OdeSystem& sys);

}  // namespace clm
