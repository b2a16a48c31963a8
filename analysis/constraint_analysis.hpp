// Constraint analysis at a configuration q (issue 4, item 3; `clmbench analyze`):
//   n, m, rank A(q) (SVD), degrees of freedom n - rank, and for Pfaffian problems
//   - integrability (Frobenius): the distribution D = ker A(q) is involutive iff every Lie bracket
//     [X_i, X_j] = DX_j X_i - DX_i X_j of a basis X_1..X_k of D lies in D again. [seed-000] and [seed-002] leave this
//     test "beyond the scope"; here the Jacobians DX come from ceres::Jet over the problem's templated
//     velocity_basis<T> (where it has one) or over pfaffian<T> through the coordinate partition
//     S = [I; -A_D^-1 A_I] (dependent coordinates D chosen at q by column-pivoted QR of A(q)).
//   - accessibility (Chow-Rashevskii): the dimension of span{D, [D, D], [D, [D, D]], ...} at q up to a depth.
// Holonomic problems are integrable by construction (h(q) is given) and reach exactly their DOF.
//
// Accuracy and tolerances (all in ConstraintAnalysisOptions, printed by format_constraint_analysis):
//   rank A(q):      sigma_i > rank_rtol sigma_max (JacobiSVD), rank_rtol = 1e-9.
//   involutivity:   depth-1 brackets are exact (autodiff), so the residual
//                       r_ij = |P_row [X_i, X_j]| / max(|[X_i, X_j]|, 1e-6 s_ij),  s_ij = |DX_j||X_i| + |DX_i||X_j|
//                   (P_row: orthogonal projection onto the row space of A, i.e. the part of the bracket outside
//                   D) is the sine of the angle between the bracket and D when the bracket is genuinely
//                   non-zero, and at most ~1e-10 when it cancels to round-off (the 1e-6 s_ij floor keeps 0/0
//                   out). Involutive iff max r_ij < involutive_tol = 1e-8.
//   accessibility:  depth >= 2 brackets need higher derivatives of X; they are 4th-order central differences
//                   (step fd_step (1 + |q_l|), fd_step = 1e-3) of the exact depth-1 brackets, accurate to
//                   ~1e-12 relative at depth 2 and ~1e-9 at depth 3. The span is the SVD rank of the
//                   unit-normalised fields with tolerance span_rtol = 1e-6; fields shorter than 1e-9 times the
//                   longest basis field count as zero. Brackets are left-normed [X_a, W], W running over the
//                   fields that added a new direction at the previous depth (valid where the ranks are locally
//                   constant, the generic case). The verdicts are pointwise: they hold at the q analysed.
//
// Kinematic systems [seed-000, eq. 2.13-2.14] (issue 13 item 2): for a Pfaffian problem that declares actuated
// coordinates q_a (kActuatedCoordinates) with m = n_p constraints and W_p (A's passive columns) of full rank at q,
// the motion under prescribed q_a(t) is qd = g_1(q) qd_a1 + ... + g_k(q) qd_ak with the input vector fields
// g_j = [-W_p^-1 W_a e_j; e_j] (passive rows, actuated rows). They span D = ker A, so they are taken as its
// basis (the partition with q_a independent, whose columns are exactly the g_j): the depth-1 brackets
// [g_i, g_j] = Dg_j g_i - Dg_i g_j are exact by autodiff and recorded, with the rank of {g_i, [g_i, g_j]}
// (span_rtol) and the rank reached by iterated brackets (the accessibility above, which is then the
// controllability rank: Chow-Rashevskii for the driftless system qd = G(q) u). A square of inputs of side eps
// (u_1 = +1, u_2 = +1, u_1 = -1, u_2 = -1, each for time eps) moves q by eps^2 [g_1, g_2](q) + O(eps^3)
// (tests/kinematic_test.cpp measures the exponent). W_p rank-deficient at q (rank_rtol): not computed, with a note.
#pragma once

#include <ceres/jet.h>

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/autodiff_model.hpp"
#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/types.hpp"

