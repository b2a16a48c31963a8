// The N-four-bar mechanism, problem A02 of the IFToMM multibody benchmark library [IFToMM-library],
// [GDLC-2006] (an extension of the two-four-bar mechanism of [Bayo-Avello-1994]): N four-bar loops side by
// side, 2N + 1 uniform bars of length L and mass m, gravity g along -y, 20 s. As the specification
// (A02_specification.xml) and MBS-BOS's OpenSim model of it [sw-mbs-bos] build it:
//
//   ground pins A_i = (i L, 0), i = 0..N;  crank i from A_i up to B_i;  coupler i (i = 1..N) from B_(i-1) to B_i.
//   Start: the square position (cranks vertical, B_i = (i L, L), couplers horizontal), the cranks turning
//   clockwise so that B0 moves along +x at v0 = 1 m/s (MBS-BOS: pin speed -1 rad/s).
//
// Every loop is a parallelogram, so the mechanism has one degree of freedom; when the cranks lie horizontal
// (every bar on the line y = 0) the N loops can each fold independently: the constraint Jacobian loses N
// ranks there and the mobility is N + 1 for an instant (the benchmark's singular positions, two per turn).
// The reference point is B0; the benchmark's reference solution is B0's (x, y) and velocity over 20 s.
//
// Coordinates: body coordinates (x, y, theta) of each bar, in the order of the loop along x: crank 0,
// coupler 1, crank 1, coupler 2, ..., crank N (bar 2i is crank i, bar 2i - 1 coupler i); n = 3 (2N + 1).
// A bar with centre c and angle theta has tail c - L/2 e(theta) and head c + L/2 e(theta), e = (cos, sin);
// a crank's tail is its ground pin, a coupler's tail is B_(i-1). Pins, two rows each, per ground pin:
//   A_i:   tail(crank i) - (i L, 0)
//   B_0:   head(crank 0) - tail(coupler 1)
//   B_i:   head(crank i) - head(coupler i)            (i = 1..N)
//          tail(coupler i+1) - head(coupler i)        (i = 1..N-1)
// m = 6N + 2 rows (Grubler: 3 (2N + 1) - 2 (3N + 1) = 1). M is constant and diagonal (m, m, m L^2 / 12 per bar),
// V = m g sum y: analytic_terms supplies that (tests check it against autodiff); the constraints are autodiff's.
// Closed form: on the parallelogram branch (every crank at one angle phi from the upward vertical, clockwise; the
// couplers translating) the mechanism is a compound pendulum in phi,
//   T = J phid^2 / 2, J = m L^2 ((N + 1)/3 + N);   V = K cos phi, K = m g L ((N + 1)/2 + N);   J phidd = K sin phi
// (N + 1 cranks turning about their pins, m L^2 / 3 each, centres at height L/2 cos phi; N couplers translating
// with B, at height L cos phi), so psi = phi - pi obeys psidd = -w^2 sin psi, w^2 = K / J: closed_form gives
// psi by Jacobi's functions (problems/jacobi_elliptic.hpp), libration or rotation; the benchmark's start
// (phi = 0, phid = v0 / L) rotates, passing two singular positions a turn. Tests check it against an RK4
// integration of the reduced equation and against kkt + projection. Off that branch (a start with a loop folded)
// there is no closed form (false).
// The reference point B0 is a function of q (core/published_reference.hpp): reference_point_position.
// The mechanism is also described as bodies (the bars) and joints (the pins), core/problem.hpp: kkt and schur
// then take the sparse path, O(n) per right-hand side (tests/sparse_path_test.cpp checks its terms against
// the whole-vector autodiff of constraint()).
#pragma once

#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "problems/jacobi_elliptic.hpp"

namespace clm {

struct NFourBar {
  static constexpr const char* kName = "n_four_bar";
  static constexpr const char* kDescription =
      "N-four-bar mechanism (IFToMM benchmark A02): `loops` parallelogram loops, 2 loops + 1 bars in body "
      "coordinates, 1 DOF, singular positions where all bars lie horizontal";
  static constexpr int kDof = Eigen::Dynamic;
  static constexpr int kConstraints = Eigen::Dynamic;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr int kMaxLoops = 2000;
  // The horizontal position is singular (core/problem.hpp): formulations check for it after every step.
  static constexpr bool kSingularPositions = true;

  double loops = 40;
  double L = 1.0;
  double mass = 1.0;
  double g = 9.81;
  double v0 = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<NFourBar>{"loops", &NFourBar::loops,
                              "number of four-bar loops N (integer, 1 .. 2000); 2 N + 1 bars (the benchmark: 40)"},
      ParameterSpec<NFourBar>{"L", &NFourBar::L, "length of every bar and spacing of the ground pins [m]"},
      ParameterSpec<NFourBar>{"mass", &NFourBar::mass, "mass of every bar [kg] (uniform bars)"},
      ParameterSpec<NFourBar>{"g", &NFourBar::g, "gravity [m/s^2], along -y"},
      ParameterSpec<NFourBar>{"v0", &NFourBar::v0,
                              "initial x velocity of B0 [m/s] from the square position (the benchmark: 1)"},
  };

