// Mechanism files (docs/mechanism-files.md, mechanism_files/): the expression graph and its symbolic derivatives
// against finite differences, the tape over double and ceres::Jet against the graph's folding, file versions
// of zoo problems against the compiled problems (every model term at random states, and whole runs under
// several formulations), and the one-line errors with file, line and column.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "input_error_of.hpp"
#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "recorded_run.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/input_file.hpp"
#include "core/sha256.hpp"
#include "core/simulate.hpp"
#include "mechanism_files/expression_parser.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "mechanism_files/tape.hpp"

using namespace clm;

namespace {

const std::string kData = std::string(CLMBENCH_SOURCE_DIR) + "/tests/data/mechanisms/";

// Symbols x, y (inputs 0, 1) and a = 0.7 for the graph tests.
struct XY {
  ExpressionGraph g{2};
  ExpressionSymbols s;
  XY() {
    s.name = [this](std::string_view n) -> std::optional<int> {
      if (n == "x") return 0;
      if (n == "y") return 1;
      if (n == "a") return g.constant(0.7);
      return std::nullopt;
    };
    s.velocity = [](std::string_view) -> std::optional<int> { return std::nullopt; };
    s.known = [] { return std::string("x, y, a"); };
  }
  double eval(int node, double x, double y) {
    Tape tape(g, {node});
    std::vector<double> r(std::max(tape.registers(), 2));
    r[0] = x;
    r[1] = y;
    tape.run(r.data());
    return r[tape.output_register(0)];
  }
};

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

using clm::testing::error_of;

}  // namespace

// Every function and operator: the symbolic derivative agrees with central differences of the tape.
TEST(ExpressionGraph, SymbolicDerivativesAgreeWithCentralDifferences) {
  const char* exprs[] = {"x*y + a*x^3 - y/x", "sin(x)*cos(y) + tan(x*y)", "asin(x/2) + acos(y/3) + atan(x - y)",
                         "atan2(y, x) + atan2(x + 1, y - 2)", "sinh(x) + cosh(y) + tanh(x*y)",
                         "exp(x*y) + log(x^2 + y^2) + sqrt(1 + x^2)", "abs(x - y) + min(x, y) + max(x*y, 1)",
                         "pow(x, y) + x**2.5 + 2^x + (x + y)^-2", "-x^2 + -(y - x)*-a", "x^0 + y^1 + (x*0 + y*1)"};
  for (const char* text : exprs) {
    XY c;
    const int node = parse_expression(text, c.g, c.s);
    for (int k = 0; k < 2; ++k) {
      const int d = c.g.derivative(node, k);
      const double x = 0.63, y = 1.27, h = 1e-5;
      const double exact = c.eval(d, x, y);
      const double cd = k == 0 ? (c.eval(node, x + h, y) - c.eval(node, x - h, y)) / (2 * h)
                               : (c.eval(node, x, y + h) - c.eval(node, x, y - h)) / (2 * h);
      EXPECT_NEAR(exact, cd, 1e-8 * std::max(1.0, std::abs(cd))) << text << " d/d" << (k ? "y" : "x");
    }
  }
}

// The values: the tape computes what the C++ expression computes (to the bit where the operations are the same).
TEST(ExpressionGraph, TapeEvaluatesLikeTheCppExpression) {
  XY c;
  const double x = 0.63, y = 1.27;
  const double want = std::sin(x) * std::cos(y) + 0.7 * x * x * x - y / x + std::atan2(y, x) + std::sqrt(1 + x * x);
  const int node = parse_expression("sin(x)*cos(y) + a*x^3 - y/x + atan2(y, x) + sqrt(1 + x^2)", c.g, c.s);
  EXPECT_NEAR(c.eval(node, x, y), want, 4e-16 * std::abs(want));
  // Precedence and associativity: 2^3^2 = 2^9, -x^2 = -(x^2), 2*3/4*5 = 7.5, 2**-1 = 0.5.
  for (auto [text, value] : {std::pair{"2^3^2", 512.0}, {"-3^2", -9.0}, {"2*3/4*5", 7.5}, {"2**-1", 0.5},
                             {"(1+2)*(3-5)", -6.0}, {"1e-3*1E3 + .5", 1.5}, {"min(2, -1) + max(2, -1)", 1.0}}) {
    XY d;
    const int n = parse_expression(text, d.g, d.s);
    EXPECT_TRUE(d.g.is_constant(n)) << text;
    EXPECT_EQ(d.g.node(n).value, value) << text;
  }
}

// Common subexpressions are one node; x + 0, x * 1, x * 0 and constants are simplified away.
TEST(ExpressionGraph, CommonSubexpressionsAreMerged) {
  XY c;
  const int a = parse_expression("sin(x*y) + sin(y*x)", c.g, c.s);
  const int size_after_first = c.g.size();
  const int b = parse_expression("sin(x*y)", c.g, c.s);
  EXPECT_EQ(c.g.size(), size_after_first);  // nothing new: x*y and sin(x*y) exist
  EXPECT_EQ(c.g.node(a).op, ExprOp::kAdd);
  EXPECT_EQ(c.g.node(a).a, b);
  EXPECT_EQ(c.g.node(a).b, b);
  const int z = parse_expression("(x + 0)*1 - x + y*0", c.g, c.s);
  EXPECT_TRUE(c.g.is_constant(z, 0));
}

