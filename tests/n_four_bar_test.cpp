// The N-four-bar mechanism, IFToMM benchmark A02 (problems/n_four_bar.hpp): geometry and consistency of the
// start, the analytic M and c against autodiff, and the motion through the singular positions against the
// one-degree-of-freedom reduced model of the parallelogram motion (an independent derivation, below).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <cstdio>
#include <numbers>

#include "core/autodiff_model.hpp"
#include "core/problem_registry.hpp"
#include "problems/jacobi_elliptic.hpp"
#include "problems/n_four_bar.hpp"
#include "recorded_run.hpp"

using namespace clm;

namespace {

std::shared_ptr<const Model> n_four_bar(int loops) { return make_model("n_four_bar", {{"loops", double(loops)}}); }

// The parallelogram motion reduced to the crank angle phi from the upward vertical, clockwise (B_i = A_i +
// L (sin phi, cos phi)): N + 1 cranks turning about their pins (m L^2 / 3 each, centres at height L/2 cos phi)
// and N couplers translating with B (m L^2 phid^2 / 2 each, at height L cos phi):
//   T = J phid^2 / 2, J = m L^2 ((N + 1)/3 + N);   V = K cos phi, K = m g L ((N + 1)/2 + N);   J phidd = K sin phi.
// From the square position phi = 0 with B0's speed v0: phid(0) = v0 / L. Integrated by classical RK4 with a
// step of 1e-4 s (global error ~ 1e-13 over 20 s).
struct ReducedMotion {
  std::vector<double> t, phi, phid;
};
ReducedMotion reduced_motion(int N, double t_end, double every, double L = 1, double m = 1, double g = 9.81,
                             double v0 = 1) {
  const double J = m * L * L * ((N + 1) / 3.0 + N), K = m * g * L * ((N + 1) / 2.0 + N);
  auto f = [&](double p, double w, double& dp, double& dw) {
    dp = w;
    dw = K / J * std::sin(p);
  };
  ReducedMotion r;
  double p = 0, w = v0 / L, t = 0;
  const double h = 1e-4;
  const long per_sample = std::lround(every / h);
  const long samples = std::lround(t_end / every);
  r.t.push_back(0);
  r.phi.push_back(p);
  r.phid.push_back(w);
  for (long s = 1; s <= samples; ++s) {
    for (long k = 0; k < per_sample; ++k) {
      double k1p, k1w, k2p, k2w, k3p, k3w, k4p, k4w;
      f(p, w, k1p, k1w);
      f(p + 0.5 * h * k1p, w + 0.5 * h * k1w, k2p, k2w);
      f(p + 0.5 * h * k2p, w + 0.5 * h * k2w, k3p, k3w);
      f(p + h * k3p, w + h * k3w, k4p, k4w);
      p += h / 6 * (k1p + 2 * k2p + 2 * k3p + k4p);
      w += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
    }
    t = s * every;
    r.t.push_back(t);
    r.phi.push_back(p);
    r.phid.push_back(w);
  }
  return r;
}

// Singular passages (every bar horizontal: phi = pi/2 mod pi) between the samples of the reduced motion.
int singular_passages(const std::vector<double>& phi) {
  int passages = 0;
  for (size_t k = 1; k < phi.size(); ++k)
    passages += int(std::floor((phi[k] - std::numbers::pi / 2) / std::numbers::pi)) !=
                int(std::floor((phi[k - 1] - std::numbers::pi / 2) / std::numbers::pi));
  return passages;
}

// B0 (L = 1) of q against the reduced motion at crank angle phi, and against B0 of another state.
double b0_off_reduced(const Vec& q, double phi) {
  return std::hypot(NFourBar::b0_x(q, 1.0) - std::sin(phi), NFourBar::b0_y(q, 1.0) - std::cos(phi));
}
double b0_distance(const Vec& a, const Vec& b) {
  return std::hypot(NFourBar::b0_x(a, 1.0) - NFourBar::b0_x(b, 1.0), NFourBar::b0_y(a, 1.0) - NFourBar::b0_y(b, 1.0));
}

clm::testing::RecordedRun run(const std::shared_ptr<const Model>& model, const std::string& formulation, double t_end,
                              double rtol, const std::string& projection = "none", double every = 0.05) {
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = t_end;
  rs.output_every = every;
  rs.dt = 1e-4;
  rs.rtol = rtol;
  rs.atol = rtol * 1e-2;
  rs.options.projection = projection;
  return clm::testing::record_run(model, formulation, q0, qd0, rs);
}

// The reduced equation phidd = (K / J) sin phi from any (phi0, phid0), by classical RK4 at h = 1e-4 (the test's
// independent route to the closed form; K / J = g / L ((N + 1)/2 + N) / ((N + 1)/3 + N)).
std::vector<double> reduced_phi(int N, double phi0, double phid0, double t_end, double every, double g_over_L,
                                std::vector<double>* rate = nullptr) {
  const double a = g_over_L * ((N + 1) / 2.0 + N) / ((N + 1) / 3.0 + N);
  double p = phi0, w = phid0;
  const double h = 1e-4;
  const long per_sample = std::lround(every / h), samples = std::lround(t_end / every);
  std::vector<double> out{p};
  if (rate) *rate = {w};
  for (long s = 1; s <= samples; ++s) {
    for (long k = 0; k < per_sample; ++k) {
      const double k1p = w, k1w = a * std::sin(p);
      const double k2p = w + 0.5 * h * k1w, k2w = a * std::sin(p + 0.5 * h * k1p);
      const double k3p = w + 0.5 * h * k2w, k3w = a * std::sin(p + 0.5 * h * k2p);
      const double k4p = w + h * k3w, k4w = a * std::sin(p + h * k3p);
      p += h / 6 * (k1p + 2 * k2p + 2 * k3p + k4p);
      w += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
    }
    out.push_back(p);
    if (rate) rate->push_back(w);
  }
  return out;
}

}  // namespace

