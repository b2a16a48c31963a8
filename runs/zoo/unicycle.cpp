// Registers unicycle (problems/unicycle.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/unicycle.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(unicycle, Unicycle)
