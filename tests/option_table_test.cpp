// The option table (runs/option_table.hpp): every row round-trips config -> run attributes ->
// `clmbench info --run`, the generated docs/options.md is current, and a toy option added as one row gets
// parsing, validation, config text, attribute and documentation with no other code.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "clmbench_process.hpp"
#include "studies/kozlov_study.hpp"
#include "runs/run_options.hpp"

namespace clm {
namespace {

using testing::ScratchDir;

// A non-default, admissible value for every option with an attribute, for one quick chaplygin_sleigh run.
// A new row with an attribute must get a value here: the test refuses rows it does not cover.
const std::map<std::string, std::string> kNonDefault = {
    {"run.problem", "chaplygin_sleigh"},
    {"run.formulation", "kkt"},
    {"run.integrator", "rk4"},
    {"run.t_end", "0.05"},
    {"run.dt", "0.005"},
    {"run.rtol", "1e-7"},
    {"run.atol", "1e-9"},
    {"run.dt_min", "1e-13"},
    {"run.dt_max", "0.5"},
    {"run.fixed_step", "true"},
    {"run.jacobian", "autodiff"},
    {"run.cvode_method", "adams"},
    {"run.output_every", "0.025"},
    {"run.divergence_threshold", "1e9"},
    {"run.max_steps", "12345"},
    {"run.max_output_gb", "12.5"},
    {"run.timing_budget", "0.2"},
    {"run.strict_initial", "true"},
    {"run.limit_gap_estimate", "false"},
    {"run.mechanism_evaluation", "tape"},
    {"initial.q0", "0.5 -0.25 0.125"},
    // consistent with q0 for b = 0.3: -sin(theta) xd + cos(theta) yd - b thetad = 0 at theta = 0.125
    {"initial.qd0", "1 0.3524244663482025 0.75"},
    {"formulation.N", "123"},
    {"formulation.baumgarte_alpha", "0.5"},
    {"formulation.baumgarte_beta", "0.25"},
    {"formulation.k", "2"},
    {"formulation.added_mass_form", "multiplier"},
    {"formulation.lambda0", "0.5"},
    {"formulation.repartition_threshold", "20"},
    {"formulation.initial_offset", "1e-3"},
    {"formulation.al_alpha", "1e8"},
    {"formulation.al_xi", "0.5"},
    {"formulation.al_omega", "20"},
    {"formulation.al_iterations", "4"},
    {"formulation.al_tolerance", "1e-9"},
    {"formulation.al_tangent", "penalty"},
    {"formulation.projection", "velocity"},  // the sleigh is nonholonomic: velocity is the admissible one
    {"formulation.servo_direction", "lateral_com"},
    {"formulation.linear_algebra", "dense"},
    {"reference.compute", "true"},
    {"reference.formulation", "schur"},
    {"reference.integrator", "radau5"},
    {"reference.rtol", "1e-11"},
    {"reference.atol", "1e-13"},
};

TEST(OptionTable, EveryRowRoundTripsThroughRunAttributesAndInfo) {
  ScratchDir dir("options");
  std::map<std::string, std::string> sections;
  for (const auto& o : run_options()) {
    if (o.attribute.empty()) continue;
    const auto it = kNonDefault.find(o.qualified());
    ASSERT_NE(it, kNonDefault.end()) << o.qualified() << " has no test value in kNonDefault";
    ASSERT_NE(o.text(RunSpec{}).value_or(""), it->second) << o.qualified() << ": test value equals the default";
    sections[o.section] += o.key + " = " + it->second + "\n";
  }
  std::string config;
  for (const auto& [section, keys] : sections) config += "[" + section + "]\n" + keys;
  testing::write_text(dir / "all.ini", config);
  const auto run = dir.run("run all.ini --out all.h5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto info = dir.run("info all.h5 --run chaplygin_sleigh_kkt_rk4");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  std::map<std::string, std::string> shown;
  std::istringstream lines(info.out);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    shown[line.substr(0, eq)] = line.substr(eq + 3);
  }
  for (const auto& o : run_options()) {
    if (o.attribute.empty()) continue;
    const std::string key = o.qualified();
    ASSERT_TRUE(shown.count(key)) << key << " not shown by info --run:\n" << info.out;
    // Numbers are shown as the shortest exact text; compare values, not spellings.
    RunSpec given, recorded;
    o.assign(given, kNonDefault.at(key), key);
    o.assign(recorded, shown.at(key), key);
    EXPECT_EQ(o.text(given), o.text(recorded)) << key << ": config " << kNonDefault.at(key) << ", info " << shown.at(key);
  }
  EXPECT_EQ(shown.at("param.b"), "0.3");
}

// A run that sets nothing records every row of the table too (issue 20, debt 1: formulation.lambda0, unset,
// was missing): each key is an attribute of the run, shown by `info --run` with a value, never "-".
TEST(OptionTable, EveryRowIsRecordedWhenLeftAtItsDefault) {
  ScratchDir dir("options_default");
  const auto run = dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --t-end 0.01 --dt 0.005 "
                           "--out d.h5");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto info = dir.run("info d.h5 --run chaplygin_sleigh_kkt_rk4");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  for (const auto& o : run_options()) {
    if (o.attribute.empty()) continue;
    const std::string prefix = o.qualified() + " = ";
    const size_t at = info.out.find("\n" + prefix);
    ASSERT_NE(at, std::string::npos) << o.qualified() << " not shown by info --run:\n" << info.out;
    const size_t from = at + 1 + prefix.size();
    const std::string value = info.out.substr(from, info.out.find('\n', from) - from);
    EXPECT_NE(value, "-") << o.qualified() << " is not recorded in the run's attributes";
  }
  EXPECT_NE(info.out.find("\nformulation.lambda0 = (unset)\n"), std::string::npos) << info.out;
}

TEST(OptionTable, DocsOptionsPageIsGeneratedFromTheTable) {
  ScratchDir dir("docs");
  const auto r = dir.run("options --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string committed = testing::read_text(std::string(CLMBENCH_SOURCE_DIR) + "/docs/options.md");
  EXPECT_EQ(committed, r.out) << "docs/options.md is out of date: run tools/gen_docs.sh";
  for (const auto& o : run_options()) EXPECT_NE(committed.find("`" + o.qualified() + "`"), std::string::npos) << o.qualified();
  for (const auto& o : kozlov_options()) EXPECT_NE(committed.find("`" + o.qualified() + "`"), std::string::npos) << o.qualified();
}

TEST(OptionTable, EveryRunOptionHasAFlagInRunHelpAndAKeyInTheResolvedConfig) {
  ScratchDir dir("flags");
  const auto help = dir.run("run --help");
  ASSERT_EQ(help.exit_code, 0);
  RunConfig c;
  c.out = "x.h5";
  RunSpec spec;
  for (const auto& o : run_options())
    if (kNonDefault.count(o.qualified())) o.assign(spec, kNonDefault.at(o.qualified()), o.qualified());
  c.runs.push_back(spec);
  const std::string text = to_config_text(c);
  for (const auto& o : run_options()) {
    EXPECT_FALSE(o.flag.empty()) << o.qualified();
    EXPECT_NE(help.out.find("--" + o.flag + " "), std::string::npos) << o.flag;
    EXPECT_NE(text.find("\n" + o.key + " = "), std::string::npos) << o.qualified() << " not in\n" << text;
  }
}

// A toy formulation option, added as one row: everything else comes from the table machinery.
struct ToyOptions {
  double gain = 2.5;
  std::vector<double> weights;
  std::string mode = "soft";
};

TEST(OptionTable, AToyOptionIsOneRow) {
  const std::vector<Option<ToyOptions>> rows = {
      option::number<ToyOptions>("formulation", "toy_gain", [](auto& t) -> auto& { return t.gain; }, positive(), "1/s",
                                 "toy gain", "toy-gain", "formulation.toy_gain"),
      option::number_list<ToyOptions>("formulation", "toy_weights", [](auto& t) -> auto& { return t.weights; },
                                      "m numbers", "toy weights", "toy-weights", "formulation.toy_weights"),
      option::choice<ToyOptions>("formulation", "toy_mode", [](auto& t) -> auto& { return t.mode; }, {"soft", "hard"},
                                 "toy mode", "toy-mode", "formulation.toy_mode"),
  };
  EXPECT_EQ(rows[0].default_text(), "2.5");
  EXPECT_EQ(rows[1].default_text(), "(none)");
  ToyOptions t;
  rows[0].assign(t, "0.125", "formulation.toy_gain in toy.ini");
  rows[1].assign(t, "1, 2 3", "--toy-weights");
  rows[2].assign(t, "hard", "formulation.toy_mode");
  EXPECT_EQ(t.gain, 0.125);
  EXPECT_EQ(t.weights, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(t.mode, "hard");
  // config text reads back to the same value
  ToyOptions back;
  for (const auto& r : rows) r.assign(back, *r.text(t), r.qualified());
  EXPECT_EQ(back.gain, t.gain);
  EXPECT_EQ(back.weights, t.weights);
  EXPECT_EQ(back.mode, t.mode);
  // attribute values
  EXPECT_EQ(std::get<double>(*rows[0].attribute_value(t)), 0.125);
  EXPECT_EQ(std::get<std::vector<double>>(*rows[1].attribute_value(t)), t.weights);
  EXPECT_EQ(std::get<std::string>(*rows[2].attribute_value(t)), "hard");
  // An unset list is recorded too, as an empty attribute (every key of the table is an attribute of the run).
  EXPECT_EQ(std::get<std::vector<double>>(*rows[1].attribute_value(ToyOptions{})), std::vector<double>{});
  // validation with one line naming the key and the rule
  try {
    rows[0].assign(t, "-1", "formulation.toy_gain in toy.ini");
    FAIL() << "accepted a negative gain";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "formulation.toy_gain in toy.ini must be > 0 (got -1)");
  }
  EXPECT_THROW(rows[2].assign(t, "medium", "formulation.toy_mode"), InputError);
  EXPECT_THROW(rows[1].assign(t, "1 x", "formulation.toy_weights"), InputError);
  // documentation row
  const std::string md = options_markdown(rows);
  EXPECT_NE(md.find("| `formulation.toy_gain` | 2.5 | 1/s | > 0 | `--toy-gain` | `formulation.toy_gain` | toy gain |"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace clm
