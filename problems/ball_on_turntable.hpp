// A homogeneous ball (mass m, radius a, I = 2/5 m a^2) rolling without slipping on a horizontal turntable that
// spins at the constant rate W about the vertical z axis through the origin: the suite's reference problem for
// affine Pfaffian constraints A(q) qd + b(q) = 0 (core/problem.hpp, affine_term).
//   q = (x, y, phi, theta, psi): the centre (x, y) (at height a) and the ZXZ Euler angles of the ball,
//       R = Rz(phi) Rx(theta) Rz(psi); angular velocity in the ground frame
//       omega = (thetad cos phi + psid sin theta sin phi, thetad sin phi - psid sin theta cos phi,
//                phid + psid cos theta).
//   CHART: singular where sin(theta) = 0 (phi and psi rotate about the same axis): the mass matrix below has
//       determinant m^2 I^3 sin^2(theta). Runs must keep theta away from 0 and pi (the shipped config and the
//       tests start at theta = pi/2 with slow rolling and check min sin(theta) along the run).
//   T = m/2 (xd^2 + yd^2) + I/2 |omega|^2, |omega|^2 = phid^2 + thetad^2 + psid^2 + 2 phid psid cos(theta); V = 0
//       (gravity is balanced by the table).
//   Rolling: the contact point (x, y, 0) of the ball moves with the table, (xd, yd) + omega x (0, 0, -a) =
//       W (-y, x):   xd - a omega_y + W y = 0,   yd + a omega_x - W x = 0,
//       i.e. A(q) qd + b(q) = 0 with A = [1 0 0 -a sin(phi) a sin(theta) cos(phi); 0 1 0 a cos(phi)
//       a sin(theta) sin(phi)] and b = (W y, -W x).
// Closed form (derived from Newton-Euler: m rdd = f, I omegad = -a z x f, and the rolling constraint
// differentiated, rdd + a z x omegad = W z x rd, so (1 + m a^2 / I) rdd = W z x rd): the centre's velocity
// turns at the constant rate Omega = 2 W / 7, so the centre moves on a circle,
//   r(t) = r0 + (sin(Omega t)/Omega) rd0 + ((1 - cos(Omega t))/Omega) z x rd0,
// centred at r0 + z x rd0 / Omega with radius |rd0| / |Omega| (a straight line when W = 0). omega_z is constant
// and the horizontal angular velocity follows from the constraint, omega_h = (W r + z x rd) / a. The Euler
// angles are the quadrature of their kinematic equations under that omega(t) (RK4, steps <= 1e-3: error
// ~1e-13), which closed_form_from runs over [t_prev, t] only. The table does work on the ball: T is not
// conserved.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"

namespace clm {

struct BallOnTurntable {
  static constexpr const char* kName = "ball_on_turntable";
  static constexpr const char* kDescription =
      "homogeneous ball rolling on a turntable spinning at W; q = (x, y, phi, theta, psi), ZXZ Euler angles "
      "(singular at sin(theta) = 0); affine constraints A(q) qd + b(q) = 0; centre on a circle at rate 2W/7";
  static constexpr int kDof = 5;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "phi", "theta", "psi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad", "rad"};

  double m = 1.0;
  double a = 1.0;
  double W = 1.0;
  using S = BallOnTurntable;
  static constexpr std::array kParameters = {
      ParameterSpec<S>{"m", &S::m, "ball mass [kg]"},
      ParameterSpec<S>{"a", &S::a, "ball radius [m] (homogeneous: I = 2/5 m a^2)"},
      ParameterSpec<S>{"W", &S::W, "turntable angular velocity about +z [rad/s]"},
  };

  int dof() const { return 5; }
  int constraints() const { return 2; }
  void validate() const {
    if (!(m > 0) || !std::isfinite(m)) throw InputError("ball_on_turntable: parameter m must be > 0");
    if (!(a > 0) || !std::isfinite(a)) throw InputError("ball_on_turntable: parameter a must be > 0");
    if (!std::isfinite(W)) throw InputError("ball_on_turntable: parameter W must be finite");
  }
  double inertia() const { return 0.4 * m * a * a; }

  template <class T>
  void mass_matrix(const VecN<T, 5>& q, MatN<T, 5, 5>& M) const {
    using std::cos;
    M.setConstant(T(0.0));
    const double I = inertia();
    M(0, 0) = T(m);
    M(1, 1) = T(m);
    M(2, 2) = T(I);
    M(3, 3) = T(I);
    M(4, 4) = T(I);
    M(2, 4) = I * cos(q[3]);
    M(4, 2) = M(2, 4);
  }
  template <class T>
  T potential(const VecN<T, 5>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 5>& q, MatN<T, 2, 5>& A) const {
    using std::cos;
    using std::sin;
    A.setConstant(T(0.0));
    const T sp = sin(q[2]), cp = cos(q[2]), st = sin(q[3]);
    A(0, 0) = T(1.0);
    A(0, 3) = -a * sp;
    A(0, 4) = a * st * cp;
    A(1, 1) = T(1.0);
    A(1, 3) = a * cp;
    A(1, 4) = a * st * sp;
  }
  template <class T>
  void affine_term(const VecN<T, 5>& q, const T&, VecN<T, 2>& b) const {
    b[0] = W * q[1];
    b[1] = -W * q[0];
  }