// The parallelogram at crank angle phi (from the upward vertical, clockwise) in the problem's body coordinates.
Vec parallelogram(int N, double phi, double L = 1) {
  Vec q(3 * (2 * N + 1));
  for (int i = 0; i <= N; ++i) {
    q.segment<3>(6 * i) << i * L + 0.5 * L * std::sin(phi), 0.5 * L * std::cos(phi), std::numbers::pi / 2 - phi;
    if (i >= 1) q.segment<3>(6 * i - 3) << (i - 0.5) * L + L * std::sin(phi), L * std::cos(phi), 0;
  }
  return q;
}

// The start is the benchmark's square position, on the constraints, moving with B0 at (1, 0) m/s, and its energy
// is the reduced model's: T = J (v0/L)^2 / 2, V = K (phi = 0).
TEST(NFourBar, StartIsTheSquarePositionOnTheConstraints) {
  for (int N : {1, 2, 5, 40}) {
    auto model = n_four_bar(N);
    ASSERT_EQ(model->n(), 3 * (2 * N + 1));
    ASSERT_EQ(model->m(), 6 * N + 2);
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    EXPECT_LT((q0 - parallelogram(N, 0)).lpNorm<Eigen::Infinity>(), 1e-15) << N;
    auto ws = model->make_workspace();
    auto terms = model->make_terms();
    model->evaluate(0, q0, qd0, kAll, *ws, terms);
    EXPECT_LT(terms.h.lpNorm<Eigen::Infinity>(), 1e-15) << N;
    EXPECT_LT((terms.A * qd0).lpNorm<Eigen::Infinity>(), 1e-15) << N;
    EXPECT_EQ(numerical_rank(terms.A), model->m()) << N;  // one degree of freedom
    EXPECT_NEAR(NFourBar::b0_x(q0, 1.0), 0.0, 1e-16);
    EXPECT_NEAR(NFourBar::b0_y(q0, 1.0), 1.0, 1e-16);
    // B0's velocity: the crank's centre velocity plus theta_d L/2 e'(theta).
    EXPECT_NEAR(qd0[0] - 0.5 * qd0[2] * std::sin(q0[2]), 1.0, 1e-15);
    EXPECT_NEAR(qd0[1] + 0.5 * qd0[2] * std::cos(q0[2]), 0.0, 1e-15);
    const double J = (N + 1) / 3.0 + N, K = 9.81 * ((N + 1) / 2.0 + N);
    EXPECT_NEAR(terms.kinetic, 0.5 * J, 1e-13) << N;
    EXPECT_NEAR(terms.potential, K, 1e-12 * K) << N;
  }
}