namespace clm {

struct ConstraintAnalysisOptions {
  int max_depth = 3;               // deepest bracket nesting for accessibility ([X_a, [X_b, [X_c, X_d]]] is 3)
  double rank_rtol = 1e-9;         // rank of A(q)
  double involutive_tol = 1e-8;    // largest bracket residual below it: involutive
  double span_rtol = 1e-6;         // rank of the bracket span (unit-normalised columns)
  double fd_step = 1e-3;           // relative step of the central differences at depth >= 2
};

struct ConstraintAnalysis {
  std::string problem;
  Vec q;                           // the configuration analysed
  bool default_q = true;           // q is the problem's default q0
  int n = 0, m = 0, rank = 0, dof = 0;
  std::vector<double> singular_values;  // of A(q), descending
  bool holonomic = false;
  // Mixed problems (core/problem.hpp): D = ker [A_h; A] of all rows, tangent to the manifold h = 0, whose
  // dimension is n - position_rank; the verdict is that of the velocity rows on it.
  int position_rows = 0;           // m for holonomic problems, 0 for Pfaffian ones
  int position_rank = 0;           // rank of A_h = dh/dq at q (mixed problems)
  bool time_dependent = false;     // rheonomic h(q, t), affine A(q) qd + b(q, t) = 0 or V(q, t): analysed at t = 0
  bool analysed = false;           // Pfaffian: the bracket analysis ran (needs full row rank of A(q))
  std::string basis;               // how D = ker A(q) was spanned
  bool integrable = false;
  double max_bracket_residual = 0; // max_ij r_ij (see the header comment); 0 for holonomic problems
  std::string worst_bracket;       // e.g. "[X1, X2]"
  std::vector<int> span_by_depth;  // dim span{D, brackets up to depth d}, d = 0, 1, ...
  int accessible_dimension = 0;
  int accessible_depth = 0;        // the depth at which accessible_dimension was first reached
  std::string verdict;             // one human-readable sentence
  ConstraintAnalysisOptions options;
  std::vector<std::string> coordinate_names;
  // Kinematic systems (see the header comment): the actuated coordinates the problem declares (empty: none).
  std::vector<int> actuated;
  bool input_fields_analysed = false;  // g_j computed and used as the basis of D
  std::string input_fields_note;       // why not, when actuated coordinates exist but the fields were not computed
  Mat input_fields;                    // n x k, column j = g_j
  std::vector<std::pair<int, int>> bracket_pairs;  // (i, j), i < j, 0-based
  Mat brackets;                        // n x pairs: column p = [g_i, g_j] for bracket_pairs[p]
  int controllability_rank_depth1 = 0; // rank of {g_i, [g_i, g_j]} (span_rtol, unit-normalised columns)
  // The controllability rank of qd = G(q) u over all depths is accessible_dimension (basis = the g_j).
};

// A basis X(q) (n x k) of D = ker A(q) with its Jacobians, in doubles: what the bracket code works on.
class DistributionFields {
 public:
  virtual ~DistributionFields() = default;
  virtual int n() const = 0;
  virtual int k() const = 0;
  virtual std::string description() const = 0;
  // X (n x k); if DX is given, (*DX)[j](i, l) = d X_ij / d q_l.
  virtual void evaluate(const Vec& q, Mat& X, std::vector<Mat>* DX) const = 0;
};

// Number of singular values above rtol * the largest (0 for a zero or empty matrix).
int numerical_rank(const Mat& A, double rtol, std::vector<double>* singular_values = nullptr);
// The Pfaffian part: involutivity and accessibility of `fields` at out.q (out.n, out.m, out.rank set).
void analyse_distribution(const DistributionFields& fields, const Mat& A, ConstraintAnalysis& out);
// The holonomic verdict (out.n, out.rank, out.dof set).
void analyse_holonomic(ConstraintAnalysis& out);
// A mixed problem's verdict, after analyse_distribution on all rows: the velocity rows on the manifold h = 0.
void mixed_verdict(ConstraintAnalysis& out);
// Kinematic systems: "" when A's columns split by out.actuated give m = n_p and a W_p of full rank at out.q
// (rank_rtol), otherwise the reason the input vector fields are not defined there.
std::string kinematic_split_note(const Mat& A, const std::vector<int>& passive, const ConstraintAnalysis& out);
// The input vector fields g_j (the columns of `fields`, a partition with the actuated coordinates independent),
// their depth-1 brackets and the rank of {g_i, [g_i, g_j]}; after analyse_distribution on the same fields.
void analyse_input_fields(const DistributionFields& fields, ConstraintAnalysis& out);
// Human-readable report, several lines.
std::string format_constraint_analysis(const ConstraintAnalysis& a);

namespace detail {

template <class T>
double scalar_value(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(x);
  } else {
    return scalar_value(x.a);
  }
}

// D's basis from a Problem, differentiated by ceres::Jet in chunks of K coordinate directions (like
// AutoDiffModel). Plain scalar loops throughout: the scalar is a Jet.
template <Problem P>
class ProblemDistribution final : public DistributionFields {
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;
  static constexpr int K = (N != Eigen::Dynamic && N <= 16) ? N : 8;
  using JetK = ceres::Jet<double, K>;

