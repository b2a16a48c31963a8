// Registers rolling_disk (problems/rolling_disk.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/rolling_disk.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(rolling_disk, RollingDisk)
