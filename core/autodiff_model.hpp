// AutoDiffModel<P>: turns a templated Problem struct into a double-valued Model by forward-mode
// automatic differentiation (ceres::Jet), [seed-000, eq. 2.1 and 2.5]:
//
//   c        = Mdot qd - 1/2 d/dq(qd^T M qd) + dV/dq
//   A        = dh/dq (holonomic) or the problem's A(q) (Pfaffian)
//   Adot qd  = d/dq(A(q) qd) qd
//   dL/dq    = 1/2 d/dq(qd^T M qd) - dV/dq,   p = dL/dqd = M qd      (on request, variational integrators)
//
// A problem with a gyroscopic term qd . a(q) in L (core/problem.hpp) adds, with Da_ij = d a_i / d q_j,
//   c += (Da - Da^T) qd,   dL/dq += Da^T qd,   p += a(q);
// Da qd = d/dt a(q(t)) comes from the same Jet<1> pass as Mdot qd, Da^T qd = d/dq (qd . a) from the Jet<K>
// pass of the gradients. The energy T + V is unchanged (the gyroscopic force does no work).
//
// Three passes, each sized to what it must differentiate:
//   1. Jet<1> at q + eps qd: M and Mdot = dM/dq[qd] (and, for Pfaffian problems, A and Adot).
//   2. Jet<K> seeded with K coordinate directions at a time: gradients of T = 1/2 qd^T M(q) qd and of V,
//      and A = dh/dq for holonomic problems. K = n for fixed n <= 16 (one pass), else chunks of 8,
//      the way Ceres' DynamicAutoDiffCostFunction strides.
//   3. Taylor2 at q + s qd (holonomic only): Adot qd = d^2/ds^2 h(q + s qd) (see taylor2.hpp for why
//      not nested Jets).
// Time-dependent problems (core/problem.hpp: h(q, t), A(q) qd + b(q, t) = 0, V(q, t)) carry t as a constant
// through passes 1 and 2; the velocity term b is dh/dt by a Jet<1> pass seeded in t alone (holonomic) or the
// problem's affine_term (Pfaffian); the acceleration bias is d^2/ds^2 h(q + s qd, t + s) by the Taylor2 pass with
// t advanced too (holonomic), or the Jet<1> pass along (qd, 1) over A qd + b (Pfaffian). Problems without
// explicit time dependence compile to the code they had (if constexpr), bit for bit.
// On request (kConstraintCurvature, Pfaffian only) a Jet<K> pass over A(q) gives the Lagrangian derivative
// of Phi = A qd, C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k; holonomic problems get C = 0.
// All Jet buffers live in the workspace, so evaluate() does not touch the heap. The typed extensions
// (velocity basis, substitution, restricted Lagrangian, analysis) are capabilities (core/model.hpp)
// attached when the problem is registered, not methods of this class.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/hyperdual.hpp"
#include "core/jet_passes.hpp"
#include "core/quadratic_lagrangian_second_derivatives.hpp"
#include "core/sparse_joint_terms.hpp"
#include "core/taylor2.hpp"
#include "core/taylor2_dual.hpp"
#include "core/value_parsing.hpp"

namespace clm {

template <Problem P>
class AutoDiffModel final : public Model {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;
  static constexpr bool kHolonomic = P::kConstraintKind == ConstraintKind::kHolonomic;
  static constexpr bool kMixed = P::kConstraintKind == ConstraintKind::kMixed;
  // The position rows h (first) and the velocity rows A qd + b (after them), at compile time: a holonomic
  // problem has only the first, a Pfaffian one only the second, a mixed one both (core/problem.hpp).
  static constexpr bool kHasH = kHasPositionRows<P>;
  static constexpr bool kHasA = kHasVelocityRows<P>;
  static constexpr int CH = kPositionRowsOf<P>;
  static constexpr int CA = kVelocityRowsOf<P>;
  static constexpr bool kTimeDependent = IsTimeDependent<P>;
  // The exact Jacobian's derivatives exist without explicit time dependence (dynamics_derivatives has no t) and
  // where the generalized force, if any, is templated over the scalar (core/problem.hpp).
  static constexpr bool kDerivatives =
      !kTimeDependent && (!HasGeneralizedForce<P> || HasDifferentiableGeneralizedForce<P>);
  static_assert(!HasAffineTerm<P> || kHasA, "affine_term belongs to velocity rows (kPfaffian, kMixed)");
  static_assert(!HasTimeDependentConstraint<P> || kHasH, "constraint(q, t, h) belongs to position rows (kHolonomic, kMixed)");
  static_assert(!kMixed || !HasAnalyticConstraintTerms<P>, "analytic_constraint_terms: holonomic or Pfaffian problems only");
  static_assert(!kTimeDependent || (!HasAnalyticTerms<P> && !HasAnalyticConstraintTerms<P>),
                "analytic overrides are not supported for time-dependent problems");
  static constexpr int K = (N != Eigen::Dynamic && N <= 16) ? N : 8;  // gradient chunk width
  using Jet1 = ceres::Jet<double, 1>;
  using JetK = ceres::Jet<double, K>;