 public:
  // The partition with the given independent coordinates (the rest dependent), used instead of a
  // velocity_basis: with the actuated coordinates independent its columns are the input vector fields g_j.
  ProblemDistribution(const P& p, const std::vector<int>& independent)
      : p_(p), n_(p.dof()), m_(p.constraints()), fixed_partition_(true), independent_(independent) {
    for (int i = 0; i < n_; ++i)
      if (std::find(independent_.begin(), independent_.end(), i) == independent_.end()) dependent_.push_back(i);
  }
  // A_at = A(q_at) picks the dependent coordinates of the partition (ignored with a velocity_basis).
  ProblemDistribution(const P& p, const Mat& A_at)
      : p_(p), n_(p.dof()), m_(p.constraints()), problem_basis_(provides_velocity_basis(p)) {
    if (!problem_basis_) {
      Eigen::ColPivHouseholderQR<Mat> qr(A_at);
      const auto& perm = qr.colsPermutation().indices();
      std::vector<bool> dependent(n_, false);
      for (int r = 0; r < m_; ++r) dependent[perm[r]] = true;
      for (int i = 0; i < n_; ++i) (dependent[i] ? dependent_ : independent_).push_back(i);
    }
  }

  int n() const override { return n_; }
  int k() const override { return n_ - m_; }
  std::string description() const override {
    if (problem_basis_ && !fixed_partition_) {
      return "the problem's velocity_basis";
    } else {
      auto list = [](const std::vector<int>& v) {
        std::string s;
        for (int i : v) s += (s.empty() ? "q" : ", q") + std::to_string(i + 1);
        return s;
      };
      return "coordinate partition S = [I; -A_D^-1 A_I], independent (" + list(independent_) + "), dependent (" +
             list(dependent_) + ")";
    }
  }

  void evaluate(const Vec& q, Mat& X, std::vector<Mat>* DX) const override {
    const int k = n_ - m_;
    X.resize(n_, k);
    if (DX) DX->assign(k, Mat::Zero(n_, n_));
    VecN<JetK, N> qj;
    qj.resize(n_);
    MatN<JetK, N, Eigen::Dynamic> S;
    S.resize(n_, k);
    for (int start = 0; start < n_; start += K) {
      for (int i = 0; i < n_; ++i) {
        qj[i] = JetK(q[i]);
        const int c = i - start;
        if (c >= 0 && c < K) qj[i].v[c] = 1.0;
      }
      basis(qj, S);
      const int width = std::min(K, n_ - start);
      for (int j = 0; j < k; ++j) {
        for (int i = 0; i < n_; ++i) {
          X(i, j) = S(i, j).a;
          if (DX)
            for (int c = 0; c < width; ++c) (*DX)[j](i, start + c) = S(i, j).v[c];
        }
      }
      if (!DX) break;  // values only: one pass
    }
  }

