// Registers n_four_bar (problems/n_four_bar.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/n_four_bar.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(n_four_bar, NFourBar)
