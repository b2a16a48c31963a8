// The Jacobian J = df/dy of an OdeSystem by column-wise forward differences, as in the RADAU5 code
// (Hairer & Wanner, Solving ODEs II, IV.8): column j uses the increment
//   delta_j = sqrt(eps * max(1e-5, |y_j|)),
// which balances the truncation error (~ delta |f''|) against the cancellation error (~ eps |f| / delta)
// for quantities of order one and keeps a floor for components near zero. n right-hand-side evaluations.
// Shared by the implicit integrators (implicit_midpoint, radau5).
#pragma once

#include "core/ode.hpp"

namespace clm {

// f must be sys.rhs(t, y). y_work and f_work are caller-owned scratch vectors of size n (no allocation);
// J must already be n x n. Returns the number of rhs evaluations (n).
long finite_difference_jacobian(OdeSystem& sys, double t, const Vec& y, const Vec& f, Vec& y_work, Vec& f_work,
                                Mat& J);

}  // namespace clm
