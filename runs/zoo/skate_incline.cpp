// Registers skate_incline (problems/skate_incline.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/skate_incline.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(skate_incline, SkateIncline)
