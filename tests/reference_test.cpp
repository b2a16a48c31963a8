// Issue 10 item 6: errors against the reference (closed form or reference run), the Bari test-set figures
// scd and mescd, the reference cache, and what reaches the results file and `clmbench info`.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <barrier>
#include <cmath>
#include <sstream>
#include <thread>

#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "core/loglog_fit.hpp"
#include "core/problem_registry.hpp"
#include "runs/reference_cache.hpp"
#include "runs/run_options.hpp"
#include "runs/run_summary.hpp"

namespace clm {
namespace {

RunSpec spec_for(const std::string& problem, const std::string& formulation, const std::string& integrator,
                 double t_end, double rtol) {
  RunSpec s;
  s.run_id = problem + "_" + formulation + "_" + integrator;
  s.problem = problem;
  s.formulation = formulation;
  s.integrator = integrator;
  s.t_end = t_end;
  s.rtol = rtol;
  s.atol = rtol * 1e-2;
  s.output_every = 0.05;
  for (const auto& p : problem_registry().get(problem).parameters) s.params[p.name] = p.default_value;
  return s;
}

RunRecord run_with(const RunSpec& spec, const ReferenceTrajectory* reference) {
  std::ostringstream log;
  PreparedRun run = prepare_run(spec, log);
  return execute_run(run, nullptr, /*keep_samples=*/false, nullptr, reference);
}

// A synthetic reference run of K samples for a model with n coordinates and m multipliers: smooth, with
// one q component exactly 0 throughout (scd must skip it; mescd must not).
ReferenceTrajectory synthetic_reference(int n, int m, int K, double t_end) {
  ReferenceTrajectory r;
  r.source = ReferenceSource::kReferenceRun;
  r.n = n;
  r.m = m;
  for (int k = 0; k < K; ++k) {
    const double t = k + 1 == K ? t_end : t_end * k / (K - 1);
    r.t.push_back(t);
    for (int i = 0; i < n; ++i) r.q.push_back(i == 0 ? 0.0 : std::cos(t + i) + 2.0 * i);
    for (int i = 0; i < n; ++i) r.qd.push_back(-std::sin(t + i) - 3.0);
    for (int j = 0; j < m; ++j) r.lambda.push_back(5.0 + std::sin(t * (j + 1)));
  }
  return r;
}

Vec row(const std::vector<double>& data, int k, int width) {
  return Eigen::Map<const Vec>(data.data() + static_cast<size_t>(k) * width, width);
}

// ---------------------------------------------------------------------------------- scd and mescd

TEST(TestSetAccuracy, ScdOfARelativeErrorOf1e6IsSixToRoundOff) {
  const auto model = make_model("pendulum_polar");  // n = 2, m = 1, no closed-form motion
  const double t_end = 2;
  const int K = 41;
  const ReferenceTrajectory ref = synthetic_reference(2, 1, K, t_end);
  Vec q0(2), qd0(2);
  model->default_initial(q0, qd0);
  RunSummaryAccumulator acc(*model, q0, qd0, false, {.t_end = t_end, .rtol = 1e-6, .atol = 1e-8, .reference = &ref});
  Observation obs;
  double q_err = 0, qd_err = 0, lambda_err = 0;
  for (int k = 0; k < K; ++k) {
    obs.q = row(ref.q, k, 2) * (1 + 1e-6);
    obs.qd = row(ref.qd, k, 2) * (1 + 1e-6);
    obs.lambda = row(ref.lambda, k, 1) * (1 + 1e-6);
    q_err = std::max(q_err, 1e-6 * row(ref.q, k, 2).norm());
    qd_err = std::max(qd_err, 1e-6 * row(ref.qd, k, 2).norm());
    lambda_err = std::max(lambda_err, 1e-6 * row(ref.lambda, k, 1).norm());
    acc.add(ref.t[k], obs);
  }
  const RunSummary s = acc.finish();
  EXPECT_EQ(s.reference_source, "reference_run");
  EXPECT_NEAR(s.scd, 6.0, 1e-9);  // every nonzero component is off by exactly 1e-6 relative
  // Round-off of y = r (1 + 1e-6) and of y - r: about 1e-16 / 1e-6 relative.
  EXPECT_NEAR(s.q_error_max, q_err, 1e-9 * q_err);
  EXPECT_NEAR(s.qd_error_max, qd_err, 1e-9 * qd_err);
  EXPECT_NEAR(s.lambda_error_max, lambda_err, 1e-9 * lambda_err);
  EXPECT_NEAR(s.q_error_final, 1e-6 * row(ref.q, K - 1, 2).norm(), 1e-15);
  EXPECT_NEAR(s.lambda_error_final, 1e-6 * row(ref.lambda, K - 1, 1).norm(), 1e-14);
  EXPECT_TRUE(s.reference_note.empty()) << s.reference_note;
  // error_vs_reference keeps its meaning (the closed-form q distance): the pendulum has none.
  EXPECT_TRUE(std::isnan(s.error_vs_reference));
}

TEST(TestSetAccuracy, MescdOfAConstructedMixedErrorAndScdSkipsZeroReferenceComponents) {
  const auto model = make_model("pendulum_polar");
  const double t_end = 1, atol = 1e-3, rtol = 1e-3;  // atol / rtol = 1
  const int K = 11;
  const ReferenceTrajectory ref = synthetic_reference(2, 1, K, t_end);
  Vec q0(2), qd0(2);
  model->default_initial(q0, qd0);
  RunSummaryAccumulator acc(*model, q0, qd0, false, {.t_end = t_end, .rtol = rtol, .atol = atol, .reference = &ref});
  Observation obs;
  // y_i = r_i + 1e-5 (atol/rtol + |r_i|): every component's mixed error is exactly 1e-5, so mescd = 5; the
  // component q_1 = 0 has no relative error and is left out of scd.
  auto offset = [](const Vec& r) { return Vec(r.array() + 1e-5 * (1.0 + r.array().abs())); };
  for (int k = 0; k < K; ++k) {
    obs.q = offset(row(ref.q, k, 2));
    obs.qd = offset(row(ref.qd, k, 2));
    obs.lambda = row(ref.lambda, k, 1);
    acc.add(ref.t[k], obs);
  }
  const RunSummary s = acc.finish();
  EXPECT_NEAR(s.mescd, 5.0, 1e-9);
  double worst = 0;  // max relative error over the nonzero components at t_end
  for (const Vec& r : {row(ref.q, K - 1, 2), row(ref.qd, K - 1, 2)})
    for (int i = 0; i < 2; ++i)
      if (r[i] != 0) worst = std::max(worst, 1e-5 * (1 + std::abs(r[i])) / std::abs(r[i]));
  EXPECT_NEAR(s.scd, -std::log10(worst), 1e-9);
  EXPECT_EQ(s.lambda_error_max, 0.0);  // lambda equal to the reference: a real zero, not a missing figure

  // The same figures straight from the definition.
  TestSetAccuracy direct(atol, rtol);
  direct.add(Vec::Constant(3, 2.0 + 1e-5 * 3), Vec::Constant(3, 2.0));
  EXPECT_NEAR(direct.mescd(), 5.0, 1e-9);
  TestSetAccuracy exact(atol, rtol);
  exact.add(Vec::Constant(2, 1.0), Vec::Constant(2, 1.0));
  EXPECT_EQ(exact.scd(), std::numeric_limits<double>::infinity());  // an exact match: infinitely many digits
  TestSetAccuracy zeros(0, rtol);
  zeros.add(Vec::Constant(2, 1e-3), Vec::Zero(2));  // no nonzero reference component and atol = 0
  EXPECT_TRUE(std::isnan(zeros.scd()));
  EXPECT_TRUE(std::isnan(zeros.mescd()));
  TestSetAccuracy broken(atol, rtol);
  Vec y = Vec::Constant(2, 1.0);
  y[1] = NAN;
  broken.add(y, Vec::Constant(2, 1.0));
  EXPECT_TRUE(std::isnan(broken.scd()));  // a NaN is never a good score
}

TEST(TestSetAccuracy, ARunThatStopsEarlyHasNoFinalTimeFiguresAndMissingMultipliersAreNaN) {
  const auto model = make_model("pendulum_polar");
  const ReferenceTrajectory ref = synthetic_reference(2, 1, 21, 2.0);
  Vec q0(2), qd0(2);
  model->default_initial(q0, qd0);
  RunSummaryAccumulator acc(*model, q0, qd0, false, {.t_end = 2.0, .rtol = 1e-6, .atol = 1e-8, .reference = &ref});
  Observation obs;
  for (int k = 0; k < 10; ++k) {  // stops halfway
    obs.q = row(ref.q, k, 2) * (1 + 1e-6);
    obs.qd = row(ref.qd, k, 2);
    obs.lambda = Vec::Constant(1, NAN);  // substituted has no multipliers
    acc.add(ref.t[k], obs);
  }
  const RunSummary s = acc.finish();
  EXPECT_GT(s.q_error_max, 0);
  EXPECT_TRUE(std::isnan(s.q_error_final));
  EXPECT_TRUE(std::isnan(s.scd));
  EXPECT_TRUE(std::isnan(s.mescd));
  EXPECT_TRUE(std::isnan(s.lambda_error_max));
}

TEST(TestSetAccuracy, AddingASampleAgainstAReferenceRunDoesNotAllocate) {
  const auto model = make_model("four_bar");
  const int n = model->n(), m = model->m();
  const ReferenceTrajectory ref = synthetic_reference(n, m, 50, 1.0);
  Vec q0(n), qd0(n);
  model->default_initial(q0, qd0);
  RunSummaryAccumulator acc(*model, q0, qd0, false, {.t_end = 1.0, .rtol = 1e-6, .atol = 1e-8, .reference = &ref});
  Observation obs;
  obs.q = row(ref.q, 0, n);
  obs.qd = row(ref.qd, 0, n);
  obs.lambda = row(ref.lambda, 0, m);
  acc.add(ref.t[0], obs);
  testing::AllocationScope scope;
  for (int k = 1; k < 50; ++k) acc.add(ref.t[k], obs);
  EXPECT_EQ(scope.count(), 0u);
}

// ----------------------------------------------------------------- reference runs and closed forms

// The sleigh has a closed form: a run compared with a tight reference run must show the same errors as
// compared with the closed form, to within the reference run's own error.
TEST(ReferenceRun, AgreesWithTheClosedFormToWithinItsOwnError) {
  for (const char* problem : {"chaplygin_sleigh", "rolling_disk"}) {
    SCOPED_TRACE(problem);
    const RunSpec spec = spec_for(problem, "kkt", "dopri5", 5, 1e-6);
    std::ostringstream log;
    PreparedRun prepared = prepare_run(spec, log);
    ASSERT_TRUE(has_closed_form_reference(prepared));
    const RunSpec ref_spec = reference_spec(prepared);
    const ReferenceTrajectory ref = compute_reference_run(ref_spec);
    ASSERT_EQ(ref.source, ReferenceSource::kReferenceRun) << ref.description;
    ASSERT_EQ(ref.samples(), 101u);

    const RunRecord closed = run_with(spec, nullptr);
    const RunRecord against_run = run_with(spec, &ref);
    const RunRecord reference_itself = run_with(ref_spec, nullptr);  // the reference's own error: closed form
    EXPECT_EQ(closed.summary.reference_source, "closed_form");
    EXPECT_EQ(against_run.summary.reference_source, "reference_run");
    EXPECT_EQ(closed.summary.q_error_max, closed.summary.error_vs_reference);  // same norm, same reference
    const RunSummary& c = closed.summary;
    const RunSummary& r = against_run.summary;
    const RunSummary& own = reference_itself.summary;
    ASSERT_LT(own.q_error_max, 1e-10);  // dopri5 at rtol 1e-12 (measured 5e-13 sleigh, 1.4e-12 disk over 10 s)
    EXPECT_GT(c.q_error_max, 1e3 * own.q_error_max);  // the run's error is far above the reference's
    EXPECT_NEAR(r.q_error_max, c.q_error_max, own.q_error_max);
    EXPECT_NEAR(r.qd_error_max, c.qd_error_max, own.qd_error_max);
    EXPECT_NEAR(r.q_error_final, c.q_error_final, own.q_error_final);
    EXPECT_NEAR(r.lambda_error_max, c.lambda_error_max, own.lambda_error_max + 1e-12);
    EXPECT_NEAR(r.scd, c.scd, 1e-3);
    EXPECT_NEAR(r.mescd, c.mescd, 1e-3);
    EXPECT_GT(c.scd, 4);  // a 1e-6 run: around 5-7 correct digits
    EXPECT_LT(c.scd, 9);
  }
}

// Without a closed form (slider_crank): the errors against the reference run shrink at dopri5's order 5
// with the step (fixed_step), and in proportion to rtol when the step is adaptive.
TEST(ReferenceRun, ErrorsShrinkAtTheIntegratorsOrder) {
  ReferenceCache cache;
  std::vector<double> h, e_fixed;
  // Divisors of output_every (steps land on the grid), in the asymptotic range: at dt = 0.025 the error
  // ratio is 4.5 (pre-asymptotic), below 0.003 the error nears the reference's own (~1e-11).
  for (double dt : {0.0125, 0.00625, 0.003125}) {
    RunSpec spec = spec_for("slider_crank", "kkt", "dopri5", 2, 1e-6);
    spec.dt = dt;
    spec.fixed_step = true;
    std::ostringstream log;
    PreparedRun run = prepare_run(spec, log);
    ASSERT_FALSE(has_closed_form_reference(run));
    const auto ref = cache.get(run);
    ASSERT_EQ(ref->source, ReferenceSource::kReferenceRun) << ref->description;
    const RunRecord r = execute_run(run, nullptr, false, nullptr, ref.get());
    ASSERT_EQ(r.status, "ok");
    h.push_back(dt);
    e_fixed.push_back(r.summary.q_error_max);
  }
  const LogLogFit order = fit_loglog(h, e_fixed);
  // Measured 5.38 (errors 4.3e-7, 1.1e-8, 2.5e-10).
  EXPECT_NEAR(order.slope, 5.0, 0.5) << "errors " << e_fixed[0] << " " << e_fixed[1] << " " << e_fixed[2];
  EXPECT_LT(e_fixed.back(), 1e-9);
  EXPECT_GT(e_fixed.back(), 1e-11);  // well above the reference's own error

  std::vector<double> tol, e_adaptive;
  for (double rtol : {1e-5, 1e-6, 1e-7, 1e-8, 1e-9}) {
    const RunSpec spec = spec_for("slider_crank", "kkt", "dopri5", 2, rtol);
    std::ostringstream log;
    PreparedRun run = prepare_run(spec, log);
    const RunRecord r = execute_run(run, nullptr, false, nullptr, cache.get(run).get());
    tol.push_back(rtol);
    e_adaptive.push_back(r.summary.q_error_max);
    EXPECT_GT(r.summary.scd, -std::log10(rtol) - 2.5) << rtol;
  }
  const LogLogFit proportional = fit_loglog(tol, e_adaptive);
  EXPECT_NEAR(proportional.slope, 1.0, 0.2);  // tolerance proportionality of the 5(4) pair
  EXPECT_EQ(cache.computations(), 1);  // every run above shared one reference (step, rtol, method differ)
}

TEST(ReferenceRun, AFailedReferenceGivesNaNAndAWarningNeverZero) {
  const RunSpec spec = spec_for("four_bar", "kkt", "dopri5", 2, 1e-6);
  std::ostringstream log;
  PreparedRun prepared = prepare_run(spec, log);
  RunSpec ref_spec = reference_spec(prepared);
  ref_spec.max_steps = 20;  // far too few for rtol 1e-12
  const ReferenceTrajectory failed = compute_reference_run(ref_spec);
  EXPECT_EQ(failed.source, ReferenceSource::kNone);
  EXPECT_NE(failed.description.find("failed"), std::string::npos) << failed.description;
  EXPECT_EQ(failed.samples(), 0u);
  const RunRecord r = run_with(spec, &failed);
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.summary.reference_source, "none");
  for (double v : {r.summary.q_error_max, r.summary.q_error_final, r.summary.qd_error_max, r.summary.lambda_error_max,
                   r.summary.scd, r.summary.mescd})
    EXPECT_TRUE(std::isnan(v));
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("reference") != std::string::npos && w.find("failed") != std::string::npos;
  EXPECT_TRUE(warned) << "no warning naming the failed reference";

