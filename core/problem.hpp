// The Problem concept: what a mechanism writes, once, templated over the scalar type [seed-000, eq. 2.1].
//
// A problem is a small struct, in the manner of Ceres' AutoDiffCostFunction functors:
//
//   struct ChaplyginSleigh {
//     static constexpr const char* kName = "chaplygin_sleigh";
//     static constexpr const char* kDescription = "...";
//     static constexpr int kDof = 3;                  // Eigen::Dynamic when set at run time (closed_chain)
//     static constexpr int kConstraints = 1;          // Eigen::Dynamic likewise
//     static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
//     double m = 1, Ic = 0.5, b = 0.3;                // parameters, with their defaults
//     static constexpr auto kParameters = std::array{ParameterSpec<ChaplyginSleigh>{"m", &ChaplyginSleigh::m, "mass"}, ...};
//
//     int dof() const; int constraints() const;      // runtime sizes
//     void validate() const;                          // throw InputError on inadmissible parameters
//     template <class T> void mass_matrix(const VecN<T, kDof>& q, MatN<T, kDof, kDof>& M) const;
//     template <class T> T potential(const VecN<T, kDof>& q) const;
//     template <class T> void constraint(const VecN<T, kDof>& q, VecN<T, kConstraints>& h) const;          // kHolonomic
//     template <class T> void pfaffian(const VecN<T, kDof>& q, MatN<T, kConstraints, kDof>& A) const;     // kPfaffian
//     template <class T, class Q, class F>                                               // optional; F is zeroed
//     void generalized_force(const T& t, const Q& q, const Q& qd, F& out) const;        // first; a template over the
//         scalar T (q, qd, out vectors of it) so that the exact Jacobian differentiates it; a double-only
//         generalized_force(double t, const Vec& q, const Vec& qd, Vec& F) is allowed (Jacobian by differences)
//     void default_initial(Vec& q0, Vec& qd0) const;  // consistent for every admissible parameter set
//   };
//
// Optional members, detected at compile time:
//   template <class T> void velocity_basis(const VecN<T,kDof>& q, MatN<T,kDof,Dynamic>& S) const;
//       a natural null-space basis S(q), A S = 0 [seed-000, eq. 2.17], used by the nullspace formulation;
//   void analytic_terms(const Vec& q, const Vec& qd, Mat& M, Vec& c) const;
//       hand-written M and c for speed; tests check them against the autodiff ones.
//   void analytic_constraint_terms(const Vec& q, const Vec& qd, Mat& A, Vec& Adot_qd, Vec& h) const;
//       hand-written A, Adot qd and h (holonomic) for speed, likewise tested against autodiff;
//   bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const;
//       the exact motion from consistent (q0, qd0), where one is known (false where it is not, e.g. a
//       degenerate case); used by tests and by the "error vs reference" summary column.
//   bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0,
//                         Vec& q, Vec& qd) const;
//       the same motion at t, given the position q_prev it had at t_prev: for closed forms whose cost grows
//       with t (a quadrature from 0), so that a sampled reference costs O(t_end) in all, not O(t_end^2);
//   static constexpr const char* kCoordinateNames[] = {"x", "y", "theta"};  and  kCoordinateUnits[] = {"m", ...};
//       (or member functions coordinate_names() / coordinate_units() returning std::vector<std::string> for a
//       problem whose size is a parameter): the names and units of q, written to HDF5 and used by the plots;
//   void closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const;
//       the exact multiplier on the constraint manifold as a function of the state (pendulum, sleigh);
//   static constexpr std::array kEliminated = {...};  static constexpr const char* kChartCondition = "...";
//       the velocities the `substituted` formulation eliminates, and what det A_D of that chart is in the
//       problem's terms (formulations/substitution.hpp);
//   template <class T> void transversal_frame(const VecN<T,kDof>& q, MatN<T,kDof,kConstraints>& X) const;
//       fernandez_bloch's frame (formulations/restricted_lagrangian.hpp).
//   static constexpr double kReferenceTime; std::array kReferenceQ, kReferenceQd (, kReferenceLambda);
//   static constexpr const char* kReferenceSource, kReferenceDescription;
//       values published for the default parameters and initial state at one time (a benchmark's reference
//       solution, core/published_reference.hpp); runs that end at that time are measured against them.
//   static constexpr const char* kReferencePointName; std::array kReferencePointCoordinates;
//       a multibody benchmark's reference point, the coordinates of q that are its position (IFToMM's P1, P3;
//       core/published_reference.hpp): runs with a reference report its largest error. Or, for a point that is
//       a function of q (A02's B0): kReferencePointComponents, kReferencePointUnit and
//       void reference_point_position(const Vec& q, Vec& p) const.
//   static constexpr std::array kActuatedCoordinates = {3};
//       the actuated (shape) coordinates of an under-actuated mechanism, indices into q (Model::actuated_coordinates;
//       a run's [shape] prescribes them, core/shape_schedule.hpp);
//   static constexpr bool kSingularPositions = true;
//       the constraints lose rank at configurations the motion passes through (singular positions):
//       formulations that cannot pass them end the run "failed" naming one (core/formulation.hpp);
//   template <class T> void gyroscopic(const VecN<T,kDof>& q, VecN<T,kDof>& a) const;
//       a term of the Lagrangian linear in qd, L = 1/2 qd^T M qd + qd . a(q) - V (magnetic vector potential,
//       Coriolis terms in a rotating frame, a gauge term d/dt S(q) = qd . grad S): c gains (Da - Da^T) qd,
//       dL/dq gains Da^T qd, p = dL/dqd gains a(q) (Da_ij = d a_i / d q_j, by autodiff); the energy T + V
//       is unchanged (the force (Da^T - Da) qd does no work). A problem with analytic_terms must then put
//       the term in its c itself. Formulations that build their own Lagrangian from M and V (substituted,
//       fernandez_bloch) refuse such problems.
//
// Bodies and joints (the sparse path for large mechanisms, docs/design.md "Sparse path"): a problem built
// from bodies and joints may say so, and then kkt and schur can solve it with sparse algebra in O(n)
// (formulations/sparse_acceleration_solver.hpp). All of the following, or none:
//   static constexpr int kBodyCoordinates = 3;   // coordinates per body: body b owns q[b B .. b B + B - 1]
//   static constexpr int kJointCoordinates = 6;  // most coordinates one joint touches (its Jet size)
//   static constexpr int kJointRows = 2;         // most constraint rows of one joint
//   int bodies() const;                          // n = bodies() kBodyCoordinates
//   template <class T> void body_mass_matrix(int b, const VecN<T,B>& qb, MatN<T,B,B>& Mb) const;
//   template <class T> T body_potential(int b, const VecN<T,B>& qb) const;
//       M = blockdiag(Mb) and V = sum_b Vb: the same M and V as mass_matrix and potential (tested);
//   int joints() const;  JointSpec<kJointCoordinates> joint(int j) const;
//       joint j owns the rows first_row .. first_row + rows - 1 (the joints cover the m rows once each) and
//       touches the coordinates it lists (-1 pads an unused slot: value 0, not differentiated);
//   template <class T> void joint_constraint(int j, const VecN<T,kJointCoordinates>& ql, VecN<T,kJointRows>& h) const;
//       its rows of h as a function of its local coordinates ql (ql[k] = q[coordinates[k]]); the same h as
//       constraint() (tested). The core differentiates each joint with a Jet of size kJointCoordinates.
// Holonomic and time-independent problems without a gyroscopic term only (static_assert).
//
// Explicit time dependence (rheonomic and affine constraints, moving attachments; docs/design.md section 1),
// each optional and detected at compile time; a problem that writes one of these writes it instead of the
// time-independent form (not both):
//   template <class T> void constraint(const VecN<T,kDof>& q, const T& t, VecN<T,kConstraints>& h) const;
//       a rheonomic holonomic constraint h(q, t) = 0 (kHolonomic). The core derives A = dh/dq, the velocity
//       constraint A qd + b = 0 with b = dh/dt, and the acceleration constraint A qdd + d2/ds2 h(q + s qd, t + s)
//       at s = 0 = 0 (qd^T h_qq qd + 2 h_qt qd + h_tt, one Taylor2 pass with t advanced too);
//   template <class T> void affine_term(const VecN<T,kDof>& q, const T& t, VecN<T,kConstraints>& b) const;
//       with pfaffian(q, A) (kPfaffian): affine Pfaffian constraints A(q) qd + b(q, t) = 0 (a surface that
//       moves, a turntable). The acceleration constraint is A qdd + (d/dq(A qd) qd + db/dq qd + db/dt) = 0,
//       from one Jet<1> pass along (qd, 1). A(q) itself stays time-independent;
//   template <class T> T potential(const VecN<T,kDof>& q, const T& t) const;
//       a potential with explicit time dependence V(q, t) (a spring attached to a moving point): the force
//       is -dV/dq at t; the energy T + V(q, t) is then not conserved.
// Such a problem is "time-dependent" (Model::time_dependent()): ModelTerms::b holds the velocity term b, and
// ModelTerms::Adot_qd the whole acceleration-level bias including the time derivatives. Formulations and
// integrators that have not been extended to it refuse it in one line (formulations/registry.cpp,
// Integrator::refuses_formulation).
// The typed extensions built from these (velocity basis, substitution, restricted Lagrangian, constraint
// analysis) are Model capabilities (core/model.hpp), attached when the problem is registered.
//
// Mixed constraints (kMixed; docs/design.md section 1, "Mixed constraints"): m_h position rows h(q, t) = 0 and
// m_a = m - m_h velocity rows A(q) qd + b(q, t) = 0 together, as a vehicle with a trailer, a rolling body whose
// orientation is a unit quaternion, a wheel whose height is a holonomic row. The problem writes
//   static constexpr int kPositionConstraints = 1;   int position_constraints() const;   // m_h (Dynamic: run time)
//   template <class T> void constraint(const VecN<T,kDof>& q, VecN<T,kPositionConstraints>& h) const;  (or (q, t, h))
//   template <class T> void pfaffian(const VecN<T,kDof>& q, MatN<T,kConstraints-kPositionConstraints,kDof>& A) const;
//   (and optionally affine_term(q, t, b) with b of the velocity rows' size).
// The rows are ordered position rows first: the Model's A is [dh/dq; A], its b [dh/dt; b], its bias the two
// biases stacked, lambda likewise, ModelTerms::h the m_h values of h (Model::position_rows()).
// Everything else (c, A for holonomic h, Adot qd, energy) the core derives by automatic differentiation.
#pragma once

