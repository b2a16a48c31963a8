// The dimensional analysis of a mechanism file (issue 42; docs/mechanism-files.md, "Units"): every expression's
// dimension from the units the file declares (coordinates' `units`, parameters' `unit`; t in s; der(q) in q's unit
// per s; a body's members in m, m/s, 1/s and 1), checked against what it is:
//
//   T, V: an energy (kg m^2 / s^2);  a force on coordinate q: an energy per q's unit (N for a length, N m for an
//   angle);  a body's mass: kg, inertia: kg m^2, position, contact and joint points: m, angles and quaternion: 1;
//   [gravity]: m / s^2;  q0 and closed_form q: q's unit, qd0 and closed_form qd: q's unit / s;  a point's components
//   and a body velocity: their declared unit;
//
// and inside every expression (rows, [let], the optional sections included) each sum, min, max, atan2, power and
// function by the rules of mechanism_files/dimension_algebra.hpp. A name without a unit makes what reads it
// unchecked (never an error); the summary says which names those are.
#pragma once

#include <string>

#include "mechanism_files/mechanism_file.hpp"

namespace clm {

struct UnitCheck {
  // One line for `mechanism check`: "checked: T, V, 2 forces, 3 rows, ..." or which names leave what unchecked.
  std::string summary;
  bool complete = false;  // every name has a unit: every expression was checked
};

// Throws InputError "FILE:LINE:COLUMN: T has dimension kg m / s, expected kg m^2 / s^2 (an energy)" for the first
// mismatch, in the order the file's sections are listed above. The file's expressions must have compiled (names
// resolve, [let] has no cycle): compile_mechanism calls this after building its graph.
UnitCheck check_units(const MechanismFile& file);

}  // namespace clm