  bool valid_count() const { return loops >= 1 && loops <= kMaxLoops && loops == std::floor(loops); }
  // N; a stand-in of 1 for an invalid value, which validate() refuses before anything is sized by it.
  int count() const { return valid_count() ? static_cast<int>(loops) : 1; }
  int bars() const { return 2 * count() + 1; }
  int dof() const { return 3 * bars(); }
  int constraints() const { return 6 * count() + 2; }

  void validate() const {
    if (!valid_count())
      throw InputError("n_four_bar: parameter loops must be an integer in [1, " + std::to_string(kMaxLoops) + "]");
    auto positive = [](double v, const char* name) {
      if (!(v > 0) || !std::isfinite(v)) throw InputError(std::string("n_four_bar: parameter ") + name + " must be > 0");
    };
    positive(L, "L");
    positive(mass, "mass");
    if (!std::isfinite(g)) throw InputError("n_four_bar: parameter g must be finite");
    if (!std::isfinite(v0)) throw InputError("n_four_bar: parameter v0 must be finite");
  }

  std::vector<std::string> coordinate_names() const {
    std::vector<std::string> names;
    for (int k = 0; k < bars(); ++k) {
      const std::string bar = (k % 2 == 0 ? "crank" : "coupler") + std::to_string(k % 2 == 0 ? k / 2 : (k + 1) / 2);
      for (const char* c : {"_x", "_y", "_theta"}) names.push_back(bar + c);
    }
    return names;
  }
  std::vector<std::string> coordinate_units() const {
    std::vector<std::string> units;
    for (int k = 0; k < bars(); ++k) units.insert(units.end(), {"m", "m", "rad"});
    return units;
  }

  template <class T>
  void mass_matrix(const VecN<T, Eigen::Dynamic>&, MatN<T, Eigen::Dynamic, Eigen::Dynamic>& M) const {
    M.setZero();
    for (int k = 0; k < bars(); ++k) {
      M(3 * k, 3 * k) = T(mass);
      M(3 * k + 1, 3 * k + 1) = T(mass);
      M(3 * k + 2, 3 * k + 2) = T(mass * L * L / 12.0);
    }
  }
  template <class T>
  T potential(const VecN<T, Eigen::Dynamic>& q) const {
    T V(0.0);
    for (int k = 0; k < bars(); ++k) V += (mass * g) * q[3 * k + 1];
    return V;
  }

  // End point of bar k: tail (s = -1) or head (s = +1), c + s L/2 e(theta).
  template <class T>
  void end_point(const VecN<T, Eigen::Dynamic>& q, int k, double s, T& x, T& y) const {
    end_point_at(q, 3 * k, s, x, y);
  }
  // The same for the bar whose (x, y, theta) start at q[o] (o = 3 k in q, 0 or 3 in a joint's local vector).
  template <class T, class V>
  void end_point_at(const V& q, int o, double s, T& x, T& y) const {
    using std::cos;
    using std::sin;
    x = q[o] + (0.5 * s * L) * cos(q[o + 2]);
    y = q[o + 1] + (0.5 * s * L) * sin(q[o + 2]);
  }