  // omega in the ground frame from the Euler angles and their rates, and back (the latter singular at
  // sin(theta) = 0).
  static void angular_velocity(double phi, double theta, const double rates[3], double w[3]) {
    const double sp = std::sin(phi), cp = std::cos(phi), st = std::sin(theta), ct = std::cos(theta);
    w[0] = rates[1] * cp + rates[2] * st * sp;
    w[1] = rates[1] * sp - rates[2] * st * cp;
    w[2] = rates[0] + rates[2] * ct;
  }
  static void euler_rates(double phi, double theta, const double w[3], double rates[3]) {
    const double sp = std::sin(phi), cp = std::cos(phi), st = std::sin(theta), ct = std::cos(theta);
    rates[2] = (w[0] * sp - w[1] * cp) / st;
    rates[1] = w[0] * cp + w[1] * sp;
    rates[0] = w[2] - rates[2] * ct;
  }

  // The centre r(t), its velocity and omega(t) from consistent initial data (header comment).
  void centre_motion(double t, const Vec& q0, const Vec& qd0, double r[2], double rd[2], double w[3]) const {
    const double Om = 2.0 * W / 7.0;
    const double c = std::cos(Om * t), s = std::sin(Om * t);
    const double s1 = Om == 0 ? t : s / Om;
    const double s2 = Om == 0 ? 0.0 : 2.0 * std::sin(0.5 * Om * t) * std::sin(0.5 * Om * t) / Om;
    const double v0x = qd0[0], v0y = qd0[1];
    r[0] = q0[0] + s1 * v0x - s2 * v0y;  // z x v = (-v_y, v_x)
    r[1] = q0[1] + s1 * v0y + s2 * v0x;
    rd[0] = c * v0x - s * v0y;
    rd[1] = s * v0x + c * v0y;
    const double rates0[3] = {qd0[2], qd0[3], qd0[4]};
    double w0[3];
    angular_velocity(q0[2], q0[3], rates0, w0);
    w[0] = (W * r[0] - rd[1]) / a;
    w[1] = (W * r[1] + rd[0]) / a;
    w[2] = w0[2];
  }

  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    return closed_form_from(0.0, q0, t, q0, qd0, q, qd);
  }

  // The Euler angles from their value at t_prev (in q_prev) by RK4 on (phi, theta, psi)' = E^-1 omega(t); false
  // when the chart's singularity comes within sin(theta) < 1e-6.
  bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0, Vec& q,
                        Vec& qd) const {
    double e[3] = {q_prev[2], q_prev[3], q_prev[4]};
    bool ok = true;
    auto f = [&](double s, const double* y, double* dy) {
      double r[2], rd[2], w[3];
      centre_motion(s, q0, qd0, r, rd, w);
      if (std::abs(std::sin(y[1])) < 1e-6) ok = false;
      euler_rates(y[0], y[1], w, dy);
    };
    const int steps = std::max(1, static_cast<int>(std::ceil(std::abs(t - t_prev) / 1e-3)));
    const double h = (t - t_prev) / steps;
    for (int k = 0; k < steps && ok; ++k) {
      const double s = t_prev + k * h;
      double k1[3], k2[3], k3[3], k4[3], y[3];
      f(s, e, k1);
      for (int i = 0; i < 3; ++i) y[i] = e[i] + 0.5 * h * k1[i];
      f(s + 0.5 * h, y, k2);
      for (int i = 0; i < 3; ++i) y[i] = e[i] + 0.5 * h * k2[i];
      f(s + 0.5 * h, y, k3);
      for (int i = 0; i < 3; ++i) y[i] = e[i] + h * k3[i];
      f(s + h, y, k4);
      for (int i = 0; i < 3; ++i) e[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    if (!ok || std::abs(std::sin(e[1])) < 1e-6) return false;
    double r[2], rd[2], w[3], rates[3];
    centre_motion(t, q0, qd0, r, rd, w);
    euler_rates(e[0], e[1], w, rates);
    q << r[0], r[1], e[0], e[1], e[2];
    qd << rd[0], rd[1], rates[0], rates[1], rates[2];
    return true;
  }

  // Centre at (0.1 a, 0) moving at (0.01, 0.03) a W, the ball at theta = pi/2 spinning at omega_z = 0.3 W and
  // rolling with the omega_h the constraint gives, (W r + z x rd) / a. The centre's circle (radius 0.11 a,
  // centred near the table's axis) keeps the rolling slow: theta stays within about 1.1 rad of pi/2 over the
  // first 10 / W seconds, away from the chart's singularity.
  void default_initial(Vec& q0, Vec& qd0) const {
    const double r[2] = {0.1 * a, 0.0}, rd[2] = {0.01 * a * W, 0.03 * a * W};
    const double w[3] = {(W * r[0] - rd[1]) / a, (W * r[1] + rd[0]) / a, 0.3 * W};
    double rates[3];
    euler_rates(0.0, M_PI / 2, w, rates);
    q0 << r[0], r[1], 0.0, M_PI / 2, 0.0;
    qd0 << rd[0], rd[1], rates[0], rates[1], rates[2];
  }
};

}  // namespace clm
