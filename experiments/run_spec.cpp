#include "experiments/run_spec.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>

#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "experiments/value_parsing.hpp"

namespace clm {

namespace {

const FormulationOptions kDefaultOptions{};
const RunSpec kDefaultSpec{};

// Numeric [run] keys and where they land.
struct NumericRunKey {
  const char* key;
  double RunSpec::*member;
};
constexpr NumericRunKey kNumericRunKeys[] = {
    {"t_end", &RunSpec::t_end},   {"dt", &RunSpec::dt},
    {"rtol", &RunSpec::rtol},     {"atol", &RunSpec::atol},
    {"output_every", &RunSpec::output_every}, {"divergence_threshold", &RunSpec::divergence_threshold},
};

struct OptionKey {
  const char* key;
  double FormulationOptions::*member;
};
constexpr OptionKey kOptionKeys[] = {
    {"N", &FormulationOptions::N},
    {"baumgarte_alpha", &FormulationOptions::baumgarte_alpha},
    {"baumgarte_beta", &FormulationOptions::baumgarte_beta},
    {"k", &FormulationOptions::k},
    {"repartition_threshold", &FormulationOptions::repartition_threshold},
    {"initial_offset", &FormulationOptions::initial_offset},
};

const std::vector<std::string> kSectionKinds = {"run", "param", "initial", "formulation"};

std::vector<std::string> keys_of(const std::string& section) {
  std::vector<std::string> keys;
  for (const auto& info : config_keys())
    if (info.section == section) keys.push_back(info.key);
  return keys;
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool contains(const std::vector<std::string>& items, const std::string& s) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

bool valid_run_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// "run.dt in quickstart.ini", "run.dt (--set)", or the flag itself ("--dt").
std::string describe(const std::string& section, const std::string& key, const ConfigValue& v) {
  if (v.origin.rfind("--", 0) == 0 && v.origin != "--set") return v.origin;
  if (v.origin == "--set") return section + "." + key + " (--set)";
  return section + "." + key + " in " + v.origin;
}

// Splits Boost's "section.key" name. [sweep] keys may themselves contain a dot (param.b); run names may not.
std::pair<std::string, std::string> split_name(const std::string& name) {
  if (name.rfind("sweep.", 0) == 0) return {"sweep", name.substr(6)};
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Checks a section name and the keys in it (param names are checked later, against the problem).
void validate_section(const std::string& section, const std::map<std::string, ConfigValue>& keys) {
  const auto dot = section.find('.');
  const std::string kind = section.substr(0, dot);
  const std::string origin = keys.empty() ? std::string("the config") : keys.begin()->second.origin;
  const bool known_kind = contains(kSectionKinds, kind) || (kind == "sweep" && dot == std::string::npos);
  if (!known_kind || (dot != std::string::npos && !valid_run_name(section.substr(dot + 1)))) {
    throw InputError("unknown config section [" + section + "] in " + origin +
                     " (known: [run], [param], [initial], [formulation], [sweep], and [run.NAME], [param.NAME], "
                     "[initial.NAME], [formulation.NAME] with NAME of letters, digits, _ and -)");
  }
  if (kind == "param" || kind == "sweep") return;
  const std::vector<std::string> known = keys_of(kind);
  for (const auto& [key, value] : keys) {
    if (!contains(known, key)) {
      throw InputError("unknown config key '" + section + "." + key + "' in " + value.origin + " (known keys of [" +
                       kind + "]: " + join(known) + ")");
    }
    if (kind == "run" && dot != std::string::npos && key == "out") {
      throw InputError("config key '" + section + ".out' in " + value.origin +
                       ": one output file per invocation, set out in [run]");
    }
  }
}

void validate_sweep(const std::map<std::string, ConfigValue>& keys, std::vector<SweepAxis>& axes) {
  std::vector<std::string> sweepable = {"problem", "formulation", "integrator"};
  for (const auto& k : kNumericRunKeys) sweepable.push_back(k.key);
  for (const auto& k : kOptionKeys) sweepable.push_back(k.key);
  for (const auto& [key, value] : keys) {
    const bool is_param = key.rfind("param.", 0) == 0 && key.size() > 6;
    if (!is_param && !contains(sweepable, key)) {
      throw InputError("unknown config key 'sweep." + key + "' in " + value.origin +
                       " (a [sweep] key is one of " + join(sweepable) + ", or param.NAME)");
    }
    SweepAxis axis{key, {}};
    std::istringstream in(value.text);
    for (std::string token; in >> token;) axis.values.push_back(token);
    if (axis.values.empty()) throw InputError("empty list for sweep." + key + " in " + value.origin);
    const std::string what = describe("sweep", key, value);
    for (const auto& v : axis.values) {
      if (key == "problem") problem_registry().get(v);
      else if (key == "formulation") formulation_registry().get(v);
      else if (key == "integrator") integrator_registry().get(v);
      else parse_number(v, what);
    }
    axes.push_back(std::move(axis));
  }
}

// Looks a key up for one run: flags, then [kind.NAME], then [kind].
struct Lookup {
  const ConfigLayer& file;
  const ConfigLayer& flags;
  std::string name;  // empty for the single unnamed run

  const ConfigValue* find(const std::string& kind, const std::string& key, std::string* section_out = nullptr) const {
    auto in = [&](const ConfigLayer& layer, const std::string& section) -> const ConfigValue* {
      auto s = layer.find(section);
      if (s == layer.end()) return nullptr;
      auto k = s->second.find(key);
      if (k == s->second.end()) return nullptr;
      if (section_out) *section_out = section;
      return &k->second;
    };
    if (auto v = in(flags, kind)) return v;
    if (!name.empty())
      if (auto v = in(file, kind + "." + name)) return v;
    return in(file, kind);
  }
  // Every key of [kind] and [kind.NAME] and the flags (for param, whose keys are not fixed).
  std::map<std::string, std::pair<std::string, ConfigValue>> all(const std::string& kind) const {
    std::map<std::string, std::pair<std::string, ConfigValue>> out;
    auto add = [&](const ConfigLayer& layer, const std::string& section) {
      auto s = layer.find(section);
      if (s == layer.end()) return;
      for (const auto& [key, value] : s->second) out[key] = {section, value};
    };
    add(file, kind);
    if (!name.empty()) add(file, kind + "." + name);
    add(flags, kind);
    return out;
  }
};

void require(bool ok, const std::string& what, const std::string& condition, double value) {
  if (!ok) throw InputError(what + " must be " + condition + " (got " + format_number(value) + ")");
}

RunSpec resolve_run(const Lookup& lookup, const std::string& source) {
  RunSpec spec;
  spec.named = !lookup.name.empty();
  const std::string where = source.empty() ? std::string("the command line") : source;
  const std::string run_label = spec.named ? "run '" + lookup.name + "'" : std::string("the run");

  auto text = [&](const char* key, const char* flag) -> std::string {
    std::string section;
    const ConfigValue* v = lookup.find("run", key, &section);
    if (!v || trim(v->text).empty()) {
      throw InputError(run_label + ": no " + key + " given (set " + key + " in [run" +
                       (spec.named ? "." + lookup.name : std::string()) + "] of " + where + " or pass " + flag + ")");
    }
    return trim(v->text);
  };
  spec.problem = text("problem", "--problem");
  spec.formulation = text("formulation", "--formulation");
  spec.integrator = text("integrator", "--integrator");
  const ProblemEntry& problem = problem_registry().get(spec.problem);
  formulation_registry().get(spec.formulation);
  integrator_registry().get(spec.integrator);
  spec.run_id = spec.named ? lookup.name : spec.problem + "_" + spec.formulation + "_" + spec.integrator;

  for (const auto& k : kNumericRunKeys) {
    std::string section;
    if (const ConfigValue* v = lookup.find("run", k.key, &section))
      spec.*(k.member) = parse_number(v->text, describe(section, k.key, *v));
  }
  {
    std::string section;
    if (const ConfigValue* v = lookup.find("run", "strict_initial", &section))
      spec.strict_initial = parse_bool(v->text, describe(section, "strict_initial", *v));
  }
  auto what_of = [&](const char* kind, const char* key) {
    std::string section;
    const ConfigValue* v = lookup.find(kind, key, &section);
    return v ? describe(section, key, *v) : std::string(kind) + "." + key;
  };
  require(spec.t_end > 0, what_of("run", "t_end"), "> 0", spec.t_end);
  require(spec.dt > 0, what_of("run", "dt"), "> 0", spec.dt);
  require(spec.rtol > 0, what_of("run", "rtol"), "> 0", spec.rtol);
  require(spec.atol >= 0, what_of("run", "atol"), ">= 0", spec.atol);
  require(spec.output_every >= 0, what_of("run", "output_every"), ">= 0", spec.output_every);
  require(spec.divergence_threshold > 0, what_of("run", "divergence_threshold"), "> 0", spec.divergence_threshold);

  for (const auto& k : kOptionKeys) {
    std::string section;
    if (const ConfigValue* v = lookup.find("formulation", k.key, &section))
      spec.options.*(k.member) = parse_number(v->text, describe(section, k.key, *v));
  }
  {
    std::string section;
    if (const ConfigValue* v = lookup.find("formulation", "added_mass_form", &section)) {
      const std::string form = trim(v->text);
      if (form != "direct" && form != "multiplier")
        throw InputError("bad value '" + form + "' for " + describe(section, "added_mass_form", *v) +
                         " (expected direct or multiplier)");
      spec.options.added_mass_form = form;
    }
    if (const ConfigValue* v = lookup.find("formulation", "lambda0", &section))
      spec.options.lambda0 = parse_number_list(v->text, describe(section, "lambda0", *v));
  }
  require(spec.options.N >= 0, what_of("formulation", "N"), ">= 0", spec.options.N);
  require(spec.options.k >= 0, what_of("formulation", "k"), ">= 0", spec.options.k);

  std::vector<std::string> known;
  for (const auto& p : problem.parameters) {
    spec.params[p.name] = p.default_value;
    known.push_back(p.name);
  }
  for (const auto& [key, entry] : lookup.all("param")) {
    const auto& [section, value] = entry;
    if (!spec.params.count(key)) {
      throw InputError("unknown parameter '" + key + "' for problem " + spec.problem + " (" +
                       describe(section, key, value) + "; known: " + join(known) + ")");
    }
    spec.params[key] = parse_number(value.text, describe(section, key, value));
  }
  // Constructing the model validates the parameter values and tells the number of coordinates.
  const auto model = problem.make(std::map<std::string, double>(spec.params.begin(), spec.params.end()), true);

  for (const char* key : {"q0", "qd0"}) {
    std::string section;
    const ConfigValue* v = lookup.find("initial", key, &section);
    if (!v) continue;
    const std::string what = describe(section, key, *v);
    std::vector<double> values = parse_number_list(v->text, what);
    if (static_cast<int>(values.size()) != model->n()) {
      throw InputError(what + " has " + std::to_string(values.size()) + " values but problem " + spec.problem +
                       " has " + std::to_string(model->n()) + " coordinates");
    }
    (std::string(key) == "q0" ? spec.q0 : spec.qd0) = std::move(values);
  }
  return spec;
}

}  // namespace

const std::vector<ConfigKeyInfo>& config_keys() {
  static const std::vector<ConfigKeyInfo> keys = [] {
    auto num = [](double v) { return format_number(v); };
    return std::vector<ConfigKeyInfo>{
        {"run", "problem", "(required)", "problem name (clmbench list problems)"},
        {"run", "formulation", "(required)", "formulation name (clmbench list formulations)"},
        {"run", "integrator", "(required)", "integrator name (clmbench list integrators)"},
        {"run", "t_end", num(kDefaultSpec.t_end), "end time [s]; runs start at t = 0"},
        {"run", "dt", num(kDefaultSpec.dt), "fixed step, or the initial step of an adaptive integrator [s]"},
        {"run", "rtol", num(kDefaultSpec.rtol), "relative tolerance (adaptive integrators)"},
        {"run", "atol", num(kDefaultSpec.atol), "absolute tolerance (adaptive integrators)"},
        {"run", "output_every", num(kDefaultSpec.output_every),
         "sample spacing written to HDF5 [s]; 0 = one sample per accepted step"},
        {"run", "divergence_threshold", num(kDefaultSpec.divergence_threshold),
         "a state entry above it in magnitude ends the run with status \"diverged\""},
        {"run", "strict_initial", "false", "refuse given q0/qd0 that are off the constraints by more than 1e-12"},
        {"run", "out", "results/<problem>_<formulation>_<integrator>.h5",
         "output file ([run] only; a multi-run config defaults to results/<config name>.h5)"},
        {"param", "<name>", "problem default", "problem parameter override (clmbench list problems)"},
        {"initial", "q0", "problem default", "initial coordinates, n numbers (projected onto the constraints)"},
        {"initial", "qd0", "problem default", "initial velocities, n numbers (projected onto A(q) qd = 0)"},
        {"formulation", "N", num(kDefaultOptions.N), "penalty / added-mass coefficient"},
        {"formulation", "baumgarte_alpha", num(kDefaultOptions.baumgarte_alpha),
         "Baumgarte velocity gain (kkt, schur): -2 alpha A qd"},
        {"formulation", "baumgarte_beta", num(kDefaultOptions.baumgarte_beta),
         "Baumgarte position gain (kkt, schur; holonomic): -beta^2 h"},
        {"formulation", "k", num(kDefaultOptions.k), "penalty position spring k/2 |h|^2 (holonomic problems)"},
        {"formulation", "added_mass_form", kDefaultOptions.added_mass_form,
         "added_mass: direct (state q, qd; mass matrix M + N A^T A) or multiplier (state q, qd, lambda = -N A qd; "
         "recommended for large N: step count independent of N)"},
        {"formulation", "lambda0", "zeros", "vakonomic / added_mass multiplier form: initial multipliers, m numbers"},
        {"formulation", "repartition_threshold", num(kDefaultOptions.repartition_threshold),
         "nullspace: re-pick independent coordinates when cond(A_D) exceeds it"},
        {"formulation", "initial_offset", num(kDefaultOptions.initial_offset),
         "fernandez_bloch: start |A qd0| = offset off the constraint, along the transversal frame X"},
    };
  }();
  return keys;
}

ConfigLayer read_config_file(const std::string& path) { return read_config_file(path, {}); }

ConfigLayer read_config_file(const std::string& path, const std::vector<std::string>& extra_sections) {
  std::ifstream file(path);
  if (!file) throw InputError("cannot open config file '" + path + "': " + std::strerror(errno));
  if (std::filesystem::is_directory(path)) throw InputError("config file '" + path + "' is a directory");
  // Boost treats only '#' as a comment; INI files also use ';', inline as in DESIGN.md's example.
  std::ostringstream cleaned;
  for (std::string line; std::getline(file, line);) {
    const auto cut = line.find_first_of(";#");
    cleaned << (cut == std::string::npos ? line : line.substr(0, cut)) << '\n';
  }
  std::istringstream in(cleaned.str());
  namespace po = boost::program_options;
  po::options_description none;
  po::parsed_options parsed(&none);
  try {
    parsed = po::parse_config_file(in, none, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw InputError("config file '" + path + "': " + e.what());
  }
  ConfigLayer layer;
  long order = 0;
  for (const auto& option : parsed.options) {
    const auto [section, key] = split_name(option.string_key);
    if (section.empty()) throw InputError("config key '" + key + "' in " + path + " is outside any [section]");
    const std::string value = option.value.empty() ? std::string() : trim(option.value.front());
    auto& keys = layer[section];
    if (keys.count(key)) throw InputError("config key '" + section + "." + key + "' is given twice in " + path);
    keys[key] = {value, path, order++};
  }
  for (const auto& [section, keys] : layer)
    if (!contains(extra_sections, section)) validate_section(section, keys);
  return layer;
}

void apply_set(ConfigLayer& layer, const std::string& assignment) {
  const auto eq = assignment.find('=');
  const std::string name = eq == std::string::npos ? std::string() : trim(assignment.substr(0, eq));
  const auto [section, key] = split_name(name);
  if (eq == std::string::npos || section.empty() || key.empty()) {
    throw InputError("malformed --set '" + assignment + "' (expected section.key=value, e.g. run.dt=1e-4)");
  }
  std::map<std::string, ConfigValue> one{{key, {trim(assignment.substr(eq + 1)), "--set", 1L << 40}}};
  validate_section(section, one);
  layer[section][key] = one[key];
}

RunConfig resolve_run_config(const std::string& source, const ConfigLayer& file, const ConfigLayer& flags,
                             const std::optional<std::string>& out_flag) {
  RunConfig config;
  config.source = source;
  // Run names, in the order their [run.NAME] sections first appear in the file (--set ones last).
  std::map<std::string, long> first_seen;
  for (const auto& [section, keys] : file) {
    const auto dot = section.find('.');
    if (dot == std::string::npos || section.substr(0, dot) != "run") continue;
    long first = 1L << 41;
    for (const auto& [key, value] : keys) first = std::min(first, value.order);
    first_seen[section.substr(dot + 1)] = first;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : first_seen) names.push_back(name);
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return first_seen[a] < first_seen[b]; });
  for (const auto& [section, keys] : file) {
    const auto dot = section.find('.');
    if (dot != std::string::npos && !first_seen.count(section.substr(dot + 1))) {
      throw InputError("config section [" + section + "] in " + keys.begin()->second.origin + " has no [run." +
                       section.substr(dot + 1) + "] section");
    }
  }
  if (auto s = file.find("sweep"); s != file.end()) validate_sweep(s->second, config.sweep);

  if (names.empty()) {
    config.runs.push_back(resolve_run(Lookup{file, flags, ""}, source));
  } else {
    for (const auto& name : names) config.runs.push_back(resolve_run(Lookup{file, flags, name}, source));
  }

  if (out_flag) {
    config.out = *out_flag;
  } else if (auto s = file.find("run"); s != file.end() && s->second.count("out")) {
    config.out = trim(s->second.at("out").text);
  } else if (names.empty()) {
    const RunSpec& r = config.runs.front();
    config.out = "results/" + r.problem + "_" + r.formulation + "_" + r.integrator + ".h5";
  } else {
    config.out = "results/" + std::filesystem::path(source).stem().string() + ".h5";
  }
  if (config.out.empty()) throw InputError("empty output file name (run.out / --out)");
  return config;
}

RunConfig load_run_config(const std::optional<std::string>& path, const std::vector<std::string>& sets,
                          const ConfigLayer& flags, const std::optional<std::string>& out_flag) {
  ConfigLayer file = path ? read_config_file(*path) : ConfigLayer{};
  for (const auto& s : sets) apply_set(file, s);
  return resolve_run_config(path.value_or(""), file, flags, out_flag);
}

std::string to_config_text(const RunConfig& config) {
  std::ostringstream s;
  s << "# resolved clmbench configuration";
  if (!config.source.empty()) s << " (from " << config.source << ")";
  s << "; run it again with: clmbench run FILE.ini\n";
  const bool single = config.runs.size() == 1 && !config.runs.front().named;
  if (!single) s << "[run]\nout = " << config.out << "\n";
  for (const RunSpec& r : config.runs) {
    const std::string suffix = single ? "" : "." + r.run_id;
    s << "\n[run" << suffix << "]\n";
    s << "problem = " << r.problem << "\nformulation = " << r.formulation << "\nintegrator = " << r.integrator << "\n";
    for (const auto& k : kNumericRunKeys) s << k.key << " = " << format_number(r.*(k.member)) << "\n";
    s << "strict_initial = " << (r.strict_initial ? "true" : "false") << "\n";
    if (single) s << "out = " << config.out << "\n";
    s << "[param" << suffix << "]\n";
    for (const auto& [name, value] : r.params) s << name << " = " << format_number(value) << "\n";
    if (r.q0 || r.qd0) {
      s << "[initial" << suffix << "]\n";
      for (const auto& [key, values] : {std::pair{"q0", &r.q0}, std::pair{"qd0", &r.qd0}}) {
        if (!*values) continue;
        s << key << " =";
        for (double v : **values) s << " " << format_number(v);
        s << "\n";
      }
    }
    s << "[formulation" << suffix << "]\n";
    for (const auto& k : kOptionKeys) s << k.key << " = " << format_number(r.options.*(k.member)) << "\n";
    s << "added_mass_form = " << r.options.added_mass_form << "\n";
    if (!r.options.lambda0.empty()) {
      s << "lambda0 =";
      for (double v : r.options.lambda0) s << " " << format_number(v);
      s << "\n";
    }
  }
  if (!config.sweep.empty()) {
    s << "\n# [sweep] as given (expanded only by a sweep command):\n";
    for (const auto& axis : config.sweep) {
      s << "# " << axis.key << " =";
      for (const auto& v : axis.values) s << " " << v;
      s << "\n";
    }
  }
  return s.str();
}

}  // namespace clm