// The tape over ceres::Jet carries the same derivatives as the graph's symbolic ones.
TEST(ExpressionGraph, TapeOverJetsGivesTheSymbolicDerivatives) {
  XY c;
  const int node = parse_expression("exp(x*y)*sin(x) + log(1 + y^2)/x + asin(x/3)*tanh(y)", c.g, c.s);
  Tape tape(c.g, {node});
  using J = ceres::Jet<double, 2>;
  std::vector<J> r(std::max(tape.registers(), 2));
  r[0] = J(0.4, 0);
  r[1] = J(-0.9, 1);
  tape.run(r.data());
  const J out = r[tape.output_register(0)];
  for (int k = 0; k < 2; ++k) EXPECT_NEAR(out.v[k], c.eval(c.g.derivative(node, k), 0.4, -0.9), 1e-15 * 10);
}

TEST(ExpressionParser, ErrorsNameThePlace) {
  struct Bad {
    const char* text;
    std::size_t offset;
    const char* message;
  };
  for (const Bad& b : {Bad{"x + ", 4, "expected a number, a name or '(' at the end"}, Bad{"x + z", 4, "unknown symbol 'z'"},
                       Bad{"sin(x", 5, "expected ')'"}, Bad{"foo(x)", 0, "unknown function 'foo'"},
                       Bad{"atan2(x)", 0, "atan2() takes 2 arguments, got 1"}, Bad{"x $ y", 2, "unexpected '$'"},
                       Bad{"1.2.3", 0, "malformed number"}, Bad{"", 0, "empty expression"},
                       Bad{"der(a)", 4, "der() takes the name of a coordinate"}, Bad{"x y", 2, "unexpected 'y'"},
                       // issue 43: numbers beyond a double were "malformed" with every digit echoed
                       Bad{"x*1e999", 2, "number '1e999' is beyond the range of a double (largest 1.8e308)"},
                       Bad{"1e-999 + x", 0, "number '1e-999' is below the smallest positive double"},
                       Bad{"x + 1e400000", 4, "beyond the range of a double"},
                       // issue 43: a non-ASCII operator printed a lone byte
                       Bad{"x \xC3\x97 y", 2, "unexpected character U+00D7"},
                       Bad{"x \xFF y", 2, "unexpected byte 0xFF (not UTF-8)"}}) {
    XY c;
    try {
      parse_expression(b.text, c.g, c.s);
      ADD_FAILURE() << b.text << ": no error";
    } catch (const ExpressionError& e) {
      EXPECT_EQ(e.offset(), b.offset) << b.text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << b.text << ": " << e.what();
    }
  }
  // A 401-digit integer: said in one line of bounded length.
  {
    XY c;
    try {
      parse_expression("x + " + std::string(401, '1'), c.g, c.s);
      ADD_FAILURE() << "a 401-digit integer: no error";
    } catch (const ExpressionError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is beyond the range of a double"), std::string::npos) << what;
      EXPECT_NE(what.find("(401 characters)"), std::string::npos) << what;
      EXPECT_LT(what.size(), 200u) << what;
    }
  }
  // Deep nesting is refused, not a stack overflow.
  XY c;
  EXPECT_THROW(parse_expression(std::string(100000, '(') + "x" + std::string(100000, ')'), c.g, c.s), ExpressionError);
}

struct ZooCase {
  const char* problem;
  std::map<std::string, double> params;
  const char* file = nullptr;  // the file's stem under tests/data/mechanisms when it is not the problem's name
  std::string path() const { return kData + (file ? file : problem) + ".toml"; }
};
// Holonomic, Pfaffian, a generalized force (pendulum_polar with fx, slider_crank's torque and friction), affine
// time-dependent constraints and a configuration-dependent mass matrix (ball_on_turntable), closed loops
// (four_bar, and closed_chain at n = 16, generated by tools/make_closed_chain_mechanism.py), a rolling body with
// a dense mass matrix (rolling_disk): every instantiation kind of TapeProblem but one.
const ZooCase kZooCases[] = {{"chaplygin_sleigh", {}},
                             {"pendulum_cartesian", {}},
                             {"pendulum_polar", {{"fx", 0.7}}},
                             {"ball_on_turntable", {{"W", 1.3}}},
                             {"rolling_disk", {{"R", 0.7}, {"J", 0.2}}},
                             {"four_bar", {}},
                             {"slider_crank", {{"tau", 0.7}, {"f", -1.3}}},
                             {"closed_chain", {{"n", 16}}, "closed_chain_16"},
                             {"iftomm_pendulum", {}}};

