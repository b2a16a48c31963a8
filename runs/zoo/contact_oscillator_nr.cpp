// Registers contact_oscillator_nr (problems/contact_oscillator_nr.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/contact_oscillator_nr.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(contact_oscillator_nr, ContactOscillatorNr)
