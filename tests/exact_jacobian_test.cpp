// The exact Jacobian of the saddle-point formulations (kkt, schur; jacobian = autodiff): J = d(qd, qdd)/d(q, qd)
// by implicit differentiation of the KKT system with the model's autodiff derivatives of M, c, A and the bias
// Adot qd (formulations/acceleration_formulation.hpp, Model::dynamics_derivatives). Checked against central
// differences of the rhs at states off the constraint and away from special values, on holonomic and
// nonholonomic problems, with and without Baumgarte gains; the same Jacobian through radau5 against finite
// differences; no heap allocation per Jacobian after the first.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "allocation_counter.hpp"
#include "core/autodiff_model.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "runs/mechanism/file_model.hpp"
#include "snakeboard_gait.hpp"

using namespace clm;

namespace {

struct Case {
  const char* problem;
  std::map<std::string, double> params;
  double alpha, beta;  // Baumgarte gains
};

// Central differences with step delta * max(1, |y_j|) (truncation O(delta^2), cancellation O(eps / delta)).
Mat central_jacobian(Formulation& f, double t, const Vec& y, double delta) {
  const int dim = f.dimension();
  Mat J(dim, dim);
  Vec fp(dim), fm(dim), yp = y, ym = y;
  for (int j = 0; j < dim; ++j) {
    const double h = delta * std::max(1.0, std::abs(y[j]));
    yp[j] = y[j] + h;
    ym[j] = y[j] - h;
    f.rhs(t, yp, fp);
    f.rhs(t, ym, fm);
    J.col(j) = (fp - fm) / (yp[j] - ym[j]);
    yp[j] = ym[j] = y[j];
  }
  return J;
}

// A non-default state (q, qd) of formulation f, off the constraint: the default state moved by fixed amounts (the
// rhs is defined there; Baumgarte's h and A qd terms are then nonzero and their derivatives are exercised).
Vec off_constraint_state(Formulation& f, const Model& model) {
  Vec q0, qd0, y;
  model.default_initial(q0, qd0);
  f.initial_state(q0, qd0, y);
  const int n = f.dimension() / 2;
  for (int i = 0; i < n; ++i) {
    y[i] += 0.05 * std::sin(1.7 * i + 0.3);
    y[n + i] += 0.3 * std::cos(0.9 * i + 0.2);
  }
  return y;
}

// Largest entry difference relative to the largest entry of J.
double relative(const Mat& a, const Mat& b) { return (a - b).lpNorm<Eigen::Infinity>() / b.lpNorm<Eigen::Infinity>(); }

// The formulation's own Jacobian at y against central differences of its rhs: |J_cd - J| / |J| and the
// differences' own scatter (their change when the step doubles). Prints both under `label`; checks the
// Jacobian sits within 3x that scatter (a wrong term would be O(1)) and that a second call allocates nothing.
double check_against_central_differences(Formulation& f, const Vec& y, const std::string& label) {
  const double delta = std::cbrt(std::numeric_limits<double>::epsilon());  // 6.1e-6
  const int dim = f.dimension();
  Mat J(dim, dim);
  f.jacobian(0.3, y, J);
  const Mat J_cd = central_jacobian(f, 0.3, y, delta);
  const Mat J_cd2 = central_jacobian(f, 0.3, y, 2 * delta);
  const double err = relative(J_cd, J), scatter = relative(J_cd2, J_cd);
  std::printf("  %-44s: |J_cd - J| / |J| %.2e, scatter %.2e\n", label.c_str(), err, scatter);
  EXPECT_LT(err, 3 * std::max(scatter, 1e-12)) << label;
  clm::testing::AllocationScope scope;
  f.jacobian(0.3, y, J);
  EXPECT_EQ(scope.count(), 0u) << label;
  return err;
}

const Case kCases[] = {
    {"pendulum_cartesian", {}, 0, 0},
    {"pendulum_cartesian", {}, 5, 7},
    {"four_bar", {}, 0, 0},
    {"four_bar", {}, 5, 7},
    {"closed_chain", {{"n", 8}}, 0, 0},
    {"closed_chain", {{"n", 8}}, 3, 4},
    {"chaplygin_sleigh", {}, 0, 0},
    {"chaplygin_sleigh", {}, 5, 0},
    {"rolling_disk", {}, 0, 0},
    {"rolling_disk", {}, 5, 0},
    {"skate_incline", {}, 0, 0},
};

}  // namespace