// Reverse mode on the tape (Tape::gradient): the gradient of a weighted sum of outputs against forward Jets (the
// same derivatives by another route) and central differences, over every function and operator, with two
// outputs so that the weights and an input read by both are exercised.
TEST(ExpressionGraph, ReverseModeGradientsAgreeWithJetsAndCentralDifferences) {
  const char* exprs[] = {"x*y + a*x^3 - y/x", "sin(x)*cos(y) + tan(x*y)", "asin(x/2) + acos(y/3) + atan(x - y)",
                         "atan2(y, x) + atan2(x + 1, y - 2)", "sinh(x) + cosh(y) + tanh(x*y)",
                         "exp(x*y) + log(x^2 + y^2) + sqrt(1 + x^2)", "abs(x - y) + min(x, y) + max(x*y, 1)",
                         "pow(x, y) + x**2.5 + 2^x + (x + y)^-2", "-x^2 + -(y - x)*-a", "sin(x)^2*y + x^0.5/y"};
  double worst_jet = 0, worst_cd = 0;
  for (const char* text : exprs) {
    XY c;
    const int f = parse_expression(text, c.g, c.s);
    const int h = parse_expression("x*sin(y) + y^2", c.g, c.s);
    const Tape tape(c.g, {f, h});
    const double x = 0.63, y = 1.27, w[2] = {0.8, -1.7};
    std::vector<double> values(tape.ssa_registers()), adjoints(tape.ssa_registers());
    values[0] = x;
    values[1] = y;
    tape.gradient(values.data(), adjoints.data(), w);
    using J = ceres::Jet<double, 2>;
    std::vector<J> r(std::max(tape.registers(), 2));
    r[0] = J(x, 0);
    r[1] = J(y, 1);
    tape.run(r.data());
    const J sum = w[0] * r[tape.output_register(0)] + w[1] * r[tape.output_register(1)];
    auto value = [&](double xx, double yy) {
      std::vector<double> rr(std::max(tape.registers(), 2));
      rr[0] = xx;
      rr[1] = yy;
      tape.run(rr.data());
      return w[0] * rr[tape.output_register(0)] + w[1] * rr[tape.output_register(1)];
    };
    const double step = 1e-5;
    const double cd[2] = {(value(x + step, y) - value(x - step, y)) / (2 * step),
                          (value(x, y + step) - value(x, y - step)) / (2 * step)};
    for (int k = 0; k < 2; ++k) {
      const double scale = std::max(1.0, std::abs(sum.v[k]));
      worst_jet = std::max(worst_jet, std::abs(adjoints[k] - sum.v[k]) / scale);
      worst_cd = std::max(worst_cd, std::abs(adjoints[k] - cd[k]) / scale);
      EXPECT_NEAR(adjoints[k], sum.v[k], 1.5e-15 * scale) << text << " d/d" << (k ? "y" : "x");
      EXPECT_NEAR(adjoints[k], cd[k], 2e-9 * scale) << text << " d/d" << (k ? "y" : "x");
    }
  }
  // Measured: against Jets 5.6e-16 (the same derivatives in another order), against central differences 5.3e-10
  // (their truncation and cancellation error at step 1e-5).
  std::printf("  reverse mode: largest relative difference from Jets %.2e, from central differences %.2e\n", worst_jet,
              worst_cd);
}

// M and c of a file mechanism from reverse mode (TapeProblem::analytic_terms, used from 8 coordinates on) against
// AutoDiffModel's Jet passes over the same tapes (use_analytic = false): closed_chain at n = 16, and a
// gyroscopic 8-coordinate chain written here (a T with terms linear in the velocities, so Da qd - Da^T qd counts).
TEST(MechanismFile, ReverseModeTermsEqualTheJetPasses) {
  std::string gyro = "name = \"gyro_chain\"\ncoordinates = [";
  for (int i = 0; i < 8; ++i) gyro += std::string(i ? ", " : "") + "\"x" + std::to_string(i) + "\"";
  gyro += "]\n[parameters]\nk = { value = 1.5 }\n[energy]\nT = \"";
  for (int i = 0; i < 8; ++i) {
    const std::string xi = "x" + std::to_string(i), xj = "x" + std::to_string((i + 1) % 8);
    gyro += (i ? " + " : "") + std::string("(1 + 0.2*cos(") + xj + "))/2*der(" + xi + ")^2 + 0.1*der(" + xi + ")*der(" +
            xj + ")*sin(" + xi + ") + k*sin(" + xj + ")*der(" + xi + ")";
  }
  gyro += "\"\nV = \"";
  for (int i = 0; i < 8; ++i) gyro += (i ? " + " : "") + std::string("cos(x") + std::to_string(i) + ")";
  gyro += "\"\n[initial]\nq = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]\n";
  const std::string gyro_path = write_temp("gyro_chain.toml", gyro);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (const std::string& path : {kData + "closed_chain_16.toml", gyro_path}) {
    auto reverse = make_model(path, {}, /*use_analytic=*/true);
    auto jets = make_model(path, {}, /*use_analytic=*/false);
    ASSERT_TRUE(reverse->uses_analytic_terms()) << path;
    ASSERT_FALSE(jets->uses_analytic_terms()) << path;
    auto wr = reverse->make_workspace();
    auto wj = jets->make_workspace();
    ModelTerms tr = reverse->make_terms(), tj = jets->make_terms();
    double worst_M = 0, worst_c = 0;
    for (int trial = 0; trial < 10; ++trial) {
      Vec q(jets->n()), qd(jets->n());
      for (int i = 0; i < jets->n(); ++i) {
        q[i] = u(rng);
        qd[i] = u(rng);
      }
      reverse->evaluate(0, q, qd, kMassMatrix | kBias, *wr, tr);
      jets->evaluate(0, q, qd, kMassMatrix | kBias, *wj, tj);
      worst_M = std::max(worst_M, (tr.M - tj.M).lpNorm<Eigen::Infinity>() / tj.M.lpNorm<Eigen::Infinity>());
      worst_c = std::max(worst_c, (tr.c - tj.c).lpNorm<Eigen::Infinity>() / std::max(1.0, tj.c.lpNorm<Eigen::Infinity>()));
    }
    std::printf("  %-60s: reverse mode against Jet passes, M %.2e, c %.2e\n", path.c_str(), worst_M, worst_c);
    EXPECT_EQ(worst_M, 0.0) << path;  // the same tape in double: the same M
    EXPECT_LT(worst_c, 1e-15) << path;
    // Measured 2.2e-16 (closed_chain) and 1.6e-16 (the gyroscopic chain): the same derivatives summed in
    // another order.
    // No heap allocation per evaluation on the reverse path either.
    const Vec q = Vec::Constant(jets->n(), 0.3), qd = Vec::Constant(jets->n(), -0.2);
    clm::testing::AllocationScope scope;
    reverse->evaluate(0, q, qd, kMassMatrix | kBias, *wr, tr);
    EXPECT_EQ(scope.count(), 0u) << path;
  }
}