// analytic_terms (constant diagonal M, c = dV/dq) against the autodiff of mass_matrix and potential, at a state
// off the parallelogram and off the constraints.
TEST(NFourBar, AnalyticMassAndBiasEqualAutodiff) {
  NFourBar p;
  p.loops = 3;
  AutoDiffModel<NFourBar> analytic(p), autodiff(p, /*use_analytic=*/false);
  Vec q = parallelogram(3, 0.4), qd(q.size());
  for (int i = 0; i < q.size(); ++i) {
    q[i] += 0.01 * std::sin(1.7 * i);
    qd[i] = std::cos(0.9 * i);
  }
  auto wa = analytic.make_workspace(), wd = autodiff.make_workspace();
  auto ta = analytic.make_terms(), td = autodiff.make_terms();
  analytic.evaluate(0, q, qd, kAll, *wa, ta);
  autodiff.evaluate(0, q, qd, kAll, *wd, td);
  EXPECT_EQ((ta.M - td.M).lpNorm<Eigen::Infinity>(), 0.0);
  EXPECT_LT((ta.c - td.c).lpNorm<Eigen::Infinity>(), 1e-14);
  EXPECT_NEAR(ta.energy(), td.energy(), 1e-13);
}

// The singular position: with every bar horizontal (phi = pi/2 or 3 pi/2) the constraint Jacobian loses N ranks
// (mobility N + 1, the specification's "from 1 to N + 1"); 0.05 rad away it has full rank again.
TEST(NFourBar, HorizontalPositionLosesLoopsRanks) {
  for (int N : {1, 2, 5}) {
    auto model = n_four_bar(N);
    auto ws = model->make_workspace();
    auto terms = model->make_terms();
    Vec qd = Vec::Zero(model->n());
    for (double phi : {std::numbers::pi / 2, 3 * std::numbers::pi / 2}) {
      model->evaluate(0, parallelogram(N, phi), qd, kConstraintJacobian | kConstraintValue, *ws, terms);
      EXPECT_LT(terms.h.lpNorm<Eigen::Infinity>(), 1e-15);
      EXPECT_EQ(numerical_rank(terms.A), model->m() - N) << N << " " << phi;
      model->evaluate(0, parallelogram(N, phi - 0.05), qd, kConstraintJacobian, *ws, terms);
      EXPECT_EQ(numerical_rank(terms.A), model->m()) << N << " " << phi;
    }
  }
}

// kkt, schur and vakonomic with coordinate projection after every step (onto h = 0 and A qd = 0) and rk4 at
// dt = 1e-3 pass the singular positions on the parallelogram branch: B0 against the reduced model over 10 s of
// the benchmark's 20 (10 singular passages), energy conserved. (Over the full 20 s, 20 passages, the same
// bounds hold: measured x 2.2e-9 / 2.4e-9 for N = 2 / 5 and energy 2.0e-11; 10 s keeps the test short.)
TEST(NFourBar, ProjectedFormulationsPassTheSingularPositions) {
  for (int N : {2, 5}) {
    auto model = n_four_bar(N);
    const auto ref = reduced_motion(N, 10, 0.05);
    const int passages = singular_passages(ref.phi);
    EXPECT_GE(passages, 10) << N;
    for (const char* f : {"kkt", "schur", "vakonomic"}) {
      if (N == 5 && std::string(f) != "kkt") continue;
      Vec q0, qd0;
      model->default_initial(q0, qd0);
      clm::testing::RunSettings rs;
      rs.integrator = "rk4";
      rs.t_end = 10;
      rs.output_every = 0.05;
      rs.dt = 1e-3;
      rs.options.projection = "both";
      const auto tr = clm::testing::record_run(model, f, q0, qd0, rs);
      ASSERT_EQ(tr.result.status, "ok") << f << ": " << tr.result.message;
      ASSERT_EQ(tr.obs.size(), ref.phi.size());
      double dx = 0, dy = 0, de = 0;
      const double e0 = tr.obs.front().energy;
      for (size_t k = 0; k < tr.obs.size(); ++k) {
        dx = std::max(dx, std::abs(NFourBar::b0_x(tr.obs[k].q, 1.0) - std::sin(ref.phi[k])));
        dy = std::max(dy, std::abs(NFourBar::b0_y(tr.obs[k].q, 1.0) - std::cos(ref.phi[k])));
        de = std::max(de, std::abs(tr.obs[k].energy - e0) / std::abs(e0));
      }
      std::printf("[ n_four_bar ] N = %d %-9s + projection, rk4 dt 1e-3, 10 s (%d singular passages): max|B0 - "
                  "reduced| x %.2e y %.2e, energy %.2e relative\n",
                  N, f, passages, dx, dy, de);
      // Measured: x 2.8e-10 .. 4.1e-10, y 2.2e-10 .. 3.2e-10, energy 1.8e-11 .. 1.9e-11.
      EXPECT_LT(dx, 1e-9) << f << " " << N;
      EXPECT_LT(dy, 1e-9) << f << " " << N;
      EXPECT_LT(de, 5e-11) << f << " " << N;
    }
  }
}

