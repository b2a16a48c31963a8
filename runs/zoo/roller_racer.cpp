// Registers roller_racer (problems/roller_racer.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/roller_racer.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(roller_racer, RollerRacer)