// A file version of a zoo problem gives the same model terms at random states: M, c, F, A, Adot qd, h, b, the
// energy, and the same default state (to round-off: the files write 0.07 W where the zoo computes it).
TEST(MechanismFile, FileVersionsOfZooProblemsGiveTheSameTerms) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (const ZooCase& zc : kZooCases) {
    const char* name = zc.problem;
    auto zoo = make_model(name, zc.params, false);
    auto file = make_model(zc.path(), zc.params, false);
    ASSERT_EQ(file->n(), zoo->n());
    ASSERT_EQ(file->m(), zoo->m());
    EXPECT_EQ(file->holonomic(), zoo->holonomic()) << name;
    EXPECT_EQ(file->time_dependent(), zoo->time_dependent()) << name;
    EXPECT_EQ(file->has_dynamics_derivatives(), zoo->has_dynamics_derivatives()) << name;
    EXPECT_FALSE(file->gyroscopic());
    EXPECT_EQ(file->parameters(), zoo->parameters()) << name;
    Vec q0z, qd0z, q0f, qd0f;
    zoo->default_initial(q0z, qd0z);
    file->default_initial(q0f, qd0f);
    EXPECT_LT((q0f - q0z).lpNorm<Eigen::Infinity>(), 3e-16 * std::max(1.0, q0z.lpNorm<Eigen::Infinity>())) << name;
    EXPECT_LT((qd0f - qd0z).lpNorm<Eigen::Infinity>(), 3e-16 * std::max(1.0, qd0z.lpNorm<Eigen::Infinity>())) << name;
    auto wz = zoo->make_workspace();
    auto wf = file->make_workspace();
    ModelTerms tz = zoo->make_terms(), tf = file->make_terms();
    const unsigned what = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kEnergy |
                          (zoo->holonomic() ? kConstraintValue : 0u) | (zoo->time_dependent() ? kConstraintRate : 0u);
    double worst = 0;
    for (int trial = 0; trial < 20; ++trial) {
      Vec q(zoo->n()), qd(zoo->n());
      for (int i = 0; i < zoo->n(); ++i) {
        q[i] = u(rng);
        qd[i] = u(rng);
      }
      const double t = 0.1 * trial;
      zoo->evaluate(t, q, qd, what, *wz, tz);
      file->evaluate(t, q, qd, what, *wf, tf);
      auto rel = [&](const auto& a, const auto& b) {
        const double scale = std::max(1.0, b.template lpNorm<Eigen::Infinity>());
        return (a - b).template lpNorm<Eigen::Infinity>() / scale;
      };
      worst = std::max({worst, rel(tf.M, tz.M), rel(tf.c, tz.c), rel(tf.F, tz.F), rel(tf.A, tz.A),
                        rel(tf.Adot_qd, tz.Adot_qd), std::abs(tf.energy() - tz.energy()) / std::max(1.0, std::abs(tz.energy()))});
      if (zoo->holonomic()) worst = std::max(worst, rel(tf.h, tz.h));
      if (zoo->time_dependent()) worst = std::max(worst, rel(tf.b, tz.b));
    }
    std::printf("  %-20s: largest relative difference of M, c, F, A, Adot qd, h, b, energy: %.2e\n", name, worst);
    // Measured 0 for all four: the files write the zoo's expressions, and the symbolic derivatives and the
    // folding of constants reproduce the zoo's operations in the same order (m/2 * (2 x) = m x exactly).
    EXPECT_EQ(worst, 0.0) << name;
  }
}

