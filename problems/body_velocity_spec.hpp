// A body-frame velocity a zoo problem declares (issue 24 item 4): the sleigh's forward speed and turning rate,
// the disk's rolling and heading rates, a rigid body's omega in its own frame; the velocities nonholonomic
// dynamics are read in. Declared as
//   const std::vector<BodyVelocitySpec>& body_velocities() const;                          // names, units, what
//   void body_velocity_values(double t, const Vec& q, const Vec& qd, Vec& out) const;      // one value each
// the model records them at every sample (/runs/<id>/body_velocities, one column each), so that tools/plot.py
// draws them for any problem without knowing its name (a mechanism file's [body_velocities] does the same).
#pragma once

#include <string>

namespace clm {

struct BodyVelocitySpec {
  std::string name, unit, description;
};

}  // namespace clm