TEST(ExactJacobian, SaddlePointFormulationsAgreeWithCentralDifferences) {
  const double delta = std::cbrt(std::numeric_limits<double>::epsilon());  // 6.1e-6
  double worst = 0, worst_scatter = 0;
  for (const char* formulation : {"kkt", "schur"}) {
    for (const Case& c : kCases) {
      auto model = make_model(c.problem, c.params);
      FormulationOptions options;
      options.baumgarte_alpha = c.alpha;
      options.baumgarte_beta = c.beta;
      auto f = formulation_registry().get(formulation).make(model, options);
      ASSERT_TRUE(f->has_jacobian()) << formulation << " " << c.problem;
      const Vec y = off_constraint_state(*f, *model);
      const int dim = f->dimension();
      Mat J(dim, dim);
      f->jacobian(0.3, y, J);
      const Mat J_cd = central_jacobian(*f, 0.3, y, delta);
      // The scatter of central differences themselves: the same differences at twice the step.
      const Mat J_cd2 = central_jacobian(*f, 0.3, y, 2 * delta);
      const double err = relative(J_cd, J), scatter = relative(J_cd2, J_cd);
      std::printf("  %-6s %-18s alpha %g beta %g: |J_cd - J| / |J| %.2e, central differences' scatter %.2e\n",
                  formulation, c.problem, c.alpha, c.beta, err, scatter);
      worst = std::max(worst, err);
      worst_scatter = std::max(worst_scatter, scatter);
      // The exact Jacobian sits within the central differences' own error (a wrong term would be O(1)).
      EXPECT_LT(err, 3 * std::max(scatter, 1e-12)) << formulation << " " << c.problem;
      // kkt and schur solve the same system: the same Jacobian up to round-off.
      EXPECT_TRUE(J.allFinite());
    }
  }
  std::printf("  worst |J_cd - J| / |J| %.2e, worst central-difference scatter %.2e\n", worst, worst_scatter);
  // Measured: worst 2.45e-10 (closed_chain(8)), worst scatter 6.2e-10; per case within 1.2x its scatter.
  EXPECT_LT(worst, 7e-10);
}

TEST(ExactJacobian, KktAndSchurGiveTheSameJacobian) {
  for (const Case& c : kCases) {
    auto model = make_model(c.problem, c.params);
    FormulationOptions options;
    options.baumgarte_alpha = c.alpha;
    options.baumgarte_beta = c.beta;
    auto kkt = formulation_registry().get("kkt").make(model, options);
    auto schur = formulation_registry().get("schur").make(model, options);
    Vec q0, qd0, y;
    model->default_initial(q0, qd0);
    kkt->initial_state(q0, qd0, y);
    schur->initial_state(q0, qd0, y);
    const int dim = kkt->dimension();
    for (int i = 0; i < dim; ++i) y[i] += 0.02 * std::cos(0.7 * i + 0.1);
    Mat Jk(dim, dim), Js(dim, dim);
    kkt->jacobian(0.0, y, Jk);
    schur->jacobian(0.0, y, Js);
    const double d = relative(Js, Jk);
    std::printf("  %-18s alpha %g beta %g: |J_schur - J_kkt| / |J| %.2e\n", c.problem, c.alpha, c.beta, d);
    EXPECT_LT(d, 5e-15) << c.problem;  // measured at most 1.7e-15 (closed_chain(8))
  }
}

// Where the exact Jacobian is not provided the formulation says so (the runner then refuses jacobian = autodiff
// in one line and finite differences remain): time-dependent problems (the derivatives have no t), problems with
// a generalized force written for double only (the snakeboard driven by its gait, tests/snakeboard_gait.hpp), and
// the sparse path.
TEST(ExactJacobian, RefusedWhereNotProvided) {
  auto gait = std::make_shared<AutoDiffModel<clm::testing::GaitDrivenSnakeboard>>(clm::testing::GaitDrivenSnakeboard{});
  EXPECT_FALSE(gait->has_dynamics_derivatives());
  EXPECT_FALSE(formulation_registry().get("kkt").make(gait, FormulationOptions{})->has_jacobian());
  for (const char* problem : {"driven_pendulum", "ball_on_turntable"}) {
    auto model = make_model(problem, {});
    ASSERT_TRUE(model->time_dependent());
    for (const char* formulation : {"kkt", "schur"})
      EXPECT_FALSE(formulation_registry().get(formulation).make(model, FormulationOptions{})->has_jacobian())
          << formulation << " " << problem;
  }
  auto bricard = make_model("bricard", {});
  if (bricard->has_sparse_terms() && bricard->has_dynamics_derivatives()) {
    FormulationOptions sparse;
    sparse.linear_algebra = "sparse";
    EXPECT_FALSE(formulation_registry().get("kkt").make(bricard, sparse)->has_jacobian());
    FormulationOptions dense;
    dense.linear_algebra = "dense";
    EXPECT_TRUE(formulation_registry().get("kkt").make(bricard, dense)->has_jacobian());
  }
}