 private:
  template <class T>
  void basis(const VecN<T, N>& q, MatN<T, N, Eigen::Dynamic>& S) const {
    if (problem_basis_ && !fixed_partition_) {
      if constexpr (HasVelocityBasis<P>) p_.template velocity_basis<T>(q, S);
    } else {
      const int m = m_, k = n_ - m_, w = m + k;
      MatN<T, C, N> A;
      A.resize(m, n_);
      all_rows<T>(q, A);
      // [A_D | A_I] reduced to [I | Y] by Gauss-Jordan with partial pivoting on the values: Y = A_D^-1 A_I.
      std::vector<T> a(static_cast<size_t>(m) * w);
      for (int r = 0; r < m; ++r) {
        for (int c = 0; c < m; ++c) a[r * w + c] = A(r, dependent_[c]);
        for (int c = 0; c < k; ++c) a[r * w + m + c] = A(r, independent_[c]);
      }
      for (int col = 0; col < m; ++col) {
        int piv = col;
        for (int r = col + 1; r < m; ++r)
          if (std::abs(scalar_value(a[r * w + col])) > std::abs(scalar_value(a[piv * w + col]))) piv = r;
        if (piv != col)
          for (int c = 0; c < w; ++c) std::swap(a[piv * w + c], a[col * w + c]);
        const T inv = T(1.0) / a[col * w + col];
        for (int c = 0; c < w; ++c) a[col * w + c] = a[col * w + c] * inv;
        for (int r = 0; r < m; ++r) {
          if (r == col) continue;
          const T f = a[r * w + col];
          for (int c = 0; c < w; ++c) a[r * w + c] = a[r * w + c] - f * a[col * w + c];
        }
      }
      for (int c = 0; c < k; ++c) {
        for (int i = 0; i < k; ++i) S(independent_[i], c) = T(i == c ? 1.0 : 0.0);
        for (int r = 0; r < m; ++r) S(dependent_[r], c) = -a[r * w + m + c];
      }
    }
  }

  // Every row's A(q) in T: a Pfaffian problem's pfaffian<T>; a mixed one's position rows A_h = dh/dq (at t = 0) above
  // its velocity rows. T is double or a Jet whose directions are q's: dh/dq_j and its derivatives along those
  // directions come from hyper-dual passes h(q + e1 e_j + e2 d_k) (e1: dh/dq_j, e1 e2: d^2 h/dq_j dd_k).
  template <class T>
  void all_rows(const VecN<T, N>& q, MatN<T, C, N>& A) const {
    if constexpr (P::kConstraintKind == ConstraintKind::kMixed) {
      const int mh = p_.position_constraints(), ma = m_ - mh;
      MatN<T, kVelocityRowsOf<P>, N> Av;
      Av.resize(ma, n_);
      p_.template pfaffian<T>(q, Av);
      A.bottomRows(ma) = Av;
      VecN<HyperDual, N> qh;
      qh.resize(n_);
      VecN<HyperDual, kPositionRowsOf<P>> h;
      h.resize(mh);
      int directions = 1;
      if constexpr (!std::is_arithmetic_v<T>) directions = static_cast<int>(T::DIMENSION);
      for (int j = 0; j < n_; ++j) {
        for (int d = 0; d < directions; ++d) {
          for (int i = 0; i < n_; ++i) {
            if constexpr (std::is_arithmetic_v<T>) qh[i] = HyperDual(q[i], i == j ? 1.0 : 0.0, 0.0, 0.0);
            else qh[i] = HyperDual(q[i].a, i == j ? 1.0 : 0.0, q[i].v[d], 0.0);
          }
          position_constraint(qh, h);
          for (int r = 0; r < mh; ++r) {
            if constexpr (std::is_arithmetic_v<T>) A(r, j) = h[r].b;
            else {
              if (d == 0) A(r, j) = T(h[r].b);
              A(r, j).v[d] = h[r].d;
            }
          }
        }
      }
    } else {
      p_.template pfaffian<T>(q, A);
    }
  }
  template <class V>
  void position_constraint(const VecN<HyperDual, N>& q, V& h) const {
    if constexpr (HasTimeDependentConstraint<P>) p_.template constraint<HyperDual>(q, HyperDual(0.0), h);
    else p_.template constraint<HyperDual>(q, h);
  }

