// One line per formulation (DESIGN.md section 3).
#include "core/formulation.hpp"
#include "formulations/kkt_formulation.hpp"

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
    return r;
  }();
  return registry;
}

}  // namespace clm
