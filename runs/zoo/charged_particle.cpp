// Registers charged_particle (problems/charged_particle.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/charged_particle.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(charged_particle, ChargedParticle)
