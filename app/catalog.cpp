#include "app/catalog.hpp"

#include <algorithm>
#include <sstream>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/value_parsing.hpp"
#include "formulations/servo_direction.hpp"

namespace clm {

namespace {

template <class Entry>
size_t name_width(const std::vector<const Entry*>& entries) {
  size_t w = 0;
  for (const auto* e : entries) w = std::max(w, e->name.size());
  return w;
}

std::string pad(const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); }

}  // namespace

std::string format_catalog(const std::string& what) {
  if (!what.empty() && what != "problems" && what != "formulations" && what != "integrators") {
    throw InputError("unknown list '" + echo_value(what) + "' (expected problems, formulations or integrators)");
  }
  std::ostringstream out;
  if (what.empty() || what == "problems") {
    const auto entries = problem_registry().all();
    const size_t w = name_width(entries);
    out << "problems (parameters: name = default  description; set with [param] name = value or --param name=value):\n";
    for (const auto* e : entries) {
      out << "  " << pad(e->name, w) << "  " << e->description << "\n";
      size_t pw = 0;
      std::vector<std::string> lhs;
      for (const auto& p : e->parameters) lhs.push_back(p.name + " = " + format_number(p.default_value));
      for (const auto& s : lhs) pw = std::max(pw, s.size());
      for (size_t i = 0; i < lhs.size(); ++i)
        out << "      " << pad(lhs[i], pw) << "  " << e->parameters[i].description << "\n";
      // The problem's own servo directions (formulation servo, [formulation] servo_direction).
      // The model must outlive the capability it owns (a temporary here was a use after free under ASan).
      const auto model = e->make({}, true);
      if (const auto* servo = model->capability<ServoDirections>()) {
        out << "      servo_direction: " << kServoConstraintDirection;
        for (const auto& name : servo->names()) out << ", " << name;
        out << "\n";
      }
      // A mixed problem's rows (core/problem.hpp, kMixed): the position rows first, as lambda's columns.
      if (model->mixed()) {
        const auto rows = model->constraint_names();
        auto named = [&](int from, int to) {
          std::string s;
          for (int r = from; r < to && r < static_cast<int>(rows.size()); ++r) s += (s.empty() ? " (" : ", ") + rows[r];
          return s.empty() ? s : s + ")";
        };
        out << "      constraints: mixed, " << model->position_rows() << " position row(s) h(q) = 0"
            << named(0, model->position_rows()) << " held as positions, then " << model->velocity_rows()
            << " velocity row(s) A(q) qd = 0" << named(model->position_rows(), model->m()) << "\n";
      }
      // The actuated (shape) coordinates a [shape] section prescribes (prescribed_shape, kinematic).
      if (!model->actuated_coordinates().empty()) {
        const auto names = model->coordinate_names();
        out << "      actuated ([shape]):";
        for (int i : model->actuated_coordinates())
          out << " " << (i < static_cast<int>(names.size()) ? names[i] : "q" + std::to_string(i + 1));
        out << "\n";
      }
    }
    out << "  or a mechanism file: --problem PATH.toml (docs/mechanism-files.md; shipped in mechanisms/)\n";
  }
  if (what.empty() || what == "formulations") {
    if (what.empty()) out << "\n";
    const auto entries = formulation_registry().all();
    const size_t w = name_width(entries);
    out << "formulations:  (what it does with a mixed model's position and velocity rows)\n";
    for (const auto* e : entries) {
      out << "  " << pad(e->name, w) << "  " << e->description << "\n";
      if (!e->mixed_rows.empty()) out << "  " << pad("", w) << "  mixed: " << e->mixed_rows << "\n";
    }
  }
  if (what.empty() || what == "integrators") {
    if (what.empty()) out << "\n";
    const auto entries = integrator_registry().all();
    const size_t w = name_width(entries);
    out << "integrators:  (order; what it accepts)\n";
    for (const auto* e : entries) {
      const auto method = e->make();
      out << "  " << pad(e->name, w) << "  " << e->description << "\n"
          << "  " << pad("", w) << "  order " << method->order() << (method->adaptive() ? ", adaptive" : ", fixed step")
          << "; accepts " << method->accepts() << "\n";
    }
  }
  return out.str();
}

}  // namespace clm
