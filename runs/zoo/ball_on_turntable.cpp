// Registers ball_on_turntable (problems/ball_on_turntable.hpp) with every capability it supports, in a translation unit of its own:
// editing or adding a problem recompiles its file alone (docs/guide/extending.md).
#include "problems/ball_on_turntable.hpp"
#include "runs/zoo/registration.hpp"

CLM_ZOO_ENTRY(ball_on_turntable, BallOnTurntable)
