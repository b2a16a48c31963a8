// A pendulum bob in Cartesian coordinates: a point mass m at q = (x, y) in the plane, gravity g along -y, held
// at distance L from a pivot by a rod. The terms pendulum_cartesian and driven_pendulum (whose pivot moves)
// share.
#pragma once

#include "core/types.hpp"

namespace clm {

// V = m g y.
template <class T>
T bob_potential(double m, double g, const VecN<T, 2>& q) {
  return m * g * q[1];
}

// h = (dx^2 + dy^2 - L^2) / 2 for the bob's offset (dx, dy) from the pivot.
template <class T>
T rod_constraint(const T& dx, const T& dy, double L) {
  return 0.5 * (dx * dx + dy * dy - T(L * L));
}

}  // namespace clm
