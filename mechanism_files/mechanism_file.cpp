#include "mechanism_files/mechanism_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <cstdio>
#include <sstream>
// toml++ 3.3 states preconditions its parser does not always meet on malformed input (a table header broken by
// newlines reaches parse_key on a character no key starts with: found by fuzz/fuzz_mechanism.cpp). Debug builds
// abort on them; release builds under clang turn them into __builtin_assume, undefined behaviour. Its own error
// path handles that input ("expected bare key starting character"), so it is included with those assertions
// neither checked nor assumed; <cassert> is included again after, for this file's own NDEBUG state.
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")
#include <cassert>

#include "core/input_changed.hpp"
#include "core/input_file.hpp"
#include "core/number_range.hpp"
#include "core/sha256.hpp"
#include "core/value_parsing.hpp"
#include "mechanism_files/dimensions.hpp"
#include "mechanism_files/expression_parser.hpp"

namespace clm {

namespace {

struct Where {
  int line = 0, column = 0;
};
Where where(const toml::node& n) { return {static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)}; }

class Reader {
 public:
  Reader(const toml::table& root, std::string path) : root_(root), path_(std::move(path)) {}

  MechanismFile read() {
    MechanismFile f;
    f.path = path_;
    check_keys(root_, "the top level",
               {"name", "description", "coordinates", "units", "parameters", "let", "energy", "forces", "constraints",
                "initial", "actuated", "velocity_basis", "transversal_frame", "closed_form", "reference", "points",
                "body_velocities", "bodies", "rolling", "gravity", "joint"});
    f.name = required_string(root_, "name");
    if (f.name.empty()) fail_at(root_["name"].node(), "name must not be empty");
    for (char c : f.name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
        fail_at(root_["name"].node(), "name '" + echo_value(f.name) + "' may hold letters, digits, '_' and '-' only");
    if (auto d = root_["description"]) f.description = string_of(*d.node(), "description");
    f.coordinates = string_array(root_, "coordinates", true);
    if (f.coordinates.empty()) fail_at(root_["coordinates"].node(), "coordinates must name at least one coordinate");
    if (root_["units"]) {
      f.units = string_array(root_, "units", false);
      if (f.units.size() != f.coordinates.size())
        fail_at(root_["units"].node(), "units has " + std::to_string(f.units.size()) + " entries for " +
                                           std::to_string(f.coordinates.size()) + " coordinates");
      const toml::array& arr = *root_["units"].as_array();
      for (std::size_t i = 0; i < f.units.size(); ++i) check_unit(arr[i], f.units[i], "coordinate " + f.coordinates[i]);
    } else {
      f.units.assign(f.coordinates.size(), "");
    }
    // Names: one namespace for coordinates, parameters, [let], t, der and the functions.
    std::set<std::string> taken;
    auto claim = [&](const std::string& name, int line, int column, const char* what) {
      if (!valid_identifier(name))
        throw_at(path_, line, column, std::string(what) + " '" + echo_value(name) + "' is not a name (a letter or '_', then letters, digits, '_')");
      if (reserved(name)) throw_at(path_, line, column, std::string(what) + " '" + name + "' is a reserved name");
      if (!taken.insert(name).second) throw_at(path_, line, column, "duplicate name '" + name + "'");
    };
    {
      const toml::array& arr = *root_["coordinates"].as_array();
      for (std::size_t i = 0; i < f.coordinates.size(); ++i) {
        const Where w = where(arr[i]);
        claim(f.coordinates[i], w.line, w.column, "coordinate");
      }
    }
    if (auto p = root_["parameters"]) {
      const toml::table* t = p.as_table();
      if (!t) fail_at(p.node(), "[parameters] must be a table");
      for (auto&& [key, node] : *t) {
        MechanismParameter par;
        par.name = std::string(key.str());
        const Where w = where(node);
        par.line = w.line;
        par.column = w.column;
        claim(par.name, w.line, w.column, "parameter");
        if (node.is_number()) {
          par.value = double_of(node);
        } else if (const toml::table* spec = node.as_table()) {
          check_keys(*spec, "parameter " + par.name, {"value", "unit", "description", "min", "max"});
          par.value = required_number(*spec, "value", "parameter " + par.name);
          if (auto u = (*spec)["unit"]) {
            par.unit = string_of(*u.node(), "unit");
            check_unit(*u.node(), par.unit, "parameter " + par.name);
          }
          if (auto d = (*spec)["description"]) par.description = string_of(*d.node(), "description");
          if (auto lo = (*spec)["min"]) par.min = number_of(*lo.node(), "min");
          if (auto hi = (*spec)["max"]) par.max = number_of(*hi.node(), "max");
        } else {
          throw_at(path_, w.line, w.column, "parameter " + par.name + " must be a number or a table { value = ..., unit = ..., ... }");
        }
        if (!std::isfinite(par.value)) throw_at(path_, w.line, w.column, "parameter " + par.name + " must be finite");
        f.parameters.push_back(par);
      }
      // In the order the file writes them (toml++ keeps a table's keys sorted).
      std::stable_sort(f.parameters.begin(), f.parameters.end(), [](const MechanismParameter& a, const MechanismParameter& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
      });
    }
    if (auto l = root_["let"]) {
      const toml::table* t = l.as_table();
      if (!t) fail_at(l.node(), "[let] must be a table of name = \"expression\"");
      for (auto&& [key, node] : *t) {
        const std::string name(key.str());
        const Where w = where(node);
        claim(name, w.line, w.column, "[let] name");
        f.lets[name] = expression_of(node, "[let] " + name);
      }
    }
    read_bodies(f);
    // With [bodies] the energies are theirs, and [energy] holds what the bodies do not (optional).
    const bool bodies = !f.bodies.empty();
    const toml::table* energy = root_["energy"].as_table();
    if (!energy && root_["energy"]) fail_at(root_["energy"].node(), "[energy] must be a table with T and V");
    if (!energy && !bodies)
      throw_at(path_, 1, 1, "missing [energy] section (T = \"kinetic energy\", V = \"potential\") or [bodies]");
    if (energy) check_keys(*energy, "[energy]", {"T", "V"});
    if (energy && (*energy)["T"]) f.kinetic = expression_of(*(*energy)["T"].node(), "T");
    else if (bodies) f.kinetic = {"0", f.bodies.front().line, f.bodies.front().column};
    else fail_at(root_["energy"].node(), "[energy] needs T, the kinetic energy");
    if (energy && (*energy)["V"]) f.potential = expression_of(*(*energy)["V"].node(), "V");
    else f.potential = {"0", 0, 0};
    if (auto fo = root_["forces"]) {
      const toml::table* t = fo.as_table();
      if (!t) fail_at(fo.node(), "[forces] must be a table of coordinate = \"generalized force\"");
      for (auto&& [key, node] : *t) {
        const std::string name(key.str());
        const auto it = std::find(f.coordinates.begin(), f.coordinates.end(), name);
        const Where w = where(node);
        if (it == f.coordinates.end())
          throw_at(path_, w.line, w.column, "[forces] key '" + echo_value(name) + "' is not a coordinate (coordinates: " + join(f.coordinates) + ")");
        f.forces.emplace_back(static_cast<int>(it - f.coordinates.begin()), expression_of(node, "force on " + name));
      }
    }
    if (auto c = root_["constraints"]) {
      const toml::table* t = c.as_table();
      if (!t) fail_at(c.node(), "[constraints] must be a table with position and velocity arrays");
      check_keys(*t, "[constraints]", {"position", "velocity"});
      f.position_rows = expression_rows(*t, "position", f.position_names);
      f.velocity_rows = expression_rows(*t, "velocity", f.velocity_names);
      // Named rows label lambda's columns: every row then needs a name, and each name is used once.
      // A list gives empty names, a table none empty: a list beside a table is the mix refused here.
      const bool position_named = !f.position_names.empty() && !f.position_names.front().empty();
      const bool velocity_named = !f.velocity_names.empty() && !f.velocity_names.front().empty();
      if (position_named || velocity_named) {
        for (const auto& [key, names] : {std::pair{"position", &f.position_names}, std::pair{"velocity", &f.velocity_names}})
          if (!names->empty() && names->front().empty())
            fail_at((*t)[key].node(), std::string("constraints.") + key + " is a list of unnamed rows while the other kind "
                                      "names its rows: name every row, " + key + " = { name = \"expression\", ... }, or none");
        const std::vector<std::string> all = f.constraint_names();
        for (std::size_t i = 0; i < all.size(); ++i)
          for (std::size_t j = 0; j < i; ++j)
            if (all[i] == all[j]) {
              const bool velocity = i >= f.position_names.size();
              const SourceText& row = velocity ? f.velocity_rows[i - f.position_names.size()] : f.position_rows[i];
              throw_at(path_, row.line, row.column, "constraint row name '" + all[i] + "' is used twice (each row's name labels its multiplier)");
            }
      }
    }
    const toml::table* initial = root_["initial"].as_table();
    if (!initial) {
      if (root_["initial"]) fail_at(root_["initial"].node(), "[initial] must be a table with q and qd");
      throw_at(path_, 1, 1, "missing [initial] section (q = [...], qd = [...])");
    }
    check_keys(*initial, "[initial]", {"q", "qd"});
    f.q0 = initial_values(*initial, "q", f.coordinates.size());
    if ((*initial)["qd"]) f.qd0 = initial_values(*initial, "qd", f.coordinates.size());
    read_optional_sections(f);
    return f;
  }

 private:
  // actuated, [velocity_basis], [transversal_frame], [closed_form], [reference], [points], [body_velocities].
  void read_optional_sections(MechanismFile& f) const {
    const std::size_t n = f.coordinates.size();
    if (auto a = root_["actuated"]) {
      const std::vector<std::string> names = string_array(root_, "actuated", false);
      const toml::array& arr = *a.as_array();
      for (std::size_t k = 0; k < names.size(); ++k) {
        const auto it = std::find(f.coordinates.begin(), f.coordinates.end(), names[k]);
        if (it == f.coordinates.end())
          fail_at(&arr[k], "actuated coordinate '" + echo_value(names[k]) + "' is not a coordinate (coordinates: " +
                               join(f.coordinates) + ")");
        const int i = static_cast<int>(it - f.coordinates.begin());
        if (std::find(f.actuated.begin(), f.actuated.end(), i) != f.actuated.end())
          fail_at(&arr[k], "actuated coordinate '" + names[k] + "' is named twice");
        f.actuated.push_back(i);
      }
      if (f.actuated.size() == n) fail_at(a.node(), "every coordinate is actuated: at least one must be passive");
      std::sort(f.actuated.begin(), f.actuated.end());
    }
    auto columns = [&](const char* section, std::vector<std::vector<SourceText>>& out, SourceText& at) {
      auto node = root_[section];
      if (!node) return;
      const toml::table* t = node.as_table();
      const std::string what = std::string("[") + section + "]";
      if (!t) fail_at(node.node(), what + " must be a table with columns = [[...], ...]");
      check_keys(*t, what, {"columns"});
      const Where w = where(*node.node());
      at = {"", w.line, w.column};
      const toml::array* cols = (*t)["columns"].as_array();
      if (!cols) fail_at((*t)["columns"] ? (*t)["columns"].node() : node.node(), what + " needs columns = [[n expressions], ...]");
      // An empty list read as "no section" (issue 43): a section that is there states its columns.
      if (cols->empty())
        fail_at((*t)["columns"].node(), what + " has columns = [] (no columns): write its columns, or leave the "
                                              "section out");
      for (const toml::node& col : *cols) {
        const toml::array* entries = col.as_array();
        if (!entries) fail_at(&col, "each column of " + what + " must be an array of " + std::to_string(n) + " expressions");
        if (entries->size() != n)
          fail_at(&col, "a column of " + what + " has " + std::to_string(entries->size()) + " entries for " +
                            std::to_string(n) + " coordinates");
        std::vector<SourceText> column;
        for (const toml::node& e : *entries) column.push_back(expression_of(e, "an entry of " + what));
        out.push_back(std::move(column));
      }
    };
    columns("velocity_basis", f.velocity_basis, f.velocity_basis_at);
    columns("transversal_frame", f.transversal_frame, f.transversal_frame_at);
    if (auto c = root_["closed_form"]) {
      const toml::table* t = c.as_table();
      if (!t) fail_at(c.node(), "[closed_form] must be a table with q = [...] and optionally qd = [...]");
      check_keys(*t, "[closed_form]", {"q", "qd"});
      const Where w = where(*c.node());
      f.closed_form_at = {"", w.line, w.column};
      if (!(*t)["q"]) fail_at(c.node(), "[closed_form] needs q = [one expression in t per coordinate]");
      f.closed_form_q = sized_expressions(*t, "q", n, "[closed_form]");
      if ((*t)["qd"]) f.closed_form_qd = sized_expressions(*t, "qd", n, "[closed_form]");
    }
    if (auto r = root_["reference"]) {
      const toml::table* t = r.as_table();
      if (!t) fail_at(r.node(), "[reference] must be a table with t, q, qd, source (and optionally lambda, description)");
      check_keys(*t, "[reference]", {"t", "q", "qd", "lambda", "source", "description"});
      MechanismFile::Reference ref;
      const Where w = where(*r.node());
      ref.line = w.line;
      ref.column = w.column;
      ref.t = required_number(*t, "t", "[reference]");
      if (!(ref.t > 0)) fail_at((*t)["t"].node(), "[reference] t must be positive (the values at the end of a run from t = 0)");
      ref.q = numbers(*t, "q", n, "[reference]");
      ref.qd = numbers(*t, "qd", n, "[reference]");
      if ((*t)["lambda"]) ref.lambda = numbers(*t, "lambda", std::nullopt, "[reference]");
      if (!(*t)["source"]) fail_at(r.node(), "[reference] needs source = \"where the values were published\"");
      ref.source = string_of(*(*t)["source"].node(), "[reference] source");
      if (ref.source.empty()) fail_at((*t)["source"].node(), "[reference] source must not be empty");
      if ((*t)["description"]) ref.description = string_of(*(*t)["description"].node(), "[reference] description");
      f.reference = std::move(ref);
    }
    if (auto p = root_["points"]) {
      const toml::table* t = p.as_table();
      if (!t) fail_at(p.node(), "[points] must be a table of NAME = [\"x\", \"y\"] or NAME = { position = [...], unit = \"m\" }");
      for (auto&& [key, node] : *t) {
        MechanismFile::Point point;
        point.name = std::string(key.str());
        const Where w = where(node);
        point.line = w.line;
        point.column = w.column;
        if (!valid_identifier(point.name))
          fail_at(&node, "point '" + echo_value(point.name) + "' is not a name (a letter or '_', then letters, digits, '_')");
        const toml::table* spec = node.as_table();
        if (spec) {
          check_keys(*spec, "point " + point.name, {"position", "unit"});
          if ((*spec)["unit"]) {
            point.unit = string_of(*(*spec)["unit"].node(), "point " + point.name + " unit");
            check_unit(*(*spec)["unit"].node(), point.unit, "point " + point.name);
          }
          if (!(*spec)["position"]) fail_at(&node, "point " + point.name + " needs position = [\"x\", \"y\"]");
        }
        const toml::array* arr = spec ? (*spec)["position"].as_array() : node.as_array();
        if (!arr) fail_at(&node, "point " + point.name + " must be an array of 2 or 3 expressions in q (x, y(, z))");
        if (arr->size() < 2 || arr->size() > 3)
          fail_at(&node, "point " + point.name + " has " + std::to_string(arr->size()) + " components: 2 (x, y) or 3 (x, y, z)");
        for (const toml::node& e : *arr) point.position.push_back(expression_of(e, "a component of point " + point.name));
        f.points.push_back(std::move(point));
      }
      std::stable_sort(f.points.begin(), f.points.end(), [](const MechanismFile::Point& a, const MechanismFile::Point& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
      });
    }
    if (auto b = root_["body_velocities"]) {
      const toml::table* t = b.as_table();
      if (!t)
        fail_at(b.node(), "[body_velocities] must be a table of NAME = \"expression\" or NAME = { value = \"...\", "
                          "unit = \"m/s\", description = \"...\" }");
      for (auto&& [key, node] : *t) {
        MechanismFile::BodyVelocity v;
        v.name = std::string(key.str());
        const Where w = where(node);
        v.line = w.line;
        v.column = w.column;
        if (!valid_identifier(v.name))
          fail_at(&node, "body velocity '" + echo_value(v.name) + "' is not a name (a letter or '_', then letters, digits, '_')");
        const toml::table* spec = node.as_table();
        if (spec) {
          check_keys(*spec, "body velocity " + v.name, {"value", "unit", "description"});
          if ((*spec)["unit"]) {
            v.unit = string_of(*(*spec)["unit"].node(), "body velocity " + v.name + " unit");
            check_unit(*(*spec)["unit"].node(), v.unit, "body velocity " + v.name);
          }
          if ((*spec)["description"])
            v.description = string_of(*(*spec)["description"].node(), "body velocity " + v.name + " description");
          if (!(*spec)["value"]) fail_at(&node, "body velocity " + v.name + " needs value = \"expression in q, der(q) and t\"");
          v.value = expression_of(*(*spec)["value"].node(), "body velocity " + v.name);
        } else {
          if (!node.is_string())
            fail_at(&node, "body velocity " + v.name + " must be an expression in q, der(q) and t (a string), or "
                           "{ value = \"...\", unit = \"m/s\" }");
          v.value = expression_of(node, "body velocity " + v.name);
        }
        f.body_velocities.push_back(std::move(v));
      }
      std::stable_sort(f.body_velocities.begin(), f.body_velocities.end(),
                       [](const MechanismFile::BodyVelocity& a, const MechanismFile::BodyVelocity& b) {
                         return a.line != b.line ? a.line < b.line : a.column < b.column;
                       });
    }
  }
  // [bodies.NAME], [[rolling]], [gravity] (issue 41).
  void read_bodies(MechanismFile& f) const {
    using Body = MechanismFile::Body;
    auto expressions = [&](const toml::node& n, std::size_t lo, std::size_t hi, const std::string& what) {
      const toml::array* arr = n.as_array();
      if (!arr || arr->size() < lo || arr->size() > hi)
        fail_at(&n, what + " must be an array of " +
                        (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                        " expressions");
      std::vector<SourceText> out;
      for (const toml::node& e : *arr) out.push_back(expression_of(e, "an entry of " + what));
      return out;
    };
    // The body a [[rolling]] or [[joint]] names, or one line naming the bodies there are (`or_ground`: ", or ground").
    auto body_named = [&](const std::string& name, const toml::node* at, const std::string& what,
                          const std::string& or_ground) -> const Body& {
      const auto b = std::find_if(f.bodies.begin(), f.bodies.end(), [&](const Body& x) { return x.name == name; });
      if (b == f.bodies.end()) {
        std::string known;
        for (const Body& x : f.bodies) known += (known.empty() ? "" : ", ") + x.name;
        fail_at(at, what + " '" + echo_value(name) + "' is not a body (bodies: " + (known.empty() ? "none" : known) +
                        or_ground + ")");
      }
      return *b;
    };
    if (auto bs = root_["bodies"]) {
      const toml::table* t = bs.as_table();
      if (!t) fail_at(bs.node(), "[bodies] must hold tables [bodies.NAME] with mass, position (and inertia, orientation)");
      for (auto&& [key, node] : *t) {
        Body b;
        b.name = std::string(key.str());
        const Where w = where(node);
        b.line = w.line;
        b.column = w.column;
        if (!valid_identifier(b.name))
          fail_at(&node, "body '" + echo_value(b.name) + "' is not a name (a letter or '_', then letters, digits, '_')");
        const std::string what = "body " + b.name;
        const toml::table* spec = node.as_table();
        if (!spec) fail_at(&node, what + " must be a table [bodies." + b.name + "] with mass, position (and inertia, orientation)");
        check_keys(*spec, what, {"mass", "inertia", "position", "orientation"});
        if (!(*spec)["mass"]) fail_at(&node, what + " needs mass");
        b.mass = expression_of(*(*spec)["mass"].node(), what + " mass");
        if (!(*spec)["position"]) fail_at(&node, what + " needs position = [x, y(, z)], its centre of mass in the space frame");
        b.position = expressions(*(*spec)["position"].node(), 2, 3, what + " position");
        const bool planar = b.position.size() == 2;
        if (auto o = (*spec)["orientation"]) {
          const toml::table* ot = o.as_table();
          if (!ot)
            fail_at(o.node(), what + " orientation must be a table: { euler = \"ZXZ\", angles = [...] }, "
                                     "{ quaternion = [e0, e1, e2, e3] } or { angle = \"theta\" } (planar)");
          check_keys(*ot, what + " orientation", {"euler", "angles", "quaternion", "angle"});
          const int kinds = ((*ot)["euler"] ? 1 : 0) + ((*ot)["quaternion"] ? 1 : 0) + ((*ot)["angle"] ? 1 : 0);
          if (kinds != 1) fail_at(o.node(), what + " orientation needs exactly one of euler, quaternion, angle");
          if (auto e = (*ot)["euler"]) {
            if (planar) fail_at(e.node(), what + " is planar (2 position entries): its orientation is { angle = \"...\" }");
            b.orientation = Body::Orientation::kEuler;
            b.sequence = string_of(*e.node(), what + " euler");
            const bool axes = b.sequence.size() == 3 && b.sequence.find_first_not_of("XYZ") == std::string::npos;
            if (!axes || b.sequence[0] == b.sequence[1] || b.sequence[1] == b.sequence[2])
              fail_at(e.node(), "Euler sequence '" + echo_value(b.sequence) + "' does not exist (three of X, Y, Z, no "
                                "axis twice in a row: ZXZ, ZYX, XYZ, ...)");
            if (!(*ot)["angles"]) fail_at(o.node(), what + " orientation needs angles = [a1, a2, a3] with its euler sequence");
            b.angles = expressions(*(*ot)["angles"].node(), 3, 3, what + " angles");
          } else if (auto qn = (*ot)["quaternion"]) {
            if (planar) fail_at(qn.node(), what + " is planar (2 position entries): its orientation is { angle = \"...\" }");
            if ((*ot)["angles"]) fail_at((*ot)["angles"].node(), what + " orientation: angles go with euler");
            b.orientation = Body::Orientation::kQuaternion;
            b.angles = expressions(*qn.node(), 4, 4, what + " quaternion");
          } else {
            const auto a = (*ot)["angle"];
            if (!planar) fail_at(a.node(), what + " has 3 position entries: its orientation is euler or quaternion");
            if ((*ot)["angles"]) fail_at((*ot)["angles"].node(), what + " orientation: angles go with euler");
            b.orientation = Body::Orientation::kAngle;
            b.angles = {expression_of(*a.node(), what + " angle")};
          }
        }
        if (auto in = (*spec)["inertia"]) {
          if (b.orientation == Body::Orientation::kNone)
            fail_at(in.node(), what + " has an inertia but no orientation (a body without one is a point mass)");
          if (planar) {
            if (in.node()->is_array()) b.inertia = expressions(*in.node(), 1, 1, what + " inertia");
            else b.inertia = {expression_of(*in.node(), what + " inertia")};
          } else {
            b.inertia = expressions(*in.node(), 3, 6, what + " inertia");
            if (b.inertia.size() != 3 && b.inertia.size() != 6)
              fail_at(in.node(), what + " inertia has " + std::to_string(b.inertia.size()) +
                                     " entries: 3 principal moments or 6 (Ixx, Iyy, Izz, Ixy, Ixz, Iyz)");
          }
        } else if (b.orientation != Body::Orientation::kNone) {
          fail_at(&node, what + " has an orientation and needs its inertia");
        }
        f.bodies.push_back(std::move(b));
      }
      std::stable_sort(f.bodies.begin(), f.bodies.end(), [](const Body& a, const Body& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
      });
    }
    if (auto r = root_["rolling"]) {
      const toml::array* arr = r.as_array();
      if (!arr) fail_at(r.node(), "rolling must be an array of tables [[rolling]] with body and contact");
      for (const toml::node& node : *arr) {
        const toml::table* spec = node.as_table();
        if (!spec) fail_at(&node, "each [[rolling]] must be a table with body and contact");
        check_keys(*spec, "[[rolling]]", {"body", "contact", "no_spin"});
        MechanismFile::Rolling roll;
        const Where w = where(node);
        roll.line = w.line;
        roll.column = w.column;
        if (!(*spec)["body"]) fail_at(&node, "[[rolling]] needs body = \"NAME\" of a [bodies.NAME]");
        roll.body = string_of(*(*spec)["body"].node(), "[[rolling]] body");
        const Body& body = body_named(roll.body, (*spec)["body"].node(), "[[rolling]] body", "");
        if (body.position.size() != 3 || body.orientation == Body::Orientation::kNone)
          fail_at((*spec)["body"].node(), "[[rolling]] body " + roll.body + " must have 3 position entries and an "
                                          "orientation (it rolls on the plane z = 0)");
        if (!(*spec)["contact"]) fail_at(&node, "[[rolling]] needs contact = [x, y, z], the contact point minus the centre of mass");
        roll.contact = expressions(*(*spec)["contact"].node(), 3, 3, "[[rolling]] contact");
        if (auto ns = (*spec)["no_spin"]) {
          if (!ns.is_boolean()) fail_at(ns.node(), "[[rolling]] no_spin must be true or false");
          roll.no_spin = ns.as_boolean()->get();
        }
        f.rolling.push_back(std::move(roll));
      }
    }
    if (auto js = root_["joint"]) {
      const toml::array* arr = js.as_array();
      if (!arr) fail_at(js.node(), "joint must be an array of tables [[joint]] with kind, body, point (and to, to_point)");
      for (const toml::node& node : *arr) {
        const toml::table* spec = node.as_table();
        if (!spec) fail_at(&node, "each [[joint]] must be a table with kind, body, point (and to, to_point)");
        check_keys(*spec, "[[joint]]", {"kind", "body", "point", "to", "to_point", "axis", "to_axis"});
        MechanismFile::Joint joint;
        const Where w = where(node);
        joint.line = w.line;
        joint.column = w.column;
        if (!(*spec)["kind"]) fail_at(&node, "[[joint]] needs kind = \"spherical\" or \"revolute\"");
        joint.kind = string_of(*(*spec)["kind"].node(), "[[joint]] kind");
        if (joint.kind != "spherical" && joint.kind != "revolute")
          fail_at((*spec)["kind"].node(), "[[joint]] kind '" + echo_value(joint.kind) + "' is not spherical or revolute");
        auto a_body = [&](const char* key, bool ground_allowed) {
          const std::string name = string_of(*(*spec)[key].node(), std::string("[[joint]] ") + key);
          if (ground_allowed && name == "ground") return name;
          const Body& b = body_named(name, (*spec)[key].node(), std::string("[[joint]] ") + key,
                                     ground_allowed ? "; or ground" : "");
          if (b.position.size() != 3)
            fail_at((*spec)[key].node(), "[[joint]] body " + name + " must have 3 position entries");
          return name;
        };
        if (!(*spec)["body"]) fail_at(&node, "[[joint]] needs body = \"NAME\" of a [bodies.NAME]");
        joint.body = a_body("body", false);
        if ((*spec)["to"]) joint.to = a_body("to", true);
        if (joint.to == joint.body) fail_at((*spec)["to"].node(), "[[joint]] joins body " + joint.body + " to itself");
        if (!(*spec)["point"]) fail_at(&node, "[[joint]] needs point = [x, y, z] in the body's frame, from its centre of mass");
        joint.point = expressions(*(*spec)["point"].node(), 3, 3, "[[joint]] point");
        if ((*spec)["to_point"]) joint.to_point = expressions(*(*spec)["to_point"].node(), 3, 3, "[[joint]] to_point");
        else joint.to_point = {{"0", w.line, w.column}, {"0", w.line, w.column}, {"0", w.line, w.column}};
        if (joint.kind == "revolute") {
          if (!(*spec)["axis"] || !(*spec)["to_axis"])
            fail_at(&node, "a revolute [[joint]] needs axis = [...] (body frame) and to_axis = [...] (the other's frame)");
          joint.axis = expressions(*(*spec)["axis"].node(), 3, 3, "[[joint]] axis");
          joint.to_axis = expressions(*(*spec)["to_axis"].node(), 3, 3, "[[joint]] to_axis");
        } else if ((*spec)["axis"] || (*spec)["to_axis"]) {
          fail_at((*spec)[(*spec)["axis"] ? "axis" : "to_axis"].node(), "a spherical [[joint]] has no axis");
        }
        f.joints.push_back(std::move(joint));
      }
    }
    if (auto g = root_["gravity"]) {
      const toml::table* t = g.as_table();
      if (!t) fail_at(g.node(), "[gravity] must be a table with g = [gx, gy(, gz)]");
      check_keys(*t, "[gravity]", {"g"});
      if (!(*t)["g"]) fail_at(g.node(), "[gravity] needs g = [gx, gy(, gz)]");
      if (f.bodies.empty()) fail_at(g.node(), "[gravity] acts on [bodies]: the file has none (write the potential in V)");
      f.gravity = expressions(*(*t)["g"].node(), 2, 3, "[gravity] g");
      const Where w = where(*g.node());
      f.gravity_at = {"", w.line, w.column};
    }
  }
  std::vector<SourceText> sized_expressions(const toml::table& t, const char* key, std::size_t n, const std::string& what) const {
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), what + " " + key + " must be an array of expressions");
    if (arr->size() != n)
      fail_at(t[key].node(), what + " " + key + " has " + std::to_string(arr->size()) + " entries for " + std::to_string(n) +
                                 " coordinates");
    std::vector<SourceText> out;
    for (const toml::node& el : *arr) out.push_back(expression_of(el, what + " " + key));
    return out;
  }
  std::vector<double> numbers(const toml::table& t, const char* key, std::optional<std::size_t> n, const std::string& what) const {
    if (!t[key]) fail_at(&t, what + " needs " + key);
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), what + " " + key + " must be an array of numbers");
    if (n && arr->size() != *n)
      fail_at(t[key].node(), what + " " + key + " has " + std::to_string(arr->size()) + " entries for " + std::to_string(*n) +
                                 " coordinates");
    std::vector<double> out;
    for (const toml::node& el : *arr) out.push_back(number_of(el, what + " " + key + " entry"));
    return out;
  }

  static bool valid_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }
  static bool reserved(const std::string& s) {
    static const std::set<std::string> kReserved = {"t", "pi", "der",  "sin",  "cos",  "tan",  "asin", "acos",
                                                    "atan", "atan2", "sinh", "cosh", "tanh", "exp",  "log",
                                                    "sqrt", "abs",  "min",  "max",  "pow",  "sign"};
    return kReserved.count(s) > 0 || (s.size() > 4 && s.substr(s.size() - 4) == "_dot");
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }
  [[noreturn]] void fail_at(const toml::node* n, const std::string& message) const {
    if (!n) throw_at(path_, 1, 1, message);
    const Where w = where(*n);
    throw_at(path_, w.line, w.column, message);
  }
  void check_keys(const toml::table& t, const std::string& what, std::initializer_list<const char*> known) const {
    for (auto&& [key, node] : t) {
      bool ok = false;
      for (const char* k : known) ok = ok || key.str() == k;
      if (!ok) {
        std::string names;
        for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
        const Where w = where(node);
        throw_at(path_, w.line, w.column, "unknown key '" + echo_value(std::string(key.str())) + "' in " + what + " (known: " + names + ")");
      }
    }
  }
  std::string string_of(const toml::node& n, const std::string& what) const {
    if (const auto* s = n.as_string()) return s->get();
    fail_at(&n, what + " must be a string");
  }
  // A TOML number as a double: an integer beyond 2^53 (9007199254740993) is the nearest double, as any decimal
  // literal is (toml++'s value<double>() refuses the inexact conversion: issue 43, "must be a number or a table",
  // and a dereferenced empty optional where a min or max was such an integer).
  static double double_of(const toml::node& n) {
    if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
    if (const auto* f = n.as_floating_point()) return f->get();
    return std::numeric_limits<double>::quiet_NaN();
  }
  double number_of(const toml::node& n, const std::string& what) const {
    if (!n.is_number()) fail_at(&n, what + " must be a number");
    const double v = double_of(n);
    if (!std::isfinite(v)) fail_at(&n, what + " must be finite");
    return v;
  }
  std::string required_string(const toml::table& t, const char* key) const {
    if (!t[key]) throw_at(path_, 1, 1, std::string("missing ") + key);
    return string_of(*t[key].node(), key);
  }
  double required_number(const toml::table& t, const char* key, const std::string& what) const {
    if (!t[key]) fail_at(&t, what + " needs " + key);
    return number_of(*t[key].node(), what + " " + key);
  }
  std::vector<std::string> string_array(const toml::table& t, const char* key, bool required) const {
    if (!t[key]) {
      if (required) throw_at(path_, 1, 1, std::string("missing ") + key + " = [\"...\", ...]");
      return {};
    }
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), std::string(key) + " must be an array of strings");
    std::vector<std::string> out;
    for (const toml::node& el : *arr) out.push_back(string_of(el, std::string("each entry of ") + key));
    return out;
  }
  std::vector<SourceText> initial_values(const toml::table& t, const char* key, std::size_t n) const {
    if (!t[key]) fail_at(&t, std::string("[initial] needs ") + key);
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), std::string(key) + " must be an array of numbers (or expressions in the parameters)");
    if (arr->size() != n)
      fail_at(t[key].node(), std::string(key) + " has " + std::to_string(arr->size()) + " entries for " +
                                 std::to_string(n) + " coordinates");
    std::vector<SourceText> out;
    for (const toml::node& el : *arr) out.push_back(expression_of(el, std::string("each entry of ") + key));
    return out;
  }
  // An expression: a string (its first character's position: one past the opening quote of a one-line string)
  // or a number.
  // A declared unit must be one the dimensional analysis reads (mechanism_files/dimensions.hpp): a misspelt unit
  // would otherwise leave everything that reads the name unchecked without a word. Empty: no unit (unchecked).
  void check_unit(const toml::node& n, const std::string& unit, const std::string& what) const {
    if (unit.empty()) return;
    std::string why;
    if (!parse_unit(unit, &why))
      fail_at(&n, "unit '" + echo_value(unit) + "' of " + what + " is not one the suite reads (" + why +
                     "): SI symbols (kg m s A K mol cd) with the prefixes n u m c k M G, N J W Pa Hz C V Ohm, rad deg "
                     "rev sr, min h l, '^' for powers, '/' and spaces between factors, '-' for dimensionless; "
                     "write no unit to leave it unchecked");
  }
  SourceText expression_of(const toml::node& n, const std::string& what) const {
    const Where w = where(n);
    if (const auto* s = n.as_string()) return {s->get(), w.line, w.column + 1};
    if (n.is_number()) {
      // 17 significant digits: the number the file wrote, to the bit, when parsed back.
      const double v = double_of(n);
      if (!std::isfinite(v)) throw_at(path_, w.line, w.column, what + " must be finite");
      std::ostringstream text;
      text.precision(17);
      text << v;
      return {text.str(), w.line, w.column};
    }
    throw_at(path_, w.line, w.column, what + " must be an expression in a string");
  }
  // constraints.position / constraints.velocity: a list of expressions, or an inline table of named rows
  // { name = "expression", ... } in the order written (toml++ keeps keys sorted: re-sorted by source position).
  // `names` gets one entry per row (empty for a list).
  std::vector<SourceText> expression_rows(const toml::table& t, const char* key, std::vector<std::string>& names) const {
    names.clear();
    if (!t[key]) return {};
    if (const toml::table* rows = t[key].as_table()) {
      std::vector<std::pair<std::string, SourceText>> named;
      for (const auto& [name_key, node] : *rows) {
        const std::string name(name_key.str());
        if (!valid_identifier(name))
          fail_at(&node, "constraint row '" + echo_value(name) + "' is not a name (a letter or '_', then letters, digits, '_')");
        named.emplace_back(name, expression_of(node, std::string(key) + " row " + name));
      }
      std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) {
        return a.second.line != b.second.line ? a.second.line < b.second.line : a.second.column < b.second.column;
      });
      std::vector<SourceText> out;
      for (auto& [name, text] : named) {
        names.push_back(name);
        out.push_back(std::move(text));
      }
      return out;
    }
    const toml::array* arr = t[key].as_array();
    if (!arr)
      fail_at(t[key].node(), std::string("constraints.") + key + " must be an array of expressions or a table of named rows "
                             "{ name = \"expression\", ... }");
    std::vector<SourceText> out;
    for (const toml::node& el : *arr) out.push_back(expression_of(el, std::string(key) + " row"));
    names.assign(out.size(), std::string());
    return out;
  }

  const toml::table& root_;
  std::string path_;
};

}  // namespace

