// The optional sections of a mechanism file (docs/mechanism-files.md, "Optional sections"): a velocity basis and
// a transversal frame (the zoo sleigh's own, so nullspace and fernandez_bloch run as on the zoo problem), a
// closed form (the coin's, against the one derived by hand here), published values and a reference point
// (IFToMM A01, against the zoo's elliptic closed form), the actuated coordinates (the roller racer under
// prescribed_shape, against the zoo's), the recorded points, and their one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "input_error_of.hpp"
#include "clmbench_process.hpp"
#include "recorded_run.hpp"
#include "run_spec_for.hpp"
#include "core/consistency.hpp"
#include "core/problem_registry.hpp"
#include "core/shape_schedule.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/run_summary.hpp"
#include "runs/runner.hpp"

using namespace clm;

namespace {

const std::string kData = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/";
const std::string kShipped = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/";

using clm::testing::error_of;

}  // namespace

// nullspace and fernandez_bloch on the file sleigh, which states the zoo sleigh's velocity basis and transversal
// frame, integrate the zoo's ODE with the zoo's terms: the same runs to the bit (without the sections the file's
// nullspace run differed by 4.1e-11, a computed basis; fernandez_bloch's by the frame itself).
TEST(MechanismFileSections, VelocityBasisAndFrameMakeTheZoosRuns) {
  auto zoo = make_model("chaplygin_sleigh", {}, false);
  auto file = make_model(kData + "chaplygin_sleigh.toml", {}, false);
  Vec q0, qd0;
  zoo->default_initial(q0, qd0);
  for (const char* formulation : {"nullspace", "fernandez_bloch"}) {
    clm::testing::RunSettings rs;
    rs.t_end = 3.0;
    rs.output_every = 0.5;
    rs.rtol = rs.atol = 1e-10;
    const auto a = clm::testing::record_run(zoo, formulation, q0, qd0, rs);
    const auto b = clm::testing::record_run(file, formulation, q0, qd0, rs);
    ASSERT_EQ(a.result.status, "ok") << a.result.message;
    ASSERT_EQ(b.result.status, "ok") << b.result.message;
    EXPECT_EQ(clm::testing::max_q_difference(b, a), 0.0) << formulation;
  }
}

// mechanisms/coin_on_incline.toml's [closed_form] (coordinates standing for their initial values, qd = d/dt of
// q by the graph) against the closed form written out here, from starts the file does not name.
TEST(MechanismFileSections, ClosedFormIsTheHandDerivedOneFromAnyStart) {
  auto model = make_model(kShipped + "coin_on_incline.toml");
  const double m = 1.0, a = 0.5, alpha = 0.3, g = 9.81, C = m * a * a / 2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  double worst = 0;
  for (int trial = 0; trial < 10; ++trial) {
    Vec q0(4), qd0(4);
    q0 << u(rng), u(rng), u(rng), u(rng);
    const double omega = u(rng) + (trial % 2 ? 2.5 : -2.5), psid0 = u(rng);  // |omega| >= 0.5
    qd0 << a * std::cos(q0[2]) * psid0, a * std::sin(q0[2]) * psid0, omega, psid0;
    const double Q = m * g * a * std::sin(alpha) / ((C + m * a * a) * omega), P = psid0 + Q * std::sin(q0[2]);
    for (double t : {0.0, 0.37, 1.9, 7.5}) {
      const double phi = q0[2] + omega * t, s = std::sin(phi), c = std::cos(phi), s0 = std::sin(q0[2]),
                   c0 = std::cos(q0[2]);
      Vec want_q(4), want_qd(4), q(4), qd(4);
      want_q << q0[0] + a * (P * (s - s0) / omega - Q * (s * s - s0 * s0) / (2 * omega)),
          q0[1] + a * (-P * (c - c0) / omega - Q * (t / 2 - (std::sin(2 * phi) - std::sin(2 * q0[2])) / (4 * omega))), phi,
          q0[3] + P * t + Q * (c - c0) / omega;
      const double psid = P - Q * s;  // rolling: (x', y') = a psi' (cos phi, sin phi)
      want_qd << a * c * psid, a * s * psid, omega, psid;
      ASSERT_TRUE(model->closed_form(t, q0, qd0, q, qd));
      const double scale = 1 + want_q.lpNorm<Eigen::Infinity>() + want_qd.lpNorm<Eigen::Infinity>();
      worst = std::max(worst, std::max((q - want_q).lpNorm<Eigen::Infinity>(), (qd - want_qd).lpNorm<Eigen::Infinity>()) / scale);
    }
  }
  std::printf("  coin_on_incline [closed_form] against the hand-written closed form: %.2e (relative)\n", worst);
  EXPECT_LT(worst, 1e-15);  // the same formulas evaluated in another order: measured 2.7e-16
  // A start outside the formula (omega = 0 divides by zero): no closed form, so the error columns say "-".
  Vec q0 = Vec::Zero(4), qd0 = Vec::Zero(4), q(4), qd(4);
  EXPECT_FALSE(model->closed_form(1.0, q0, qd0, q, qd));
}

