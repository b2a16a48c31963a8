// Registers snakeboard (problems/snakeboard.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/snakeboard.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(snakeboard, Snakeboard)
