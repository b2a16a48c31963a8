// clmbench mechanism export (mechanism_files/export_header.hpp): the headers in tests/data/exported are what the
// exporter writes today for the mechanism files beside them (checked first, so they cannot go stale), and,
// compiled here as Problems like any zoo header, they give the files' model terms and runs to round-off, with
// their parameters still parameters: to the bit where the file's constant folding of parameter values gives the
// same doubles as the header's operations at run time (ten of the eleven files), within a few ulps otherwise; and
// the optional sections as the zoo's members.
#include <gtest/gtest.h>

#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "recorded_run.hpp"
#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/simulate.hpp"
#include "mechanism_files/export_equations.hpp"
#include "mechanism_files/export_header.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/problem_capabilities.hpp"
#include "tests/data/exported/ball_on_turntable.hpp"
#include "tests/data/exported/bead_on_rotating_hoop.hpp"
#include "tests/data/exported/cart_pendulum.hpp"
#include "tests/data/exported/chaplygin_sleigh.hpp"
#include "tests/data/exported/coin_on_incline.hpp"
#include "tests/data/exported/four_bar.hpp"
#include "tests/data/exported/iftomm_pendulum.hpp"
#include "tests/data/exported/pendulum_cartesian.hpp"
#include "tests/data/exported/pendulum_polar.hpp"
#include "tests/data/exported/roller_racer.hpp"
#include "tests/data/exported/slider_crank.hpp"

using namespace clm;

