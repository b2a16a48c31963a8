// Registers sphere_in_disguise (problems/sphere_in_disguise.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/sphere_in_disguise.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(sphere_in_disguise, SphereInDisguise)