  // use_analytic = false forces the autodiff path even when the problem supplies analytic terms
  // (tests compare the two).
  explicit AutoDiffModel(P problem, bool use_analytic = true)
      : p_(std::move(problem)), n_(p_.dof()), m_(p_.constraints()), mh_(position_rows_of_problem(p_, m_)),
        use_analytic_(use_analytic) {
    p_.validate();
    if (mh_ < 0 || mh_ > m_ || (CH != Eigen::Dynamic && mh_ != CH) || (CA != Eigen::Dynamic && m_ - mh_ != CA))
      throw InputError("problem " + name() + ": " + std::to_string(mh_) + " position rows of " + std::to_string(m_) +
                       " constraint rows do not fit its declared sizes");
    if constexpr (HasActuatedCoordinates<P>)
      actuated_.assign(P::kActuatedCoordinates.begin(), P::kActuatedCoordinates.end());
    if constexpr (requires { p_.actuated_coordinates(); }) actuated_ = p_.actuated_coordinates();
    if constexpr (requires { p_.published_values(); }) {  // a mechanism file's [reference] and [points]
      if (const auto* values = p_.published_values()) {
        PublishedReference& r = published_.emplace();
        r.source = values->source;
        r.description = values->description;
        r.t = values->t;
        r.q = Eigen::Map<const Vec>(values->q.data(), static_cast<Eigen::Index>(values->q.size()));
        r.qd = Eigen::Map<const Vec>(values->qd.data(), static_cast<Eigen::Index>(values->qd.size()));
        r.lambda = Eigen::Map<const Vec>(values->lambda.data(), static_cast<Eigen::Index>(values->lambda.size()));
      }
      withheld_ = p_.published_values_withheld();
    }
    if constexpr (requires { p_.points(); }) {
      if (!p_.points().empty()) {
        // A mechanism file's first point is its reference point (docs/mechanism-files.md); a zoo problem's points
        // are for the plots only (problems/point_spec.hpp), its reference point, if any, declared apart.
        if constexpr (requires { P::kFirstPointIsReferencePoint; }) {
          const auto& first = p_.points().front();
          ReferencePoint& point = reference_point_.emplace();
          point.name = first.name;
          const char* names[] = {"x", "y", "z"};
          point.components.assign(names, names + first.components);
          point.unit = first.unit;
          // The model owns the problem and the point: the pointer lives as long as both. The first point's
          // components come first in point_positions.
          // The first point is a function of q alone (the compiler refuses t in it), so t = 0 is exact.
          point.position = [problem = &p_](const Vec& q, Vec& out) { problem->point_positions(0.0, q, out); };
        }
        NamedPoints& all = named_points_.emplace();
        for (const auto& p : p_.points()) {
          all.names.push_back(p.name);
          all.units.push_back(p.unit);
          all.components.push_back(p.components);
        }
        // A point may move with t (a driven pivot): point_positions(t, q, out); most are point_positions(q, out).
        if constexpr (requires(const P& p, double t, const Vec& q, Vec& o) { p.point_positions(t, q, o); })
          all.positions = [problem = &p_](double t, const Vec& q, Vec& out) { problem->point_positions(t, q, out); };
        else
          all.positions = [problem = &p_](double, const Vec& q, Vec& out) { problem->point_positions(q, out); };
      }
    }
    if constexpr (requires { p_.body_velocities(); }) {
      if (!p_.body_velocities().empty()) {
        BodyVelocities& all = body_velocities_.emplace();
        for (const auto& v : p_.body_velocities()) {
          all.names.push_back(v.name);
          all.units.push_back(v.unit);
          all.descriptions.push_back(v.description);
        }
        all.values = [problem = &p_](double t, const Vec& q, const Vec& qd, Vec& out) {
          problem->body_velocity_values(t, q, qd, out);
        };
      }
    }
    if constexpr (HasBodiesAndJoints<P>) sparse_.emplace(p_);
    if constexpr (HasReferencePoint<P>) {
      ReferencePoint& point = reference_point_.emplace();
      point.name = P::kReferencePointName;
      point.coordinates.assign(P::kReferencePointCoordinates.begin(), P::kReferencePointCoordinates.end());
    } else if constexpr (HasReferencePointFunction<P>) {
      ReferencePoint& point = reference_point_.emplace();
      point.name = P::kReferencePointName;
      point.components.assign(P::kReferencePointComponents.begin(), P::kReferencePointComponents.end());
      point.unit = P::kReferencePointUnit;
      // The model owns the problem and the point: the pointer lives as long as both.
      point.position = [problem = &p_](const Vec& q, Vec& out) { problem->reference_point_position(q, out); };
    }
    if constexpr (HasPublishedReference<P>) {
      // The published values belong to the default parameter set only: a changed parameter (even in the
      // last digit) makes them someone else's problem.
      const P defaults{};
      bool at_defaults = true;
      for (const auto& spec : P::kParameters) at_defaults = at_defaults && p_.*(spec.member) == defaults.*(spec.member);
      for (const auto& spec : P::kParameters)
        if (withheld_.empty() && !(p_.*(spec.member) == defaults.*(spec.member)))
          withheld_ = "the published values [" + std::string(P::kReferenceSource) + "] hold for the default parameters, and param." +
                      std::string(spec.name) + " = " + format_number(p_.*(spec.member)) + " (default " +
                      format_number(defaults.*(spec.member)) + ")";
      if (at_defaults) {
        PublishedReference& r = published_.emplace();
        r.source = P::kReferenceSource;
        r.description = P::kReferenceDescription;
        r.t = P::kReferenceTime;
        r.q = Eigen::Map<const Vec>(P::kReferenceQ.data(), static_cast<Eigen::Index>(P::kReferenceQ.size()));
        r.qd = Eigen::Map<const Vec>(P::kReferenceQd.data(), static_cast<Eigen::Index>(P::kReferenceQd.size()));
        if constexpr (HasPublishedMultipliers<P>)
          r.lambda = Eigen::Map<const Vec>(P::kReferenceLambda.data(), static_cast<Eigen::Index>(P::kReferenceLambda.size()));
      }
    }
  }