#include <array>
#include <string_view>

#include <ceres/jet.h>

#include "core/taylor2.hpp"
#include "core/types.hpp"

namespace clm {

// kHolonomic: every row a position row h(q, t) = 0; kPfaffian: every row a velocity row A(q) qd + b(q, t) = 0;
// kMixed: both, position rows first (see the header comment, "Mixed constraints").
enum class ConstraintKind { kHolonomic, kPfaffian, kMixed };

// The number of position rows h (first) and velocity rows A qd + b (after them) a problem states, at compile
// time (Eigen::Dynamic when set at run time): all rows of a holonomic problem are position rows, none of a
// Pfaffian one; a mixed problem says how many by kPositionConstraints.
template <class P>
constexpr int position_rows_of() {
  if constexpr (P::kConstraintKind == ConstraintKind::kHolonomic) return P::kConstraints;
  else if constexpr (P::kConstraintKind == ConstraintKind::kPfaffian) return 0;
  else return P::kPositionConstraints;
}
template <class P>
constexpr int velocity_rows_of() {
  if constexpr (P::kConstraintKind == ConstraintKind::kHolonomic) return 0;
  else if constexpr (P::kConstraintKind == ConstraintKind::kPfaffian) return P::kConstraints;
  else if constexpr (P::kConstraints == Eigen::Dynamic || P::kPositionConstraints == Eigen::Dynamic) return Eigen::Dynamic;
  else return P::kConstraints - P::kPositionConstraints;
}
template <class P>
constexpr int kPositionRowsOf = position_rows_of<P>();
template <class P>
constexpr int kVelocityRowsOf = velocity_rows_of<P>();
// Whether a problem has position rows h / velocity rows A qd + b at all (known at compile time).
template <class P>
constexpr bool kHasPositionRows = P::kConstraintKind != ConstraintKind::kPfaffian;
template <class P>
constexpr bool kHasVelocityRows = P::kConstraintKind != ConstraintKind::kHolonomic;

template <class P>
struct ParameterSpec {
  std::string_view name;
  double P::*member;
  std::string_view description;
};

template <class P>
concept Problem = requires(const P& p) {
  { P::kName } -> std::convertible_to<const char*>;
  { P::kDescription } -> std::convertible_to<const char*>;
  { P::kDof } -> std::convertible_to<int>;
  { P::kConstraints } -> std::convertible_to<int>;
  { P::kConstraintKind } -> std::convertible_to<ConstraintKind>;
  P::kParameters;
  { p.dof() } -> std::convertible_to<int>;
  { p.constraints() } -> std::convertible_to<int>;
  p.validate();
} && (P::kConstraintKind != ConstraintKind::kMixed || requires(const P& p) {
  { P::kPositionConstraints } -> std::convertible_to<int>;
  { p.position_constraints() } -> std::convertible_to<int>;
});

template <class P>
concept HasVelocityBasis = requires(const P& p, const VecN<double, P::kDof>& q,
                                    MatN<double, P::kDof, Eigen::Dynamic>& S) {
  p.velocity_basis(q, S);
};

// A problem known only at run time (a mechanism file, mechanism_files/tape_problem.hpp) has the member of an
// optional term always, and says by has_velocity_basis() / has_transversal_frame() whether it has the term.
template <class P>
bool provides_velocity_basis(const P& p) {
  if constexpr (!HasVelocityBasis<P>) return false;
  else if constexpr (requires { p.has_velocity_basis(); }) return p.has_velocity_basis();
  else return true;
}

template <class P>
concept HasAnalyticTerms = requires(const P& p, const Vec& q, const Vec& qd, Mat& M, Vec& c) {
  p.analytic_terms(q, qd, M, c);
};

template <class P>
concept HasAnalyticConstraintTerms = requires(const P& p, const Vec& q, Mat& A, Vec& v) {
  p.analytic_constraint_terms(q, q, A, v, v);
};

template <class P>
concept HasClosedForm = requires(const P& p, double t, const Vec& a, Vec& b) {
  { p.closed_form(t, a, a, b, b) } -> std::convertible_to<bool>;
};

template <class P>
concept HasClosedFormFrom = requires(const P& p, double t, const Vec& a, Vec& b) {
  { p.closed_form_from(t, a, t, a, a, b, b) } -> std::convertible_to<bool>;
};

template <class P>
concept HasClosedFormMultiplier = requires(const P& p, const Vec& a, Vec& b) { p.closed_form_multiplier(a, a, b); };

template <class P>
concept HasGyroscopic = requires(const P& p, const VecN<double, P::kDof>& q, VecN<double, P::kDof>& a) {
  p.gyroscopic(q, a);
};

// Explicit time dependence (see the header comment).
// Detected with the Taylor2 scalar, so that t must be the scalar type (a helper such as ContactOscillator's
// static potential(q, eps) with a double parameter is not mistaken for V(q, t)).
template <class P>
concept HasTimeDependentConstraint =
    requires(const P& p, const VecN<Taylor2, P::kDof>& q, const Taylor2& t, VecN<Taylor2, kPositionRowsOf<P>>& h) {
      p.template constraint<Taylor2>(q, t, h);
    };

template <class P>
concept HasAffineTerm =
    requires(const P& p, const VecN<Taylor2, P::kDof>& q, const Taylor2& t, VecN<Taylor2, kVelocityRowsOf<P>>& b) {
      p.template affine_term<Taylor2>(q, t, b);
    };

template <class P>
concept HasTimeDependentPotential = requires(const P& p, const VecN<Taylor2, P::kDof>& q, const Taylor2& t) {
  { p.template potential<Taylor2>(q, t) } -> std::convertible_to<Taylor2>;
};

template <class P>
concept IsTimeDependent = HasTimeDependentConstraint<P> || HasAffineTerm<P> || HasTimeDependentPotential<P>;

template <class P>
concept HasPublishedReference = requires {
  { P::kReferenceTime } -> std::convertible_to<double>;
  P::kReferenceQ;
  P::kReferenceQd;
  { P::kReferenceSource } -> std::convertible_to<const char*>;
  { P::kReferenceDescription } -> std::convertible_to<const char*>;
};

template <class P>
concept HasReferencePoint = requires {
  { P::kReferencePointName } -> std::convertible_to<const char*>;
  P::kReferencePointCoordinates;
};
template <class P>
concept HasReferencePointFunction = requires(const P& p, const Vec& q, Vec& out) {
  { P::kReferencePointName } -> std::convertible_to<const char*>;
  P::kReferencePointComponents;
  { P::kReferencePointUnit } -> std::convertible_to<const char*>;
  p.reference_point_position(q, out);
};

template <class P>
concept HasPublishedMultipliers = HasPublishedReference<P> && requires { P::kReferenceLambda; };
// A problem whose configurations pass through singular positions of its constraints (A(q) loses rank along
// the motion, e.g. n_four_bar's horizontal position) declares `static constexpr bool kSingularPositions = true`:
// formulations then watch for them after every step (core/formulation.hpp, Formulation::guard_singular_position).
template <class P>
concept HasSingularPositions = requires { requires P::kSingularPositions; };

// Under-actuated locomotion with prescribed shape (issue 13; [seed-000, eq. 2.13-2.16]): a problem whose q splits
// into passive (body) and actuated (shape) coordinates declares the actuated ones,
//   static constexpr std::array kActuatedCoordinates = {3};   (indices into q, ascending)
// exposed as Model::actuated_coordinates(). A run's [shape] section prescribes them as functions of t
// (core/shape_schedule.hpp) for the formulations that use a prescribed shape (prescribed_shape, kinematic).
template <class P>
concept HasActuatedCoordinates = requires {
  P::kActuatedCoordinates.size();
  { P::kActuatedCoordinates[0] } -> std::convertible_to<int>;
};

// The rows and coordinates of one joint (see the header comment): coordinates[k] = -1 pads an unused slot.
template <int K>
struct JointSpec {
  int first_row = 0;
  int rows = 0;
  std::array<int, K> coordinates = [] {
    std::array<int, K> a{};
    a.fill(-1);
    return a;
  }();
};

template <class P>
concept HasBodiesAndJoints =
    requires(const P& p, int i, const VecN<double, P::kBodyCoordinates>& qb,
             MatN<double, P::kBodyCoordinates, P::kBodyCoordinates>& Mb,
             const VecN<double, P::kJointCoordinates>& ql, VecN<double, P::kJointRows>& h) {
      { P::kBodyCoordinates } -> std::convertible_to<int>;
      { P::kJointCoordinates } -> std::convertible_to<int>;
      { P::kJointRows } -> std::convertible_to<int>;
      { p.bodies() } -> std::convertible_to<int>;
      { p.joints() } -> std::convertible_to<int>;
      { p.joint(i) } -> std::convertible_to<JointSpec<P::kJointCoordinates>>;
      p.template body_mass_matrix<double>(i, qb, Mb);
      { p.template body_potential<double>(i, qb) } -> std::convertible_to<double>;
      p.template joint_constraint<double>(i, ql, h);
    };

template <class P>
concept HasGeneralizedForce = requires(const P& p, double t, const Vec& q, const Vec& qd, Vec& F) {
  p.generalized_force(t, q, qd, F);
};

// A generalized force written once as a template over the scalar type, like the energies (Ceres' AutoDiffCostFunction
// style): generalized_force(t, q, qd, F) with t of the scalar type and q, qd, F vectors of it. The model then
// differentiates F(t, q, qd) in q and qd by ceres::Jet (Model::generalized_force_derivatives), so the exact Jacobian
// of the implicit integrators covers forced problems (motors, damping). A double-only force stays allowed: its
// problem's Jacobian is then by differences.
template <class P>
concept HasDifferentiableGeneralizedForce =
    HasGeneralizedForce<P> && requires(const P& p, const ceres::Jet<double, 2>& t,
                                       const VecN<ceres::Jet<double, 2>, P::kDof>& q,
                                       VecN<ceres::Jet<double, 2>, P::kDof>& F) { p.generalized_force(t, q, q, F); };

}  // namespace clm
