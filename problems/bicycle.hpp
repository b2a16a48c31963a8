// The Whipple bicycle of the benchmark of Meijaard, Papadopoulos, Ruina and Schwab [Meijaard-2007]: four
// rigid bodies (rear wheel R, rear frame with rider B, front frame H, front wheel F), two knife-edge wheels
// rolling without slipping on level ground, hinges at the wheel hubs and at the steer axis; the benchmark's
// parameter set (its Table 1) as defaults. Axes as in the benchmark: x forward, y to the right, z down,
// gravity +z; positive lean, steer and yaw to the right.
//
// Coordinates q = (x, y, psi, phi, delta, theta_R, theta_F): the rear contact point (x, y), yaw psi, lean phi,
// steer delta, and the wheel angles relative to the frames that carry them. The rear frame's orientation is
//   R_B = Rz(psi) Rx(phi) Ry(theta),
// and its pitch theta is NOT a coordinate: the front wheel touching the ground, h(phi, delta, theta) = 0, is
// a holonomic constraint that fixes it, and the problem solves it for theta(phi, delta) inside every
// evaluation (Newton to round-off in doubles, then Newton steps in the scalar type so that its derivatives
// are the implicit-function derivatives). Why eliminate it rather than keep it as a coordinate with a
// holonomic row: the suite's Problem has one constraint kind, and the front-contact row would either need
// mixed holonomic + Pfaffian constraints in every formulation, or be written as the Pfaffian row dh/dq and
// then drift; eliminated, it holds exactly and every formulation applies (docs/design.md section 3).
// The benchmark itself treats the pitch as a dependent coordinate the same way.
//
// Geometry in the reference configuration (upright, straight, theta = 0; the benchmark's Figure 1): rear
// contact at the origin, rear wheel centre (0, 0, -rR), front contact (w, 0, 0), front wheel centre
// (w, 0, -rF); the steer axis, tilted back by lambda from the vertical, meets the ground at (w + c, 0, 0)
// (c: trail) and points down along u = (sin lambda, 0, cos lambda) in the rear frame. The front frame is
// R_H = R_B Rot(u, delta), rotating about the steer axis through that ground point. The rear wheel's centre is
// rR above its contact along the wheel plane's in-plane vertical, Rz(psi) Rx(phi) (0, 0, -rR); the front
// wheel's contact is the lowest point of its rim, centre + rF (e_z - (e_z . a) a) / |...| with a its axle.
// Inertia tensors are the benchmark's, in the global axes of the reference configuration (so in body axes).
//
// Nothing else is written by hand: the mass matrix comes from the body poses through
// core/rigid_body.hpp (velocity Jacobians by automatic differentiation, M = sum m J^T J + W^T I W), the
// four rolling constraints (horizontal velocity of each wheel's material contact point = 0) from the same
// pose derivatives, and the core derives c and Adot qd as for every problem. V = -g sum m_b z_b.
//
// Steady straight running at speed v (steady_motion): upright, no steer, rear wheel turning at -v/rR and
// front at -v/rF (with y pointing right and z down, rolling forward turns a wheel negatively about y). The
// lean/steer motion about it is what `clmbench analyze --speed` linearizes (analysis/steady_motion.hpp).
#pragma once

#include <vector>

#include <array>
#include <cmath>
#include <string>

#include <Eigen/LU>

