// Registers kinematic_car (problems/kinematic_car.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/kinematic_car.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(kinematic_car, KinematicCar)