  const P& problem() const { return p_; }

  // A problem known only at run time (a mechanism file, mechanism_files/tape_problem.hpp) says its name,
  // description, parameter values and whether its gyroscopic term is present by member functions.
  std::string name() const override {
    if constexpr (requires { p_.name(); }) return p_.name();
    else return P::kName;
  }
  std::string description() const override {
    if constexpr (requires { p_.description(); }) return p_.description();
    else return P::kDescription;
  }
  int n() const override { return n_; }
  int m() const override { return m_; }
  bool holonomic() const override { return kHolonomic; }
  int position_rows() const override { return mh_; }
  bool gyroscopic() const override { return gyroscopic_present(); }
  bool time_dependent() const override { return kTimeDependent; }
  bool has_generalized_force() const override { return HasGeneralizedForce<P>; }
  bool has_singular_positions() const override { return HasSingularPositions<P>; }
  const std::vector<int>& actuated_coordinates() const override { return actuated_; }
  std::vector<std::pair<std::string, double>> parameters() const override {
    std::vector<std::pair<std::string, double>> out;
    if constexpr (requires { p_.parameter_values(); }) return p_.parameter_values();
    for (const auto& spec : P::kParameters) out.emplace_back(std::string(spec.name), p_.*(spec.member));
    return out;
  }

  // The sparse path (core/sparse_joint_terms.hpp): problems built from bodies and joints.
  bool has_sparse_terms() const override { return HasBodiesAndJoints<P>; }
  int sparse_block_size() const override {
    if constexpr (HasBodiesAndJoints<P>) return P::kBodyCoordinates;
    return 0;
  }
  SparseModelTerms make_sparse_terms() const override {
    if constexpr (HasBodiesAndJoints<P>) return sparse_->make_terms(n_, m_);
    return Model::make_sparse_terms();
  }
  void evaluate_sparse(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                       SparseModelTerms& out) const override {
    if constexpr (HasBodiesAndJoints<P>) {
      sparse_->evaluate(p_, q, qd, what, out);
      if (what & kForce) {
        out.F.setZero();
        if constexpr (HasGeneralizedForce<P>) p_.generalized_force(t, q, qd, out.F);
      }
    } else {
      Model::evaluate_sparse(t, q, qd, what, ws, out);
    }
  }

  struct Workspace : ModelWorkspace {
    // mh position rows (the h buffers), ma velocity rows (the A buffers).
    Workspace(int n, int mh, int ma) {
      q.resize(n); qd.resize(n); v.resize(n);
      M.resize(n, n); h.resize(mh); A.resize(ma, n);
      q1.resize(n); M1.resize(n, n); A1.resize(ma, n);
      qk.resize(n); Mk.resize(n, n); hk.resize(mh);
      q2.resize(n); h2.resize(mh);
      Ak.resize(ma, n);
      qh.resize(n); Mh.resize(n, n); hh.resize(mh);
      Ah.resize(ma, n); qt.resize(n); ht.resize(mh);
      a.resize(n); a1.resize(n); ak.resize(n); ah.resize(n);
      qdk.resize(n); Fk.resize(n);
      h1.resize(mh); b1.resize(ma);
    }
    double t = 0;  // the time of the evaluation (time-dependent problems read it in every pass)
    VecN<Jet1, CH> h1;  // h(q, t + eps): the position rows' time derivative
    VecN<Jet1, CA> b1;  // b(q + eps qd, t + eps): the velocity rows' affine term and its rate
    VecN<double, N> q, qd, v;
    MatN<double, N, N> M;
    VecN<double, CH> h;
    MatN<double, CA, N> A;
    VecN<Jet1, N> q1;
    MatN<Jet1, N, N> M1;
    MatN<Jet1, CA, N> A1;
    VecN<JetK, N> qk;
    MatN<JetK, N, N> Mk;
    VecN<JetK, CH> hk;
    VecN<Taylor2, N> q2;
    VecN<Taylor2, CH> h2;
    MatN<JetK, CA, N> Ak;  // A(q) with K coordinate directions (constraint curvature)
    VecN<HyperDual, N> qh;  // second derivatives (dynamics_derivatives)
    MatN<HyperDual, N, N> Mh;
    VecN<HyperDual, CH> hh;
    MatN<HyperDual, CA, N> Ah;  // the velocity rows' A(q) over hyper-duals (bias derivatives)
    VecN<Taylor2Dual, N> qt;    // the position rows' bias derivatives (bias_derivatives)
    VecN<Taylor2Dual, CH> ht;
    VecN<double, N> a;  // gyroscopic a(q) in each scalar (problems without one leave them unused)
    VecN<Jet1, N> a1;
    VecN<JetK, N> ak;
    VecN<HyperDual, N> ah;
    VecN<JetK, N> qdk, Fk;  // F(t, q, qd) with K directions in q or qd (generalized_force_derivatives)
  };

  std::unique_ptr<ModelWorkspace> make_workspace() const override {
    return std::make_unique<Workspace>(n_, mh_, m_ - mh_);
  }

