// Named points of a mechanism (a mechanism file's [points], docs/mechanism-files.md): positions computed from q
// (and t: a driven pivot, a point of a turntable) that a run records at every sample (/runs/<id>/points, one column per component, "NAME.x", "NAME.y"(, "NAME.z"))
// so that tools/plot.py draws their paths without knowing the problem; the zoo's problems declare theirs the same
// way (problems/point_spec.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace clm {

struct NamedPoints {
  std::vector<std::string> names, units;  // one per point ("" when no unit is given)
  std::vector<int> components;            // 2 (x, y) or 3 (x, y, z) per point
  // all (sized total()) := every point's components at (t, q), point after point; no allocation.
  std::function<void(double t, const Vec& q, Vec& all)> positions;

  int total() const {
    int k = 0;
    for (int c : components) k += c;
    return k;
  }
  // The column names: NAME.x, NAME.y(, NAME.z) for each point; and the unit of each column.
  std::vector<std::string> columns() const {
    static const char* kAxes[] = {"x", "y", "z"};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < names.size(); ++i)
      for (int c = 0; c < components[i]; ++c) out.push_back(names[i] + "." + kAxes[c]);
    return out;
  }
  std::vector<std::string> column_units() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < names.size(); ++i)
      for (int c = 0; c < components[i]; ++c) out.push_back(units[i].empty() ? "-" : units[i]);
    return out;
  }
};

// Body-frame velocities of a mechanism (a mechanism file's [body_velocities], a zoo problem's
// body_velocities(), problems/body_velocity_spec.hpp): scalars of (t, q, qd) such as the sleigh's forward speed
// u1 = xd cos(theta) + yd sin(theta) or a rigid body's omega in its own frame, the coordinates in which
// nonholonomic dynamics are usually read; a run records them at every sample (/runs/<id>/body_velocities, one
// column per velocity) so that tools/plot.py draws them for any mechanism.
struct BodyVelocities {
  std::vector<std::string> names, units, descriptions;  // one per velocity ("" when no unit / description)
  // out (sized names.size()) := every velocity at (t, q, qd); no allocation.
  std::function<void(double t, const Vec& q, const Vec& qd, Vec& out)> values;

  int size() const { return static_cast<int>(names.size()); }
  std::vector<std::string> column_units() const {
    std::vector<std::string> out;
    for (const auto& u : units) out.push_back(u.empty() ? "-" : u);
    return out;
  }
};

}  // namespace clm