// ALI3-P (augmented_lagrangian + trapezoidal [CCB-1997]) keeps h = 0 itself; at alpha dt^2/4 = 250 its iteration
// stalls at A02's singular position and the run ends "failed" there, after halving the step, instead of producing
// a folded loop; up to that point B0 follows the reduced motion. The geometric stiffness in the tangent (al_tangent
// = full, the default) does not change that (the same failure time with al_tangent = penalty): the stall is the
// multiplier update's. Where A^T A loses `loops` ranks, the force A^T lambda* has no component along the folding
// directions; the residual of h there is corrected only at the rate 1/(1 + alpha dt^2/4 sigma), sigma -> 0, and
// lambda* grows without moving q (measured at t = 0.72: |h| 3.6e-8 .. 3.4e-8 over 5 iterations while |lambda*|
// climbed 43 -> 156 by alpha |h| each; the halved steps only slow it further). A stiffer penalty passes:
// Ali3pPassesTheSingularPositionsWithAStiffPenalty below.
TEST(NFourBar, AugmentedLagrangianStopsAtTheSingularPositionNotOnAFold) {
  const int N = 5;
  auto model = n_four_bar(N);
  const auto ref = reduced_motion(N, 2, 0.01);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "trapezoidal";
  rs.t_end = 2;
  rs.output_every = 0.01;
  rs.dt = 1e-3;
  rs.options.al_alpha = 1e9;  // alpha dt^2 / 4 = 250: about 3 iterations a step (docs/findings.md)
  const auto tr = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, rs);
  EXPECT_EQ(tr.result.status, "failed");
  EXPECT_NE(tr.result.message.find("did not converge"), std::string::npos) << tr.result.message;
  rs.options.al_tangent = "penalty";
  const auto without = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, rs);
  EXPECT_EQ(without.result.status, "failed");
  EXPECT_EQ(without.result.t_reached, tr.result.t_reached);
  // The first singular position of the reduced motion (phi = pi/2: every bar horizontal).
  double t_singular = 0;
  for (size_t k = 1; k < ref.phi.size() && t_singular == 0; ++k)
    if (ref.phi[k] >= std::numbers::pi / 2) t_singular = 0.01 * double(k);
  ASSERT_GT(t_singular, 0);
  EXPECT_NEAR(tr.result.t_reached, t_singular, 0.03);  // measured 0.701; t_singular is the first 0.01-sample past it (0.72)
  double d = 0;
  for (size_t k = 0; k < tr.obs.size(); ++k)
    d = std::max(d, b0_off_reduced(tr.obs[k].q, ref.phi[k]));
  std::printf("[ n_four_bar ] N = %d ALI3-P dt 1e-3: failed at t = %.3f (singular position at %.2f), max|B0 - reduced| "
              "before it %.2e\n", N, tr.result.t_reached, t_singular, d);
  EXPECT_LT(d, 3e-6);  // measured 1.0e-6 (ALI3-P's O(dt^2) error at dt = 1e-3)
}

