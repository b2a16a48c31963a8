// SparseJointTerms<P>: the sparse dynamics terms (SparseModelTerms, core/model.hpp) of a problem built from
// bodies and joints (core/problem.hpp, HasBodiesAndJoints), each body and each joint differentiated over its
// own few coordinates:
//
//   M, c    per body b, from body_mass_matrix and body_potential at its B = kBodyCoordinates coordinates:
//           a Jet<1> pass at qb + eps qdb gives Mb and Mdot_b qdb, a Jet<B> pass the gradients of
//           1/2 qdb^T Mb qdb and Vb: c_b = Mdot_b qdb - 1/2 d/dqb(qdb^T Mb qdb) + dVb/dqb;
//   A       per joint j, a Jet<K> pass (K = kJointCoordinates) seeded in its local coordinates: the rows'
//           derivatives, scattered into the slots of A's fixed pattern;
//   Adot qd, h  per joint, one Taylor2 pass at ql + s qdl: Adot qd = d^2/ds^2 h, h = its value.
//
// Whole-vector forward-mode autodiff costs O(n) per direction and n directions, O(n^2); this costs
// O(bodies + joints) = O(n). The patterns are built once (the constructor); evaluate() writes values only.
#pragma once

#include <ceres/jet.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/taylor2.hpp"

namespace clm {

template <class P>
class SparseJointTerms {
 public:
  static_assert(HasBodiesAndJoints<P>, "SparseJointTerms: the problem is not built from bodies and joints");
  static constexpr int B = P::kBodyCoordinates;
  static constexpr int K = P::kJointCoordinates;
  static constexpr int R = P::kJointRows;
  static_assert(B >= 1 && B <= 8 && K >= 1 && R >= 1, "kBodyCoordinates in 1..8, kJointCoordinates, kJointRows >= 1");
  static_assert(P::kConstraintKind == ConstraintKind::kHolonomic, "bodies and joints: holonomic constraints only");
  static_assert(!IsTimeDependent<P> && !HasGyroscopic<P>,
                "bodies and joints: time-independent problems without a gyroscopic term only");

  // Checks the problem's structure (n = bodies B, the joints' rows cover 0..m-1 once, coordinates in range)
  // and builds the patterns: std::logic_error on a malformed problem (a programming error, not user input).
  explicit SparseJointTerms(const P& p) {
    const int n = p.dof(), m = p.constraints();
    if (p.bodies() * B != n)
      throw std::logic_error(std::string(P::kName) + ": bodies() * kBodyCoordinates != dof()");
    joints_.resize(p.joints());
    std::vector<int> row_owner(m, -1);
    std::vector<Eigen::Triplet<double, int>> entries;
    for (int j = 0; j < int(joints_.size()); ++j) {
      const JointSpec<K> spec = p.joint(j);
      if (spec.rows < 1 || spec.rows > R || spec.first_row < 0 || spec.first_row + spec.rows > m)
        throw std::logic_error(std::string(P::kName) + ": joint " + std::to_string(j) + " has rows out of range");
      for (int r = 0; r < spec.rows; ++r) {
        if (row_owner[spec.first_row + r] >= 0)
          throw std::logic_error(std::string(P::kName) + ": two joints own row " + std::to_string(spec.first_row + r));
        row_owner[spec.first_row + r] = j;
        for (int k = 0; k < K; ++k) {
          const int c = spec.coordinates[k];
          if (c < -1 || c >= n)
            throw std::logic_error(std::string(P::kName) + ": joint " + std::to_string(j) + " coordinate out of range");
          if (c >= 0) entries.emplace_back(spec.first_row + r, c, 1.0);
        }
      }
      joints_[j].spec = spec;
    }
    if (std::count(row_owner.begin(), row_owner.end(), -1) > 0)
      throw std::logic_error(std::string(P::kName) + ": a constraint row belongs to no joint");
    A_.resize(m, n);
    A_.setFromTriplets(entries.begin(), entries.end());
    A_.makeCompressed();
    // The slot of each (joint row, local coordinate) in A's values; a coordinate listed twice shares its slot
    // (evaluate() accumulates).
    for (auto& joint : joints_) {
      joint.slot.fill(-1);
      for (int r = 0; r < joint.spec.rows; ++r)
        for (int k = 0; k < K; ++k)
          if (const int c = joint.spec.coordinates[k]; c >= 0) joint.slot[r * K + k] = slot(A_, joint.spec.first_row + r, c);
    }
    // M: blocks of B x B, stored full, column c's entries at values[c B .. c B + B - 1].
    M_.resize(n, n);
    M_.reserve(Eigen::VectorXi::Constant(n, B));
    for (int c = 0; c < n; ++c)
      for (int r = 0; r < B; ++r) M_.insert((c / B) * B + r, c) = 0.0;
    M_.makeCompressed();
  }

  int block_size() const { return B; }

  SparseModelTerms make_terms(int n, int m) const {
    SparseModelTerms t;
    t.M = M_;
    t.A = A_;
    t.A.coeffs().setZero();
    t.c = Vec::Zero(n);
    t.F = Vec::Zero(n);
    t.Adot_qd = Vec::Zero(m);
    t.h = Vec::Zero(m);
    return t;
  }