// Whole runs on the file version and the zoo problem, from the zoo's initial state, agree under every
// formulation that applies.
TEST(MechanismFile, RunsAgreeWithTheZooProblem) {
  struct RunCase {
    int zoo_case;
    const char* formulation;
    const char* integrator;
  };
  const RunCase cases[] = {{0, "kkt", "dopri5"},       {0, "schur", "dopri5"},    {0, "nullspace", "dopri5"},
                           {0, "fernandez_bloch", "dopri5"},                      {8, "kkt", "dopri5"},
                           {0, "penalty", "radau5"},   {1, "kkt", "dopri5"},      {1, "schur", "radau5"},
                           {1, "nullspace", "dopri5"}, {1, "kkt", "rattle"},      {2, "kkt", "dopri5"},
                           {2, "schur", "radau5"},     {3, "kkt", "dopri5"},      {3, "schur", "radau5"},
                           {3, "augmented_lagrangian", "dopri5"},
                           {4, "kkt", "dopri5"},       {4, "nullspace", "dopri5"},
                           {4, "schur", "radau5"},     {5, "kkt", "dopri5"},      {5, "schur", "radau5"},
                           {5, "penalty", "radau5"},   {5, "kkt", "rattle"},      {6, "kkt", "dopri5"},
                           {6, "nullspace", "dopri5"}, {6, "kkt", "dla"},         {7, "kkt", "dopri5"},
                           {7, "schur", "dopri5"}};
  for (const RunCase c : cases) {
    const ZooCase& zc = kZooCases[c.zoo_case];
    clm::testing::RunSettings rs;
    rs.integrator = c.integrator;
    rs.t_end = 3.0;
    rs.output_every = 1.0;
    rs.rtol = rs.atol = 1e-10;
    auto zoo = make_model(zc.problem, zc.params, false);
    Vec q0, qd0;
    zoo->default_initial(q0, qd0);
    const auto zoo_run = clm::testing::record_run(zoo, c.formulation, q0, qd0, rs);
    const auto file_run = clm::testing::record_run(make_model(zc.path(), zc.params, false), c.formulation, q0, qd0, rs);
    ASSERT_EQ(zoo_run.result.status, "ok") << zc.problem << " " << c.formulation << ": " << zoo_run.result.message;
    ASSERT_EQ(file_run.result.status, "ok") << zc.problem << " " << c.formulation << ": " << file_run.result.message;
    // The positions q at every sample: the same ODE with the same terms to the bit, so the same run to the bit
    // (the sleigh's nullspace and fernandez_bloch runs too: the file states the zoo's velocity basis and
    // transversal frame; without them nullspace computed another basis, 4.1e-11 apart at rtol 1e-10).
    const double diff = clm::testing::max_q_difference(file_run, zoo_run);
    std::printf("  %-20s %-20s %-8s: |q_file - q_zoo| %.2e\n", zc.problem, c.formulation, c.integrator, diff);
    EXPECT_EQ(diff, 0.0) << zc.problem << " " << c.formulation << " " << c.integrator;
  }
}