namespace {

constexpr std::string_view kHashMark = "@sha256:";

// PATH and HEX of PATH@sha256:HEX (HEX empty without the mark).
std::pair<std::string, std::string> split_identity(const std::string& problem) {
  const auto mark = problem.rfind(kHashMark);
  if (mark == std::string::npos) return {problem, ""};
  return {problem.substr(0, mark), problem.substr(mark + kHashMark.size())};
}

}  // namespace

void throw_at(const std::string& path, int line, int column, const std::string& message) {
  std::ostringstream s;
  s << path;
  if (line > 0) s << ":" << line << ":" << column;
  s << ": " << message;
  throw InputError(s.str());
}

bool is_mechanism_file(const std::string& problem) {
  const std::string path = split_identity(problem).first;
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
}

MechanismFile read_named_mechanism_file(const std::string& problem) {
  const auto [path, expected] = split_identity(problem);
  MechanismFile f = read_mechanism_file(path);
  if (!expected.empty() && expected != f.sha256)
    throw InputChanged("mechanism file " + path + " has changed since the result was computed (sha256 " + f.sha256 +
                           ", recorded " + expected + "): restore it, or name it without @sha256 to use it as it is now",
                       "mechanism file " + path, f.sha256, expected);
  return f;
}

std::string mechanism_file_identity(const std::string& problem) {
  const std::string path = split_identity(problem).first;
  try {
    return path + std::string(kHashMark) + sha256_hex(read_input_file(path, "mechanism file", kMaxMechanismFileBytes));
  } catch (const InputError&) {
    return problem;
  }
}

