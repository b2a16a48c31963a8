// Registers car_axis (problems/car_axis.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/car_axis.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(car_axis, CarAxis)