// A run of the coin from the file's own start is measured against the file's closed form (error_vs_reference).
TEST(MechanismFileSections, RunsAreMeasuredAgainstTheFilesClosedForm) {
  auto model = make_model(kShipped + "coin_on_incline.toml");
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  clm::testing::RunSettings rs;
  rs.t_end = 5.0;
  rs.output_every = 0.5;
  const auto run = clm::testing::record_run(model, "kkt", q0, qd0, rs);
  ASSERT_EQ(run.result.status, "ok") << run.result.message;
  RunSummaryAccumulator acc(*model, q0, qd0, false, AccuracySettings{.t_end = 5.0, .rtol = 1e-12, .atol = 1e-14});
  for (std::size_t k = 0; k < run.t.size(); ++k) acc.add(run.t[k], run.obs[k]);
  const RunSummary s = acc.finish();
  EXPECT_EQ(s.reference_source, "closed_form");
  std::printf("  coin_on_incline kkt + dopri5 (rtol 1e-12): q_error_max %.2e against [closed_form]\n", s.q_error_max);
  // Measured 6.2e-13 (MechanismFile.CoinOnInclineFollowsItsClosedForm: 1.7e-12 over other samples).
  EXPECT_GT(s.q_error_max, 0.0);
  EXPECT_LT(s.q_error_max, 2e-12);
}

// [reference] and [points] of the file version of IFToMM A01: the values (computed by mpmath) agree with the zoo
// problem's elliptic closed form (Landen/AGM Jacobi functions): two independent computations; they are given at
// the file's parameters only, and the first point is the run's reference point.
TEST(MechanismFileSections, PublishedValuesAndReferencePoint) {
  auto file = make_model(kData + "iftomm_pendulum.toml");
  const PublishedReference* pub = file->published_reference();
  ASSERT_NE(pub, nullptr);
  EXPECT_EQ(pub->source, "IFToMM-library");
  EXPECT_EQ(pub->t, 1.0);
  ASSERT_EQ(pub->lambda.size(), 1);
  auto zoo = make_model("iftomm_pendulum");
  Vec q0, qd0, q(2), qd(2);
  zoo->default_initial(q0, qd0);
  ASSERT_TRUE(zoo->closed_form(1.0, q0, qd0, q, qd));
  const double dq = (q - pub->q).lpNorm<Eigen::Infinity>(), dqd = (qd - pub->qd).lpNorm<Eigen::Infinity>();
  std::printf("  iftomm_pendulum [reference] against the zoo's closed form at t = 1: q %.1e, qd %.1e\n", dq, dqd);
  EXPECT_LT(dq, 5e-16);  // the zoo's sn, cn to round-off: measured 1.7e-16
  EXPECT_LT(dqd, 5e-15);  // measured 1.6e-15
  // Other parameter values: withheld, and why.
  auto moved = make_model(kData + "iftomm_pendulum.toml", {{"L", 1.1}});
  EXPECT_EQ(moved->published_reference(), nullptr);
  EXPECT_EQ(moved->published_reference_withheld(),
            "the published values [IFToMM-library] hold for the file's parameters, and param.L = 1.1 (file: 1)");
  // The reference point: P1 = (x, y), in m.
  const ReferencePoint* point = file->reference_point();
  ASSERT_NE(point, nullptr);
  EXPECT_EQ(point->name, "P1");
  EXPECT_EQ(point->unit, "m");
  ASSERT_EQ(point->size(), 2);
  Vec at(2);
  point->evaluate(pub->q, at);
  EXPECT_EQ(at, pub->q);
  // The first point of several: the sleigh's blade.
  const auto sleigh = make_model(kData + "chaplygin_sleigh.toml");
  const ReferencePoint* blade = sleigh->reference_point();
  ASSERT_NE(blade, nullptr);
  EXPECT_EQ(blade->name, "blade");
  Vec qs(3);
  qs << 1.0, 2.0, 0.5;
  blade->evaluate(qs, at);
  EXPECT_DOUBLE_EQ(at[0], 1.0 - 0.3 * std::cos(0.5));
  EXPECT_DOUBLE_EQ(at[1], 2.0 - 0.3 * std::sin(0.5));
}