  // ---- Bodies and joints (core/problem.hpp): the sparse path -------------------------------------------
  // Bodies: the 2N + 1 bars. Joints, in the order of constraint()'s rows, two rows each: for i = 0..N the
  // ground pin A_i (crank i), the pin B_i of crank i and coupler i (coupler 1's tail for i = 0), and for
  // 1 <= i < N the pin of couplers i and i+1: 2 + 3 (N - 1) + 2 = 3N + 1 joints.
  static constexpr int kBodyCoordinates = 3;
  static constexpr int kJointCoordinates = 6;
  static constexpr int kJointRows = 2;
  int bodies() const { return bars(); }
  template <class T>
  void body_mass_matrix(int /*b*/, const VecN<T, 3>&, MatN<T, 3, 3>& Mb) const {
    Mb.setZero();
    Mb(0, 0) = T(mass);
    Mb(1, 1) = T(mass);
    Mb(2, 2) = T(mass * L * L / 12.0);
  }
  template <class T>
  T body_potential(int /*b*/, const VecN<T, 3>& qb) const {
    return (mass * g) * qb[1];
  }
  int joints() const { return 3 * count() + 1; }
  enum class PinKind { kGround, kCrankCoupler, kCouplerCoupler };
  // Joint j is pin `kind` of ground pin i.
  void pin_of_joint(int j, int& i, PinKind& kind) const {
    if (j < 2) {
      i = 0;
      kind = PinKind(j);
    } else {
      i = 1 + (j - 2) / 3;
      kind = PinKind((j - 2) % 3);
    }
  }
  JointSpec<kJointCoordinates> joint(int j) const {
    int i;
    PinKind kind;
    pin_of_joint(j, i, kind);
    JointSpec<kJointCoordinates> s;
    s.first_row = 2 * j;
    s.rows = 2;
    // The first bar's (x, y, theta) go to local slots 0..2, the second bar's (if any) to 3..5.
    const int first = kind == PinKind::kGround ? 2 * i : kind == PinKind::kCrankCoupler ? 2 * i : 2 * i + 1;
    const int second = kind == PinKind::kGround ? -1 : (kind == PinKind::kCrankCoupler ? (i == 0 ? 1 : 2 * i - 1) : 2 * i - 1);
    for (int c = 0; c < 3; ++c) {
      s.coordinates[c] = 3 * first + c;
      if (second >= 0) s.coordinates[3 + c] = 3 * second + c;
    }
    return s;
  }
  template <class T>
  void joint_constraint(int j, const VecN<T, kJointCoordinates>& ql, VecN<T, kJointRows>& h) const {
    int i;
    PinKind kind;
    pin_of_joint(j, i, kind);
    T ax, ay, bx, by;
    switch (kind) {
      case PinKind::kGround:  // tail(crank i) - (i L, 0)
        end_point_at(ql, 0, -1.0, ax, ay);
        h[0] = ax - T(i * L);
        h[1] = ay;
        return;
      case PinKind::kCrankCoupler:  // head(crank i) - (tail of coupler 1 | head of coupler i)
        end_point_at(ql, 0, +1.0, ax, ay);
        end_point_at(ql, 3, i == 0 ? -1.0 : +1.0, bx, by);
        break;
      case PinKind::kCouplerCoupler:  // tail(coupler i+1) - head(coupler i)
        end_point_at(ql, 0, -1.0, ax, ay);
        end_point_at(ql, 3, +1.0, bx, by);
        break;
    }
    h[0] = ax - bx;
    h[1] = ay - by;
  }

  template <class T>
  void constraint(const VecN<T, Eigen::Dynamic>& q, VecN<T, Eigen::Dynamic>& h) const {
    const int N = count();
    int r = 0;
    T ax, ay, bx, by;
    for (int i = 0; i <= N; ++i) {
      const int crank = 2 * i;
      end_point(q, crank, -1.0, ax, ay);  // A_i
      h[r++] = ax - T(i * L);
      h[r++] = ay;
      end_point(q, crank, +1.0, ax, ay);  // B_i on the crank
      if (i == 0) {
        end_point(q, 1, -1.0, bx, by);  // coupler 1's tail
      } else {
        end_point(q, 2 * i - 1, +1.0, bx, by);  // coupler i's head
      }
      h[r++] = ax - bx;
      h[r++] = ay - by;
      if (i >= 1 && i < N) {
        end_point(q, 2 * i + 1, -1.0, ax, ay);  // coupler i+1's tail
        h[r++] = ax - bx;
        h[r++] = ay - by;
      }
    }
  }

  // M and c = dV/dq in O(n) (M is constant, V linear); checked against autodiff in tests/n_four_bar_test.cpp.
  void analytic_terms(const Vec& /*q*/, const Vec& /*qd*/, Mat& M, Vec& c) const {
    const int n = dof();
    M.resize(n, n);  // no-op when already sized (the hot path)
    c.resize(n);
    M.setZero();
    c.setZero();
    for (int k = 0; k < bars(); ++k) {
      M(3 * k, 3 * k) = mass;
      M(3 * k + 1, 3 * k + 1) = mass;
      M(3 * k + 2, 3 * k + 2) = mass * L * L / 12.0;
      c[3 * k + 1] = mass * g;
    }
  }

  // B0 = head of crank 0: the benchmark's reference point.
  static double b0_x(const Vec& q, double L) { return q[0] + 0.5 * L * std::cos(q[2]); }
  static double b0_y(const Vec& q, double L) { return q[1] + 0.5 * L * std::sin(q[2]); }
  static constexpr const char* kReferencePointName = "B0";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";
  void reference_point_position(const Vec& q, Vec& p) const {
    p[0] = b0_x(q, L);
    p[1] = b0_y(q, L);
  }

