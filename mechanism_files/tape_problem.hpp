// A mechanism file as a Problem (core/problem.hpp) like any zoo problem: its templated functions run the compiled
// tapes over whatever scalar the core asks for (double, ceres::Jet, Taylor2, HyperDual, ...), so AutoDiffModel,
// every formulation, integrator, projection and analysis work on it unchanged.
//
// The Problem concept fixes at compile time what a problem writes (holonomic h, Pfaffian A or both, explicit time
// dependence, a generalized force), so a file mechanism is one of twelve instantiations, chosen at run time from
// what the file holds (runs/problem_registry.cpp, runs/mechanism/). The gyroscopic term is always written (zero where T has no
// part linear in qd) and reported by has_gyroscopic_term(), which AutoDiffModel asks for Model::gyroscopic().
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace clm {

template <ConstraintKind kKind, bool kTimeDependentTerms, bool kForces>
struct TapeProblem {
  static constexpr bool kPositionRows = kKind != ConstraintKind::kPfaffian;  // the file has position rows h
  static constexpr bool kVelocityRows = kKind != ConstraintKind::kHolonomic;  // and velocity rows A qd + b
  static constexpr const char* kName = "mechanism_file";
  static constexpr const char* kDescription = "a mechanism file (docs/mechanism-files.md)";
  static constexpr int kDof = Eigen::Dynamic;
  static constexpr int kConstraints = Eigen::Dynamic;
  static constexpr ConstraintKind kConstraintKind = kKind;
  static constexpr int kPositionConstraints = Eigen::Dynamic;  // kMixed: position_constraints()
  static constexpr std::array<ParameterSpec<TapeProblem>, 0> kParameters{};

  std::shared_ptr<const CompiledMechanism> mechanism;

  int dof() const { return mechanism->n; }
  int constraints() const { return mechanism->m; }
  int position_constraints() const { return mechanism->position_rows; }
  void validate() const {}

  // Run-time identity (AutoDiffModel reads these where a problem has them instead of kName, kParameters).
  std::string name() const { return mechanism->name; }
  std::string description() const { return mechanism->description; }
  std::vector<std::pair<std::string, double>> parameter_values() const { return mechanism->parameters; }
  std::vector<std::string> coordinate_names() const { return mechanism->coordinates; }
  std::vector<std::string> coordinate_units() const { return mechanism->units; }
  std::vector<std::string> constraint_names() const { return mechanism->constraint_names; }
  bool has_gyroscopic_term() const { return mechanism->has_gyroscopic; }

  template <class T>
  void mass_matrix(const VecN<T, kDof>& q, MatN<T, kDof, kDof>& M) const {
    const Tape& tape = mechanism->mass;
    T* r = registers<T>(tape, q, nullptr, T(0.0));
    const int n = mechanism->n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M(i, j) = r[tape.output_register(i * n + j)];
  }

  template <class T>
  T potential(const VecN<T, kDof>& q) const
    requires(!kTimeDependentTerms)
  {
    const Tape& tape = mechanism->potential;
    return registers<T>(tape, q, nullptr, T(0.0))[tape.output_register(0)];
  }
  template <class T>
  T potential(const VecN<T, kDof>& q, const T& t) const
    requires(kTimeDependentTerms)
  {
    const Tape& tape = mechanism->potential;
    return registers<T>(tape, q, nullptr, t)[tape.output_register(0)];
  }

  template <class T>
  void constraint(const VecN<T, kDof>& q, VecN<T, kConstraints>& h) const
    requires(kPositionRows && !kTimeDependentTerms)
  {
    copy_outputs(mechanism->constraint, registers<T>(mechanism->constraint, q, nullptr, T(0.0)), h);
  }
  template <class T>
  void constraint(const VecN<T, kDof>& q, const T& t, VecN<T, kConstraints>& h) const
    requires(kPositionRows && kTimeDependentTerms)
  {
    copy_outputs(mechanism->constraint, registers<T>(mechanism->constraint, q, nullptr, t), h);
  }

  template <class T>
  void pfaffian(const VecN<T, kDof>& q, MatN<T, kConstraints, kDof>& A) const
    requires(kVelocityRows)
  {
    const Tape& tape = mechanism->pfaffian;  // the velocity rows' A, after the position rows of a mixed file
    T* r = registers<T>(tape, q, nullptr, T(0.0));
    const int n = mechanism->n, m = mechanism->m - mechanism->position_rows;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) A(i, j) = r[tape.output_register(i * n + j)];
  }
  template <class T>
  void affine_term(const VecN<T, kDof>& q, const T& t, VecN<T, kConstraints>& b) const
    requires(kVelocityRows && kTimeDependentTerms)
  {
    copy_outputs(mechanism->affine, registers<T>(mechanism->affine, q, nullptr, t), b);
  }

  template <class T>
  void gyroscopic(const VecN<T, kDof>& q, VecN<T, kDof>& a) const {
    copy_outputs(mechanism->gyroscopic, registers<T>(mechanism->gyroscopic, q, nullptr, T(0.0)), a);
  }

  // Over any scalar (double, ceres::Jet): the exact Jacobian differentiates the [forces] section in q and qd.
  template <class T, class Q, class Out>
  void generalized_force(const T& t, const Q& q, const Q& qd, Out& F) const
    requires(kForces)
  {
    const Tape& tape = mechanism->force;
    T* r = Tape::scratch<T>(std::max(tape.registers(), tape.inputs()));
    const int n = mechanism->n;
    for (int i = 0; i < n; ++i) {
      r[i] = T(q[i]);
      r[n + i] = T(qd[i]);
    }
    r[2 * n] = t;
    tape.run(r);
    for (int i = 0; i < n; ++i) F[i] += r[tape.output_register(i)];
  }

  // M and c by reverse mode on the tapes (issue 22), in O(cost of M) instead of AutoDiffModel's Jet passes over
  // M, whose cost grows as n times that (O(n^3) for a dense M): one single-assignment pass of the mass tape over
  // a dual number along qd gives M and Mdot qd, and its value parts feed the backward sweep for
  // -1/2 d/dq(qd^T M qd) (weights -1/2 qd_i qd_j); d(V - T0)/dq and the gyroscopic Da qd - Da^T qd (weights -qd)
  // likewise. Taken from kReverseModeMinDof coordinates on, where it is the cheaper (bench_rhs FileRhs,
  // ModelTermsFile); not for time-dependent files (analytic_terms has no t).
  static constexpr int kReverseModeMinDof = 8;
  bool has_analytic_terms() const { return !kTimeDependentTerms && mechanism->n >= kReverseModeMinDof; }
  void analytic_terms(const Vec& q, const Vec& qd, Mat& M, Vec& c) const
    requires(!kTimeDependentTerms)
  {
    const int n = mechanism->n;
    thread_local std::vector<double> weights;
    weights.resize(std::max(n * n, 1));
    // The mass tape once, single-assignment, over a dual number along qd: M, Mdot qd, and the values the
    // backward sweep for -1/2 d/dq(qd^T M qd) reads.
    const Tape& mass = mechanism->mass;
    const Dual* v = dual_pass(mass, q, qd);
    for (int i = 0; i < n; ++i) {
      double acc = 0;
      for (int j = 0; j < n; ++j) {
        const Dual& x = v[mass.ssa_output_register(i * n + j)];
        M(i, j) = x.a;
        acc += x.v[0] * qd[j];
      }
      c[i] = acc;
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) weights[i * n + j] = -0.5 * qd[i] * qd[j];
    add_adjoints(mass, v, weights.data(), c);
    weights[0] = 1.0;
    const Tape& potential = mechanism->potential;
    add_adjoints(potential, dual_pass(potential, q, qd), weights.data(), c);
    if (mechanism->has_gyroscopic) {  // + Da qd - Da^T qd
      const Tape& gyro = mechanism->gyroscopic;
      const Dual* a = dual_pass(gyro, q, qd);
      for (int i = 0; i < n; ++i) c[i] += a[gyro.ssa_output_register(i)].v[0];
      for (int i = 0; i < n; ++i) weights[i] = -qd[i];
      add_adjoints(gyro, a, weights.data(), c);
    }
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    q0 = mechanism->q0;
    qd0 = mechanism->qd0;
  }

  // The optional sections (docs/mechanism-files.md). The members exist for every file, as the concept detects
  // them at compile time; has_*() says whether this file has the term, and the core asks it
  // (core/problem.hpp, provides_velocity_basis / provides_transversal_frame).
  const std::vector<int>& actuated_coordinates() const { return mechanism->actuated; }
  bool has_velocity_basis() const { return mechanism->velocity_basis.outputs() > 0; }
  template <class T>
  void velocity_basis(const VecN<T, kDof>& q, MatN<T, kDof, Eigen::Dynamic>& S) const {
    const Tape& tape = mechanism->velocity_basis;
    const T* r = registers<T>(tape, q, nullptr, T(0.0));
    const int n = mechanism->n, k = n - mechanism->m;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j) S(i, j) = r[tape.output_register(i * k + j)];
  }
  bool has_transversal_frame() const { return mechanism->transversal_frame.outputs() > 0; }
  template <class T>
  void transversal_frame(const VecN<T, kDof>& q, MatN<T, kDof, kConstraints>& X) const {
    const Tape& tape = mechanism->transversal_frame;
    const T* r = registers<T>(tape, q, nullptr, T(0.0));
    const int n = mechanism->n, m = mechanism->m;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j) X(i, j) = r[tape.output_register(i * m + j)];
  }
  // The exact motion from (q0, qd0): false where the file has no [closed_form] or it is not finite.
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const {
    const Tape& tape = mechanism->closed_form;
    if (tape.outputs() == 0) return false;
    const double* r = registers<double>(tape, q0, &qd0, t);
    const int n = mechanism->n;
    bool finite = true;
    for (int i = 0; i < n; ++i) {
      q[i] = r[tape.output_register(i)];
      qd[i] = r[tape.output_register(n + i)];
      finite = finite && std::isfinite(q[i]) && std::isfinite(qd[i]);
    }
    return finite;  // a start the formula does not cover (a division by zero): no closed form there
  }
  // [reference]: the published values (nullptr: none, or withheld for other parameter values, and why).
  const MechanismFile::Reference* published_values() const {
    return mechanism->reference ? &*mechanism->reference : nullptr;
  }
  const std::string& published_values_withheld() const { return mechanism->reference_withheld; }
  // [points]: the first is the reference point (a function of q only); point_positions writes every point's
  // components at (t, q) in order (as many as `out` holds: the reference point asks for the first point's).
  static constexpr bool kFirstPointIsReferencePoint = true;
  const std::vector<CompiledMechanism::Point>& points() const { return mechanism->points; }
  void point_positions(double t, const Vec& q, Vec& out) const {
    const Tape& tape = mechanism->point_positions;
    const double* r = registers<double>(tape, q, nullptr, t);
    for (int k = 0; k < tape.outputs() && k < out.size(); ++k) out[k] = r[tape.output_register(k)];
  }
  // [body_velocities]: each velocity at (t, q, qd).
  const std::vector<CompiledMechanism::BodyVelocity>& body_velocities() const { return mechanism->body_velocities; }
  void body_velocity_values(double t, const Vec& q, const Vec& qd, Vec& out) const {
    const Tape& tape = mechanism->body_velocity_values;
    const double* r = registers<double>(tape, q, &qd, t);
    for (int k = 0; k < tape.outputs() && k < out.size(); ++k) out[k] = r[tape.output_register(k)];
  }

 private:
  using Dual = ceres::Jet<double, 1>;
  // The single-assignment code of `tape` over a dual number at (q + eps qd, qd = 0, t = 0), in a per-thread
  // buffer that grows to the largest tape once (each call's values are read before the next call).
  const Dual* dual_pass(const Tape& tape, const Vec& q, const Vec& qd) const {
    thread_local std::vector<Dual> values;
    const int size = std::max(tape.ssa_registers(), tape.inputs());
    if (static_cast<int>(values.size()) < size) values.resize(size);
    const int n = mechanism->n;
    for (int i = 0; i < n; ++i) {
      values[i] = Dual(q[i]);
      values[i].v[0] = qd[i];
      values[n + i] = Dual(0.0);
    }
    values[2 * n] = Dual(0.0);
    tape.run_single_assignment(values.data());
    return values.data();
  }
  // c += d/dq of sum_k weights[k] out_k by the backward sweep over the values of dual_pass.
  void add_adjoints(const Tape& tape, const Dual* values, const double* weights, Vec& c) const {
    thread_local std::vector<double> adjoints;
    const int size = std::max(tape.ssa_registers(), tape.inputs());
    if (static_cast<int>(adjoints.size()) < size) adjoints.resize(size);
    tape.backward_sweep(values, adjoints.data(), weights);
    for (int i = 0; i < mechanism->n; ++i) c[i] += adjoints[i];
  }

  // The thread's registers for T with the inputs written: q, qd (zero where not given) and t.
  template <class T, class Q>
  static T* registers_impl(const Tape& tape, const Q& q, const Vec* qd, const T& t, int n) {
    T* r = Tape::scratch<T>(std::max(tape.registers(), tape.inputs()));
    for (int i = 0; i < n; ++i) {
      r[i] = T(q[i]);
      r[n + i] = qd ? T((*qd)[i]) : T(0.0);
    }
    r[2 * n] = t;
    tape.run(r);
    return r;
  }
  template <class T, class Q>
  T* registers(const Tape& tape, const Q& q, const Vec* qd, const T& t) const {
    return registers_impl<T>(tape, q, qd, t, mechanism->n);
  }
  template <class T, class Out>
  static void copy_outputs(const Tape& tape, const T* r, Out& out) {
    for (int k = 0; k < tape.outputs(); ++k) out[k] = r[tape.output_register(k)];
  }
};

}  // namespace clm