// `clmbench run` on the file to t = 1 compares with the published values as for a zoo benchmark.
TEST(MechanismFileSections, RunPrintsTheFilesPublishedValues) {
  clm::testing::ScratchDir dir("file_published");
  const auto r = dir.run("run --problem " + kData + "iftomm_pendulum.toml --formulation kkt --integrator dopri5 "
                         "--rtol 1e-12 --atol 1e-14 --t-end 1 --out p.h5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("against the published values at t = 1 [IFToMM-library]"), std::string::npos) << r.out;
  const size_t at = r.out.find("\n  x ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find("-9.862917511318753e-01"), std::string::npos) << line;
  EXPECT_GT(std::stod(line.substr(line.find_last_of(' ') + 1)), 12.0) << line;  // measured 12.5 at rtol 1e-12
}

// `actuated` makes the joint angle the racer's shape: prescribed_shape on the file equals the zoo's run to the
// bit (the file's T differentiated symbolically gives the zoo's J^T diag(m) J operations in the same order).
TEST(MechanismFileSections, ActuatedCoordinatesDriveThePrescribedShape) {
  auto zoo = make_model("roller_racer");
  auto file = make_model(kData + "roller_racer.toml");
  EXPECT_EQ(file->actuated_coordinates(), zoo->actuated_coordinates());
  ASSERT_EQ(file->actuated_coordinates(), std::vector<int>{3});
  clm::testing::RunSettings rs;
  rs.t_end = 3.0;
  rs.output_every = 0.25;
  rs.rtol = 1e-12;
  rs.atol = 1e-14;
  ShapeSchedule shape;
  shape.coordinates = {3};
  shape.functions.push_back(ShapeFunction::parse("0.5*sin(6.283185307179586*t)"));
  rs.options.shape = shape;
  Vec q0 = Vec::Zero(4), qd0 = Vec::Zero(4);
  const double phid0 = 0.5 * 6.283185307179586;
  qd0[2] = -0.5 * phid0 / 0.8;  // thetad = -d2 phid / (d1 + d2): the rear axle does not slip
  qd0[3] = phid0;
  const auto a = clm::testing::record_run(zoo, "prescribed_shape", q0, qd0, rs);
  const auto b = clm::testing::record_run(file, "prescribed_shape", q0, qd0, rs);
  ASSERT_EQ(a.result.status, "ok") << a.result.message;
  ASSERT_EQ(b.result.status, "ok") << b.result.message;
  const double diff = clm::testing::max_q_difference(b, a);
  std::printf("  roller_racer prescribed_shape: |q_file - q_zoo| %.2e over 3 s (x travelled %.3f m)\n", diff,
              a.obs.back().q[0]);
  EXPECT_GT(std::abs(a.obs.back().q[0]), 0.01);  // it moved
  EXPECT_EQ(diff, 0.0);
}

// Each section's mistakes: one line with the file, line and column.
TEST(MechanismFileSections, ErrorsAreOneLineWithFileLineAndColumn) {
  const std::string head =
      "name = \"e\"\ncoordinates = [\"x\", \"y\", \"th\"]\n[parameters]\nb = 0.3\n[energy]\n"
      "T = \"(der(x)^2 + der(y)^2 + der(th)^2)/2\"\n[constraints]\n"
      "velocity = [\"-sin(th)*der(x) + cos(th)*der(y) - b*der(th)\"]\n[initial]\nq = [0, 0, 0]\nqd = [1, 0, 0]\n";
  struct Bad {
    const char* body;
    const char* expected;
    bool first = false;  // a top-level key: before the sections (TOML puts a key after [initial] into it)
  };
  const Bad cases[] = {
      {"actuated = [\"z\"]\n", ":1:13: actuated coordinate 'z' is not a coordinate (coordinates: x, y, th)", true},
      {"actuated = [\"x\", \"x\"]\n", ":1:18: actuated coordinate 'x' is named twice", true},
      {"actuated = [\"x\", \"y\", \"th\"]\n", ":1:12: every coordinate is actuated: at least one must be passive", true},
      {"[velocity_basis]\ncolumns = [[\"cos(th)\", \"sin(th)\", \"0\"]]\n",
       ":12:1: [velocity_basis] has 1 columns; it needs n - m = 3 - 1 = 2"},
      {"[velocity_basis]\ncolumns = [[\"1\", \"0\", \"0\"], [\"0\", \"0\", \"1\"]]\n",
       ":12:1: [velocity_basis] is not in the kernel of the constraints at the initial state"},
      {"[velocity_basis]\ncolumns = [[\"cos(th)\", \"sin(th)\", \"0\"], [\"cos(th)\", \"sin(th)\", \"0\"]]\n",
       ":12:1: [velocity_basis] columns are not independent at the initial state"},
      {"[velocity_basis]\ncolumns = [[\"cos(th)\", \"sin(th)\"], [\"0\", \"0\", \"1\"]]\n",
       ":13:12: a column of [velocity_basis] has 2 entries for 3 coordinates"},
      {"[velocity_basis]\ncolumns = [[\"cos(th)*der(x)\", \"sin(th)\", \"0\"], [\"0\", \"0\", \"1\"]]\n",
       ":13:14: [velocity_basis] column 1 entry 1 depends on der(x): it is a function of q only"},
      {"[transversal_frame]\ncolumns = [[\"1\", \"0\", \"0\"]]\n",
       ":12:1: [transversal_frame] does not satisfy A X = I at the initial state"},
      {"[transversal_frame]\ncolumns = [[\"-sin(th)\", \"cos(th)\", \"t\"]]\n",
       ":13:37: [transversal_frame] column 1 entry 3 depends on t: it is a function of q only"},
      {"[closed_form]\nq = [\"x + der(x)*t\", \"y\"]\n", ":13:5: [closed_form] q has 2 entries for 3 coordinates"},
      {"[closed_form]\nq = [\"x + 2*der(x)*t\", \"y\", \"th\"]\nqd = [\"der(x)\", \"0\", \"1\"]\n",
       ":14:23: [closed_form] qd of th is 1 at t = 0, not the initial value 0"},
      {"[closed_form]\nq = [\"x + der(x)*t\", \"y + 1\", \"th\"]\n",
       ":13:23: [closed_form] q of y is 1 at t = 0, not the initial value 0"},
      {"[closed_form]\nq = [\"x + der(x)*t\", \"y\", \"th + w*t\"]\n",
       ":13:33: unknown symbol 'w' (known: x, y, th, der(x), der(y), der(th), t, pi, b) in [closed_form] q of th"},
      {"[reference]\nt = 1\nq = [0, 0, 0]\nqd = [0, 0, 0]\nlambda = [1, 2]\nsource = \"me\"\n",
       ":12:1: [reference] lambda has 2 entries for 1 constraint rows"},
      {"[reference]\nt = 1\nq = [0, 0, 0]\nqd = [0, 0, 0]\n", ":12:1: [reference] needs source"},
      {"[reference]\nt = -1\nq = [0, 0, 0]\nqd = [0, 0, 0]\nsource = \"me\"\n",
       ":13:5: [reference] t must be positive"},
      {"[points]\np = [\"x\", \"y\", \"th\", \"b\"]\n", ":13:5: point p has 4 components: 2 (x, y) or 3 (x, y, z)"},
      {"[points]\np = [\"x\", \"der(y)\"]\n", ":13:12: point p component 2 depends on der(y)"},
      {"[points]\np = { position = [\"x\", \"y\"], colour = \"red\" }\n",
       ":13:39: unknown key 'colour' in point p (known: position, unit)"},
      // A point may move with t, but not the first: it is the run's reference point.
      {"[points]\np = [\"x\", \"y + t\"]\n",
       ":13:12: point p component 2 depends on t: the first point is the run's reference point, a function of q only"},
      {"[points]\np = [\"x\", \"y\"]\nr = [\"x\", \"der(th)*t\"]\n", ":14:12: point r component 2 depends on der(th)"},
      {"[body_velocities]\nu = 3\n", ":13:5: body velocity u must be an expression in q, der(q) and t"},
      {"[body_velocities]\nu = { value = \"der(x)\", colour = \"red\" }\n",
       ":13:34: unknown key 'colour' in body velocity u (known: value, unit, description)"},
      {"[body_velocities]\nu = { unit = \"m/s\" }\n", ":13:5: body velocity u needs value"},
      {"[body_velocities]\nu = \"der(z)\"\n", ":13:10: der() takes the name of a coordinate (got 'z') in body velocity u"},
      {"[body_velocities]\nu = \"der(x)/x\"\n", ":13:6: body velocity u is not finite at the initial state"},
      {"[body_velocities]\n1u = \"der(x)\"\n", ":13:6: body velocity '1u' is not a name"},
  };
  for (const Bad& b : cases) {
    const std::string path = ::testing::TempDir() + "bad_section.toml";
    if (b.first) std::ofstream(path) << b.body << head;
    else std::ofstream(path) << head << b.body;
    const std::string message = error_of([&] { make_model(path); });
    EXPECT_NE(message.find(path + b.expected), std::string::npos) << "expected: " << b.expected << "\ngot: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// Rows that constrain nothing, or everything, or cannot hold together (issue 43: a row "1", a velocity row
// "x - 1" and contradictory rows passed `mechanism check` and failed the run without a place; m = n was accepted
// without a word): the first two refused at the row, the last named by the projection, and no degree of freedom
// refused by every run and reported by `mechanism check`.
TEST(MechanismFileSections, RowsThatConstrainNothingOrEverythingAreSaid) {
  const std::string head =
      "name = \"p\"\ncoordinates = [\"x\", \"y\"]\n[parameters]\nL = 1.0\n[energy]\nT = \"(der(x)^2 + der(y)^2)/2\"\n"
      "V = \"9.81*y\"\n[initial]\nq = [0.6, -0.8]\n[constraints]\n";
  const std::string path = ::testing::TempDir() + "rows.toml";
  auto message = [&](const std::string& rows) {
    std::ofstream(path) << head << rows;
    return error_of([&] { make_model(path); });
  };
  EXPECT_EQ(message("position = [\"1\"]\n"), path + ":11:14: position row depends on no coordinate: h(t) = 0 does not "
                                                   "constrain the motion (it holds at all q or at none)");
  EXPECT_EQ(message("velocity = [\"x - 1\"]\n"), path + ":11:14: velocity row depends on no der(q): A(q) = 0 leaves "
                                                         "the velocities free; a condition on the positions belongs "
                                                         "under position");
  // Contradictory: x^2 + y^2 = L^2 and = 4 L^2 (redundant in A, different in h).
  std::ofstream(path) << head << "position = [\"(x^2 + y^2 - L^2)/2\", \"(x^2 + y^2 - 4*L^2)/2\"]\n";
  auto model = make_model(path);
  Vec q(2), qd(2);
  q << 0.6, -0.8;
  qd << 0, 0;
  const std::string contradiction = error_of([&] { project_onto_constraints(*model, q, qd); });
  EXPECT_NE(contradiction.find("cannot be projected onto h(q) = 0"), std::string::npos) << contradiction;
  EXPECT_NE(contradiction.find("; still off: position row 1 h = "), std::string::npos) << contradiction;
  EXPECT_NE(contradiction.find("position row 2 h = "), std::string::npos) << contradiction;
  EXPECT_NE(contradiction.find("(rows that cannot hold together, or a q0 far from where they meet)"),
            std::string::npos) << contradiction;
  // No degree of freedom: the pendulum's rod and y = -0.8.
  std::ofstream(path) << head << "position = [\"(x^2 + y^2 - L^2)/2\", \"y + 0.8\"]\n";
  RunSpec spec = clm::testing::spec_for(path, "kkt", "rk4");
  std::ostringstream log;
  const std::string fixed = error_of([&] { prepare_run(spec, log); });
  EXPECT_NE(fixed.find("the constraints of problem p leave no degree of freedom: A(q0) has rank 2 = n (2 rows), so "
                       "nothing can move"),
            std::string::npos) << fixed;
  clm::testing::ScratchDir dir("rows_check");
  const clm::testing::ProcessResult check = dir.run("mechanism check " + path);
  EXPECT_EQ(check.exit_code, 4) << check.out << check.err;
  EXPECT_NE(check.out.find("the constraints leave no degree of freedom: rank A(q0) = n = 2"), std::string::npos)
      << check.out;
}

// A run on a file with [points] records their positions at every sample (/points, read here by h5py, independent
// of the suite's HDF5 code) equal to the file's expressions evaluated from the recorded q.
TEST(MechanismFileSections, RunsRecordTheNamedPoints) {
  clm::testing::ScratchDir dir("file_points");
  ASSERT_EQ(dir.run("run --problem " + kData + "roller_racer.toml --formulation kkt --integrator dopri5 --t-end 1 "
                    "--out p.h5")
                .exit_code,
            0);
  const char* script = R"PY(
import h5py, numpy as np
f = h5py.File("p.h5")
g = f["runs"][list(f["runs"])[0]]
s = lambda v: [x.decode() if isinstance(x, bytes) else x for x in v]
print(",".join(s(g["points"].attrs["columns"])), ",".join(s(g["points"].attrs["units"])))
q, p = g["q"][()], g["points"][()]
x, y, th, ph = q.T
d1, d2 = 0.3, 0.5
want = np.stack([x, y, x - d1*np.cos(th) - d2*np.cos(th + ph), y - d1*np.sin(th) - d2*np.sin(th + ph)], axis=1)
print(p.shape[0] == q.shape[0] and p.shape[0] > 10, float(np.abs(p - want).max()) < 1e-15)
)PY";
  clm::testing::write_text(dir / "read.py", script);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() + "' && /usr/bin/python3 read.py > out.txt 2>&1").c_str()), 0)
      << clm::testing::read_text(dir / "out.txt");
  EXPECT_EQ(clm::testing::read_text(dir / "out.txt"),
            "front_axle.x,front_axle.y,rear_axle.x,rear_axle.y m,m,m,m\nTrue True\n");
}

