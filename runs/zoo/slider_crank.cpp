// Registers slider_crank (problems/slider_crank.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/slider_crank.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(slider_crank, SliderCrank)
