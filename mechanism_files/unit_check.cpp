#include "mechanism_files/unit_check.hpp"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "mechanism_files/dimension_algebra.hpp"
#include "mechanism_files/expression_parser.hpp"

namespace clm {

namespace {

// A unit the reader has accepted (it refuses what parse_unit cannot read); empty: none declared.
std::optional<Dimension> declared(const std::string& unit) {
  if (unit.empty()) return std::nullopt;
  return parse_unit(unit);
}

class UnitChecker {
 public:
  explicit UnitChecker(const MechanismFile& f)
      : f_(f),
        algebra_([this](std::string_view id) { return name(id); },
                 [this](std::string_view c) { return velocity(c); }) {
    for (const std::string& u : f.units) coordinate_.push_back(declared(u));
    for (const MechanismParameter& p : f.parameters) parameter_[p.name] = declared(p.unit);
  }

  UnitCheck run() {
    // A file that declares no unit at all is in units of its own (a nondimensional model, t included): unchecked.
    bool declares = false;
    for (const std::string& u : f_.units) declares = declares || !u.empty();
    for (const MechanismParameter& p : f_.parameters) declares = declares || !p.unit.empty();
    for (const MechanismFile::Point& p : f_.points) declares = declares || !p.unit.empty();
    for (const MechanismFile::BodyVelocity& v : f_.body_velocities) declares = declares || !v.unit.empty();
    if (!declares) return {"unchecked: the file declares no units (coordinates' units, parameters' unit)", false};
    const Dimension E = energy(), L = length(), T = time_dimension();
    for (const auto& [name, text] : f_.lets) expect(text, "[let] " + name, std::nullopt, "");
    expect(f_.kinetic, "T", E, "T");
    expect(f_.potential, "V", E, "V");
    for (const auto& [i, text] : f_.forces)
      expect(text, "the force on " + f_.coordinates[i],
             coordinate_[i] ? std::optional<Dimension>(E / *coordinate_[i]) : std::nullopt, "forces");
    auto row_name = [](const std::vector<std::string>& names, std::size_t k, const char* kind) {
      return std::string(kind) + " row " + (k < names.size() && !names[k].empty() ? names[k] : std::to_string(k + 1));
    };
    for (std::size_t k = 0; k < f_.position_rows.size(); ++k)
      expect(f_.position_rows[k], row_name(f_.position_names, k, "position"), std::nullopt, "rows");
    for (std::size_t k = 0; k < f_.velocity_rows.size(); ++k)
      expect(f_.velocity_rows[k], row_name(f_.velocity_names, k, "velocity"), std::nullopt, "rows");
    for (const MechanismFile::Body& b : f_.bodies) {
      const std::string what = "body " + b.name;
      expect(b.mass, what + " mass", mass(), "bodies");
      for (const SourceText& s : b.inertia) expect(s, what + " inertia", mass() * L * L, "bodies");
      for (const SourceText& s : b.position) expect(s, what + " position", L, "bodies");
      for (const SourceText& s : b.angles) expect(s, what + " orientation", Dimension::none(), "bodies");
    }
    for (const MechanismFile::Rolling& r : f_.rolling)
      for (const SourceText& s : r.contact) expect(s, "[[rolling]] contact of " + r.body, L, "bodies");
    for (const MechanismFile::Joint& j : f_.joints) {
      for (const SourceText& s : j.point) expect(s, "[[joint]] point of " + j.body, L, "bodies");
      for (const SourceText& s : j.to_point) expect(s, "[[joint]] to_point of " + j.body, L, "bodies");
      for (const SourceText& s : j.axis) expect(s, "[[joint]] axis of " + j.body, std::nullopt, "bodies");
      for (const SourceText& s : j.to_axis) expect(s, "[[joint]] to_axis of " + j.body, std::nullopt, "bodies");
    }
    for (const SourceText& s : f_.gravity) expect(s, "[gravity] g", L / T / T, "gravity");
    auto per_coordinate = [&](const std::vector<SourceText>& texts, const std::string& what, bool rate) {
      for (std::size_t i = 0; i < texts.size() && i < coordinate_.size(); ++i) {
        std::optional<Dimension> d = coordinate_[i];
        if (d && rate) d = *d / T;
        expect(texts[i], what + " of " + f_.coordinates[i], d, what);
      }
    };
    // Initial values are settings, commonly written with numbers that carry a unit the file does not state
    // (R*cos(0.8)*0.5 for a speed): checked inside only.
    for (const SourceText& s : f_.q0) expect(s, "initial q", std::nullopt, "");
    for (const SourceText& s : f_.qd0) expect(s, "initial qd", std::nullopt, "");
    per_coordinate(f_.closed_form_q, "[closed_form] q", false);
    per_coordinate(f_.closed_form_qd, "[closed_form] qd", true);
    for (const auto& column : f_.velocity_basis)
      for (const SourceText& s : column) expect(s, "[velocity_basis]", std::nullopt, "[velocity_basis]");
    for (const auto& column : f_.transversal_frame)
      for (const SourceText& s : column) expect(s, "[transversal_frame]", std::nullopt, "[transversal_frame]");
    for (const MechanismFile::Point& p : f_.points)
      for (const SourceText& s : p.position) expect(s, "point " + p.name, declared(p.unit), "points");
    for (const MechanismFile::BodyVelocity& v : f_.body_velocities)
      expect(v.value, "body velocity " + v.name, declared(v.unit), "body velocities");
    return summary();
  }

