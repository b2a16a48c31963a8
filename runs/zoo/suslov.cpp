// Registers suslov (problems/suslov.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/suslov.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(suslov, Suslov)