// A point of the spinning hoop moves with t and the bead's speed along the hoop is a body velocity: both are
// recorded at each sample's own time, and the body velocity keeps the bead's Jacobi integral
// (R theta')^2/2 - (R W sin(theta))^2/2 - g R cos(theta) constant, with sin(theta) = rho / R, cos(theta) = -z / R.
TEST(MechanismFileSections, PointsMoveWithTimeAndBodyVelocitiesAreRecorded) {
  RunSpec s;
  s.run_id = "hoop";
  s.problem = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/bead_on_rotating_hoop.toml";
  s.formulation = "kkt";
  s.integrator = "dopri5";
  s.t_end = 3;
  s.output_every = 0.05;
  s.rtol = 1e-10;
  s.atol = 1e-12;
  s.timing_budget = 0;
  std::ostringstream log;
  PreparedRun prepared = prepare_run(s, log);
  const RunRecord r = execute_run(prepared, nullptr, /*keep_samples=*/true);
  ASSERT_EQ(r.status, "ok") << r.message;
  ASSERT_EQ(r.point_columns.size(), 9u);
  EXPECT_EQ(r.point_columns[3], "hoop_side.x");
  ASSERT_EQ(r.body_velocity_columns, (std::vector<std::string>{"speed_along_hoop"}));
  ASSERT_EQ(r.body_velocity_units, (std::vector<std::string>{"m/s"}));
  const double R = 0.5, W = 6.0, g = 9.81;
  double j_min = 1e300, j_max = -1e300, v_max = 0;
  for (size_t k = 0; k < r.samples(); ++k) {
    const double t = r.t[k], *q = &r.q[3 * k], *p = &r.points[9 * k];
    EXPECT_NEAR(p[3], R * std::cos(W * t), 4e-16);  // measured 1.1e-16
    EXPECT_NEAR(p[4], R * std::sin(W * t), 4e-16);
    EXPECT_EQ(p[0], q[0]);
    const double rho = q[0] * std::cos(W * t) + q[1] * std::sin(W * t), v = r.body_velocities[k];
    const double jacobi = v * v / 2 - W * W * rho * rho / 2 + g * q[2];
    j_min = std::min(j_min, jacobi);
    j_max = std::max(j_max, jacobi);
    v_max = std::max(v_max, std::abs(v));
  }
  EXPECT_LT(j_max - j_min, 1e-8 * v_max * v_max);  // measured 9.0e-10 = 3.4e-9 v_max^2 (0.52 m/s)
  EXPECT_GT(v_max, 0.2);
}

