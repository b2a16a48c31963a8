// Minimum-norm multipliers for redundant constraints: the path kkt and schur take when the constraint Jacobian
// A (m rows) has rank r < m at the initial configuration and the constraints are consistent (Bricard's
// mechanism, a constraint written twice). Full-rank runs never come here (formulations/saddle_point.hpp).
//
// With M = L L^T and B = L^-1 A^T (n x m), S = A M^-1 A^T = B^T B is positive semi-definite of rank r, and
//
//   M qdd = f + A^T lambda,  A qdd = gamma   <=>   S lambda = b := gamma - A M^-1 f,  qdd = M^-1 (f + A^T lambda).
//
// Every solution lambda gives the same force A^T lambda and the same qdd (null S = null A^T); the suite
// reports the one of least Euclidean norm, lambda = S^+ b (for a constraint written twice, each copy carries
// half the single constraint's multiplier). With the SVD B = U diag(s) V^T: lambda = V diag(1/s_i^2) V^T b over
// the s_i above the suite's rank threshold.
//
// Why the SVD of B and not Eigen's CompleteOrthogonalDecomposition of S or a regularized solve with iterative
// refinement: (1) the rank is decided on B, whose singular values scale like A's, with the suite's one rank
// tolerance (core/formulation.hpp: kRankTolerance, rank_threshold); on S they would be squared, and the 1e-10
// tolerance of A becomes 1e-20 on S, below S's rounding (eps |S| ~ 1e-16 |S|), so no threshold on S can be
// consistent with it; (2) Eigen's COD::solve copies its right-hand side and applies Householder sequences
// through temporaries (heap allocation per call) and a regularized solve needs a refinement loop whose
// result depends on the regularization; JacobiSVD sized in the constructor computes without touching the
// heap, and m is small (tens of rows), so its O(m^3) costs what the (n+m) KKT LU costs.
//
// Rank along the run: the rank r found at q0 (numerical_rank of A) is the mechanism's, n - r its mobility.
// Every evaluation re-detects the rank of B with that same threshold and keeps min(r, rank found) singular
// values: a configuration where A loses a further rank (a singular position) gets the minimum-norm solution
// of the rank found there; a rank above r is not taken, because off the constraint manifold (drift |h| ~ 1e-9
// after a long run) the singular value that is exactly 0 on it grows like the drift and may cross the
// threshold, and 1/s^2 of it would turn drift into huge multipliers. A genuine rise of the rank (constraints
// that were not redundant, or contradict each other) shows up instead as b leaving the range kept: its
// part outside, |b_perp|, is measured at every evaluation, and above kConsistencyTolerance (|b| + s_max^2
// |lambda|) solve() throws NumericalFailure naming the inconsistency.
#pragma once

#include <string>

#include "core/formulation.hpp"

namespace clm {

// Relative size of the part of b outside the range of S above which the acceleration-level constraints are
// called inconsistent. Measured: on the constraint manifold (duplicated pendulum, Bricard) |b_perp| is
// rounding, below 1e-14 relative; Bricard after 10 s of dopri5 at rtol 1e-10 (|h| ~ 1e-9), below 1e-8. An
// inconsistent pair (h1 = y, h2 = y - 1/2 with the same row) has |b_perp| ~ |b|.
inline constexpr double kConsistencyTolerance = 1e-6;

class MinimumNormMultipliers {
 public:
  // n coordinates, m constraint rows, r = rank of A at q0 (the most singular values ever kept).
  MinimumNormMultipliers(int n, int m, int r);

  // qdd and lambda for M, A from `terms`, f = F - c (+ ...), gamma the right-hand side of A qdd = gamma.
  // `who` names the formulation in errors. Throws NumericalFailure when M is not positive definite or the
  // system is inconsistent. No heap allocation.
  void solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who, Vec& qdd, Vec& lambda);

  int last_rank() const { return rank_; }            // rank found at the last solve()
  double last_residual() const { return residual_; }  // |b_perp| / (|b| + s_max^2 |lambda|) at the last solve()

 private:
  int n_, m_, max_rank_;
  Eigen::LLT<Mat> llt_M_;
  Mat B_;                        // L^-1 A^T, then reused
  Mat Y_;                        // M^-1 A^T
  Eigen::JacobiSVD<Mat> svd_;    // of B, V only
  Vec free_, b_, c_;
  int rank_ = 0;
  double residual_ = 0;
};

}  // namespace clm
