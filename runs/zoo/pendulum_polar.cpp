// Registers pendulum_polar (problems/pendulum_polar.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/pendulum_polar.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(pendulum_polar, PendulumPolar)