  // Fills the requested terms of kMassMatrix | kBias | kConstraintJacobian | kConstraintBias | kConstraintValue
  // (kForce is the caller's). No heap allocation.
  void evaluate(const P& p, const Vec& q, const Vec& qd, unsigned what, SparseModelTerms& out) const {
    if (what & (kMassMatrix | kBias)) bodies(p, q, qd, (what & kBias) != 0, out);
    if (what & (kConstraintJacobian | kConstraintBias | kConstraintValue)) joints(p, q, qd, what, out);
  }

 private:
  using JetB = ceres::Jet<double, B>;
  using JetK = ceres::Jet<double, K>;
  using Jet1 = ceres::Jet<double, 1>;

  struct Joint {
    JointSpec<K> spec;
    std::array<int, R * K> slot;  // index into A's values of (row r, local coordinate k); -1: padded slot
  };

  static int slot(const SparseMat& A, int row, int col) {
    for (int i = A.outerIndexPtr()[col]; i < A.outerIndexPtr()[col + 1]; ++i)
      if (A.innerIndexPtr()[i] == row) return i;
    throw std::logic_error("SparseJointTerms: entry outside the pattern");
  }

  void bodies(const P& p, const Vec& q, const Vec& qd, bool want_c, SparseModelTerms& out) const {
    double* Mv = out.M.valuePtr();
    for (int b = 0; b < p.bodies(); ++b) {
      const int o = b * B;
      VecN<Jet1, B> q1;
      VecN<double, B> v = qd.template segment<B>(o);
      for (int i = 0; i < B; ++i) {
        q1[i] = Jet1(q[o + i]);
        q1[i].v[0] = v[i];
      }
      MatN<Jet1, B, B> M1;
      p.template body_mass_matrix<Jet1>(b, q1, M1);
      for (int c = 0; c < B; ++c)
        for (int r = 0; r < B; ++r) Mv[(o + c) * B + r] = M1(r, c).a;
      if (!want_c) continue;
      for (int i = 0; i < B; ++i) {
        double mdot_qd = 0;
        for (int j = 0; j < B; ++j) mdot_qd += M1(i, j).v[0] * v[j];
        out.c[o + i] = mdot_qd;
      }
      VecN<JetB, B> qb;
      for (int i = 0; i < B; ++i) {
        qb[i] = JetB(q[o + i]);
        qb[i].v[i] = 1.0;
      }
      MatN<JetB, B, B> Mb;
      p.template body_mass_matrix<JetB>(b, qb, Mb);
      JetB T(0.0);
      for (int i = 0; i < B; ++i) {
        JetB row(0.0);
        for (int j = 0; j < B; ++j) row += Mb(i, j) * v[j];
        T += row * v[i];
      }
      const JetB V = p.template body_potential<JetB>(b, qb);
      for (int k = 0; k < B; ++k) out.c[o + k] += -0.5 * T.v[k] + V.v[k];
    }
  }

  void joints(const P& p, const Vec& q, const Vec& qd, unsigned what, SparseModelTerms& out) const {
    const bool want_A = what & kConstraintJacobian, want_bias = what & (kConstraintBias | kConstraintValue);
    double* Av = out.A.valuePtr();
    if (want_A) out.A.coeffs().setZero();  // a coordinate listed twice by a joint accumulates into its slot
    for (int j = 0; j < int(joints_.size()); ++j) {
      const Joint& joint = joints_[j];
      const auto& coords = joint.spec.coordinates;
      if (want_A) {
        VecN<JetK, K> ql;
        for (int k = 0; k < K; ++k) {
          ql[k] = JetK(coords[k] >= 0 ? q[coords[k]] : 0.0);
          if (coords[k] >= 0) ql[k].v[k] = 1.0;
        }
        VecN<JetK, R> h;
        for (int r = 0; r < R; ++r) h[r] = JetK(0.0);
        p.template joint_constraint<JetK>(j, ql, h);
        for (int r = 0; r < joint.spec.rows; ++r)
          for (int k = 0; k < K; ++k)
            if (joint.slot[r * K + k] >= 0) Av[joint.slot[r * K + k]] += h[r].v[k];
      }
      if (want_bias) {
        VecN<Taylor2, K> ql;
        for (int k = 0; k < K; ++k)
          ql[k] = coords[k] >= 0 ? Taylor2(q[coords[k]], qd[coords[k]], 0.0) : Taylor2(0.0, 0.0, 0.0);
        VecN<Taylor2, R> h;
        for (int r = 0; r < R; ++r) h[r] = Taylor2(0.0, 0.0, 0.0);
        p.template joint_constraint<Taylor2>(j, ql, h);
        for (int r = 0; r < joint.spec.rows; ++r) {
          out.Adot_qd[joint.spec.first_row + r] = 2.0 * h[r].c2;
          out.h[joint.spec.first_row + r] = h[r].c0;
        }
      }
    }
  }

  std::vector<Joint> joints_;
  SparseMat A_, M_;  // the patterns
};

}  // namespace clm