 private:
  // The dimension of one expression; errors at the operator, in the file's place.
  DimensionValue dimension_of(const SourceText& s, const std::string& what) {
    try {
      return parse_dimension(s.text, algebra_);
    } catch (const ExpressionError& e) {
      throw_at(f_.path, s.line, s.column + static_cast<int>(e.offset()), std::string(e.what()) + " in " + what);
    }
  }

  // Checks `s` against `expected` (nullopt: only inside); `group` counts it in the summary ("" not at all).
  void expect(const SourceText& s, const std::string& what, const std::optional<Dimension>& expected,
              const std::string& group) {
    if (s.text.empty() || s.text[0] == '@') return;  // absent (an optional T), or a row a body made
    const std::size_t unitless_before = unitless_reads_;
    const DimensionValue v = dimension_of(s, what);
    // What reads a name without a unit is held to no expected dimension (a V = -cos(theta) with theta unitless is
    // dimensionless only because the file states no scale); its inside was checked.
    const bool unknown = (!v.number && !v.dimension) || unitless_reads_ != unitless_before;
    if (expected && !unknown && !v.number && *v.dimension != *expected)
      throw_at(f_.path, s.line, s.column,
               what + " has dimension " + describe(*v.dimension) + ", expected " + describe(*expected) +
                   unstated_constant_hint(v));
    if (group.empty()) return;
    if (unknown) ++unchecked_[group];
    else ++checked_[group];
  }

  std::optional<DimensionValue> name(std::string_view id) {
    const Dimension L = length(), T = time_dimension();
    if (const auto dot = id.find('.'); dot != std::string_view::npos) {  // BODY.member: the members' own units
      const std::string_view member = id.substr(dot + 1);
      if (member == "x" || member == "y" || member == "z") return DimensionValue::known(L);
      if (member == "vx" || member == "vy" || member == "vz") return DimensionValue::known(L / T);
      if (member.size() == 2 && member[0] == 'w') return DimensionValue::known(Dimension::none() / T);
      return DimensionValue::known(Dimension::none());  // R11 .. R33
    }
    for (std::size_t i = 0; i < f_.coordinates.size(); ++i)
      if (f_.coordinates[i] == id) return read(coordinate_[i], "coordinate " + f_.coordinates[i]);
    if (id == "t") return DimensionValue::known(T);
    if (id == "pi") return DimensionValue{Dimension::none(), true, M_PI};
    if (const auto it = parameter_.find(std::string(id)); it != parameter_.end())
      return read(it->second, "parameter " + it->first);
    if (const auto it = f_.lets.find(std::string(id)); it != f_.lets.end()) {
      // Memoized with whether it read a name without a unit, which then counts for every reader of the name.
      if (const auto done = let_.find(it->first); done != let_.end()) {
        if (done->second.second) ++unitless_reads_;
        return done->second.first;
      }
      const std::size_t before = unitless_reads_;
      const DimensionValue v = dimension_of(it->second, "[let] " + it->first);
      let_[it->first] = {v, unitless_reads_ != before};
      return v;
    }
    return std::nullopt;
  }
  std::optional<DimensionValue> velocity(std::string_view coordinate) {
    for (std::size_t i = 0; i < f_.coordinates.size(); ++i)
      if (f_.coordinates[i] == coordinate) {
        if (!coordinate_[i]) return read(std::nullopt, "coordinate " + f_.coordinates[i]);
        return DimensionValue::known(*coordinate_[i] / time_dimension());
      }
    return std::nullopt;
  }
  DimensionValue read(const std::optional<Dimension>& d, const std::string& what) {
    if (d) return DimensionValue::known(*d);
    ++unitless_reads_;
    unitless_.insert(what);
    return DimensionValue::unknown();
  }

  UnitCheck summary() const {
    auto list = [](const std::map<std::string, int>& counts) {
      std::string out;
      for (const auto& [group, k] : counts)
        out += (out.empty() ? "" : ", ") + (group == "T" || group == "V" ? group : group + " (" + std::to_string(k) + ")");
      return out;
    };
    UnitCheck u;
    u.complete = unitless_.empty();
    u.summary = "checked " + (checked_.empty() ? std::string("nothing") : list(checked_));
    if (!unitless_.empty()) {
      std::string names;
      for (const std::string& s : unitless_) names += (names.empty() ? "" : ", ") + s;
      u.summary += "; unchecked " + list(unchecked_) + ": no unit on " + names;
    }
    return u;
  }

  const MechanismFile& f_;
  DimensionAlgebra algebra_;
  std::vector<std::optional<Dimension>> coordinate_;
  std::map<std::string, std::optional<Dimension>> parameter_;
  std::map<std::string, std::pair<DimensionValue, bool>> let_;
  std::set<std::string> unitless_;
  std::size_t unitless_reads_ = 0;
  std::map<std::string, int> checked_, unchecked_;
};

}  // namespace

UnitCheck check_units(const MechanismFile& file) { return UnitChecker(file).run(); }

}  // namespace clm