// A table header broken by newlines (found by fuzz/fuzz_mechanism.cpp: toml++ 3.3 reaches parse_key on a character
// no key starts with, an assertion in debug builds and __builtin_assume under clang): one line, not TOML.
TEST(MechanismFileSections, ABrokenTableHeaderIsNotToml) {
  const std::string message = error_of([] { parse_mechanism_text("name = \"a\"\n[\n\n@a]\n", "broken.toml"); });
  EXPECT_EQ(message.rfind("broken.toml:2:2: not TOML: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// A TOML number beyond a double (issue 43: 1e999 was "could not be interpreted as a value"): one line saying so,
// at the column where toml++ stops reading it.
TEST(MechanismFileSections, ATomlNumberBeyondADoubleSaysSo) {
  EXPECT_EQ(error_of([] { parse_mechanism_text("name = \"a\"\nx = 1e999\n", "big.toml"); }),
            "big.toml:2:10: number '1e999' is beyond the range of a double (largest 1.8e308)");
}

// Non-ASCII text outside strings and comments (found by fuzz/fuzz_mechanism.cpp: toml++ 3.3's whitespace table
// reaches __builtin_unreachable for U+00A1..U+0499 and others) is refused before toml++ reads it, with its line
// and column; inside strings and comments it is text like any other.
TEST(MechanismFileSections, NonAsciiOutsideStringsIsRefusedInOneLine) {
  const std::string ok = "name = \"a\" # θ, é\ndescription = \"modèle θ \\\\ ☃\"\ncoordinates = [\"x\"]\n"
                         "[energy]\nT = \"\"\"der(x)^2/2 \\\n   \"\"\" # ☃\n[initial]\nq = [0]\n";
  EXPECT_EQ(error_of([&] { parse_mechanism_text(ok, "ok.toml"); }), "");
  EXPECT_EQ(parse_mechanism_text("\xEF\xBB\xBF" + ok, "bom.toml").description, "modèle θ \\ ☃");
  EXPECT_EQ(error_of([] { parse_mechanism_text("name = \"a\"\n  θ = 1\n", "greek.toml"); }),
            "greek.toml:2:3: not TOML: character U+03B8 where only ASCII may stand (outside strings and comments)");
  EXPECT_EQ(error_of([] { parse_mechanism_text("name = \xFF\n", "byte.toml"); }),
            "byte.toml:1:8: not TOML: byte 0xFF (not UTF-8) where only ASCII may stand (outside strings and comments)");
  EXPECT_EQ(error_of([] { parse_mechanism_text("d = \"\"\"a\\\n  \xEF\xB2\xBF\"\"\"\n", "escape.toml"); }),
            "escape.toml:2:3: not TOML: character U+FCBF where only ASCII may stand (outside strings and comments)");
}

// A [let] chain of 20,000 names (a_i = a_{i-1} + 0) crashed every command on the stack (issue 43 item 1, at about
// 10,000 levels): refused in one line naming the file, the line and the chain, above 1,000 levels; 900 levels work.
TEST(MechanismFileSections, ALongLetChainIsRefusedInOneLine) {
  auto chain = [](int levels) {
    std::string text = "name = \"chain\"\ncoordinates = [\"r\"]\n[let]\na0 = \"r\"\n";
    for (int i = 1; i < levels; ++i)
      text += "a" + std::to_string(i) + " = \"a" + std::to_string(i - 1) + " + 0\"\n";
    text += "[energy]\nT = \"der(r)^2/2\"\nV = \"a" + std::to_string(levels - 1) + "^2/2\"\n[initial]\nq = [0.5]\n";
    return text;
  };
  const std::string message = error_of([&] { compile_mechanism(parse_mechanism_text(chain(20000), "chain.toml")); });
  EXPECT_NE(message.find("chain.toml:"), std::string::npos) << message;
  // (the names: the first [let] resolved and the one 1,000 levels below it, "a10000 -> ... -> a9000")
  EXPECT_NE(message.find(": [let] names refer to each other more than 1000 levels deep (a"), std::string::npos) << message;
  EXPECT_NE(message.find(" -> ... -> a"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(error_of([&] { compile_mechanism(parse_mechanism_text(chain(900), "chain.toml")); }), "");
}

// T whose velocity dependence passes through abs, sign, max or min (issue 43 item 2): "quadratic: yes" and the term
// silently dropped before (their symbolic second derivative is 0 almost everywhere; max(der(theta) - 100, 0)^2
// passed the numeric check at three velocities). Refused on the graph in one line; abs of a coordinate is fine.
TEST(MechanismFileSections, NonSmoothVelocityDependenceInTIsRefused) {
  auto file = [](const std::string& T) {
    return "name = \"p\"\ncoordinates = [\"theta\"]\n[parameters]\nr = 0.5\n[energy]\nT = \"" + T +
           "\"\nV = \"-cos(theta)\"\n[initial]\nq = [0.3]\n";
  };
  for (const std::string extra : {"r*abs(der(theta))", "r^2*sign(der(theta))", "r*max(der(theta), 0)",
                                  "max(der(theta) - 100, 0)^2", "min(der(theta), 1)*der(theta)"}) {
    const std::string message =
        error_of([&] { compile_mechanism(parse_mechanism_text(file("der(theta)^2/2 + " + extra), "p.toml")); });
    EXPECT_EQ(message.rfind("p.toml:6:6: T is not quadratic in the velocities: der(theta) passes through ", 0), 0u)
        << extra << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(error_of([&] { compile_mechanism(parse_mechanism_text(file("(1 + abs(theta))*der(theta)^2/2"), "p.toml")); }),
            "");
}

// `[velocity_basis] columns = []` silently meant "no basis" (issue 43): refused in one line; likewise the frame.
TEST(MechanismFileSections, AnEmptyColumnsListIsRefused) {
  for (const std::string section : {"velocity_basis", "transversal_frame"}) {
    const std::string text = "name = \"s\"\ncoordinates = [\"x\", \"y\"]\n[energy]\nT = \"(der(x)^2 + der(y)^2)/2\"\n"
                             "[constraints]\nvelocity = [\"der(y)\"]\n[initial]\nq = [0, 0]\n[" + section + "]\ncolumns = []\n";
    const std::string message = error_of([&] { parse_mechanism_text(text, "s.toml"); });
    EXPECT_EQ(message, "s.toml:10:11: [" + section + "] has columns = [] (no columns): write its columns, or leave "
                       "the section out") << message;
  }
}

// An integer beyond 2^53 (issue 43: "must be a number or a table" for a parameter, and toml++'s empty optional
// dereferenced where it was a min or max) is the nearest double, as a decimal literal is.
TEST(MechanismFileSections, LargeIntegersAreNumbers) {
  const std::string text = "name = \"p\"\ncoordinates = [\"x\"]\n[parameters]\nk = 9007199254740993\n"
                           "c = { value = 1, min = -9007199254740993, max = 9007199254740993 }\n[energy]\n"
                           "T = \"der(x)^2/2\"\nV = \"c*x^2/2 + x/k\"\n[initial]\nq = [9007199254740993]\n";
  MechanismFile f;
  EXPECT_EQ(error_of([&] { f = parse_mechanism_text(text, "p.toml"); }), "");
  ASSERT_EQ(f.parameters.size(), 2u);
  EXPECT_EQ(f.parameters[0].value, 9007199254740992.0);
  EXPECT_EQ(*f.parameters[1].max, 9007199254740992.0);
  EXPECT_EQ(*f.parameters[1].min, -9007199254740992.0);
}