  P p_;
  int n_, m_;
  bool fixed_partition_ = false;
  bool problem_basis_ = false;  // the problem writes S(q) (provides_velocity_basis)
  std::vector<int> independent_, dependent_;
};

}  // namespace detail

// The analysis of problem p at q (the default q0 when q is empty). Throws InputError for a q of the wrong
// length or with non-finite entries.
template <Problem P>
ConstraintAnalysis analyze_constraints(const P& p, const std::optional<Vec>& q = std::nullopt,
                                       const ConstraintAnalysisOptions& options = {}) {
  const AutoDiffModel<P> model(p, false);
  ConstraintAnalysis out;
  out.problem = model.name();  // a mechanism file says its name at run time
  out.options = options;
  out.n = model.n();
  out.m = model.m();
  out.holonomic = model.holonomic();
  out.time_dependent = model.time_dependent();
  if (q) {
    if (q->size() != out.n)
      throw InputError("q0 for " + out.problem + " needs " + std::to_string(out.n) + " numbers, got " +
                       std::to_string(q->size()));
    if (!q->allFinite()) throw InputError("q0 for " + out.problem + " has a non-finite entry");
    out.q = *q;
    out.default_q = false;
  } else {
    Vec qd0;
    model.default_initial(out.q, qd0);
  }
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  const Vec qd = Vec::Zero(out.n);
  model.evaluate(0.0, out.q, qd, kConstraintJacobian, *ws, terms);
  out.rank = numerical_rank(terms.A, options.rank_rtol, &out.singular_values);
  out.dof = out.n - out.rank;
  out.position_rows = model.position_rows();
  if (model.mixed()) out.position_rank = numerical_rank(terms.A.topRows(out.position_rows), options.rank_rtol);
  out.coordinate_names = model.coordinate_names();
  out.actuated = model.actuated_coordinates();
  if constexpr (P::kConstraintKind == ConstraintKind::kHolonomic) {
    analyse_holonomic(out);
  } else {
    std::vector<int> passive;
    for (int i = 0; i < out.n; ++i)
      if (std::find(out.actuated.begin(), out.actuated.end(), i) == out.actuated.end()) passive.push_back(i);
    if (!out.actuated.empty()) out.input_fields_note = kinematic_split_note(terms.A, passive, out);
    if (!out.actuated.empty() && out.input_fields_note.empty()) {
      const detail::ProblemDistribution<P> fields(model.problem(), out.actuated);
      analyse_distribution(fields, terms.A, out);
      analyse_input_fields(fields, out);
    } else {
      const detail::ProblemDistribution<P> fields(model.problem(), terms.A);
      analyse_distribution(fields, terms.A, out);
    }
    if (model.mixed()) mixed_verdict(out);
  }
  return out;
}

// The capability through which `clmbench analyze` reaches the typed analysis of a registered problem
// (attached at registration by add_constraint_analyzer; every problem has it).
class ConstraintAnalyzer : public Capability {
 public:
  virtual ConstraintAnalysis analyze(const std::optional<Vec>& q, const ConstraintAnalysisOptions& options = {}) const = 0;
};

template <Problem P>
class ProblemConstraintAnalyzer final : public ConstraintAnalyzer {
 public:
  explicit ProblemConstraintAnalyzer(const P& p) : p_(p) {}
  ConstraintAnalysis analyze(const std::optional<Vec>& q, const ConstraintAnalysisOptions& options) const override {
    return analyze_constraints(p_, q, options);
  }

 private:
  P p_;
};

template <Problem P>
void add_constraint_analyzer(Model& model, const P& p) {
  model.add_capability<ConstraintAnalyzer>(std::make_shared<ProblemConstraintAnalyzer<P>>(p));
}


}  // namespace clm
