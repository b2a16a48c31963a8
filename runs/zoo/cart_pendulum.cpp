// Registers cart_pendulum (problems/cart_pendulum.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/cart_pendulum.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(cart_pendulum, CartPendulum)