  // The parallelogram at crank angle phi turning at phid (see the closed form above).
  void parallelogram_state(double phi, double phid, Vec& q, Vec& qd) const {
    const int N = count();
    q.resize(dof());
    qd.resize(dof());
    const double s = std::sin(phi), c = std::cos(phi);
    for (int i = 0; i <= N; ++i) {
      q.segment<3>(6 * i) << i * L + 0.5 * L * s, 0.5 * L * c, std::numbers::pi / 2 - phi;
      qd.segment<3>(6 * i) << 0.5 * L * c * phid, -0.5 * L * s * phid, -phid;
      if (i >= 1) {
        q.segment<3>(6 * i - 3) << (i - 0.5) * L + L * s, L * c, 0;
        qd.segment<3>(6 * i - 3) << L * c * phid, -L * s * phid, 0;
      }
    }
  }

  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    // The start's crank angle and rate, and whether the start is that parallelogram (to 1e-9).
    const double phi0 = std::numbers::pi / 2 - q0[2], phid0 = -qd0[2];
    parallelogram_state(phi0, phid0, q, qd);
    const double scale = std::max(1.0, q0.lpNorm<Eigen::Infinity>());
    const double vscale = std::max(1.0, qd0.lpNorm<Eigen::Infinity>());
    if ((q - q0).lpNorm<Eigen::Infinity>() > 1e-9 * scale || (qd - qd0).lpNorm<Eigen::Infinity>() > 1e-9 * vscale)
      return false;
    const int N = count();
    const double w2 = g / L * ((N + 1) / 2.0 + N) / ((N + 1) / 3.0 + N);  // K / J
    double phi, phid;
    if (w2 == 0) {
      phi = phi0 + phid0 * t;
      phid = phid0;
    } else {
      // psidd = -w^2 sin psi about the stable equilibrium: psi = phi - pi (g > 0), psi = phi (g < 0).
      const double shift = w2 > 0 ? std::numbers::pi : 0.0;
      const double w = std::sqrt(std::abs(w2));
      // psi0 in (-pi, pi], and the whole turns it had.
      const double raw = phi0 - shift;
      const double turns = std::round(raw / (2 * std::numbers::pi));
      const double psi0 = raw - 2 * std::numbers::pi * turns;
      const double s0 = std::sin(0.5 * psi0);
      const double k2 = s0 * s0 + phid0 * phid0 / (4 * w * w);
      if (std::abs(k2 - 1) < 1e-12) return false;  // the separatrix: no periodic closed form here
      double psi, psid;
      if (k2 < 1) {  // libration: sin(psi/2) = k sn(w t + u0 | k^2)
        const double k = std::sqrt(k2);
        if (k == 0) {
          psi = psi0;
          psid = 0;
        } else {
          const double a = std::asin(std::clamp(s0 / k, -1.0, 1.0));
          const double F = std::ellint_1(k, a);
          const double u0 = phid0 >= 0 ? F : 2 * std::comp_ellint_1(k) - F;
          double dn;
          const double am = jacobi_amplitude(w * t + u0, k2, &dn);
          psi = 2 * std::asin(std::clamp(k * std::sin(am), -1.0, 1.0));
          psid = 2 * k * w * std::cos(am);
        }
      } else {  // rotation: psi = 2 am(u | 1/k^2), u = sign(psid) (psid_b / 2) t + F(psi0 / 2 | 1/k^2)
        const double rate_b = 2 * w * std::sqrt(k2);  // |psid| at psi = 0
        const double mc = 1 / k2;
        const double sign = phid0 >= 0 ? 1.0 : -1.0;
        const double u0 = std::ellint_1(std::sqrt(mc), 0.5 * psi0);
        double dn;
        psi = 2 * jacobi_amplitude(sign * 0.5 * rate_b * t + u0, mc, &dn);
        psid = sign * rate_b * dn;
      }
      phi = psi + shift + 2 * std::numbers::pi * turns;
      phid = psid;
    }
    parallelogram_state(phi, phid, q, qd);
    return true;
  }

  // The square position, cranks at theta = pi/2 turning at w = -v0 / L (B0's velocity w e'(pi/2) L = (v0, 0));
  // the couplers translate with B's velocity (v0, 0), the cranks' centres move at half of it. h = 0 and A qd = 0
  // exactly (up to cos(pi/2) = 6e-17).
  void default_initial(Vec& q0, Vec& qd0) const {
    const int N = count();
    q0.resize(dof());
    qd0.resize(dof());
    const double w = -v0 / L;
    for (int i = 0; i <= N; ++i) {
      const int k = 2 * i;
      q0.segment<3>(3 * k) << i * L, 0.5 * L, std::numbers::pi / 2;
      qd0.segment<3>(3 * k) << 0.5 * v0, 0, w;
      if (i >= 1) {
        const int c = 2 * i - 1;
        q0.segment<3>(3 * c) << (i - 0.5) * L, L, 0;
        qd0.segment<3>(3 * c) << v0, 0, 0;
      }
    }
  }
};

}  // namespace clm
