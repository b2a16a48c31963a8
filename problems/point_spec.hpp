// A point of interest a zoo problem names (issue 24 item 4): the blade of the sleigh, the contact of the disk,
// the pins of a linkage. Declared as
//   const std::vector<PointSpec>& points() const;          // names, units, 2 or 3 components each
//   void point_positions(const Vec& q, Vec& out) const;    // every point's components, point after point
// the model records them at every sample (/runs/<id>/points, columns NAME.x, NAME.y), so that tools/plot.py draws
// trajectories and animations of any problem without knowing its name (a mechanism file's [points] does the same).
// Consecutive points are what an animation joins by segments: a linkage lists its pins in chain order.
#pragma once

#include <string>
#include <vector>

namespace clm {

struct PointSpec {
  std::string name, unit;
  int components = 2;
};

}  // namespace clm