  void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& base,
                ModelTerms& out) const override {
    auto& ws = static_cast<Workspace&>(base);
    ws.q = q;
    ws.qd = qd;
    ws.t = t;
    const bool want_M = what & (kMassMatrix | kEnergy | kMomentum);
    const bool want_c = what & kBias;

    bool analytic_done = false;
    if constexpr (HasAnalyticTerms<P>) {
      if (use_analytic_ && analytic_terms_on() && (want_M || want_c)) {
        p_.analytic_terms(q, qd, out.M, out.c);
        analytic_done = true;
      }
    }
    if (!analytic_done && (want_M || want_c)) mass_and_bias(ws, want_c, out);

    if (what & kForce) {
      out.F.setZero();
      if constexpr (HasGeneralizedForce<P>) p_.generalized_force(t, q, qd, out.F);
    }
    if (what & (kConstraintJacobian | kConstraintBias | kConstraintValue | kConstraintRate))
      constraint_terms(ws, what, out);
    if (what & kConstraintCurvature) constraint_curvature(ws, out);
    if (what & kLagrangianGradient) lagrangian_gradient(ws, out);
    if (what & kMomentum) out.p.noalias() = out.M * qd;
    if constexpr (HasGyroscopic<P>) if (gyroscopic_present()) {
      if (what & (kMomentum | kEnergy)) {
        p_.template gyroscopic<double>(ws.q, ws.a);
        if (what & kMomentum) out.p += ws.a;
        if (what & kEnergy) out.gyroscopic = ws.a.dot(ws.qd);
      }
    }
    if (what & kEnergy) {
      double twice_t = 0;
      for (int i = 0; i < n_; ++i) twice_t += qd[i] * out.M.row(i).dot(qd);
      out.kinetic = 0.5 * twice_t;
      out.potential = potential_at<double>(ws.q, ws.t);
      if constexpr (HasTimeDependentPotential<P>) {  // dV/dt at fixed q: a Jet<1> pass seeded in t alone
        for (int i = 0; i < n_; ++i) ws.q1[i] = Jet1(ws.q[i]);
        Jet1 t1(ws.t);
        t1.v[0] = 1.0;
        out.potential_rate = p_.template potential<Jet1>(ws.q1, t1).v[0];
      }
    }
  }

  // A problem with a double-only generalized force is left to finite differences; a templated one is
  // differentiated by generalized_force_derivatives. A gyroscopic term is included (see dynamics_derivatives).
  // The problem may not depend on t explicitly (dynamics_derivatives has no time argument).
  bool has_dynamics_derivatives() const override { return kDerivatives; }
  bool uses_analytic_terms() const override {
    return use_analytic_ && ((HasAnalyticTerms<P> && analytic_terms_on()) || HasAnalyticConstraintTerms<P>);
  }

  // dM/dq and, for Pfaffian problems, dA/dq by one Jet<K> pass each (per K coordinates); dc/dqd from dM/dq
  // (c is quadratic in qd); dc/dq from hyper-dual passes: q + e1 qd + e2 e_l over M (n passes) gives
  // d/dq_l (Mdot) qd, and q + e1 e_i + e2 e_l over W = V - 1/2 qd^T M qd (n(n+1)/2 passes) gives the rest,
  // d^2 W / dq_i dq_l. Holonomic dA/dq = d^2 h / dq dq by hyper-dual passes over h.
  // A gyroscopic term adds Da - Da^T to dc/dqd (Da from a Jet<K> pass), d/dq_l (Da qd) to dc/dq (the same
  // hyper-dual passes as Mdot qd, over a) and -qd . a to W.
  void dynamics_derivatives(const Vec& q, const Vec& qd, ModelWorkspace& base,
                            DynamicsDerivatives& out) const override {
    if constexpr (!kDerivatives) {
      Model::dynamics_derivatives(q, qd, base, out);
    } else {
      auto& ws = static_cast<Workspace&>(base);
      const int n = n_, m = m_;
      ws.q = q;
      ws.qd = qd;
      // dM, dc/dqd and dc/dq of the quadratic Lagrangian in the workspace's buffers; the gyroscopic term's parts of
      // dc/dq through the hooks, in the passes' own seeding (core/quadratic_lagrangian_second_derivatives.hpp).
      [[maybe_unused]] const bool gyro = HasGyroscopic<P> && gyroscopic_present();
      quadratic_lagrangian_second_derivatives<K>(
          n, q, qd,
          [this](const auto& qx, auto& Mx) {
            using T = typename std::decay_t<decltype(Mx)>::Scalar;
            p_.template mass_matrix<T>(qx, Mx);
          },
          [this](const auto& qx) {
            using T = typename std::decay_t<decltype(qx)>::Scalar;
            return potential_at<T>(qx, 0.0);
          },
          ws.qk, ws.Mk, ws.qh, ws.Mh, out.dM, out.dc_dq, out.dc_dqd,
          [&](const VecN<HyperDual, N>& qh, int l, Mat& dc_dq) {  // + d/dq_l (Da qd)_i = d^2 a_i [qd, e_l]
            if constexpr (HasGyroscopic<P>) if (gyro) {
              p_.template gyroscopic<HyperDual>(qh, ws.ah);
              for (int i = 0; i < n; ++i) dc_dq(i, l) += ws.ah[i].d;
            }
          },
          [&](const VecN<HyperDual, N>& qh, HyperDual& W) {  // W - qd . a(q)
            if constexpr (HasGyroscopic<P>) if (gyro) {
              p_.template gyroscopic<HyperDual>(qh, ws.ah);
              for (int a = 0; a < n; ++a) W -= ws.ah[a] * qd[a];
            }
          });
      if constexpr (HasGyroscopic<P>) if (gyro) {
        for (int start = 0; start < n; start += K) {  // + Da - Da^T, Da(i, start + k) = ak[i].v[k]
          seed_chunk(ws, start);
          p_.template gyroscopic<JetK>(ws.qk, ws.ak);
          const int width = std::min(K, n - start);
          for (int k = 0; k < width; ++k)
            for (int i = 0; i < n; ++i) {
              out.dc_dqd(i, start + k) += ws.ak[i].v[k];
              out.dc_dqd(start + k, i) -= ws.ak[i].v[k];
            }
        }
      }
      const int mh = mh_;
      if constexpr (kHasH) {  // the position rows: d^2 h / dq dq
        for (int j = 0; j < n; ++j) {
          for (int l = j; l < n; ++l) {
            for (int k = 0; k < n; ++k) ws.qh[k] = HyperDual(q[k], k == j ? 1.0 : 0.0, k == l ? 1.0 : 0.0, 0.0);
            constraint_at<HyperDual>(ws.qh, 0.0, ws.hh);
            for (int r = 0; r < mh; ++r) {
              out.dA[l](r, j) = ws.hh[r].d;
              out.dA[j](r, l) = ws.hh[r].d;
            }
          }
        }
      }
      if constexpr (kHasA) {  // the velocity rows, after them: dA/dq
        for (int start = 0; start < n; start += K) {
          seed_chunk(ws, start);
          p_.template pfaffian<JetK>(ws.qk, ws.Ak);
          const int width = std::min(K, n - start);
          for (int k = 0; k < width; ++k)
            for (int r = 0; r < m - mh; ++r)
              for (int j = 0; j < n; ++j) out.dA[start + k](mh + r, j) = ws.Ak(r, j).v[k];
        }
      }
      if (m > 0 && out.dbias_dq.rows() == m) bias_derivatives(ws, out);
    }
  }