namespace {

// TOML 1.0 allows non-ASCII characters only inside strings and comments. toml++ 3.3 classifies a non-ASCII
// character it meets elsewhere with a generated whitespace table that reaches __builtin_unreachable for many
// code points (U+00A1..U+0499, among them every Greek letter; found by fuzz/fuzz_mechanism.cpp): undefined
// behaviour in any build. So such a character (or byte) is refused here, before toml++ sees the text, with the
// line and column where it stands; a UTF-8 byte order mark at the start is allowed (toml++ skips it). Strings and
// comments are skipped as TOML delimits them; inside a basic string the character after a backslash, and in a
// multi-line one the first after a line-ending backslash's whitespace, are checked too (toml++ asks there whether
// it is whitespace).
void refuse_bare_non_ascii(const std::string& text, const std::string& path) {
  const std::size_t size = text.size();
  std::size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  int line = 1;
  std::size_t line_start = 0;
  auto column = [&](std::size_t at) {  // 1-based, in characters (UTF-8 continuation bytes not counted)
    int c = 1;
    for (std::size_t k = line_start; k < at; ++k) c += (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80;
    return c;
  };
  auto refuse = [&](std::size_t at) {
    const auto b = static_cast<unsigned char>(text[at]);
    char32_t cp = 0;
    int extra = b >= 0xF8 ? -1 : b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : -1;
    if (extra > 0 && at + extra >= size) extra = -1;  // cut short
    if (extra > 0) {
      cp = b & (0x3F >> extra);
      for (int k = 1; k <= extra; ++k) {
        const auto c = static_cast<unsigned char>(text[at + k]);
        if ((c & 0xC0) != 0x80) {
          extra = -1;
          break;
        }
        cp = (cp << 6) | (c & 0x3F);
      }
    }
    char what[64];
    if (extra > 0) std::snprintf(what, sizeof what, "character U+%04X", static_cast<unsigned>(cp));
    else std::snprintf(what, sizeof what, "byte 0x%02X (not UTF-8)", b);
    throw_at(path, line, column(at),
             std::string("not TOML: ") + what + " where only ASCII may stand (outside strings and comments)");
  };
  auto newline = [&](std::size_t at) {
    ++line;
    line_start = at + 1;
  };
  while (i < size) {
    const char c = text[i];
    if (c == '\n') {
      newline(i++);
    } else if (c == '#') {
      while (i < size && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool multi = text.compare(i, 3, std::string(3, c)) == 0;
      i += multi ? 3 : 1;
      while (i < size) {
        if (multi && text.compare(i, 3, std::string(3, c)) == 0) {
          i += 3;
          while (i < size && text[i] == c) ++i;  // up to two quotes may end the content
          break;
        }
        const char d = text[i];
        if (!multi && (d == c || d == '\n')) {
          i += d == c;
          break;
        }
        if (d == '\n') {
          newline(i++);
          continue;
        }
        if (d == '\\' && c == '"') {
          ++i;
          if (i < size && static_cast<unsigned char>(text[i]) >= 0x80) refuse(i);
          std::size_t k = i;  // whitespace after a backslash: a line-ending backslash, or an invalid escape
          while (k < size && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) ++k;
          if (k > i && k < size && static_cast<unsigned char>(text[k]) >= 0x80) refuse(k);
          if (multi) {  // a line-ending backslash: its whitespace and newlines, then the first character
            if (k < size && text[k] == '\n') {
              while (k < size && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n')) {
                if (text[k] == '\n') newline(k);
                ++k;
              }
              if (k < size && static_cast<unsigned char>(text[k]) >= 0x80) refuse(k);
              i = k;
              continue;
            }
          }
          if (i < size) {
            if (text[i] == '\n') newline(i);
            ++i;
          }
          continue;
        }
        ++i;
      }
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      refuse(i);
    } else {
      ++i;
    }
  }
}

}  // namespace

MechanismFile parse_mechanism_text(const std::string& text, const std::string& path) {
  refuse_bare_non_ascii(text, path);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::string what = "not TOML: " + echo_value(std::string(e.description()));  // toml++ may quote a newline it saw
    // toml++ refuses a number beyond a double's range as "could not be interpreted": say which range (issue 43).
    const std::string description(e.description());
    if (const auto open = description.find('\''), close = description.find('\'', open + 1);
        open != std::string::npos && close != std::string::npos) {
      if (std::string range = number_range_problem(description.substr(open + 1, close - open - 1)); !range.empty())
        what = range;
    }
    throw_at(path, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column), what);
  }
  return Reader(root, path).read();
}

MechanismFile read_mechanism_file(const std::string& path) {
  const std::string text = read_input_file(path, "mechanism file", kMaxMechanismFileBytes);
  MechanismFile f = parse_mechanism_text(text, path);
  f.sha256 = sha256_hex(text);
  return f;
}

}  // namespace clm