// Parameters are overridden like a zoo problem's; unknown names and values out of range are refused in one line.
TEST(MechanismFile, ParametersAreOverriddenAndChecked) {
  auto model = make_model(kData + "chaplygin_sleigh.toml", {{"b", 0.5}});
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  EXPECT_DOUBLE_EQ(qd0[1], 0.8 * 0.5);  // the initial state's expression in b
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  model->evaluate(0.0, q0, qd0, kConstraintJacobian, *ws, t);
  EXPECT_EQ(t.A(0, 2), -0.5);
  const std::string unknown = error_of([] { make_model(kData + "chaplygin_sleigh.toml", {{"mass", 2.0}}); });
  EXPECT_NE(unknown.find("unknown parameter 'mass'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("known: m, Ic, b"), std::string::npos) << unknown;
  const std::string below = error_of([] { make_model(kData + "chaplygin_sleigh.toml", {{"m", -1.0}}); });
  EXPECT_NE(below.find("chaplygin_sleigh.toml:9:5: parameter m = -1 is below its min 0 (set to -1)"), std::string::npos) << below;
}

// Each error is one line naming the file, line and column.
TEST(MechanismFile, ErrorsAreOneLineWithFileLineAndColumn) {
  const std::string head = "name = \"e\"\ncoordinates = [\"x\", \"y\"]\n[parameters]\nk = 2\n";
  struct Bad {
    const char* body;
    const char* expected;
  };
  const Bad cases[] = {
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\nV = \"k*z\"\n[initial]\nq = [0, 0]\n",
       ":7:8: unknown symbol 'z' (known: x, y, der(x), der(y), t, pi, k) in V"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\nV = \"k*der(x)\"\n[initial]\nq = [0, 0]\n",
       ":7:6: V depends on der(x)"},
      {"[energy]\nT = \"der(x)^4 + der(y)^2\"\n[initial]\nq = [0, 0]\nqd = [1, 1]\n",
       ":6:6: T is not quadratic in the velocities"},
      {"[energy]\nT = \"der(x)^2 - der(y)^2\"\n[initial]\nq = [0, 0]\n",
       ":6:6: the mass matrix d2T/dqd2 is not positive definite at the initial state"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\nV = \"log(x)\"\n[initial]\nq = [0, 0]\n",
       ":7:6: V is not finite at the initial state"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\n[constraints]\nvelocity = [\"x*der(x)^2\"]\n[initial]\nq = [1, 0]\nqd = [1, 1]\n",
       ":8:14: this velocity row is not linear in the velocities"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\n[constraints]\nposition = [\"x - der(y)\"]\n[initial]\nq = [1, 0]\n",
       ":8:14: position row depends on der(y)"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\n[initial]\nq = [0]\n", ":8:5: q has 1 entries for 2 coordinates"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\n[initial]\nq = [0, 0]\n[let]\nk = \"x\"\n", ":10:5: duplicate name 'k'"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\nW = \"0\"\n[initial]\nq = [0, 0]\n",
       ":7:5: unknown key 'W' in [energy] (known: T, V)"},
      {"[energy]\nT = \"der(x)^2 + der(y)^2\"\n[initial]\nq = [0, 0]\n[let]\nu = \"w\"\nw = \"u\"\n",
       ":10:6: [let] names refer to each other in a cycle: u -> w -> u"},
      {"[energy\nT = 1\n", ":5:8: not TOML"},
  };
  for (const Bad& b : cases) {
    const std::string path = write_temp("bad.toml", head + b.body);
    const std::string message = error_of([&] { make_model(path); });
    EXPECT_NE(message.find(path + b.expected), std::string::npos) << "expected: " << b.expected << "\ngot: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(error_of([] { make_model("no/such/file.toml"); }).find("no/such/file.toml"), std::string::npos);
}

// Evaluating a file mechanism's terms allocates nothing once the thread's registers are sized.
TEST(MechanismFile, NoHeapAllocationPerEvaluation) {
  for (const char* name : {"chaplygin_sleigh", "pendulum_cartesian"}) {
    auto model = make_model(kData + name + ".toml");
    auto ws = model->make_workspace();
    ModelTerms t = model->make_terms();
    Vec q0, qd0;
    model->default_initial(q0, qd0);
    const unsigned what = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kEnergy |
                          (model->holonomic() ? kConstraintValue : 0u);
    model->evaluate(0.0, q0, qd0, what, *ws, t);
    clm::testing::AllocationScope scope;
    for (int i = 0; i < 10; ++i) model->evaluate(0.0, q0, qd0, what, *ws, t);
    EXPECT_EQ(scope.count(), 0u) << name;
  }
}

// mechanisms/spring_pendulum.toml, a mechanism the zoo lacks, against an independent reference: the polar
// equations of motion derived by hand (in the file's header comment) and integrated here by classical RK4 at a
// step whose error is far below the comparison's band; and its energy, which the motion conserves.
TEST(MechanismFile, SpringPendulumAgreesWithItsHandDerivedPolarEquations) {
  const std::string path = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/spring_pendulum.toml";
  const double m = 1.0, k = 40.0, L0 = 1.0, g = 9.81, t_end = 5.0;
  auto model = make_model(path);
  ASSERT_EQ(model->n(), 2);
  ASSERT_EQ(model->m(), 0);
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  // Polar state (r, theta, r', theta') from the file's initial state.
  const double r0 = std::hypot(q0[0], q0[1]), th0 = std::atan2(q0[0], -q0[1]);
  const double rd0 = (q0[0] * qd0[0] + q0[1] * qd0[1]) / r0;
  const double thd0 = (-q0[1] * qd0[0] + q0[0] * qd0[1]) / (r0 * r0);
  EXPECT_NEAR(r0, 1.1 * L0, 1e-15);
  EXPECT_NEAR(th0, 0.6, 1e-15);
  auto polar = [&](const std::array<double, 4>& s) {
    const double r = s[0], th = s[1], rd = s[2], thd = s[3];
    return std::array<double, 4>{rd, thd, r * thd * thd - k / m * (r - L0) + g * std::cos(th),
                                 -(2 * rd * thd + g * std::sin(th)) / r};
  };
  std::array<double, 4> s{r0, th0, rd0, thd0};
  const int steps = 50000;  // h = 1e-4: RK4's error ~ 1e-13 here (halving h changes the end state by 1.6e-14)
  const double h = t_end / steps;
  for (int i = 0; i < steps; ++i) {
    auto add = [](const std::array<double, 4>& a, const std::array<double, 4>& b, double c) {
      return std::array<double, 4>{a[0] + c * b[0], a[1] + c * b[1], a[2] + c * b[2], a[3] + c * b[3]};
    };
    const auto k1 = polar(s), k2 = polar(add(s, k1, h / 2)), k3 = polar(add(s, k2, h / 2)), k4 = polar(add(s, k3, h));
    for (int j = 0; j < 4; ++j) s[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  }
  const double x_ref = s[0] * std::sin(s[1]), y_ref = -s[0] * std::cos(s[1]);

  auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
  Vec y0, y_end;
  f->initial_state(q0, qd0, y0);
  auto integ = integrator_registry().get("dopri5").make();
  SimulationSettings sim;
  sim.t_end = t_end;
  sim.output_every = t_end;
  IntegratorSettings settings;
  settings.rtol = settings.atol = 1e-13;
  double worst_energy = 0;
  auto ws = model->make_workspace();
  ModelTerms terms = model->make_terms();
  model->evaluate(0.0, q0, qd0, kEnergy, *ws, terms);
  const double e0 = terms.energy();
  const SimulationResult r = simulate(*f, *integ, y0, sim, settings, [&](double, const Vec& y) {
    y_end = y;
    model->evaluate(0.0, y.head(2), y.tail(2), kEnergy, *ws, terms);
    worst_energy = std::max(worst_energy, std::abs(terms.energy() - e0) / std::abs(e0));
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  const double err = std::hypot(y_end[0] - x_ref, y_end[1] - y_ref);
  std::printf("  spring_pendulum: |(x, y) - polar reference| %.2e at t = %g, relative energy error %.2e\n", err, t_end,
              worst_energy);
  // Measured 3.3e-13 and 2.8e-13 (dopri5 at rtol 1e-13; the reference's own error ~1.6e-14).
  EXPECT_LT(err, 2e-12);
  EXPECT_LT(worst_energy, 1e-12);
}

// mechanisms/coin_on_incline.toml against its closed form (derived in the file's header comment from
// Lagrange-d'Alembert), under kkt and nullspace; the energy is conserved too.
TEST(MechanismFile, CoinOnInclineFollowsItsClosedForm) {
  const std::string path = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/coin_on_incline.toml";
  const double m = 1.0, a = 0.5, alpha = 0.3, g = 9.81, C = m * a * a / 2, t_end = 5.0;
  auto model = make_model(path);
  ASSERT_EQ(model->n(), 4);
  ASSERT_EQ(model->m(), 2);
  ASSERT_FALSE(model->holonomic());
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  const double phi0 = q0[2], omega = qd0[2];
  const double Q = m * g * a * std::sin(alpha) / ((C + m * a * a) * omega), P = qd0[3] + Q * std::sin(phi0);
  auto closed = [&](double t) {
    const double phi = phi0 + omega * t, s = std::sin(phi), c = std::cos(phi), s0 = std::sin(phi0), c0 = std::cos(phi0);
    Vec q(4);
    q[0] = q0[0] + a * (P * (s - s0) / omega - Q * (s * s - s0 * s0) / (2 * omega));
    q[1] = q0[1] + a * (-P * (c - c0) / omega - Q * (t / 2 - (std::sin(2 * phi) - std::sin(2 * phi0)) / (4 * omega)));
    q[2] = phi;
    q[3] = q0[3] + P * t + Q * (c - c0) / omega;
    return q;
  };
  for (const char* formulation : {"kkt", "nullspace"}) {
    auto f = formulation_registry().get(formulation).make(model, FormulationOptions{});
    Vec y0;
    f->initial_state(q0, qd0, y0);
    auto integ = integrator_registry().get("dopri5").make();
    SimulationSettings sim;
    sim.t_end = t_end;
    sim.output_every = 0.5;
    IntegratorSettings settings;
    settings.rtol = settings.atol = 1e-12;
    double worst = 0;
    const SimulationResult r = simulate(*f, *integ, y0, sim, settings, [&](double t, const Vec& y) {
      worst = std::max(worst, (y.head(4) - closed(t)).lpNorm<Eigen::Infinity>());
    });
    ASSERT_EQ(r.status, "ok") << r.message;
    std::printf("  coin_on_incline %-9s: max |q - closed form| over [0, %g] %.2e\n", formulation, t_end, worst);
    // Measured 1.7e-12 (kkt) and 2.4e-11 (nullspace, whose error control acts on (q, v)) at rtol 1e-12.
    EXPECT_LT(worst, std::string(formulation) == "kkt" ? 5e-12 : 6e-11) << formulation;
  }
}

// mechanisms/bead_on_rotating_hoop.toml (time-dependent holonomic rows: the rheonomic instantiation) against the
// reduced equation theta'' = sin(theta) (W^2 cos(theta) - g/R), integrated here by RK4, and its Jacobi integral.
TEST(MechanismFile, BeadOnRotatingHoopFollowsItsReducedEquation) {
  const std::string path = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/bead_on_rotating_hoop.toml";
  const double R = 0.5, W = 6.0, g = 9.81, t_end = 5.0;
  auto model = make_model(path);
  ASSERT_TRUE(model->holonomic());
  ASSERT_TRUE(model->time_dependent());
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  // Reference: theta(t) at the sample times by RK4 (h = 1e-5).
  auto rhs = [&](double th, double thd) { return std::array<double, 2>{thd, std::sin(th) * (W * W * std::cos(th) - g / R)}; };
  std::vector<double> theta_ref;
  {
    double th = 0.8, thd = 0.5;
    const int per_sample = 50000;  // samples every 0.5 s
    const double h = 0.5 / per_sample;
    theta_ref.push_back(th);
    for (int s = 0; s < 10; ++s) {
      for (int i = 0; i < per_sample; ++i) {
        const auto k1 = rhs(th, thd), k2 = rhs(th + h / 2 * k1[0], thd + h / 2 * k1[1]);
        const auto k3 = rhs(th + h / 2 * k2[0], thd + h / 2 * k2[1]), k4 = rhs(th + h * k3[0], thd + h * k3[1]);
        th += h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]);
        thd += h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]);
      }
      theta_ref.push_back(th);
    }
  }
  auto jacobi = [&](const Vec& q, const Vec& qd, double t) {
    // theta' from the velocity in the hoop's plane: the component along e_theta = (cos th cos Wt, cos th sin Wt, sin th).
    const double rho = std::hypot(q[0], q[1]), th = std::atan2(rho, -q[2]);
    const double thd = (qd[0] * std::cos(th) * std::cos(W * t) + qd[1] * std::cos(th) * std::sin(W * t) + qd[2] * std::sin(th)) / R;
    return R * R * thd * thd / 2 - R * R * W * W * std::sin(th) * std::sin(th) / 2 - g * R * std::cos(th);
  };
  const double j0 = jacobi(q0, qd0, 0.0);
  auto f = formulation_registry().get("kkt").make(model, FormulationOptions{});
  Vec y0;
  f->initial_state(q0, qd0, y0);
  auto integ = integrator_registry().get("dopri5").make();
  SimulationSettings sim;
  sim.t_end = t_end;
  sim.output_every = 0.5;
  IntegratorSettings settings;
  settings.rtol = settings.atol = 1e-12;
  double worst_theta = 0, worst_jacobi = 0;
  int k = 0;
  const SimulationResult r = simulate(*f, *integ, y0, sim, settings, [&](double t, const Vec& y) {
    const double th = std::atan2(std::hypot(y[0], y[1]), -y[2]);
    worst_theta = std::max(worst_theta, std::abs(th - theta_ref[k++]));
    worst_jacobi = std::max(worst_jacobi, std::abs(jacobi(y.head(3), y.tail(3), t) - j0));
  });
  ASSERT_EQ(r.status, "ok") << r.message;
  ASSERT_EQ(k, 11);
  std::printf("  bead_on_rotating_hoop: max |theta - reduced RK4| %.2e, max |Jacobi integral - J0| %.2e (J0 = %.4f)\n",
              worst_theta, worst_jacobi, j0);
  // Measured 1.1e-11 and 8.7e-12 (kkt + dopri5 at rtol 1e-12, no stabilization: the drift of the rows is in it).
  EXPECT_LT(worst_theta, 5e-11);
  EXPECT_LT(worst_jacobi, 4e-11);
}

// `clmbench mechanism check FILE` from the command line: one line per fact, and a bad file one line with its
// position and exit 1; a run on a file records PATH@sha256:HEX and refuses other contents on a re-run.
TEST(MechanismFile, CheckCommandAndIdentityFromTheCommandLine) {
  clm::testing::ScratchDir dir("mechanism_check");
  const std::string coin = std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/coin_on_incline.toml";
  const auto ok = dir.run("mechanism check " + coin);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const char* line : {"n = 4: x [m], y [m], phi [rad], psi [rad]", "m = 2 (Pfaffian A(q) qd + b = 0)",
                           "rank A(q0)            2 of m = 2", "|A qd0 + b| = 0 (consistent)",
                           "integrability         not integrable", "problems found        none"})
    EXPECT_NE(ok.out.find(line), std::string::npos) << line << "\n" << ok.out;
  std::ofstream(dir / "bad.toml") << "name = \"e\"\ncoordinates = [\"x\"]\n[energy]\nT = \"der(x)^2/2\"\nV = \"k*x\"\n[initial]\nq = [0]\n";
  const auto bad = dir.run("mechanism check bad.toml");
  EXPECT_EQ(bad.exit_code, 1);
  ASSERT_EQ(bad.err_lines().size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("bad.toml:5:6: unknown symbol 'k'"), std::string::npos) << bad.err;

  // export: the header on standard output or whole at --out; the file's error in one line (exit 1); an
  // unwritable --out is an output error (exit 2) that leaves nothing behind.
  const auto header = dir.run("mechanism export " + coin);
  ASSERT_EQ(header.exit_code, 0) << header.err;
  EXPECT_NE(header.out.find("struct CoinOnIncline {"), std::string::npos) << header.out;
  const auto written = dir.run("mechanism export " + coin + " --out coin.hpp");
  ASSERT_EQ(written.exit_code, 0) << written.err;
  std::ifstream in(dir / "coin.hpp");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, header.out);
  const auto bad_export = dir.run("mechanism export bad.toml");
  EXPECT_EQ(bad_export.exit_code, 1);
  EXPECT_EQ(bad_export.err_lines().size(), 1u) << bad_export.err;
  const auto unwritable = dir.run("mechanism export " + coin + " --out no_such_dir/coin.hpp");
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(unwritable.err_lines().size(), 1u) << unwritable.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "no_such_dir"));
  EXPECT_EQ(dir.run("mechanism export " + coin + " --param m=2").exit_code, 1);

  // A run on a copy of the file, then the copy edited: the recorded configuration refuses to run it again.
  std::filesystem::copy_file(coin, dir / "coin.toml");
  const auto run = dir.run("run --problem coin.toml --formulation kkt --integrator dopri5 --t-end 0.1 --out c.h5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto info = dir.run("info c.h5");
  EXPECT_NE(info.out.find("coin_on_incline_kkt_dopri5  coin.toml@sha256:"), std::string::npos) << info.out;
  std::ofstream(dir / "coin.toml", std::ios::app) << "# edited\n";
  const std::string sha = sha256_hex(read_input_file(coin, "mechanism file", 1u << 20));
  const auto rerun = dir.run("run --problem coin.toml@sha256:" + sha + " --formulation kkt --integrator dopri5 "
                             "--t-end 0.1 --out c2.h5");
  EXPECT_EQ(rerun.exit_code, 1);
  EXPECT_NE(rerun.err.find("mechanism file coin.toml has changed since the result was computed"), std::string::npos)
      << rerun.err;
}