namespace {

const std::string kSource = CLMBENCH_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The header from "#pragma once" on (the lines above name the file by the path it was given as).
std::string code_of(const std::string& header) { return header.substr(header.find("#pragma once")); }

// The exported problem with the parameters set (by its kParameters, as the registry sets a zoo problem's).
template <class P>
std::shared_ptr<const Model> exported_model(const std::map<std::string, double>& params) {
  P p;
  for (const auto& spec : P::kParameters)
    if (const auto it = params.find(std::string(spec.name)); it != params.end()) p.*(spec.member) = it->second;
  p.validate();
  return make_model_with_capabilities(p, false);
}

struct Agreement {
  double terms = 0;  // largest relative difference of M, c, F, A, Adot qd, h, b and the energy at random states
  double run = 0;    // max |q_header - q_file| over the samples of a kkt run
};

// Terms at 20 random states and one kkt + dopri5 run of 3 s (rtol 1e-10) from the file's initial state.
Agreement compare(const Model& header, const Model& file) {
  Agreement out;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  auto wh = header.make_workspace();
  auto wf = file.make_workspace();
  ModelTerms th = header.make_terms(), tf = file.make_terms();
  const unsigned what = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kEnergy |
                        (file.has_position_rows() ? kConstraintValue : 0u) | (file.time_dependent() ? kConstraintRate : 0u);
  auto rel = [](const auto& a, const auto& b) {
    if (b.size() == 0) return 0.0;
    return (a - b).template lpNorm<Eigen::Infinity>() / std::max(1.0, b.template lpNorm<Eigen::Infinity>());
  };
  for (int trial = 0; trial < 20; ++trial) {
    Vec q(file.n()), qd(file.n());
    for (int i = 0; i < file.n(); ++i) {
      q[i] = u(rng);
      qd[i] = u(rng);
    }
    header.evaluate(0.1 * trial, q, qd, what, *wh, th);
    file.evaluate(0.1 * trial, q, qd, what, *wf, tf);
    out.terms = std::max({out.terms, rel(th.M, tf.M), rel(th.c, tf.c), rel(th.F, tf.F), rel(th.A, tf.A),
                          rel(th.Adot_qd, tf.Adot_qd),
                          std::abs(th.energy() - tf.energy()) / std::max(1.0, std::abs(tf.energy()))});
    if (file.has_position_rows()) out.terms = std::max(out.terms, rel(th.h, tf.h));
    if (file.time_dependent()) out.terms = std::max(out.terms, rel(th.b, tf.b));
    // [points] and [body_velocities]: the header's points() / body_velocities(), equal at (t, q, qd).
    EXPECT_EQ(header.named_points() != nullptr, file.named_points() != nullptr);
    if (header.named_points() && file.named_points()) {
      const NamedPoints &ph = *header.named_points(), &pf = *file.named_points();
      EXPECT_EQ(ph.columns(), pf.columns());
      EXPECT_EQ(ph.units, pf.units);
      Vec xh(ph.total()), xf(pf.total());
      ph.positions(0.1 * trial, q, xh);
      pf.positions(0.1 * trial, q, xf);
      out.terms = std::max(out.terms, rel(xh, xf));
    }
    EXPECT_EQ(header.body_velocities() != nullptr, file.body_velocities() != nullptr);
    if (header.body_velocities() && file.body_velocities()) {
      const BodyVelocities &bh = *header.body_velocities(), &bf = *file.body_velocities();
      EXPECT_EQ(bh.names, bf.names);
      EXPECT_EQ(bh.units, bf.units);
      EXPECT_EQ(bh.descriptions, bf.descriptions);
      Vec vh(bh.size()), vf(bf.size());
      bh.values(0.1 * trial, q, qd, vh);
      bf.values(0.1 * trial, q, qd, vf);
      out.terms = std::max(out.terms, rel(vh, vf));
    }
  }
  Vec q0, qd0, hq0, hqd0;
  file.default_initial(q0, qd0);
  header.default_initial(hq0, hqd0);
  EXPECT_LT((hq0 - q0).lpNorm<Eigen::Infinity>(), 1e-15 * std::max(1.0, q0.lpNorm<Eigen::Infinity>()));
  EXPECT_LT((hqd0 - qd0).lpNorm<Eigen::Infinity>(), 1e-15 * std::max(1.0, qd0.lpNorm<Eigen::Infinity>()));
  clm::testing::RunSettings rs;
  rs.t_end = 3.0;
  rs.output_every = 1.0;
  rs.rtol = rs.atol = 1e-10;
  const auto unowned = [](const Model& m) { return std::shared_ptr<const Model>(&m, [](const Model*) {}); };
  const auto h = clm::testing::record_run(unowned(header), "kkt", q0, qd0, rs);
  const auto f = clm::testing::record_run(unowned(file), "kkt", q0, qd0, rs);
  EXPECT_EQ(h.result.status, "ok") << h.result.message;
  EXPECT_EQ(f.result.status, "ok") << f.result.message;
  out.run = clm::testing::max_q_difference(h, f);
  return out;
}

struct ExportCase {
  const char* stem;
  std::string file;
  std::map<std::string, double> params;  // non-default values: the header's parameters are parameters
  std::shared_ptr<const Model> (*header)(const std::map<std::string, double>&);
  bool identical = true;  // the header's terms equal the tape's to the bit (below)
};

const ExportCase kCases[] = {
    {"chaplygin_sleigh", kSource + "/tests/data/mechanisms/chaplygin_sleigh.toml", {{"b", 0.45}, {"Ic", 0.7}},
     exported_model<ChaplyginSleighFile>},
    {"pendulum_cartesian", kSource + "/tests/data/mechanisms/pendulum_cartesian.toml", {{"L", 1.3}},
     exported_model<PendulumCartesianFile>},
    {"pendulum_polar", kSource + "/tests/data/mechanisms/pendulum_polar.toml", {{"fx", 0.7}},
     exported_model<PendulumPolarFile>},
    {"ball_on_turntable", kSource + "/tests/data/mechanisms/ball_on_turntable.toml", {{"W", 1.3}},
     exported_model<BallOnTurntableFile>},
    {"slider_crank", kSource + "/tests/data/mechanisms/slider_crank.toml", {{"tau", 0.7}, {"f", -1.3}},
     exported_model<SliderCrankFile>},
    {"four_bar", kSource + "/tests/data/mechanisms/four_bar.toml", {{"L2", 1.1}}, exported_model<FourBarFile>, false},
    {"bead_on_rotating_hoop", kSource + "/mechanisms/bead_on_rotating_hoop.toml", {},
     exported_model<BeadOnRotatingHoop>},
    // The optional sections' members (below): published values and a reference point, actuated coordinates,
    // a closed form.
    {"iftomm_pendulum", kSource + "/tests/data/mechanisms/iftomm_pendulum.toml", {{"L", 1.2}},
     exported_model<IftommPendulumFile>},
    {"roller_racer", kSource + "/tests/data/mechanisms/roller_racer.toml", {{"d2", 0.6}},
     exported_model<RollerRacerFile>},
    {"coin_on_incline", kSource + "/mechanisms/coin_on_incline.toml", {{"alpha", 0.5}},
     exported_model<CoinOnIncline>},
    // A mixed mechanism (position rows, then velocity rows) with named rows: kMixed, kPositionConstraints,
    // kConstraintNames.
    {"cart_pendulum", kSource + "/tests/data/mechanisms/cart_pendulum.toml", {{"L", 0.9}, {"b", 0.3}},
     exported_model<CartPendulum>},
};

}  // namespace