// ALI3-P with alpha dt^2/4 = 2.5e4 (alpha = 1e11 at dt = 1e-3; the IFToMM reference solutions' method) passes
// every singular position of A02 over the benchmark's 20 s (20 passages): B0 against the reduced motion and
// against kkt + projection (rk4, dt 2.5e-3), energy. The trapezoidal rule's O(dt^2) error sets both: B0 within
// 5.0e-4 of the reduced motion (the IFToMM limit is 1e-3) and energy to 2.2e-5 relative at dt 1e-3, not the
// 1e-6 issue 12 asks (that needs dt ~ 2e-4 at order 2; kkt + projection + rk4 at dt 1e-3 gives 2e-11).
TEST(NFourBar, Ali3pPassesTheSingularPositionsWithAStiffPenalty) {
  const int N = 5;
  const double t_end = 20;
  auto model = n_four_bar(N);
  const auto ref = reduced_motion(N, t_end, 0.05);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.integrator = "trapezoidal";
  rs.t_end = t_end;
  rs.output_every = 0.05;
  rs.dt = 1e-3;
  rs.rtol = 1e-6;
  rs.atol = 1e-8;
  rs.options.al_alpha = 1e11;
  const auto al = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, rs);
  ASSERT_EQ(al.result.status, "ok") << al.result.message;
  clm::testing::RunSettings ks;
  ks.integrator = "rk4";
  ks.t_end = t_end;
  ks.output_every = 0.05;
  ks.dt = 2.5e-3;  // kkt + projection + rk4 is far more accurate per step (energy 4e-9 at dt 4e-3, docs/findings.md)
  ks.options.projection = "both";
  const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, ks);
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  ASSERT_EQ(al.obs.size(), ref.phi.size());
  ASSERT_EQ(kkt.obs.size(), ref.phi.size());
  const int passages = singular_passages(ref.phi);
  double d_ref = 0, d_kkt = 0, de = 0;
  const double e0 = al.obs.front().energy;
  for (size_t k = 0; k < al.obs.size(); ++k) {
    const Vec& q = al.obs[k].q;
    d_ref = std::max(d_ref, b0_off_reduced(q, ref.phi[k]));
    d_kkt = std::max(d_kkt, b0_distance(q, kkt.obs[k].q));
    de = std::max(de, std::abs(al.obs[k].energy - e0) / std::abs(e0));
  }
  std::printf("[ n_four_bar ] N = %d ALI3-P dt 1e-3 alpha 1e11, %g s (%d singular passages): max|B0 - reduced| %.2e, "
              "max|B0 - B0(kkt + projection)| %.2e, energy %.2e relative, %.2f iterations a step\n",
              N, t_end, passages, d_ref, d_kkt, de,
              double(al.result.stats.newton_iterations) / al.result.stats.steps);
  EXPECT_GE(passages, 20);
  // Measured: 5.02e-4, 5.02e-4, energy 2.19e-5; 2.00 iterations a step.
  EXPECT_LT(d_ref, 1e-3);  // the IFToMM limit
  EXPECT_LT(d_kkt, 1e-3);
  EXPECT_LT(de, 3e-5);
}

// Jacobi's amplitude and dn (problems/jacobi_elliptic.hpp): d am / du = dn, by central differences over several
// periods, at parameters up to A02's (m = 0.978) and beyond. The dn output was Landen's cos(phi_0) / cos(phi_1 -
// phi_0), which is 0/0 where am passes odd multiples of pi/2 and was off by O(1) there.
TEST(JacobiElliptic, AmplitudeDerivativeIsDn) {
  for (double m : {0.1, 0.5, 0.9776, 0.999}) {
    double worst = 0;
    for (int k = -400; k <= 400; ++k) {
      const double u = 0.0251 * k, h = 1e-5;
      double dn;
      jacobi_amplitude(u, m, &dn);
      const double derivative = (jacobi_amplitude(u + h, m) - jacobi_amplitude(u - h, m)) / (2 * h);
      worst = std::max(worst, std::abs(derivative - dn));
    }
    std::printf("m = %g: max |d am/du - dn| %.1e\n", m, worst);
    EXPECT_LT(worst, 1e-9) << "m = " << m;  // the difference quotient's error, O(h^2)
  }
}