#include "core/problem.hpp"
#include "core/rigid_body.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct Bicycle {
  static constexpr const char* kName = "bicycle";
  static constexpr const char* kDescription =
      "Whipple bicycle, benchmark of Meijaard et al. 2007 (knife-edge wheels rolling without slipping; pitch "
      "solved from the front contact); q = (x, y, yaw, lean, steer, rear wheel, front wheel)";
  static constexpr int kDof = 7;
  static constexpr int kConstraints = 4;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "psi", "phi", "delta", "theta_R", "theta_F"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad", "rad", "rad", "rad"};

  // Linearization about steady motion (analysis/steady_motion.hpp): the lean and steer motion, with the
  // rear wheel rate held at its steady value; x, y, psi and theta_F follow from the rolling constraints.
  static constexpr std::array kSteadyMotionCoordinates = {3, 4};
  static constexpr std::array kSteadyMotionHeld = {5};
  static constexpr const char* kOscillatoryCrossing = "weave";
  static constexpr const char* kRealCrossing = "capsize";
  static constexpr const char* kSteadyMotionSpeedUnit = "m/s";
  // [Meijaard-2007]'s weave and capsize speeds at the Table 1 parameters (docs/references.md gives the two
  // public reimplementations they were checked against); printed by `analyze --speed` beside the computed ones.
  static constexpr double kPublishedOscillatoryCrossingSpeed = 4.29238253634111;
  static constexpr double kPublishedRealCrossingSpeed = 6.02426201538837;
  static constexpr const char* kPublishedCrossingSource = "Meijaard-2007";

  // [Meijaard-2007], Table 1.
  double w = 1.02, c = 0.08, lambda = M_PI / 10, g = 9.81;
  double rR = 0.3, mR = 2.0, IRxx = 0.0603, IRyy = 0.12;
  double xB = 0.3, zB = -0.9, mB = 85.0, IBxx = 9.2, IByy = 11.0, IBzz = 2.8, IBxz = 2.4;
  double xH = 0.9, zH = -0.7, mH = 4.0, IHxx = 0.05892, IHyy = 0.06, IHzz = 0.00708, IHxz = -0.00756;
  double rF = 0.35, mF = 3.0, IFxx = 0.1405, IFyy = 0.28;
  static constexpr std::array kParameters = {
      ParameterSpec<Bicycle>{"w", &Bicycle::w, "wheel base [m]"},
      ParameterSpec<Bicycle>{"c", &Bicycle::c, "trail [m]"},
      ParameterSpec<Bicycle>{"lambda", &Bicycle::lambda, "steer axis tilt from the vertical [rad]"},
      ParameterSpec<Bicycle>{"g", &Bicycle::g, "gravity [m/s^2]"},
      ParameterSpec<Bicycle>{"rR", &Bicycle::rR, "rear wheel radius [m]"},
      ParameterSpec<Bicycle>{"mR", &Bicycle::mR, "rear wheel mass [kg]"},
      ParameterSpec<Bicycle>{"IRxx", &Bicycle::IRxx, "rear wheel inertia about a diameter [kg m^2]"},
      ParameterSpec<Bicycle>{"IRyy", &Bicycle::IRyy, "rear wheel inertia about the axle [kg m^2]"},
      ParameterSpec<Bicycle>{"xB", &Bicycle::xB, "rear body centre of mass, x [m]"},
      ParameterSpec<Bicycle>{"zB", &Bicycle::zB, "rear body centre of mass, z (down) [m]"},
      ParameterSpec<Bicycle>{"mB", &Bicycle::mB, "rear body mass [kg]"},
      ParameterSpec<Bicycle>{"IBxx", &Bicycle::IBxx, "rear body inertia xx [kg m^2]"},
      ParameterSpec<Bicycle>{"IByy", &Bicycle::IByy, "rear body inertia yy [kg m^2]"},
      ParameterSpec<Bicycle>{"IBzz", &Bicycle::IBzz, "rear body inertia zz [kg m^2]"},
      ParameterSpec<Bicycle>{"IBxz", &Bicycle::IBxz, "rear body inertia xz [kg m^2]"},
      ParameterSpec<Bicycle>{"xH", &Bicycle::xH, "front frame centre of mass, x [m]"},
      ParameterSpec<Bicycle>{"zH", &Bicycle::zH, "front frame centre of mass, z (down) [m]"},
      ParameterSpec<Bicycle>{"mH", &Bicycle::mH, "front frame mass [kg]"},
      ParameterSpec<Bicycle>{"IHxx", &Bicycle::IHxx, "front frame inertia xx [kg m^2]"},
      ParameterSpec<Bicycle>{"IHyy", &Bicycle::IHyy, "front frame inertia yy [kg m^2]"},
      ParameterSpec<Bicycle>{"IHzz", &Bicycle::IHzz, "front frame inertia zz [kg m^2]"},
      ParameterSpec<Bicycle>{"IHxz", &Bicycle::IHxz, "front frame inertia xz [kg m^2]"},
      ParameterSpec<Bicycle>{"rF", &Bicycle::rF, "front wheel radius [m]"},
      ParameterSpec<Bicycle>{"mF", &Bicycle::mF, "front wheel mass [kg]"},
      ParameterSpec<Bicycle>{"IFxx", &Bicycle::IFxx, "front wheel inertia about a diameter [kg m^2]"},
      ParameterSpec<Bicycle>{"IFyy", &Bicycle::IFyy, "front wheel inertia about the axle [kg m^2]"},
  };

  // Points of interest (problems/point_spec.hpp): recorded at every sample for the plots and animations.
  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"rear_contact", "m"}};
    return kPoints;
  }
  void point_positions(const Vec& q, Vec& out) const {
    out[0] = q[0];
    out[1] = q[1];
  }
  int dof() const { return kDof; }
  int constraints() const { return kConstraints; }
  void validate() const {
    auto fail = [](const std::string& what) { throw InputError("bicycle: parameter " + what); };
    for (const auto& spec : kParameters)
      if (!std::isfinite(this->*(spec.member))) fail(std::string(spec.name) + " must be finite");
    auto positive = [&](double v, const char* name) {
      if (!(v > 0)) fail(std::string(name) + " must be > 0");
    };
    positive(w, "w");
    positive(g, "g");
    positive(rR, "rR");
    positive(rF, "rF");
    positive(mR, "mR");
    positive(mB, "mB");
    positive(mH, "mH");
    positive(mF, "mF");
    positive(IRxx, "IRxx");
    positive(IRyy, "IRyy");
    positive(IFxx, "IFxx");
    positive(IFyy, "IFyy");
    positive(IBxx, "IBxx");
    positive(IByy, "IByy");
    positive(IBzz, "IBzz");
    positive(IHxx, "IHxx");
    positive(IHyy, "IHyy");
    positive(IHzz, "IHzz");
    if (!(IBxx * IBzz - IBxz * IBxz > 0)) fail("IBxz: the rear body inertia must be positive definite (IBxx IBzz > IBxz^2)");
    if (!(IHxx * IHzz - IHxz * IHxz > 0)) fail("IHxz: the front frame inertia must be positive definite (IHxx IHzz > IHxz^2)");
    if (!(std::abs(lambda) < M_PI / 2)) fail("lambda must lie in (-pi/2, pi/2)");
  }

  // ---- Geometry, templated over the scalar ---------------------------------------------------------------
  std::array<double, 3> steer_axis() const { return {std::sin(lambda), 0.0, std::cos(lambda)}; }

  // Rear frame orientation, the rear wheel centre, the steer axis' ground point and the front frame.
  template <class S>
  struct Frames {
    rigid::Mat3<S> RL, RB, RH;  // yaw-lean (rear wheel plane), rear frame, front frame
    rigid::Vec3<S> CR, SA, CF;  // rear wheel centre, steer axis ground point, front wheel centre
  };
  template <class S>
  Frames<S> frames(const S& x, const S& y, const S& psi, const S& phi, const S& theta, const S& delta) const {
    Frames<S> f;
    f.RL = rigid::multiply(rigid::rot_z(psi), rigid::rot_x(phi));
    f.RB = rigid::multiply(f.RL, rigid::rot_y(theta));
    f.CR = {x - rR * f.RL[0][2], y - rR * f.RL[1][2], -rR * f.RL[2][2]};
    f.SA = rigid::add(f.CR, rigid::apply(f.RB, std::array<double, 3>{w + c, 0.0, rR}));
    f.RH = rigid::multiply(f.RB, rigid::rot_axis(steer_axis(), delta));
    f.CF = rigid::add(f.SA, rigid::apply(f.RH, std::array<double, 3>{-c, 0.0, -rF}));
    return f;
  }
  // Height (z, down) of the front wheel's lowest rim point: the holonomic front-contact condition h = 0.
  // Independent of x, y and psi.
  template <class S>
  S front_contact_height(const S& phi, const S& theta, const S& delta) const {
    using std::sqrt;
    const S zero(0.0);
    const Frames<S> f = frames(zero, zero, zero, phi, theta, delta);
    const S az = f.RH[2][1];  // z component of the front axle R_H e_y
    return f.CF[2] + rF * sqrt(1.0 - az * az);
  }
  // The pitch theta(phi, delta) with h = 0: Newton from 0 in doubles to round-off (throws NumericalFailure
  // when the front wheel cannot touch the ground), then three Newton steps in S, after which the derivative
  // parts carried by S are those of the implicit function up to third order (Newton's map has zero slope at
  // the root).
  // (Heavy functions are kept out of line: formulations that [[gnu::flatten]] their evaluation would otherwise
  // inline the whole geometry at every scalar type, which GCC 12's loop unroller does not survive.)
  template <class S>
  [[gnu::noinline]] S pitch(const S& phi, const S& delta) const {
    using D1 = Tangent<double, 1>;
    const double ph = value_of(phi), de = value_of(delta);
    double th = 0;
    bool converged = false;
    for (int it = 0; it < 50 && !converged; ++it) {
      const D1 h = front_contact_height(D1(ph), D1::variable(th, 0), D1(de));
      const double step = h.v / h.d[0];
      if (!std::isfinite(step)) break;
      th -= step;
      converged = std::abs(step) <= 1e-15 * (1.0 + std::abs(th));
    }
    if (!converged || std::abs(th) > 1.5)
      throw NumericalFailure("bicycle: the front wheel cannot touch the ground at lean " + std::to_string(ph) +
                             " rad, steer " + std::to_string(de) + " rad (no pitch solves the front contact)");
    if constexpr (std::is_arithmetic_v<S>) {
      return th;
    } else {
      using DS = Tangent<S, 1>;
      S t = S(th);
      for (int k = 0; k < 3; ++k) {
        const DS h = front_contact_height(DS(phi), DS::variable(t, 0), DS(delta));
        t = t - h.v / h.d[0];
      }
      return t;
    }
  }

  // The four bodies' poses differentiated along the 7 coordinate directions.
  template <class T>
  struct Bodies {
    rigid::Pose<T, kDof> rear_wheel, rear_body, front_frame, front_wheel;
    Frames<Tangent<T, kDof>> f;
  };
  template <class T>
  [[gnu::noinline]] Bodies<T> bodies(const VecN<T, kDof>& q) const {
    using S = Tangent<T, kDof>;
    std::array<S, kDof> s;
    for (int i = 0; i < kDof; ++i) s[i] = S::variable(q[i], i);
    const S theta = pitch(s[3], s[4]);
    Bodies<T> b;
    b.f = frames(s[0], s[1], s[2], s[3], theta, s[4]);
    b.rear_wheel = {b.f.CR, rigid::multiply(b.f.RB, rigid::rot_y(s[5]))};
    b.rear_body = {rigid::add(b.f.CR, rigid::apply(b.f.RB, std::array<double, 3>{xB, 0.0, zB + rR})), b.f.RB};
    b.front_frame = {rigid::add(b.f.SA, rigid::apply(b.f.RH, std::array<double, 3>{xH - w - c, 0.0, zH})), b.f.RH};
    b.front_wheel = {b.f.CF, rigid::multiply(b.f.RH, rigid::rot_y(s[6]))};
    return b;
  }
  rigid::BodyInertia inertia_rear_wheel() const { return {mR, {{{IRxx, 0, 0}, {0, IRyy, 0}, {0, 0, IRxx}}}}; }
  rigid::BodyInertia inertia_rear_body() const { return {mB, {{{IBxx, 0, IBxz}, {0, IByy, 0}, {IBxz, 0, IBzz}}}}; }
  rigid::BodyInertia inertia_front_frame() const { return {mH, {{{IHxx, 0, IHxz}, {0, IHyy, 0}, {IHxz, 0, IHzz}}}}; }
  rigid::BodyInertia inertia_front_wheel() const { return {mF, {{{IFxx, 0, 0}, {0, IFyy, 0}, {0, 0, IFxx}}}}; }

  template <class T>
  void mass_matrix(const VecN<T, kDof>& q, MatN<T, kDof, kDof>& M) const {
    for (int i = 0; i < kDof; ++i)
      for (int j = 0; j < kDof; ++j) M(i, j) = T(0.0);
    const Bodies<T> b = bodies(q);
    rigid::add_body_mass_matrix(b.rear_wheel, inertia_rear_wheel(), kDof, M);
    rigid::add_body_mass_matrix(b.rear_body, inertia_rear_body(), kDof, M);
    rigid::add_body_mass_matrix(b.front_frame, inertia_front_frame(), kDof, M);
    rigid::add_body_mass_matrix(b.front_wheel, inertia_front_wheel(), kDof, M);
  }

  template <class T>
  [[gnu::noinline]] T potential(const VecN<T, kDof>& q) const {
    const T theta = pitch(q[3], q[4]);
    const Frames<T> f = frames(q[0], q[1], q[2], q[3], theta, q[4]);
    const rigid::Vec3<T> cB = rigid::add(f.CR, rigid::apply(f.RB, std::array<double, 3>{xB, 0.0, zB + rR}));
    const rigid::Vec3<T> cH = rigid::add(f.SA, rigid::apply(f.RH, std::array<double, 3>{xH - w - c, 0.0, zH}));
    return -g * (mR * f.CR[2] + mB * cB[2] + mH * cH[2] + mF * f.CF[2]);
  }

  // The world position of the front wheel's contact point (the lowest rim point) from the value parts.
  template <class T>
  rigid::Vec3<T> front_contact(const Frames<Tangent<T, kDof>>& f) const {
    using std::sqrt;
    rigid::Vec3<T> a, p;
    for (int k = 0; k < 3; ++k) a[k] = f.RH[k][1].v;
    const T n = sqrt(1.0 - a[2] * a[2]);
    for (int k = 0; k < 3; ++k) p[k] = f.CF[k].v + rF * ((k == 2 ? T(1.0) : T(0.0)) - a[2] * a[k]) / n;
    return p;
  }

  // Rolling without slipping: the horizontal velocity of each wheel's material point at its contact is 0
  // (rows: rear x, rear y, front x, front y). The vertical component of the front one vanishes identically
  // because the pitch keeps the contact on the ground (tests/bicycle_test.cpp checks it).
  template <class T>
  void pfaffian(const VecN<T, kDof>& q, MatN<T, kConstraints, kDof>& A) const {
    const Bodies<T> b = bodies(q);
    const rigid::Vec3<T> pR = {q[0], q[1], T(0.0)};
    const auto JR = rigid::point_jacobian(b.rear_wheel, pR, kDof);
    const auto JF = rigid::point_jacobian(b.front_wheel, front_contact<T>(b.f), kDof);
    for (int i = 0; i < kDof; ++i) {
      A(0, i) = JR[i][0];
      A(1, i) = JR[i][1];
      A(2, i) = JF[i][0];
      A(3, i) = JF[i][1];
    }
  }

  // Steady straight running at speed v (consistent: A qd = 0).
  void steady_motion(double v, Vec& q, Vec& qd) const {
    q = Vec::Zero(kDof);
    qd = Vec::Zero(kDof);
    qd[0] = v;
    qd[5] = -v / rR;
    qd[6] = -v / rF;
  }

  // Upright at 4.6 m/s with a lean rate of 0.5 rad/s: the benchmark's example motion (its Figure 4), inside
  // the self-stable speed range (the weave decays). The velocities the lean rate and the rear wheel rate
  // imply (x, y, yaw, front wheel) are solved from the rolling constraints.
  void default_initial(Vec& q0, Vec& qd0) const {
    Vec q, qd;
    steady_motion(4.6, q, qd);
    q0 = q;
    MatN<double, kConstraints, kDof> A;
    pfaffian<double>(q, A);
    const std::array<int, 4> dependent = {0, 1, 2, 6};
    qd[3] = 0.5;
    Eigen::Matrix4d AD;
    Eigen::Vector4d rhs = Eigen::Vector4d::Zero();
    for (int r = 0; r < 4; ++r) {
      for (int k = 0; k < 4; ++k) AD(r, k) = A(r, dependent[k]);
      for (int j : {3, 4, 5}) rhs[r] -= A(r, j) * qd[j];
    }
    const Eigen::Vector4d qdD = AD.partialPivLu().solve(rhs);
    for (int k = 0; k < 4; ++k) qd[dependent[k]] = qdD[k];
    qd0 = qd;
  }
};

}  // namespace clm
