// The snakeboard held on the gait psi = a sin(w t), phi = b cos(w t) by computed torques (tests/snakeboard_test.cpp,
// tests/snakeboard_shape_test.cpp): a test-only problem, the torques hand-derived from the reduced equations.
#pragma once

#include <cmath>

#include "problems/snakeboard.hpp"

namespace clm::testing {

// The snakeboard with the actuator torques that hold the gait psi = a sin(w t), phi = b cos(w t), computed
// from the state by the reduced equations (a test-only computed torque; docs/findings.md): phi's equation is
// 2 J_w phidd = F_phi; psi's is J_r (thetadd + psidd) = F_psi with thetadd = d/dt(s sin(phi)) and sd from (1)
// of problems/snakeboard.hpp at the prescribed psidd. kkt then integrates the autodiff dynamics under them.
struct GaitDrivenSnakeboard : Snakeboard {
  double a = 0, b = 0, w = 1;
  void generalized_force(double t, const Vec& q, const Vec& qd, Vec& F) const {
    const double phi = q[4], phid = qd[4], s = board_rate(q, qd);
    const double psidd = -a * w * w * std::sin(w * t), phidd = -b * w * w * std::cos(w * t);
    const double Kt = reduced_inertia_with_rotor(phi);
    const double dKt = 2 * (total_rotational_inertia() - m * r * r) * std::sin(phi) * std::cos(phi);
    const double sd = (-J_r * std::sin(phi) * psidd / std::sqrt(Kt) - s * dKt * phid / (2 * std::sqrt(Kt))) / std::sqrt(Kt);
    const double thetadd = sd * std::sin(phi) + s * std::cos(phi) * phid;
    F[3] = J_r * (thetadd + psidd);
    F[4] = 2 * J_w * phidd;
  }
};

}  // namespace clm::testing
