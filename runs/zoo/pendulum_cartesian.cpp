// Registers pendulum_cartesian (problems/pendulum_cartesian.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/pendulum_cartesian.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(pendulum_cartesian, PendulumCartesian)
