// Registers iftomm_pendulum (problems/iftomm_pendulum.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/iftomm_pendulum.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(iftomm_pendulum, IftommPendulum)