// n_four_bar's closed form (the parallelogram as a compound pendulum, Jacobi's functions; problems/n_four_bar.hpp)
// against an RK4 integration of the reduced equation: the benchmark's rotation over its 20 s for 1, 3 and 40
// loops, a libration about the hanging position, a start turning the other way, and negative g (libration about
// the upright position); the whole state (q, qd) is the parallelogram's at the closed form's phi.
TEST(NFourBar, ClosedFormIsTheReducedMotion) {
  struct Case {
    int loops;
    double phi0, phid0, g;
  };
  for (const Case& c : {Case{1, 0, 1, 9.81}, Case{3, 0, 1, 9.81}, Case{40, 0, 1, 9.81},
                        Case{3, std::numbers::pi - 0.4, 0.3, 9.81}, Case{3, 0.2, -2.0, 9.81},
                        Case{2, 0.3, 0.1, -9.81}, Case{2, 1.0, 0.5, 0.0}}) {
    NFourBar p;
    p.loops = c.loops;
    p.g = c.g;
    Vec q0, qd0, q, qd, q_phi, qd_phi;
    p.parallelogram_state(c.phi0, c.phid0, q0, qd0);
    const double t_end = 20, every = 0.05;
    std::vector<double> phid;
    const auto phi = reduced_phi(c.loops, c.phi0, c.phid0, t_end, every, c.g / p.L, &phid);
    double e_phi = 0, e_phid = 0, e_state = 0;
    for (size_t k = 0; k < phi.size(); ++k) {
      ASSERT_TRUE(p.closed_form(k * every, q0, qd0, q, qd)) << c.loops << " " << c.phi0;
      e_phi = std::max(e_phi, std::abs((std::numbers::pi / 2 - q[2]) - phi[k]));
      e_phid = std::max(e_phid, std::abs(-qd[2] - phid[k]));
      p.parallelogram_state(std::numbers::pi / 2 - q[2], -qd[2], q_phi, qd_phi);
      e_state = std::max(e_state, (q - q_phi).lpNorm<Eigen::Infinity>() + (qd - qd_phi).lpNorm<Eigen::Infinity>());
    }
    std::printf("[ n_four_bar ] closed form, loops %d, phi0 %.3f, phid0 %.2f, g %.2f: max|phi - phi_RK4| over 20 s "
                "%.2e, phid %.2e\n", c.loops, c.phi0, c.phid0, c.g, e_phi, e_phid);
    EXPECT_LT(e_phi, 1e-10) << c.loops << " " << c.phi0;
    EXPECT_LT(e_phid, 2e-10) << c.loops << " " << c.phi0;  // RK4 at h = 1e-4: 7.1e-11 / 1.3e-10 at most
    EXPECT_LT(e_state, 1e-13) << c.loops;  // phi read back from theta = pi/2 - phi (|phi| up to ~140)
  }
  // Off the parallelogram branch (one loop folded: coupler 1 moved) there is none.
  NFourBar p;
  p.loops = 3;
  Vec q0, qd0, q, qd;
  p.default_initial(q0, qd0);
  q0[3 * 1 + 1] -= 0.1;
  EXPECT_FALSE(p.closed_form(1.0, q0, qd0, q, qd));
}

// IFToMM A02 as specified: 40 loops (n = 243, m = 242), 20 s, both methods the issue names, on the sparse path
// (docs/design.md "Sparse path"; dense, this test took ~10 min). kkt + coordinate projection (rk4, dt 2e-3) and
// ALI3-P (trapezoidal, dt 2e-4, alpha 1e13: alpha dt^2/4 = 1e5 passes the singular positions at this step; Newton
// rtol 3e-9, since a looser tolerance leaves the multiplier iteration unconverged at the passages and loses energy
// there: 1.6e-6 at rtol 1e-8, dt 2.5e-4) agree on B0 within IFToMM's high-accuracy limit 1e-3, both follow the
// reduced motion, and through all 20 singular passages both keep the energy to 1e-6 relative (measured 7.5e-8 and
// 8.1e-7: ALI3-P's is the trapezoidal rule's O(dt^2) oscillation; docs/findings.md, "A02 as specified").
TEST(NFourBar, A02FortyLoopsKktProjectionAndAli3pAgreeOverTheBenchmark) {
  const int N = 40;
  const double t_end = 20;
  auto model = n_four_bar(N);
  const auto ref = reduced_motion(N, t_end, 0.05);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings ks;
  ks.integrator = "rk4";
  ks.t_end = t_end;
  ks.output_every = 0.05;
  ks.dt = 2e-3;
  ks.options.projection = "both";
  const auto kkt = clm::testing::record_run(model, "kkt", q0, qd0, ks);
  ASSERT_EQ(kkt.result.status, "ok") << kkt.result.message;
  clm::testing::RunSettings rs;
  rs.integrator = "trapezoidal";
  rs.t_end = t_end;
  rs.output_every = 0.05;
  rs.dt = 2e-4;
  rs.rtol = 3e-9;
  rs.atol = 1e-10;
  rs.options.al_alpha = 1e13;
  const auto al = clm::testing::record_run(model, "augmented_lagrangian", q0, qd0, rs);
  ASSERT_EQ(al.result.status, "ok") << al.result.message;
  ASSERT_EQ(al.obs.size(), ref.phi.size());
  ASSERT_EQ(kkt.obs.size(), ref.phi.size());
  const int passages = singular_passages(ref.phi);
  double d_kkt_ref = 0, d_al_ref = 0, d_al_kkt = 0, e_kkt = 0, e_al = 0;
  const double e0 = kkt.obs.front().energy;
  for (size_t k = 0; k < al.obs.size(); ++k) {
    const Vec& qa = al.obs[k].q;
    const Vec& qk = kkt.obs[k].q;
    d_kkt_ref = std::max(d_kkt_ref, b0_off_reduced(qk, ref.phi[k]));
    d_al_ref = std::max(d_al_ref, b0_off_reduced(qa, ref.phi[k]));
    d_al_kkt = std::max(d_al_kkt, b0_distance(qa, qk));
    e_kkt = std::max(e_kkt, std::abs(kkt.obs[k].energy - e0) / std::abs(e0));
    e_al = std::max(e_al, std::abs(al.obs[k].energy - e0) / std::abs(e0));
  }
  std::printf("[ A02 ] N = 40, %g s, %d singular passages: max|B0 - B0(kkt + projection)| %.2e; B0 off the reduced "
              "motion: kkt + projection %.2e, ALI3-P %.2e; energy: kkt + projection %.2e, ALI3-P %.2e relative\n",
              t_end, passages, d_al_kkt, d_kkt_ref, d_al_ref, e_kkt, e_al);
  EXPECT_GE(passages, 20);
  EXPECT_LT(d_al_kkt, 1e-3);  // IFToMM's high-accuracy limit
  EXPECT_LT(d_kkt_ref, 1e-3);
  EXPECT_LT(d_al_ref, 1e-3);
  EXPECT_LT(e_kkt, 1e-6);
  EXPECT_LT(e_al, 1e-6);
  // And against what the methods do here (the IFToMM limit alone would let a 10x regression pass): measured
  // 6.7e-5, 8.7e-6, 7.6e-5, 7.5e-8.
  EXPECT_LT(d_al_kkt, 2e-4);
  EXPECT_LT(d_kkt_ref, 3e-5);
  EXPECT_LT(d_al_ref, 2.5e-4);
  EXPECT_LT(e_kkt, 3e-7);
}