TEST(MechanismExport, TheHeadersAreWhatTheExporterWritesToday) {
  for (const ExportCase& c : kCases) {
    const MechanismFile file = read_mechanism_file(c.file);
    const std::string header = export_header(file);
    const std::string committed = read_text(kSource + "/tests/data/exported/" + c.stem + ".hpp");
    EXPECT_EQ(code_of(header), code_of(committed))
        << c.stem << ": export again (build/clmbench mechanism export " << c.file << " --out tests/data/exported/"
        << c.stem << ".hpp)";
    EXPECT_NE(committed.find("sha256 " + file.sha256), std::string::npos) << c.stem << ": the file changed since";
  }
  EXPECT_EQ(exported_struct_name("my_sleigh"), "MySleigh");
  EXPECT_EQ(exported_struct_name("2link"), "Mechanism2link");
}

TEST(MechanismExport, HeadersEqualTheTapesToRoundOff) {
  for (const ExportCase& c : kCases) {
    for (const bool defaults : {true, false}) {
      const std::map<std::string, double> params = defaults ? std::map<std::string, double>{} : c.params;
      if (!defaults && params.empty()) continue;
      auto header = c.header(params);
      auto file = make_model(c.file, params, false);
      ASSERT_EQ(header->n(), file->n());
      ASSERT_EQ(header->m(), file->m());
      EXPECT_EQ(header->holonomic(), file->holonomic()) << c.stem;
      EXPECT_EQ(header->position_rows(), file->position_rows()) << c.stem;
      EXPECT_EQ(header->constraint_names(), file->constraint_names()) << c.stem;
      EXPECT_EQ(header->time_dependent(), file->time_dependent()) << c.stem;
      EXPECT_EQ(header->parameters(), file->parameters()) << c.stem;
      const Agreement a = compare(*header, *file);
      std::printf("  %-22s %-8s: terms %.2e, max |q_header - q_file| over a kkt run %.2e\n", c.stem,
                  defaults ? "defaults" : "changed", a.terms, a.run);
      // Measured: identical (0) for ten of the eleven (cart_pendulum, mixed, included), and for four_bar 5.8e-18 in the terms (the tape folds
      // products of parameters such as L^2 m / 12 into one constant, the header multiplies them at run time),
      // which a 3 s run of the closed loop grows to 1.3e-13 (defaults) and 2e-14 (changed).
      if (c.identical) {
        EXPECT_EQ(a.terms, 0.0) << c.stem;
        EXPECT_EQ(a.run, 0.0) << c.stem;
      } else {
        EXPECT_LT(a.terms, 3e-17) << c.stem;
        EXPECT_LT(a.run, 5e-13) << c.stem;
      }
    }
  }
}

// A description is a TOML string: quotes, backslashes and control characters reach the header as escapes (a raw
// carriage return or newline would break the line the literal stands on).
TEST(MechanismExport, StringsAreEscapedInTheHeader) {
  const MechanismFile file = parse_mechanism_text(
      "name = \"odd\"\ndescription = \"a\\rb\\u0001c\\\"d\\\\e\\nf\"\ncoordinates = [\"x\"]\n"
      "[energy]\nT = \"der(x)^2/2\"\nV = \"x^2/2\"\n[initial]\nq = [1]\n",
      "odd.toml");
  const std::string header = export_header(file);
  EXPECT_NE(header.find("kDescription = \"a\\015b\\001c\\\"d\\\\e\\012f\";"), std::string::npos) << header;
  for (const char c : header) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
}