  // dF/dq and dF/dqd by Jet<K> passes over the templated force, K directions at a time: ceil(n / K) along q (qd
  // held), as many along qd (q held); t enters as a constant.
  void generalized_force_derivatives(double t, const Vec& q, const Vec& qd, ModelWorkspace& base, Mat& dF_dq,
                                     Mat& dF_dqd) const override {
    if constexpr (!kDerivatives || !HasGeneralizedForce<P>) {
      Model::generalized_force_derivatives(t, q, qd, base, dF_dq, dF_dqd);
    } else {
      auto& ws = static_cast<Workspace&>(base);
      const int n = n_;
      ws.q = q;
      ws.qd = qd;
      const JetK tk(t);
      for (int along_qd = 0; along_qd < 2; ++along_qd) {
        Mat& out = along_qd ? dF_dqd : dF_dq;
        for (int start = 0; start < n; start += K) {
          if (along_qd) {
            for (int i = 0; i < n; ++i) ws.qk[i] = JetK(q[i]);
            clm::seed_chunk<K>(ws.qdk, ws.qd, n, start);
          } else {
            clm::seed_chunk<K>(ws.qk, ws.q, n, start);
            for (int i = 0; i < n; ++i) ws.qdk[i] = JetK(qd[i]);
          }
          for (int i = 0; i < n; ++i) ws.Fk[i] = JetK(0.0);
          p_.generalized_force(tk, ws.qk, ws.qdk, ws.Fk);
          const int width = std::min(K, n - start);
          for (int k = 0; k < width; ++k)
            for (int i = 0; i < n; ++i) out(i, start + k) = ws.Fk[i].v[k];
        }
      }
    }
  }

  // d/dq_l (C^T mu)_j = sum_a mu_a (d^2 A_aj [qd, e_l] - d^2 (A_a qd) / dq_j dq_l): the first term by n
  // hyper-dual passes over A along (qd, e_l), the second, the Hessian of s(q) = mu^T A(q) qd, by n(n+1)/2
  // passes along (e_j, e_l). Holonomic problems: C = 0.
  void curvature_force_derivative(const Vec& q, const Vec& qd, const Vec& mu, ModelWorkspace& base,
                                  Mat& out) const override {
    if constexpr (!kDerivatives) {
      Model::curvature_force_derivative(q, qd, mu, base, out);
    } else {
      out.setZero();
      if constexpr (kHasA) {  // the velocity rows only (mu's tail): the position rows' C is zero
        auto& ws = static_cast<Workspace&>(base);
        const int n = n_, m = m_ - mh_;
        const auto mu_a = mu.tail(m);
        for (int l = 0; l < n; ++l) {
          for (int i = 0; i < n; ++i) ws.qh[i] = HyperDual(q[i], qd[i], i == l ? 1.0 : 0.0, 0.0);
          p_.template pfaffian<HyperDual>(ws.qh, ws.Ah);
          for (int j = 0; j < n; ++j) {
            double acc = 0;
            for (int a = 0; a < m; ++a) acc += mu_a[a] * ws.Ah(a, j).d;
            out(j, l) = acc;
          }
        }
        for (int j = 0; j < n; ++j) {
          for (int l = j; l < n; ++l) {
            for (int k = 0; k < n; ++k) ws.qh[k] = HyperDual(q[k], k == j ? 1.0 : 0.0, k == l ? 1.0 : 0.0, 0.0);
            p_.template pfaffian<HyperDual>(ws.qh, ws.Ah);
            HyperDual s(0.0);
            for (int a = 0; a < m; ++a) {
              HyperDual row(0.0);
              for (int k = 0; k < n; ++k) row += ws.Ah(a, k) * qd[k];
              s += row * mu_a[a];
            }
            out(j, l) -= s.d;
            if (l != j) out(l, j) -= s.d;
          }
        }
      }
    }
  }