// Without coordinate projection of the positions no formulation can tell which branch the motion continues on at
// a singular position (docs/design.md section 1): each ends "failed" at one (the first it comes within ~0.015 rad
// of at an accepted step; a step that jumps over one does not resolve the fold), naming it with the rank there,
// and what it wrote before agrees with the reduced motion. Before the
// guard, kkt + dopri5 at rtol 1e-6 came out of the singular position with a loop folded: status "ok", B0 2.0 m
// off the reduced motion.
TEST(NFourBar, WithoutPositionProjectionEveryFormulationFailsAtTheSingularPosition) {
  const int N = 2;
  auto model = n_four_bar(N);
  const auto ref = reduced_motion(N, 4, 0.01);
  std::vector<double> passages;  // crossings of phi = pi/2 + k pi in the reduced motion
  for (size_t k = 1; k < ref.phi.size(); ++k)
    if (std::floor((ref.phi[k] - std::numbers::pi / 2) / std::numbers::pi) !=
        std::floor((ref.phi[k - 1] - std::numbers::pi / 2) / std::numbers::pi))
      passages.push_back(ref.t[k]);
  ASSERT_GE(passages.size(), 3u);
  struct Case {
    const char* formulation;
    const char* integrator;
    double rtol;
    const char* projection;
  };
  for (const Case& c : {Case{"kkt", "dopri5", 1e-6, "none"}, Case{"kkt", "dopri5", 1e-8, "none"},
                        Case{"schur", "dopri5", 1e-8, "none"},
                        Case{"vakonomic", "dopri5", 1e-8, "none"}, Case{"kkt", "rk4", 0, "none"},
                        Case{"kkt", "dopri5", 1e-8, "velocity"}}) {
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    clm::testing::RunSettings rs;
    rs.integrator = c.integrator;
    rs.t_end = 4;
    rs.output_every = 0.01;
    rs.dt = c.rtol > 0 ? 1e-4 : 1e-3;
    rs.rtol = c.rtol > 0 ? c.rtol : 1e-10;
    rs.atol = rs.rtol * 1e-2;
    rs.options.projection = c.projection;
    const auto tr = clm::testing::record_run(model, c.formulation, q0, qd0, rs);
    SCOPED_TRACE(std::string(c.formulation) + " " + c.integrator + " projection " + c.projection);
    EXPECT_EQ(tr.result.status, "failed");
    EXPECT_NE(tr.result.message.find("singular position of the constraints: A(q) has "), std::string::npos)
        << tr.result.message;
    EXPECT_NE(tr.result.message.find(" of 14 there"), std::string::npos) << tr.result.message;
    EXPECT_NE(tr.result.message.find(" at t = "), std::string::npos) << tr.result.message;
    double nearest = 1e9;
    for (double tp : passages) nearest = std::min(nearest, std::abs(tr.result.t_reached - tp));
    EXPECT_LT(nearest, 0.02) << tr.result.message;
    double dx = 0;
    for (size_t k = 0; k < tr.obs.size(); ++k)
      dx = std::max(dx, std::abs(NFourBar::b0_x(tr.obs[k].q, 1.0) - std::sin(ref.phi[k])));
    std::printf("[ n_four_bar ] %-9s %-6s rtol %.0e projection %-8s: %s at t = %.4f (%.4f from a singular "
                "position), B0 before it within %.1e\n",
                c.formulation, c.integrator, c.rtol, c.projection, tr.result.status.c_str(), tr.result.t_reached,
                nearest, dx);
    // Measured: 3.1e-6 (rtol 1e-6), 1.3e-8 .. 6e-13 otherwise.
    EXPECT_LT(dx, 1e-5);
  }
}