// Names the C++ of the header cannot take (issue 43: `mechanism export` exited 0 with 23 headers that did not
// compile): parameters named as C++ keywords, macros, the header's own identifiers and the Problem's members, a
// mechanism named as a clm type, a path with a newline in the header's comment. Exported, then compiled with the
// system's C++ compiler (syntax and template instantiation of every term, in double and ceres::Jet; a few
// seconds): the parameters keep their names in kParameters, the members are mangled.
TEST(MechanismExport, HostileNamesExportToAHeaderThatCompiles) {
  const std::vector<std::string> names = {"potential", "mass_matrix", "default_initial", "nullptr", "constexpr",
                                          "M_PI",      "NULL",        "errno",           "abs_",    "Vec",
                                          "T",         "Q",           "Out",             "v1",      "_X",
                                          "a__b",      "p_potential", "EOF",             "assert",  "concept"};
  std::string parameters, sum;
  for (std::size_t k = 0; k < names.size(); ++k) {
    parameters += names[k] + " = " + std::to_string(1.0 + 0.1 * k) + "\n";
    sum += (k ? " + " : "") + names[k];
  }
  const MechanismFile file = parse_mechanism_text(
      "name = \"problem\"\ncoordinates = [\"x\", \"y\"]\n[parameters]\n" + parameters +
          "[energy]\nT = \"(" + sum + ")*(der(x)^2 + der(y)^2)/2\"\nV = \"potential*x^2 + M_PI*y^2\"\n"
          "[forces]\nx = \"-errno*der(x) + NULL*sin(t)\"\n[constraints]\nvelocity = [\"der(x) - concept*x*der(y)\"]\n"
          "[initial]\nq = [0.1, 0.2]\nqd = [0.3, 0.4]\n",
      "odd/dir\nname.toml");
  const std::string header = export_header(file);
  EXPECT_NE(header.find("struct ProblemMechanism {"), std::string::npos);
  EXPECT_NE(header.find("// odd/dir\\x0aname.toml (sha256 "), std::string::npos);
  EXPECT_NE(header.find("ParameterSpec<ProblemMechanism>{\"nullptr\", &ProblemMechanism::p_nullptr"), std::string::npos);
  EXPECT_NE(header.find("&ProblemMechanism::pp_potential"), std::string::npos);  // p_potential is a parameter's own
  EXPECT_NE(header.find("&ProblemMechanism::p_a_0b"), std::string::npos);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "clm_export_hostile";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "problem_mechanism.hpp") << header;
  std::ofstream(dir / "use.cpp") << R"cpp(#include "problem_mechanism.hpp"
