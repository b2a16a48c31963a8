// One line per formulation (DESIGN.md section 3).
#include "core/formulation.hpp"
#include "formulations/kkt_formulation.hpp"
#include "formulations/nullspace_formulation.hpp"
#include "formulations/schur_formulation.hpp"

namespace clm {

namespace {
std::string applies_to_all(const Model&) { return {}; }
}  // namespace

Registry<FormulationEntry>& formulation_registry() {
  static Registry<FormulationEntry> registry = [] {
    Registry<FormulationEntry> r("formulation");
    r.add({"kkt", "full KKT system [M -A^T; A 0], one (n+m) LU solve (seed 000 eq. 2.6)", applies_to_all,
           [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<KktFormulation>(std::move(m), o);
           }});
    r.add({"schur",
           "Schur complement for lambda: (A M^-1 A^T) lambda = A M^-1 (c - F) - Adot qd, Cholesky of M and of "
           "the m x m Schur matrix (seed 000 eq. 2.9)",
           applies_to_all, [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<SchurFormulation>(std::move(m), o);
           }});
    r.add({"nullspace",
           "null-space projection qd = S(q) v, (S^T M S) vd = S^T (F - c - M Sdot v); natural basis or "
           "coordinate partitioning re-picked when cond(A_D) grows (seed 000 eq. 2.17-2.18)",
           applies_to_all, [](std::shared_ptr<const Model> m, const FormulationOptions& o) {
             return std::make_unique<NullspaceFormulation>(std::move(m), o);
           }});
    return r;
  }();
  return registry;
}

}  // namespace clm