// With projection, adaptive integrators pass the singular positions too (issue 39). Before the singular-position
// solve (formulations/acceleration_formulation.hpp) kkt + dopri5 at rtol 1e-8 ended "failed" at the first one
// (t = 0.7144: "singular KKT matrix", or the projection's S singular, where a step landed within ~1e-7 of it),
// and a minimum-norm solve only where the factorization failed moved the failure to step-size underflow. Now
// kkt and schur, dense and sparse, under dopri5, radau5 and cvode run the 5 s (4 passages); the crank angle
// phi = pi/2 - theta_0 follows the reduced one-degree-of-freedom motion, and the adaptive runs' evaluations near
// the singular positions went through the regularized solve (counted in the extra column singular_evaluations).
TEST(NFourBar, AdaptiveIntegratorsWithProjectionPassTheSingularPositions) {
  const int N = 2;
  auto model = n_four_bar(N);
  const double t_end = 5, every = 0.01;
  const auto ref = reduced_motion(N, t_end, every);
  ASSERT_GE(singular_passages(ref.phi), 4);
  std::map<std::string, double> singular_evaluations;
  for (const char* integrator : {"dopri5", "radau5", "cvode"})
    for (const char* formulation : {"kkt", "schur"})
      for (const char* linear_algebra : {"dense", "sparse"}) {
        SCOPED_TRACE(std::string(formulation) + " " + integrator + " " + linear_algebra);
        Vec q0, qd0;
        model->default_initial(q0, qd0);
        clm::testing::RunSettings rs;
        rs.integrator = integrator;
        rs.t_end = t_end;
        rs.output_every = every;
        rs.dt = 1e-4;
        rs.rtol = 1e-8;
        rs.atol = 1e-10;
        rs.options.projection = "both";
        rs.options.linear_algebra = linear_algebra;
        const auto tr = clm::testing::record_run(model, formulation, q0, qd0, rs);
        ASSERT_EQ(tr.result.status, "ok") << tr.result.message;
        ASSERT_EQ(tr.obs.size(), ref.phi.size());
        double dphi = 0, db0 = 0;
        for (size_t k = 0; k < tr.obs.size(); ++k) {
          dphi = std::max(dphi, std::abs((std::numbers::pi / 2 - tr.obs[k].q[2]) - ref.phi[k]));
          db0 = std::max(db0, b0_off_reduced(tr.obs[k].q, ref.phi[k]));
        }
        ASSERT_EQ(tr.obs.back().extras.size(), 1u);
        const double singular = tr.obs.back().extras[0];
        std::printf("[ n_four_bar ] N = 2 %-5s %-6s %-6s + projection, rtol 1e-8, 5 s: max|phi - phi_reduced| %.2e, "
                    "B0 %.2e, %g singular-position evaluations\n",
                    formulation, integrator, linear_algebra, dphi, db0, singular);
        // Measured: dopri5 2.1e-7 .. 2.5e-7, radau5 3.2e-8 .. 5.8e-8 (B0), cvode (BDF) 5.5e-5 .. 5.6e-5.
        const double bound = std::string(integrator) == "cvode" ? 2e-4 : 1e-6;
        EXPECT_LT(dphi, bound);
        EXPECT_LT(db0, bound);
        singular_evaluations[integrator] += singular;
      }
  // Whether a given run's stages come close enough to take the path is decided by rounding (measured: dopri5
  // and radau5 in half of the four runs each, 118 .. 328 evaluations; cvode's BDF stages never did).
  EXPECT_GT(singular_evaluations["dopri5"], 0);
  EXPECT_GT(singular_evaluations["radau5"], 0);
}