#include <ceres/jet.h>
static_assert(clm::Problem<clm::ProblemMechanism>);
static_assert(clm::HasDifferentiableGeneralizedForce<clm::ProblemMechanism>);
template <class T>
void terms() {
  const clm::ProblemMechanism p;
  p.validate();
  clm::VecN<T, 2> q(T(0.1), T(0.2)), qd(T(0.3), T(0.4)), F;
  clm::MatN<T, 2, 2> M;
  clm::MatN<T, 1, 2> A;
  p.template mass_matrix<T>(q, M);
  (void)p.template potential<T>(q);
  p.template pfaffian<T>(q, A);
  p.generalized_force(T(0.5), q, qd, F);
}
int main() {
  terms<double>();
  terms<ceres::Jet<double, 4>>();
  clm::Vec q0(2), qd0(2);
  clm::ProblemMechanism().default_initial(q0, qd0);
}
)cpp";
  const std::string cmd = "c++ -std=c++20 -fsyntax-only -I'" + kSource + "' -I/usr/include/eigen3 '" +
                          (dir / "use.cpp").string() + "' > '" + (dir / "errors.txt").string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream errors(dir / "errors.txt");
  const std::string text((std::istreambuf_iterator<char>(errors)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << text.substr(0, 4000);
  std::filesystem::remove_all(dir);
}

// The optional sections become the zoo's members, and give what the file gives: the sleigh's velocity basis
// and transversal frame (nullspace and fernandez_bloch runs), the coin's closed form, the pendulum's published
// values and reference point, the racer's actuated coordinates.
TEST(MechanismExport, OptionalSectionsAreExported) {
  static_assert(HasVelocityBasis<ChaplyginSleighFile> && HasClosedForm<CoinOnIncline> &&
                HasPublishedMultipliers<IftommPendulumFile> && HasReferencePointFunction<IftommPendulumFile> &&
                HasActuatedCoordinates<RollerRacerFile>);
  const std::string data = kSource + "/tests/data/mechanisms/";
  {
    auto header = exported_model<ChaplyginSleighFile>({});
    auto file = make_model(data + "chaplygin_sleigh.toml", {}, false);
    Vec q0, qd0;
    file->default_initial(q0, qd0);
    clm::testing::RunSettings rs;
    rs.t_end = 3.0;
    rs.output_every = 1.0;
    rs.rtol = rs.atol = 1e-10;
    for (const char* formulation : {"nullspace", "fernandez_bloch"}) {
      const auto h = clm::testing::record_run(header, formulation, q0, qd0, rs);
      const auto f = clm::testing::record_run(file, formulation, q0, qd0, rs);
      ASSERT_EQ(h.result.status, "ok") << h.result.message;
      EXPECT_EQ(clm::testing::max_q_difference(h, f), 0.0) << formulation;
    }
  }
  {
    auto header = exported_model<CoinOnIncline>({});
    auto file = make_model(kSource + "/mechanisms/coin_on_incline.toml");
    Vec q0, qd0, qh(4), qdh(4), qf(4), qdf(4);
    file->default_initial(q0, qd0);
    for (double t : {0.0, 0.7, 3.1}) {
      ASSERT_TRUE(header->closed_form(t, q0, qd0, qh, qdh));
      ASSERT_TRUE(file->closed_form(t, q0, qd0, qf, qdf));
      EXPECT_EQ(qh, qf) << t;
      EXPECT_EQ(qdh, qdf) << t;
    }
    EXPECT_FALSE(header->closed_form(1.0, Vec::Zero(4), Vec::Zero(4), qh, qdh));  // der(phi) = 0: not covered
  }
  {
    auto header = exported_model<IftommPendulumFile>({});
    auto file = make_model(data + "iftomm_pendulum.toml");
    ASSERT_NE(header->published_reference(), nullptr);
    EXPECT_EQ(header->published_reference()->q, file->published_reference()->q);
    EXPECT_EQ(header->published_reference()->qd, file->published_reference()->qd);
    EXPECT_EQ(header->published_reference()->lambda, file->published_reference()->lambda);
    EXPECT_EQ(header->published_reference()->source, file->published_reference()->source);
    EXPECT_EQ(exported_model<IftommPendulumFile>({{"L", 1.2}})->published_reference(), nullptr);
    const ReferencePoint* ph = header->reference_point();
    const ReferencePoint* pf = file->reference_point();
    ASSERT_TRUE(ph && pf);
    EXPECT_EQ(ph->name, pf->name);
    EXPECT_EQ(ph->unit, pf->unit);
    Vec q(2), a(2), b(2);
    q << 0.3, -0.9;
    ph->evaluate(q, a);
    pf->evaluate(q, b);
    EXPECT_EQ(a, b);
  }
  EXPECT_EQ(exported_model<RollerRacerFile>({})->actuated_coordinates(),
            make_model(data + "roller_racer.toml")->actuated_coordinates());
}

// `mechanism export --format latex | sympy` (issue 42; mechanism_files/export_equations.hpp): the derived terms as a
// person reads them. LaTeX: Greek names as letters, digits and suffixes as subscripts, velocities dotted, zero
// entries left out. sympy: names the module itself uses (a parameter named a, h or lambda) mangled in Python while the
// symbols keep the file's names; python/tests checks the module's equations against sympy's own derivation.
TEST(MechanismExport, EquationsAsLatexAndSympy) {
  const MechanismFile coin = read_mechanism_file(std::string(CLMBENCH_SOURCE_DIR) + "/mechanisms/coin_on_incline.toml");
  const std::string latex = export_latex(coin);
  for (const char* line : {"V &= x m g \\sin\\left(\\alpha\\right)", "A_{1,1} &= 1",
                           "A_{1,4} &= -a \\cos\\left(\\phi\\right)", "A_{2,4} &= -a \\sin\\left(\\phi\\right)",
                           "\\begin{align*}", "\\end{align*}"})
    EXPECT_NE(latex.find(line), std::string::npos) << line << "\n" << latex;
  EXPECT_EQ(latex.find("A_{1,2}"), std::string::npos) << "a zero entry is left out";

  const MechanismFile odd = parse_mechanism_text(
      "name = \"names\"\ncoordinates = [\"theta1\", \"phi_2\", \"x_left\"]\n"
      "[parameters]\na = 2.0\nh = 0.5\nlambda = 3.0\n"
      "[energy]\nT = \"a*(der(theta1)^2 + der(phi_2)^2 + der(x_left)^2)/2\"\nV = \"h*lambda*cos(theta1)\"\n"
      "[constraints]\nvelocity = [\"der(x_left) - a*der(phi_2)\"]\n[initial]\nq = [0.1, 0.2, 0.3]\n",
      "names.toml");
  const std::string tex = export_latex(odd);
  for (const char* piece : {"{\\dot{\\theta}_{1}}^{2}", "{\\dot{\\phi}_{2}}^{2}", "{\\dot{x}_{\\mathrm{left}}}^{2}",
                            "V &= h \\lambda \\cos\\left(\\theta_{1}\\right)", "A_{1,2} &= -a"})
    EXPECT_NE(tex.find(piece), std::string::npos) << piece << "\n" << tex;
  const std::string py = export_sympy(odd);
  for (const char* piece : {"a_, h_, lambda_ = _sp.symbols(\"a h lambda\", real=True, seq=True)",
                            "theta1, phi_2, x_left = _sp.symbols(\"theta1 phi_2 x_left\", real=True, seq=True)",
                            "V = h_*lambda_*_sp.cos(theta1)", "A = _sp.Matrix([[0, -a_, 1]])", "b = _sp.Matrix([0])",
                            "parameters = {a_: 2, h_: 0.5, lambda_: 3}", "h = None"})
    EXPECT_NE(py.find(piece), std::string::npos) << piece << "\n" << py;
}