// Forced problems (issue 40: slider_crank under kkt + radau5 fell back to differences): the generalized force
// F(t, q, qd), written over the scalar, is differentiated by Jet passes (Model::generalized_force_derivatives) and
// enters every formulation's exact Jacobian. Against central differences of the rhs at t = 0.3: constant forces
// (slider_crank), a force of q (pendulum_polar's horizontal push), a file's torque of t and qd
// (driven_damped_pendulum.toml), and a nonholonomic file whose force reads q, qd and t in every coordinate, under
// every formulation with an exact Jacobian; the native evaluation of that file gives the tape's Jacobian.
TEST(ExactJacobian, ForcedProblemsAgreeWithCentralDifferences) {
  const std::string data = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "clm_forced_sleigh_jacobian";
  std::filesystem::create_directories(dir);
  const std::string sleigh = (dir / "forced_sleigh.toml").string();
  std::ofstream(sleigh) << R"toml(name = "forced_sleigh"
description = "Chaplygin sleigh pushed by a state- and time-dependent force, with drag"
coordinates = ["x", "y", "theta"]
[parameters]
m = { value = 1.0, min = 0 }
Ic = { value = 0.5, min = 0 }
b = { value = 0.3 }
[energy]
T = "m/2*(der(x)^2 + der(y)^2) + Ic/2*der(theta)^2"
V = "0"
[forces]
x = "0.7*cos(theta)*(1 + 0.3*sin(2*t)) - 0.2*der(x)*sqrt(der(x)^2 + der(y)^2)"
y = "0.7*sin(theta)*(1 + 0.3*sin(2*t)) - 0.2*der(y)*sqrt(der(x)^2 + der(y)^2)"
theta = "0.4*sin(x - y) - 0.1*der(theta)^3 + 0.05*t*cos(theta)"
[constraints]
velocity = ["-sin(theta)*der(x) + cos(theta)*der(y) - b*der(theta)"]
[initial]
q = [0, 0, 0]
qd = [1.0, "0.8*b", 0.8]
[transversal_frame]
columns = [["-sin(theta)", "cos(theta)", "0"]]
)toml";
  struct ForcedCase {
    std::string problem;
    std::map<std::string, double> params;
    std::vector<const char*> formulations;
  };
  const std::vector<const char*> all = {"kkt", "schur", "augmented_lagrangian", "penalty", "added_mass"};
  std::vector<const char*> nonholonomic = all;
  nonholonomic.push_back("fernandez_bloch");
  const ForcedCase cases[] = {
      {"slider_crank", {}, all},
      {"pendulum_polar", {{"fx", 0.7}}, all},
      {data + "driven_damped_pendulum.toml", {}, all},
      {sleigh, {}, nonholonomic},
  };
  for (const ForcedCase& c : cases) {
    auto model = make_model(c.problem, c.params);
    ASSERT_TRUE(model->has_generalized_force()) << c.problem;
    ASSERT_TRUE(model->has_dynamics_derivatives()) << c.problem;
    for (const char* formulation : c.formulations) {
      FormulationOptions options;
      options.N = 100;
      auto f = formulation_registry().get(formulation).make(model, options);
      ASSERT_TRUE(f->has_jacobian()) << formulation << " " << c.problem;
      const Vec y = off_constraint_state(*f, *model);
      const std::string name = std::filesystem::path(c.problem).filename().string();
      check_against_central_differences(*f, y, std::string(formulation) + " " + name);
    }
  }
  // The native evaluation wraps the tape model for the derivatives: the same Jacobian to round-off.
  const FileModel native = make_file_model(sleigh, {}, "auto");
  if (native.evaluation == "native") {
    auto tape = make_model(sleigh, {});
    for (const char* formulation : {"kkt", "penalty"}) {
      auto fn = formulation_registry().get(formulation).make(native.model, FormulationOptions{});
      auto ft = formulation_registry().get(formulation).make(tape, FormulationOptions{});
      const Vec y = off_constraint_state(*ft, *tape);
      Mat Jn(y.size(), y.size()), Jt(y.size(), y.size());
      fn->jacobian(0.3, y, Jn);
      ft->jacobian(0.3, y, Jt);
      EXPECT_LT(relative(Jn, Jt), 1e-14) << formulation;
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ExactJacobian, NoHeapAllocationAfterTheFirstCall) {
  for (const char* formulation : {"kkt", "schur", "augmented_lagrangian"}) {
    for (const char* problem : {"four_bar", "chaplygin_sleigh"}) {
      auto model = make_model(problem, {});
      FormulationOptions options;
      options.baumgarte_alpha = 2;
      auto f = formulation_registry().get(formulation).make(model, options);
      Vec q0, qd0, y;
      model->default_initial(q0, qd0);
      f->initial_state(q0, qd0, y);
      Mat J(f->dimension(), f->dimension());
      f->jacobian(0.0, y, J);  // sizes the workspace (once per run)
      clm::testing::AllocationScope scope;
      for (int i = 0; i < 10; ++i) f->jacobian(0.0, y, J);
      EXPECT_EQ(scope.count(), 0u) << formulation << " " << problem;
    }
  }
}

// radau5 with the exact Jacobian against finite differences: the same motion to the run's tolerance, fewer rhs
// evaluations (none spent on Jacobians).
TEST(ExactJacobian, Radau5AutodiffAgreesWithFiniteDifferences) {
  struct RunCase {
    const char* problem;
    const char* formulation;
    double t_end;
  };
  for (const RunCase rc : {RunCase{"four_bar", "kkt", 1.0}, RunCase{"closed_chain", "schur", 1.0},
                           RunCase{"chaplygin_sleigh", "kkt", 2.0}, RunCase{"rolling_disk", "schur", 2.0},
                           RunCase{"slider_crank", "kkt", 1.0}}) {
    for (const char* integrator : {"radau5", "implicit_midpoint"}) {
      auto model = make_model(rc.problem, std::string(rc.problem) == "closed_chain"
                                              ? std::map<std::string, double>{{"n", 8}}
                                              : std::map<std::string, double>{});
      Vec q0, qd0;
      model->default_initial(q0, qd0);
      Vec y_end[2];
      StepStatistics st[2];
      for (int k = 0; k < 2; ++k) {
        auto f = formulation_registry().get(rc.formulation).make(model, FormulationOptions{});
        Vec y0;
        f->initial_state(q0, qd0, y0);
        auto integ = integrator_registry().get(integrator).make();
        SimulationSettings sim;
        sim.t_end = rc.t_end;
        sim.output_every = rc.t_end / 4;
        IntegratorSettings s;
        s.rtol = s.atol = 1e-8;
        s.dt = std::string(integrator) == "radau5" ? 1e-4 : 1e-3;
        s.jacobian = k == 0 ? "finite_difference" : "autodiff";
        const SimulationResult r = simulate(*f, *integ, y0, sim, s, [&](double, const Vec& y) { y_end[k] = y; });
        ASSERT_EQ(r.status, "ok") << r.message;
        st[k] = r.stats;
      }
      const double diff = (y_end[1] - y_end[0]).lpNorm<Eigen::Infinity>();
      std::printf("  %-10s %-16s %-6s: rhs %ld (fd) / %ld (autodiff), steps %ld / %ld, |y_ad - y_fd| %.2e\n",
                  integrator, rc.problem, rc.formulation, st[0].rhs_evals, st[1].rhs_evals, st[0].steps, st[1].steps,
                  diff);
      // Same steps, same Newton iterations: the runs differ in the last bits only, far inside rtol 1e-8
      // (measured at most 8.0e-14, radau5 on four_bar; implicit_midpoint 6.4e-14 on closed_chain(8)).
      EXPECT_EQ(st[1].steps, st[0].steps) << integrator << " " << rc.problem;
      EXPECT_LT(diff, 3e-13) << integrator << " " << rc.problem;
      EXPECT_LT(st[1].rhs_evals, st[0].rhs_evals) << integrator << " " << rc.problem;
    }
  }
}

// jacobian = auto: the exact Jacobian by the fixed rule of AccelerationFormulation::exact_jacobian_is_cheaper
// (terms by autodiff and n >= 6), which bench_integrators' JacobianCall measured (CPU per Jacobian): four_bar
// kkt 38 us own against 113 us by differences; closed_chain(16) kkt (hand-written terms) 644 against 174 us;
// the sleigh (n = 3) near parity, 1.88 against 2.07 us, left to differences. A rule, not a timing: the same
// run gives the same numbers on any machine under any load.
TEST(ExactJacobian, AutoPicksTheCheaperJacobian) {
  struct AutoCase {
    const char* problem;
    double bars;
    bool own_expected;
    const char* formulation = "kkt";
  };
  // servo and fernandez_bloch by kkt's rule (bench_integrators: servo four_bar 44 against 124 us per Jacobian;
  // fernandez_bloch's exact Jacobian 1.3-2x the differences at n = 3..5).
  for (const AutoCase c : {AutoCase{"four_bar", 0, true}, AutoCase{"closed_chain", 16, false},
                           AutoCase{"chaplygin_sleigh", 0, false}, AutoCase{"four_bar", 0, true, "servo"},
                           AutoCase{"chaplygin_sleigh", 0, false, "servo"},
                           AutoCase{"chaplygin_sleigh", 0, false, "fernandez_bloch"}}) {
    std::map<std::string, double> params;
    if (c.bars > 0) params["n"] = c.bars;
    auto model = make_model(c.problem, params);
    Vec q0, qd0, y0;
    model->default_initial(q0, qd0);
    IntegratorSettings s;
    s.rtol = s.atol = 1e-8;
    s.dt = 1e-4;
    s.jacobian = "auto";
    std::unique_ptr<Formulation> f = formulation_registry().get(c.formulation).make(model, FormulationOptions{});
    ASSERT_TRUE(f->has_jacobian()) << c.formulation << " " << c.problem;
    f->initial_state(q0, qd0, y0);
    std::unique_ptr<Integrator> integ = integrator_registry().get("radau5").make();
    integ->initialize(*f, 0.0, y0, s);
    const bool own = f->own_jacobian_is_cheaper();
    EXPECT_EQ(own, c.own_expected) << c.formulation << " " << c.problem;
    // What auto chose is said (the run attribute jacobian_used).
    EXPECT_EQ(integ->jacobian_used(), c.own_expected ? "exact" : "finite_difference") << c.problem;
    // The choice shows in the counters: no rhs evaluations spent on Jacobians with the own one.
    const long rhs_before = integ->statistics().rhs_evals;
    integ->step(1.0);
    const StepStatistics& st = integ->statistics();
    ASSERT_GT(st.jacobian_evals, 0);
    const long per_jacobian_fd = f->dimension();
    if (c.own_expected)
      EXPECT_LT(st.rhs_evals - rhs_before, per_jacobian_fd) << c.problem;
    else
      EXPECT_GE(st.rhs_evals - rhs_before, per_jacobian_fd) << c.problem;
  }
}

// Every integrator says which Jacobian it solved with (issue 20 debt 5: run.jacobian = auto chooses by a
// fixed rule; the run records the choice, attribute jacobian_used).
TEST(ExactJacobian, EveryIntegratorSaysWhichJacobianItUsed) {
  auto model = make_model("four_bar");
  Vec q0, qd0, y0;
  model->default_initial(q0, qd0);
  struct Case {
    const char* integrator;
    const char* jacobian;
    const char* cvode_method;
    const char* used;
  };
  for (const Case c : {Case{"radau5", "auto", "bdf", "exact"}, Case{"radau5", "finite_difference", "bdf", "finite_difference"},
                       Case{"implicit_midpoint", "autodiff", "bdf", "exact"}, Case{"cvode", "auto", "bdf", "exact"},
                       Case{"cvode", "finite_difference", "bdf", "finite_difference"}, Case{"cvode", "auto", "adams", "none"},
                       Case{"dopri5", "auto", "bdf", "none"}, Case{"rk4", "auto", "bdf", "none"}}) {
    IntegratorSettings s;
    s.rtol = s.atol = 1e-8;
    s.dt = 1e-3;
    s.jacobian = c.jacobian;
    s.cvode_method = c.cvode_method;
    std::unique_ptr<Formulation> f = formulation_registry().get("kkt").make(model, FormulationOptions{});
    f->initial_state(q0, qd0, y0);
    std::unique_ptr<Integrator> integ = integrator_registry().get(c.integrator).make();
    integ->initialize(*f, 0.0, y0, s);
    integ->step(0.01);
    EXPECT_EQ(integ->jacobian_used(), c.used) << c.integrator << " " << c.jacobian << " " << c.cvode_method;
  }
}

// The augmented Lagrangian's exact Jacobian is that of its iteration's limit, kkt's motion with Baumgarte gains
// alpha = xi omega, beta = omega. Two checks: against kkt's Jacobian with those gains (independent solve: an LU
// of the KKT matrix against the iteration on M + alpha A^T A), and against central differences of its own rhs,
// at al_alpha = 1e3 with al_tolerance 0 (the rhs then converges to round-off, so differences of it are clean;
// at the default 1e7 the rhs carries alpha eps ~ 1e-9 of rounding that the differences would magnify).
TEST(ExactJacobian, AugmentedLagrangianIsKktsWithItsGains) {
  const double delta = std::cbrt(std::numeric_limits<double>::epsilon());
  for (const Case& c : kCases) {
    if (c.alpha != 0 || c.beta != 0) continue;  // the gains here are the augmented Lagrangian's own
    auto model = make_model(c.problem, c.params);
    FormulationOptions al;
    al.al_xi = 0.7;
    al.al_omega = 6;
    FormulationOptions kkt_options;
    kkt_options.baumgarte_alpha = al.al_xi * al.al_omega;
    kkt_options.baumgarte_beta = al.al_omega;
    auto f = formulation_registry().get("augmented_lagrangian").make(model, al);
    auto kkt = formulation_registry().get("kkt").make(model, kkt_options);
    ASSERT_TRUE(f->has_jacobian()) << c.problem;
    // auto takes it for every problem (augmented_lagrangian.hpp: differences of this rhs are poor).
    EXPECT_TRUE(f->own_jacobian_is_cheaper()) << c.problem;
    const Vec y = off_constraint_state(*f, *model);
    const int dim = f->dimension();
    Mat J(dim, dim), Jk(dim, dim);
    f->jacobian(0.3, y, J);
    kkt->jacobian(0.3, y, Jk);
    const double vs_kkt = relative(J, Jk);

    FormulationOptions soft = al;
    soft.al_alpha = 1e3;
    soft.al_tolerance = 0;
    soft.al_iterations = 200;
    auto fs = formulation_registry().get("augmented_lagrangian").make(model, soft);
    (void)off_constraint_state(*fs, *model);  // its initial_state() sets the formulation up for the run
    Mat Js(dim, dim);
    fs->jacobian(0.3, y, Js);
    const Mat J_cd = central_jacobian(*fs, 0.3, y, delta);
    const Mat J_cd2 = central_jacobian(*fs, 0.3, y, 2 * delta);
    const double err = relative(J_cd, Js), scatter = relative(J_cd2, J_cd);
    std::printf("  %-18s: |J_al - J_kkt| / |J| %.2e (al_alpha 1e7); at al_alpha 1e3: |J_cd - J| / |J| %.2e, "
                "scatter %.2e\n",
                c.problem, vs_kkt, err, scatter);
    // Measured 1.5e-10 (skate) .. 1.7e-8 (closed_chain(8)): the iteration's rounding, ~ al_alpha eps |A|^2 / |M|.
    EXPECT_LT(vs_kkt, 4e-8) << c.problem;
    EXPECT_LT(err, 3 * std::max(scatter, 1e-12)) << c.problem;
  }
}

// added_mass (direct form): its force C^T lambda, lambda = -N A qd, brings second derivatives of A
// (Model::curvature_force_derivative); checked against central differences on Pfaffian problems, where C is
// nonzero, and holonomic ones (C = 0), at N = 100 (the condition of M + N A^T A grows with N and with it the
// differences' cancellation error).
TEST(ExactJacobian, AddedMassAgreesWithCentralDifferences) {
  for (const Case& c : kCases) {
    if (c.alpha != 0 || c.beta != 0) continue;
    auto model = make_model(c.problem, c.params);
    FormulationOptions options;
    options.N = 100;
    options.added_mass_form = "direct";
    auto f = formulation_registry().get("added_mass").make(model, options);
    ASSERT_TRUE(f->has_jacobian()) << c.problem;
    check_against_central_differences(*f, off_constraint_state(*f, *model), std::string("added_mass N 100 ") + c.problem);
  }
}

// servo: the force B^T lambda along the problem's field brings dB/dq into the first block row (dual-number passes
// through servo_direction); the system [M -B^T; A 0] is solved on the rhs's factors through A M^-1 B^T. Against
// central differences with the problems' own fields (with and without Baumgarte gains), and with B = A against
// kkt's Jacobian, an independent solve of the same system (an LU of the KKT matrix).
TEST(ExactJacobian, ServoAgreesWithCentralDifferencesAndWithKkt) {
  struct ServoCase {
    const char* problem;
    std::map<std::string, double> params;
    const char* direction;
    double alpha;
  };
  const ServoCase cases[] = {
      {"chaplygin_sleigh", {}, "lateral_com", 0},
      {"chaplygin_sleigh", {}, "lateral_com", 5},
      {"suslov", {{"n1", 0.3}, {"n2", -0.4}, {"n3", 1.0}, {"l1", 0.2}}, "control_torque", 0},
      {"suslov", {{"n1", 0.3}, {"n2", -0.4}, {"n3", 1.0}, {"l1", 0.2}}, "control_torque", 3},
  };
  // Measured 1.1e-11 .. 2.9e-11 against scatters 3.2e-11 .. 6.9e-11 (a wrong dB term was 0.1 .. 0.7).
  for (const ServoCase& c : cases) {
    auto model = make_model(c.problem, c.params);
    FormulationOptions options;
    options.servo_direction = c.direction;
    options.baumgarte_alpha = c.alpha;
    auto f = formulation_registry().get("servo").make(model, options);
    ASSERT_TRUE(f->has_jacobian()) << c.problem;
    check_against_central_differences(*f, off_constraint_state(*f, *model),
                                      std::string("servo ") + c.problem + " " + c.direction +
                                          " alpha " + std::to_string(int(c.alpha)));
  }
  for (const Case& c : kCases) {
    auto model = make_model(c.problem, c.params);
    FormulationOptions options;
    options.baumgarte_alpha = c.alpha;
    options.baumgarte_beta = c.beta;
    options.servo_direction = "constraint";
    auto servo = formulation_registry().get("servo").make(model, options);
    auto kkt = formulation_registry().get("kkt").make(model, options);
    const Vec y = off_constraint_state(*servo, *model);
    (void)off_constraint_state(*kkt, *model);
    const int dim = servo->dimension();
    Mat Js(dim, dim), Jk(dim, dim);
    servo->jacobian(0.3, y, Js);
    kkt->jacobian(0.3, y, Jk);
    const double d = relative(Js, Jk);
    std::printf("  servo (B = A) %-18s alpha %g beta %g: |J_servo - J_kkt| / |J| %.2e\n", c.problem, c.alpha, c.beta,
                d);
    EXPECT_LT(d, 1e-14) << c.problem;  // measured 0 .. 2.75e-15 (closed_chain(8))
  }
}

// fernandez_bloch: M~ qdd + c~ = F with M~ = M - (M X A + A^T X^T M) holding the frame X(q), so dM~ and dc~ are
// nested derivatives of A (hyper-dual passes through the templated M~). Against central differences off the
// constraint (the formulation integrates unconstrained), with the problems' own frames (sleigh) and the default
// pseudo-inverse frame A^T (A A^T)^-1 (rolling_disk, suslov with a tilted constraint vector).
TEST(ExactJacobian, FernandezBlochAgreesWithCentralDifferences) {
  const Case cases[] = {
      {"chaplygin_sleigh", {}, 0, 0},
      {"rolling_disk", {}, 0, 0},
      {"suslov", {{"l1", 0.2}, {"l2", -0.1}}, 0, 0},
      {CLMBENCH_SOURCE_DIR "/tests/data/mechanisms/chaplygin_sleigh.toml", {}, 0, 0},  // through the tape
  };
  // Measured 2.9e-12 (rolling_disk) .. 1.9e-10 (suslov) against scatters 2.2e-11 .. 5.6e-10.
  for (const Case& c : cases) {
    auto model = make_model(c.problem, c.params);
    auto f = formulation_registry().get("fernandez_bloch").make(model, FormulationOptions{});
    ASSERT_TRUE(f->has_jacobian()) << c.problem;
    check_against_central_differences(*f, off_constraint_state(*f, *model), std::string("fernandez_bloch ") + c.problem);
  }
}