  std::vector<std::string> coordinate_names() const override {
    if constexpr (requires { p_.coordinate_names(); }) {
      return p_.coordinate_names();
    } else if constexpr (requires { P::kCoordinateNames; }) {
      return {std::begin(P::kCoordinateNames), std::end(P::kCoordinateNames)};
    } else {
      return Model::coordinate_names();
    }
  }
  // The rows' names (position rows first): a problem's constraint_names() (a mechanism file's named rows) or
  // static kConstraintNames[]; none otherwise.
  std::vector<std::string> constraint_names() const override {
    if constexpr (requires { p_.constraint_names(); }) return p_.constraint_names();
    else if constexpr (requires { P::kConstraintNames; })
      return {std::begin(P::kConstraintNames), std::end(P::kConstraintNames)};
    else return {};
  }
  std::vector<std::string> coordinate_units() const override {
    if constexpr (requires { p_.coordinate_units(); }) {
      return p_.coordinate_units();
    } else if constexpr (requires { P::kCoordinateUnits; }) {
      return {std::begin(P::kCoordinateUnits), std::end(P::kCoordinateUnits)};
    } else {
      return Model::coordinate_units();
    }
  }

  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const override {
    if constexpr (HasClosedForm<P>) {
      q.resize(n_);
      qd.resize(n_);
      return p_.closed_form(t, q0, qd0, q, qd);
    }
    return false;
  }
  bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0, Vec& q,
                        Vec& qd) const override {
    if constexpr (HasClosedFormFrom<P>) {
      q.resize(n_);
      qd.resize(n_);
      return p_.closed_form_from(t_prev, q_prev, t, q0, qd0, q, qd);
    }
    return closed_form(t, q0, qd0, q, qd);
  }
  bool closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const override {
    if constexpr (HasClosedFormMultiplier<P>) {
      lambda.resize(m_);
      p_.closed_form_multiplier(q, qd, lambda);
      return true;
    }
    return false;
  }

  const PublishedReference* published_reference() const override {
    return published_ ? &*published_ : nullptr;
  }
  std::string published_reference_withheld() const override { return withheld_; }
  const ReferencePoint* reference_point() const override { return reference_point_ ? &*reference_point_ : nullptr; }
  const NamedPoints* named_points() const override { return named_points_ ? &*named_points_ : nullptr; }
  const BodyVelocities* body_velocities() const override { return body_velocities_ ? &*body_velocities_ : nullptr; }

  void default_initial(Vec& q0, Vec& qd0) const override {
    q0.resize(n_);
    qd0.resize(n_);
    p_.default_initial(q0, qd0);
  }

 private:
  // The problem's potential and holonomic constraint at (q, t), in whichever form the problem writes them.
  template <class T>
  T potential_at(const VecN<T, N>& q, double t) const {
    if constexpr (HasTimeDependentPotential<P>) {
      return p_.template potential<T>(q, T(t));
    } else {
      (void)t;
      return p_.template potential<T>(q);
    }
  }
  template <class T>
  void constraint_at(const VecN<T, N>& q, const T& t, VecN<T, CH>& h) const {
    if constexpr (HasTimeDependentConstraint<P>) {
      p_.template constraint<T>(q, t, h);
    } else {
      (void)t;
      p_.template constraint<T>(q, h);
    }
  }

  // Passes 1 and 2 for M and c (see the header comment).
  void mass_and_bias(Workspace& ws, bool want_c, ModelTerms& out) const {
    const int n = n_;
    if (!want_c) {
      p_.template mass_matrix<double>(ws.q, ws.M);
      out.M = ws.M;
      return;
    }
    seed_along(ws.q1, ws.q, ws.qd, n);
    p_.template mass_matrix<Jet1>(ws.q1, ws.M1);
    split_along(ws.M1, ws.qd, n, n, out.M, out.c);  // M and Mdot qd
    if constexpr (HasGyroscopic<P>) if (gyroscopic_present()) {  // + Da qd = d/dt a along qd
      p_.template gyroscopic<Jet1>(ws.q1, ws.a1);
      for (int i = 0; i < n; ++i) out.c[i] += ws.a1[i].v[0];
    }
    for_each_lagrangian_chunk(ws, [&](int start, int width, const JetK& T, const JetK& V, const JetK& G) {
      for (int k = 0; k < width; ++k) out.c[start + k] += -0.5 * T.v[k] + V.v[k] - G.v[k];
    });
  }

  // dL/dq = 1/2 d/dq(qd^T M qd) - dV/dq + Da^T qd by the Jet<K> pass of mass_and_bias (kept apart: problems
  // with analytic_terms skip that pass, and c is Mdot qd - dL/dq only without a gyroscopic term).
  void lagrangian_gradient(Workspace& ws, ModelTerms& out) const {
    for_each_lagrangian_chunk(ws, [&](int start, int width, const JetK& T, const JetK& V, const JetK& G) {
      for (int k = 0; k < width; ++k) out.dL_dq[start + k] = 0.5 * T.v[k] - V.v[k] + G.v[k];
    });
  }

  // The Jet<K> pass both of the above make: per chunk of K coordinates from `start` (`width` of them in the
  // last), qd^T M(q) qd (= 2 T), V(q, t) and qd . a(q) (whose gradient is Da^T qd; zero without a gyroscopic
  // term), each seeded with the chunk's directions; `use(start, width, T, V, G)` takes their gradients.
  template <class Use>
  void for_each_lagrangian_chunk(Workspace& ws, Use&& use) const {
    const int n = n_;
    for (int start = 0; start < n; start += K) {
      seed_chunk(ws, start);
      p_.template mass_matrix<JetK>(ws.qk, ws.Mk);
      const JetK T = quadratic_form<JetK>(ws.Mk, ws.qd, n);
      const JetK V = potential_at<JetK>(ws.qk, ws.t);
      const JetK G = gyroscopic_pairing(ws);
      use(start, std::min(K, n - start), T, V, G);
    }
  }

  // qd . a(q) at the seeded ws.qk (zero without a gyroscopic term).
  JetK gyroscopic_pairing(Workspace& ws) const {
    JetK G(0.0);
    if constexpr (HasGyroscopic<P>) {
      if (gyroscopic_present()) {
        p_.template gyroscopic<JetK>(ws.qk, ws.ak);
        for (int i = 0; i < n_; ++i) G += ws.ak[i] * ws.qd[i];
      }
    } else {
      (void)ws;
    }
    return G;
  }
  // Whether the gyroscopic term is there: a problem known at run time (a mechanism file) writes gyroscopic()
  // always and says by has_gyroscopic_term() whether it is zero, so that its passes are skipped then.
  // A problem with analytic_terms may say at run time whether to use them (has_analytic_terms(): a mechanism
  // file's reverse-mode terms pay only from some size on, mechanism_files/tape_problem.hpp).
  bool analytic_terms_on() const {
    if constexpr (requires(const P& p) { p.has_analytic_terms(); }) return p_.has_analytic_terms();
    else return true;
  }
  bool gyroscopic_present() const {
    if constexpr (requires { p_.has_gyroscopic_term(); }) return p_.has_gyroscopic_term();
    else return HasGyroscopic<P>;
  }

  // The derivatives of the bias Adot qd (kkt / schur Jacobians; DynamicsDerivatives::dbias_dq, dbias_dqd), after
  // dA is filled. For both kinds bias_r = sum_jk dA_rj/dq_k qd_j qd_k (holonomic: qd^T h_r,qq qd), so
  //   d bias / d qd_l = sum_k dA[k](:, l) qd_k + dA[l] qd      (from dA, no extra pass);
  //   d bias / d q_l  = a third derivative: holonomic, 2 x the s^2 e part of h(q + s qd + e e_l) (Taylor2Dual,
  //                     one pass per l); Pfaffian, d^2 A [qd, e_l] qd by a hyper-dual pass over A per l.
  void bias_derivatives(Workspace& ws, DynamicsDerivatives& out) const {
    if constexpr (kDerivatives) {
      const int n = n_;
      [[maybe_unused]] const int ma = m_ - mh_;
      const auto& qd = ws.qd;
      for (int l = 0; l < n; ++l) {
        auto col = out.dbias_dqd.col(l);
        col.noalias() = out.dA[l] * qd;
        for (int k = 0; k < n; ++k) col += qd[k] * out.dA[k].col(l);
      }
      const int mh = mh_;
      if constexpr (kHasH) {
        for (int l = 0; l < n; ++l) {
          for (int i = 0; i < n; ++i) ws.qt[i] = Taylor2Dual(ws.q[i], qd[i], 0.0, i == l ? 1.0 : 0.0, 0.0, 0.0);
          constraint_at<Taylor2Dual>(ws.qt, 0.0, ws.ht);
          for (int r = 0; r < mh; ++r) out.dbias_dq(r, l) = 2 * ws.ht[r].d2;
        }
      }
      if constexpr (kHasA) {
        for (int l = 0; l < n; ++l) {
          for (int i = 0; i < n; ++i) ws.qh[i] = HyperDual(ws.q[i], qd[i], i == l ? 1.0 : 0.0, 0.0);
          p_.template pfaffian<HyperDual>(ws.qh, ws.Ah);
          for (int r = 0; r < ma; ++r) {
            double acc = 0;
            for (int j = 0; j < n; ++j) acc += ws.Ah(r, j).d * qd[j];
            out.dbias_dq(mh + r, l) = acc;
          }
        }
      }
    }
  }

  void seed_chunk(Workspace& ws, int start) const { clm::seed_chunk<K>(ws.qk, ws.q, n_, start); }

  // The position rows fill rows 0 .. mh - 1 of A, the bias, b and all of h; the velocity rows fill rows mh .. m - 1
  // of A, the bias and b (both kinds: a mixed problem; core/problem.hpp).
  void constraint_terms(Workspace& ws, unsigned what, ModelTerms& out) const {
    const int n = n_, mh = mh_;
    if constexpr (HasAnalyticConstraintTerms<P>) {
      if (use_analytic_) {
        p_.analytic_constraint_terms(ws.q, ws.qd, out.A, out.Adot_qd, out.h);
        return;
      }
    }
    if constexpr (kHasH) {
      if (what & kConstraintJacobian) {
        for (int start = 0; start < n; start += K) {
          seed_chunk(ws, start);
          constraint_at<JetK>(ws.qk, JetK(ws.t), ws.hk);
          const int width = std::min(K, n - start);
          for (int r = 0; r < mh; ++r)
            for (int k = 0; k < width; ++k) out.A(r, start + k) = ws.hk[r].v[k];
        }
      }
      if (what & (kConstraintBias | kConstraintValue)) {
        for (int i = 0; i < n; ++i) ws.q2[i] = Taylor2(ws.q[i], ws.qd[i], 0.0);
        // t + s: the time derivatives h_t qd-mixed and h_tt join the bias (t fixed when nothing depends on it).
        constraint_at<Taylor2>(ws.q2, Taylor2(ws.t, kTimeDependent ? 1.0 : 0.0, 0.0), ws.h2);
        for (int r = 0; r < mh; ++r) {
          out.Adot_qd[r] = 2.0 * ws.h2[r].c2;
          out.h[r] = ws.h2[r].c0;
        }
      }
      if constexpr (kTimeDependent) {
        if (what & kConstraintRate) {  // b = dh/dt: q fixed, t seeded
          for (int i = 0; i < n; ++i) ws.q1[i] = Jet1(ws.q[i]);
          Jet1 t1(ws.t);
          t1.v[0] = 1.0;
          constraint_at<Jet1>(ws.q1, t1, ws.h1);
          for (int r = 0; r < mh; ++r) out.b[r] = ws.h1[r].v[0];
        }
      }
    }
    if constexpr (kHasA) {
      const int ma = m_ - mh;
      auto A = out.A.bottomRows(ma);  // the velocity rows' blocks (all of them for a Pfaffian problem)
      auto bias = out.Adot_qd.tail(ma);
      if (what & kConstraintBias) {
        seed_along(ws.q1, ws.q, ws.qd, n);
        p_.template pfaffian<Jet1>(ws.q1, ws.A1);
        split_along(ws.A1, ws.qd, ma, n, A, bias);  // A and Adot qd
        if constexpr (HasAffineTerm<P>) {  // + d/ds b(q + s qd, t + s) = db/dq qd + db/dt; b itself
          Jet1 t1(ws.t);
          t1.v[0] = 1.0;
          p_.template affine_term<Jet1>(ws.q1, t1, ws.b1);
          for (int r = 0; r < ma; ++r) {
            bias[r] += ws.b1[r].v[0];
            out.b[mh + r] = ws.b1[r].a;
          }
        }
      } else if (what & kConstraintJacobian) {
        p_.template pfaffian<double>(ws.q, ws.A);
        A = ws.A;
      }
      if constexpr (HasAffineTerm<P>) {
        if ((what & kConstraintRate) && !(what & kConstraintBias)) {
          for (int i = 0; i < n; ++i) ws.q1[i] = Jet1(ws.q[i]);  // values only
          p_.template affine_term<Jet1>(ws.q1, Jet1(ws.t), ws.b1);
          for (int r = 0; r < ma; ++r) out.b[mh + r] = ws.b1[r].a;
        }
      }
    }
  }

  // C = [Phi] for Phi = A(q) qd: C_rj = sum_k d_k A_rj qd_k - sum_k d_j A_rk qd_k, from a Jet<K> pass over
  // pfaffian() seeded with K coordinate directions at a time (Ak(r, j).v[k] = d_(start+k) A_rj).
  void constraint_curvature(Workspace& ws, ModelTerms& out) const {
    const int n = n_, m = m_;
    if (out.C.rows() != m || out.C.cols() != n) out.C.resize(m, n);  // once; formulations pre-size it
    out.C.setZero();
    if constexpr (kHasA) {  // the velocity rows; the position rows' C is zero
      const int mh = mh_;
      for (int start = 0; start < n; start += K) {
        seed_chunk(ws, start);
        p_.template pfaffian<JetK>(ws.qk, ws.Ak);
        const int width = std::min(K, n - start);
        for (int r = 0; r < m - mh; ++r) {
          for (int j = 0; j < n; ++j) {
            double along = 0;  // sum over this chunk's k of d_k A_rj qd_k
            for (int k = 0; k < width; ++k) along += ws.Ak(r, j).v[k] * ws.qd[start + k];
            out.C(mh + r, j) += along;
          }
          for (int k = 0; k < width; ++k) {
            double grad = 0;  // d_(start+k) (A qd)_r
            for (int j = 0; j < n; ++j) grad += ws.Ak(r, j).v[k] * ws.qd[j];
            out.C(mh + r, start + k) -= grad;
          }
        }
      }
    }
  }

  // The position rows a problem states: all for a holonomic one, none for a Pfaffian one, its
  // position_constraints() for a mixed one.
  static int position_rows_of_problem(const P& p, int m) {
    if constexpr (kHolonomic) return m;
    else if constexpr (kMixed) return p.position_constraints();
    else return (void)p, (void)m, 0;
  }

  P p_;
  int n_, m_;
  int mh_;  // position rows (first), m_ - mh_ velocity rows after them
  bool use_analytic_;
  std::optional<PublishedReference> published_;  // HasPublishedReference<P> at the default parameters
  std::string withheld_;                         // otherwise: why (published_reference_withheld)
  std::optional<ReferencePoint> reference_point_;  // HasReferencePoint<P>, or a mechanism file's first point
  std::optional<NamedPoints> named_points_;        // a zoo problem's points(), a mechanism file's [points]
  std::optional<BodyVelocities> body_velocities_;  // body_velocities(), a mechanism file's [body_velocities]
  std::vector<int> actuated_;  // P::kActuatedCoordinates
  struct NoSparseTerms {};
  using SparseTerms = std::conditional_t<HasBodiesAndJoints<P>, SparseJointTerms<P>, NoSparseTerms>;
  std::optional<SparseTerms> sparse_;  // HasBodiesAndJoints<P>
};

}  // namespace clm