  // A sample per step has no grid to share with a reference run.
  RunSpec per_step = spec;
  per_step.output_every = 0;
  PreparedRun p2 = prepare_run(per_step, log);
  const ReferenceTrajectory none = compute_reference_run(reference_spec(p2));
  EXPECT_EQ(none.source, ReferenceSource::kNone);
  EXPECT_NE(none.description.find("output_every = 0"), std::string::npos) << none.description;
}

TEST(ReferenceRun, VakonomicRunsOfNonholonomicProblemsGetAVakonomicReference) {
  RunSpec spec = spec_for("chaplygin_sleigh", "added_mass", "dopri5", 1, 1e-8);
  spec.options.added_mass_form = "multiplier";
  spec.options.lambda0 = {0.25};
  std::ostringstream log;
  PreparedRun run = prepare_run(spec, log);
  EXPECT_FALSE(has_closed_form_reference(run));  // the closed form is the nonholonomic motion
  const RunSpec ref = reference_spec(run);
  EXPECT_EQ(ref.formulation, "vakonomic");
  EXPECT_EQ(ref.options.lambda0, std::vector<double>{0.25});
}

// -------------------------------------------------------------------------------------- the cache

TEST(ReferenceCache, ComputesEachKeyOnceUnderConcurrentRequests) {
  const RunSpec a = spec_for("pendulum_polar", "kkt", "rk4", 1, 1e-6);
  RunSpec b = a;
  b.params["L"] = 1.5;  // another key
  std::ostringstream log;
  const RunSpec ref_a = reference_spec(prepare_run(a, log));
  const RunSpec ref_b = reference_spec(prepare_run(b, log));
  ASSERT_NE(reference_key(ref_a), reference_key(ref_b));
  for (int threads : {2, 4}) {
    ReferenceCache cache;
    std::vector<std::shared_ptr<const ReferenceTrajectory>> got(2 * threads);
    std::barrier start(2 * threads);
    std::vector<std::thread> pool;
    for (int i = 0; i < 2 * threads; ++i)
      pool.emplace_back([&, i] {
        start.arrive_and_wait();  // every thread asks at the same moment
        got[i] = cache.get(i % 2 ? ref_b : ref_a);
      });
    for (auto& t : pool) t.join();
    EXPECT_EQ(cache.computations(), 2) << threads << " threads";
    EXPECT_EQ(cache.size(), 2u);
    for (int i = 2; i < 2 * threads; ++i) EXPECT_EQ(got[i].get(), got[i % 2].get()) << "one shared result per key";
    EXPECT_NE(got[0].get(), got[1].get());
    // Deterministic: a fresh computation (another thread, another cache) gives the same bits.
    const ReferenceTrajectory again = compute_reference_run(ref_a);
    EXPECT_EQ(again.q, got[0]->q);
    EXPECT_EQ(again.lambda, got[0]->lambda);
    // Released: the cache forgets the key (holders keep their copy); asked again, it computes again.
    cache.release(ref_a);
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(got[0]->q, again.q);
    EXPECT_EQ(cache.get(ref_a)->q, again.q);
    EXPECT_EQ(cache.computations(), 3);
  }
  // Closed-form problems compute nothing.
  ReferenceCache cache;
  PreparedRun sleigh = prepare_run(spec_for("chaplygin_sleigh", "kkt", "dopri5", 1, 1e-6), log);
  EXPECT_EQ(cache.get(sleigh)->source, ReferenceSource::kClosedForm);
  EXPECT_EQ(cache.computations(), 0);
}

TEST(ReferenceCache, TheKeyIgnoresTheRunsOwnMethodAndTolerances) {
  std::ostringstream log;
  RunSpec a = spec_for("four_bar", "kkt", "dopri5", 1, 1e-6);
  RunSpec b = spec_for("four_bar", "schur", "radau5", 1, 1e-9);
  b.dt = 1e-4;
  b.options.baumgarte_alpha = 3;
  EXPECT_EQ(reference_key(reference_spec(prepare_run(a, log))), reference_key(reference_spec(prepare_run(b, log))));
  RunSpec c = a;
  c.output_every = 0.1;  // another grid
  EXPECT_NE(reference_key(reference_spec(prepare_run(a, log))), reference_key(reference_spec(prepare_run(c, log))));
  RunSpec d = a;
  d.reference.rtol = 1e-11;
  EXPECT_NE(reference_key(reference_spec(prepare_run(a, log))), reference_key(reference_spec(prepare_run(d, log))));
}

// ------------------------------------------------------------------------ the CLI and the results file

std::vector<double> summary_column(const std::string& path, const std::string& name) {
  H5::H5File f(path, H5F_ACC_RDONLY);
  H5::DataSet ds = f.openDataSet("/summary/" + name);
  hsize_t n = 0;
  ds.getSpace().getSimpleExtentDims(&n);
  std::vector<double> v(n);
  ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
  return v;
}

double run_attribute(const std::string& path, const std::string& run, const std::string& name) {
  H5::H5File f(path, H5F_ACC_RDONLY);
  double v = NAN;
  f.openGroup("/runs/" + run).openAttribute(name).read(H5::PredType::NATIVE_DOUBLE, &v);
  return v;
}

TEST(ReferenceCli, NewColumnsAndAttributesRoundTripThroughInfo) {
  testing::ScratchDir dir("reference_cli");
  testing::write_text(dir / "wp.ini", R"(
[run]
integrator = dopri5
t_end = 2
rtol = 1e-7
atol = 1e-9
out = wp.h5
[reference]
rtol = 1e-12
[run.pendulum]
problem = pendulum_polar
formulation = kkt
[run.pendulum_schur]
problem = pendulum_polar
formulation = schur
[run.sleigh]
problem = chaplygin_sleigh
formulation = kkt
[run.substituted]
problem = pendulum_polar
formulation = substituted
)");
  const auto r = dir.run("run wp.ini");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One reference run for the three pendulum runs (same problem, parameters, initial data, grid).
  size_t announced = 0;
  for (size_t at = r.out.find("reference run kkt/dopri5"); at != std::string::npos;
       at = r.out.find("reference run kkt/dopri5", at + 1))
    ++announced;
  EXPECT_EQ(announced, 1u) << r.out;
  const auto info = dir.run("info wp.h5");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  std::map<std::string, std::vector<std::string>> rows;
  std::vector<std::string> header;
  std::istringstream lines(info.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string x; cells >> x;) c.push_back(x);
    if (c[0] == "run_id") header = c;
    else rows[c[0]] = c;
  }
  ASSERT_EQ(header.size(), 21u) << info.out;
  auto cell = [&](const std::string& run, const std::string& column) {
    const auto it = std::find(header.begin(), header.end(), column);
    EXPECT_NE(it, header.end()) << column;
    return rows.at(run).at(static_cast<size_t>(it - header.begin()));
  };
  EXPECT_EQ(cell("pendulum", "ref_source"), "reference_run");
  EXPECT_EQ(cell("sleigh", "ref_source"), "closed_form");
  EXPECT_EQ(cell("pendulum", "err_vs_ref"), "-");  // still the closed-form q distance only
  EXPECT_EQ(cell("substituted", "lam_err_max"), "-");  // substituted has no multipliers: "-", not 0
  // The sleigh has neither explicit time dependence nor forces: no energy balance, "-" not 0. pendulum_polar
  // states a force (fx, here 0): its balance is recorded beside the energy error.
  EXPECT_EQ(cell("sleigh", "balance"), "-");
  EXPECT_NE(cell("pendulum", "balance"), "-");
  const auto scd = summary_column(dir / "wp.h5", "scd");
  const auto q_err = summary_column(dir / "wp.h5", "q_error_max");
  const auto cpu = summary_column(dir / "wp.h5", "cpu_time_s");
  const auto rhs = summary_column(dir / "wp.h5", "rhs_evals");
  ASSERT_EQ(scd.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(scd[i], 5) << i;  // rtol 1e-7 over 2 s
    EXPECT_LT(scd[i], 10) << i;
    EXPECT_GT(cpu[i], 0) << i;
  }
  const char* ids[] = {"pendulum", "pendulum_schur", "sleigh", "substituted"};
  for (size_t i = 0; i < 4; ++i) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", scd[i]);
    EXPECT_EQ(cell(ids[i], "scd"), std::isnan(scd[i]) ? "-" : std::string(text)) << ids[i];
    std::snprintf(text, sizeof text, "%.2e", q_err[i]);
    EXPECT_EQ(cell(ids[i], "q_err_max"), text) << ids[i];
    std::snprintf(text, sizeof text, "%.0f", rhs[i]);
    EXPECT_EQ(cell(ids[i], "rhs_evals"), text) << ids[i];
    // The run attributes hold the same numbers as /summary.
    EXPECT_EQ(run_attribute(dir / "wp.h5", ids[i], "q_error_max"), q_err[i]) << ids[i];
    const double a = run_attribute(dir / "wp.h5", ids[i], "scd");
    EXPECT_TRUE(a == scd[i] || (std::isnan(a) && std::isnan(scd[i]))) << ids[i];
  }
  // info --run shows the [reference] settings and the run's error figures as recorded.
  const auto opts = dir.run("info wp.h5 --run pendulum");
  ASSERT_EQ(opts.exit_code, 0) << opts.err;
  EXPECT_NE(opts.out.find("reference.rtol = 1e-12"), std::string::npos) << opts.out;
  EXPECT_NE(opts.out.find("reference.compute = true"), std::string::npos) << opts.out;
  EXPECT_NE(opts.out.find("reference_source = reference_run"), std::string::npos) << opts.out;
  EXPECT_NE(opts.out.find("scd = "), std::string::npos) << opts.out;

  // Without a [reference] section `run` computes no reference run: the pendulum's figures are "-".
  const auto plain = dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 1 --out p.h5");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("reference run"), std::string::npos) << plain.out;
  EXPECT_TRUE(std::isnan(summary_column(dir / "p.h5", "scd")[0]));
  // A bad [reference] setting: one line, exit 1, nothing runs.
  const auto bad = dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 1 "
                           "--reference-integrator rk4 --out b.h5");
  testing::expect_one_line_error(bad, 1, {"reference.integrator"});
  const auto refused = dir.run("run --problem pendulum_polar --formulation kkt --integrator dopri5 --t-end 1 "
                               "--reference-formulation fernandez_bloch --out b.h5");
  testing::expect_one_line_error(refused, 1, {"reference", "fernandez_bloch"});
}

}  // namespace
}  // namespace clm
