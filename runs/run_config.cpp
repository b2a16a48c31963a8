#include "runs/run_config.hpp"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <atomic>
#include <sstream>

#include "core/integrator.hpp"
#include "core/problem_registry.hpp"
#include "core/shape_schedule.hpp"
#include "runs/run_options.hpp"
#include "core/value_parsing.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace clm {

namespace {

constexpr double kMaxSamples = 1e12;

const std::vector<std::string> kSectionKinds = {"run", "param", "initial", "formulation", "reference", "shape"};

std::vector<std::string> keys_of(const std::string& section) {
  std::vector<std::string> keys = run_option_keys(section);
  if (section == "run") keys.push_back("out");
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
  if (name.rfind("sweep.zip.", 0) == 0) return {"sweep.zip", name.substr(10)};
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
  if (section == "sweep.zip") return;  // checked with [sweep] (validate_sweep)
  if (!known_kind || (dot != std::string::npos && !valid_run_name(section.substr(dot + 1)))) {
    throw InputError("unknown config section [" + section + "] in " + origin +
                     " (known: [run], [param], [initial], [formulation], [reference], [shape], [sweep], [sweep.zip], "
                     "and [run.NAME], [param.NAME], [initial.NAME], [formulation.NAME], [reference.NAME], [shape.NAME] "
                     "with NAME of letters, digits, _ and -)");
  }
  if (kind == "param" || kind == "shape" || kind == "sweep") return;  // keys checked against the problem
  const std::vector<std::string> known = keys_of(kind);
  for (const auto& [key, value] : keys) {
    if (!contains(known, key)) {
      throw InputError("unknown config key '" + echo_value(section + "." + key) + "' in " + value.origin + " (known keys of [" +
                       kind + "]: " + join(known) + ")");
    }
    if (kind == "run" && dot != std::string::npos && key == "out") {
      throw InputError("config key '" + section + ".out' in " + value.origin +
                       ": one output file per invocation, set out in [run]");
    }
  }
}

// The keys a [sweep] list may vary: the [run] and [formulation] options whose value is one token (a list
// of q0 values cannot be one value of a space-separated list), param.NAME and shape.NAME (a shape function
// written without spaces, as the list is split at them).
std::vector<std::string> sweepable_keys() {
  std::vector<std::string> keys;
  for (const auto& o : run_options())
    if ((o.section == "run" || o.section == "formulation") && o.type != OptionType::kNumberList)
      keys.push_back(o.section == "run" ? o.key : o.section + "." + o.key);
  return keys;
}

// Checks each [sweep] / [sweep.zip] list: a known key, a non-empty list, every value admissible on its own
// (registry names, numbers, choices; the combinations are checked when the sweep resolves its runs).
void validate_sweep(const ConfigLayer& file, std::vector<SweepAxis>& axes) {
  const std::vector<std::string> sweepable = sweepable_keys();
  size_t zip_length = 0;
  std::string zip_first;
  for (const char* section : {"sweep", "sweep.zip"}) {
    const auto s = file.find(section);
    if (s == file.end()) continue;
    const bool zip = std::string(section) == "sweep.zip";
    for (const auto& [key, value] : s->second) {
      const std::string where = "[" + std::string(section) + "] of " + value.origin;
      const auto [target_section, target_key] = sweep_target(key);
      const bool is_param = target_section == "param" && !target_key.empty();
      const bool is_shape = target_section == "shape" && !target_key.empty();
      const std::string canonical = target_section == "run" ? target_key : target_section + "." + target_key;
      if (!is_param && !is_shape && !contains(sweepable, canonical)) {
        std::string hint;
        if (key.find('.') == std::string::npos && find_run_option("formulation", key))
          hint = "; a bare key is a [run] key, did you mean formulation." + key + "?";
        throw InputError("unknown sweep key '" + echo_value(key) + "' in " + where + " (one of " + join(sweepable) +
                         ", param.NAME or shape.NAME" + hint + ")");
      }
      if (zip && file.count("sweep") && file.at("sweep").count(key))
        throw InputError("sweep key '" + key + "' is in both [sweep] and [sweep.zip] of " + value.origin);
      SweepAxis axis{key, {}, zip, value.order, value.origin};
      std::istringstream in(value.text);
      for (std::string token; in >> token;) axis.values.push_back(token);
      if (axis.values.empty()) throw InputError("empty list for " + key + " in " + where);
      if (zip) {
        if (zip_first.empty()) {
          zip_first = key;
          zip_length = axis.values.size();
        } else if (axis.values.size() != zip_length) {
          throw InputError("[sweep.zip] lists vary together and need the same length, but " + zip_first + " has " +
                           std::to_string(zip_length) + " values and " + key + " has " +
                           std::to_string(axis.values.size()) + " (in " + value.origin + ")");
        }
      }
      const std::string what = target_section + "." + target_key + " in " + where;
      for (const auto& v : axis.values) {
        try {
          if (is_param) {
            parse_number(v, what);
          } else if (is_shape) {
            try {
              ShapeFunction::parse(v);
            } catch (const InputError& e) {
              throw InputError(what + ": " + e.what());
            }
          } else {
            RunSpec scratch;
            find_run_option(target_section, target_key)->assign(scratch, v, what);
          }
        } catch (const InputError& e) {
          const std::string m = e.what();
          // "0.1, 0.2" reads as the values "0.1," and "0.2": say how a list is written.
          std::string hint;
          if (v.find(',') != std::string::npos) {
            std::string without_commas = value.text;
            std::replace(without_commas.begin(), without_commas.end(), ',', ' ');
            std::istringstream spaced(without_commas);
            std::string listed;
            for (std::string token; spaced >> token;) listed += (listed.empty() ? "" : " ") + token;
            hint = "; a sweep list separates its values by spaces: " + key + " = " + echo_value(listed);
          }
          throw InputError((m.find("[sweep") == std::string::npos ? m + " (" + what + ")" : m) + hint);
        }
      }
      axes.push_back(std::move(axis));
    }
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
  // Every key of [kind] and [kind.NAME] and the flags (for param and shape, whose keys are not fixed).
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

// [shape]: each key an actuated coordinate of the problem, each value a ShapeFunction; the schedule goes to
// spec.options.shape (in q order) and the texts to spec.shape. A [shape] for a formulation that does not
// prescribe the shape, or one that does without every actuated coordinate, is refused here, before any run.
void resolve_shape(const Lookup& lookup, const Model& model, const std::string& run_label, RunSpec& spec) {
  const std::vector<std::string> names = model.coordinate_names();
  const std::vector<int>& actuated = model.actuated_coordinates();
  std::vector<std::string> actuated_names;
  for (int i : actuated) actuated_names.push_back(names[i]);
  const std::string known = actuated_names.empty() ? std::string("it has no actuated coordinates")
                                                   : "its actuated coordinates: " + join(actuated_names);
  std::map<int, std::pair<std::string, ShapeFunction>> given;  // coordinate index -> (text, function)
  for (const auto& [key, entry] : lookup.all("shape")) {
    const auto& [section, value] = entry;
    const std::string what = describe(section, key, value);
    const auto name = std::find(names.begin(), names.end(), key);
    const int index = name == names.end() ? -1 : static_cast<int>(name - names.begin());
    if (index < 0 || std::find(actuated.begin(), actuated.end(), index) == actuated.end()) {
      throw InputError("[shape] names '" + echo_value(key) + "', not an actuated coordinate of problem " + spec.problem +
                       " (" + what + "; " + known + ")");
    }
    ShapeFunction f;
    try {
      f = ShapeFunction::parse(value.text);
    } catch (const InputError& e) {
      throw InputError(what + ": " + e.what());
    }
    if (!(f.t_min() <= 0 && spec.t_end <= f.t_max())) {
      throw InputError(what + ": the samples cover t in [" + format_number(f.t_min()) + ", " +
                       format_number(f.t_max()) + "], but the run needs [0, " + format_number(spec.t_end) +
                       "] (run.t_end)");
    }
    // Samples are recorded with their contents' hash (file:PATH@sha256:HEX): part of the run's identity.
    std::string recorded = f.file().empty() ? trim(value.text) : f.recorded_text();
    given.emplace(index, std::pair<std::string, ShapeFunction>{std::move(recorded), std::move(f)});
  }
  const FormulationEntry& formulation = formulation_registry().get(spec.formulation);
  if (!given.empty() && !formulation.uses_shape) {
    throw InputError(run_label + ": formulation " + spec.formulation +
                     " does not prescribe a shape, but a [shape] is given (formulations that do: " +
                     [] {
                       std::vector<std::string> users;
                       for (const FormulationEntry* e : formulation_registry().all())
                         if (e->uses_shape) users.push_back(e->name);
                       return users.empty() ? std::string("none yet") : join(users);
                     }() +
                     ")");
  }
  if (formulation.uses_shape) {
    std::vector<std::string> missing;
    for (int i : actuated)
      if (!given.count(i)) missing.push_back(names[i]);
    if (!missing.empty()) {
      throw InputError(run_label + ": formulation " + spec.formulation + " prescribes the shape, but [shape] has no " +
                       join(missing) + " (every actuated coordinate of problem " + spec.problem + " needs a function of t)");
    }
  }
  for (auto& [index, entry] : given) {
    spec.shape.emplace_back(names[index], entry.first);
    spec.options.shape.coordinates.push_back(index);
    spec.options.shape.functions.push_back(std::move(entry.second));
  }
}

RunSpec resolve_run(const Lookup& lookup, const std::string& source) {
  RunSpec spec;
  spec.named = !lookup.name.empty();
  const std::string where = source.empty() ? std::string("the command line") : source;
  const std::string run_label = spec.named ? "run '" + lookup.name + "'" : std::string("the run");

  // The registry names first: the other keys are checked against the problem, formulation and integrator.
  for (const char* key : {"problem", "formulation", "integrator"}) {
    std::string section;
    const ConfigValue* v = lookup.find("run", key, &section);
    if (!v || trim(v->text).empty()) {
      throw InputError(run_label + ": no " + key + " given (set " + key + " in [run" +
                       (spec.named ? "." + lookup.name : std::string()) + "] of " + where + " or pass --" + key + ")");
    }
  }
  for (const auto& o : run_options()) {
    if (o.section == "initial") continue;  // needs the problem's n; below
    std::string section;
    if (const ConfigValue* v = lookup.find(o.section, o.key, &section)) o.assign(spec, v->text, describe(section, o.key, *v));
  }
  // A [reference] section (even an empty one) or a [reference] flag asks for the reference run, unless
  // reference.compute says otherwise.
  if (!lookup.find("reference", "compute")) {
    spec.reference.compute = lookup.file.count("reference") || lookup.flags.count("reference") ||
                             (!lookup.name.empty() && lookup.file.count("reference." + lookup.name));
  }
  const ProblemEntry problem = find_problem(spec.problem);
  spec.run_id = spec.named ? lookup.name : problem.name + "_" + spec.formulation + "_" + spec.integrator;
  if (!problem.identity.empty()) spec.problem = problem.identity;
  if (spec.dt > spec.t_end) {
    throw InputError(run_label + ": run.dt = " + format_number(spec.dt) + " is larger than run.t_end = " +
                     format_number(spec.t_end) + " (the run would be one clipped step; make dt <= t_end)");
  }
  // t_end / output_every must be a sample count that exists (it overflowed a long for 1e-310).
  if (spec.output_every > 0 && !(spec.t_end / spec.output_every <= kMaxSamples)) {
    throw InputError(run_label + ": run.t_end / run.output_every = " + format_number(spec.t_end / spec.output_every) +
                     " samples (at most " + format_number(kMaxSamples) + "; raise output_every)");
  }

  std::vector<std::string> known;
  for (const auto& p : problem.parameters) {
    spec.params[p.name] = p.default_value;
    known.push_back(p.name);
  }
  for (const auto& [key, entry] : lookup.all("param")) {
    const auto& [section, value] = entry;
    if (!spec.params.count(key)) {
      throw InputError("unknown parameter '" + echo_value(key) + "' for problem " + spec.problem + " (" +
                       describe(section, key, value) + "; known: " + join(known) + ")");
    }
    spec.params[key] = parse_number(value.text, describe(section, key, value));
  }
  // Constructing the model validates the parameter values and tells the number of coordinates.
  const auto model = problem.make(std::map<std::string, double>(spec.params.begin(), spec.params.end()), true);

  resolve_shape(lookup, *model, run_label, spec);

  for (const char* key : {"q0", "qd0"}) {
    std::string section;
    const ConfigValue* v = lookup.find("initial", key, &section);
    if (!v) continue;
    const std::string what = describe(section, key, *v);
    find_run_option("initial", key)->assign(spec, v->text, what);
    const auto& values = *(std::string(key) == "q0" ? spec.q0 : spec.qd0);
    if (static_cast<int>(values.size()) != model->n()) {
      throw InputError(what + " has " + std::to_string(values.size()) + " values but problem " + spec.problem +
                       " has " + std::to_string(model->n()) + " coordinates");
    }
  }
  return spec;
}

// A shape text as a sweep's configuration records it: samples with the hash of their contents
// (file:PATH@sha256:HEX), so that shards or parts computed from different contents of one file are not
// merged as one sweep; anything else, or a file that cannot be read (the runs report it), as written.
std::string with_file_identity(const std::string& text) {
  if (trim(text).rfind("file:", 0) != 0) return text;
  try {
    return ShapeFunction::parse(text).recorded_text();
  } catch (const InputError&) {
    return text;
  }
}

}  // namespace

const std::vector<ConfigKeyInfo>& config_keys() {
  static const std::vector<ConfigKeyInfo> keys = [] {
    std::vector<ConfigKeyInfo> out;
    for (const auto& o : run_options()) {
      std::string description = o.description;
      if (!o.unit.empty()) description += " [" + o.unit + "]";
      out.push_back({o.section, o.key, o.default_text(), description});
      if (o.key == "strict_initial") {
        out.push_back({"run", "out", "results/<problem>_<formulation>_<integrator>.h5",
                       "output file ([run] only; a multi-run config defaults to results/<config name>.h5)"});
        out.push_back({"param", "<name>", "problem default", "problem parameter override (clmbench list problems)"});
        out.push_back({"shape", "<coordinate>", "none",
                       "prescribed actuated coordinate q_a(t) (prescribed_shape, kinematic): c, c*t^k, "
                       "A*sin(w*t + p), A*cos(w*t + p) summed, or file:PATH (t, value samples; cubic spline)"});
      }
    }
    return out;
  }();
  return keys;
}

ConfigLayer read_config_file(const std::string& path) { return read_config_file(path, {}); }

ConfigLayer read_config_file(const std::string& path, const std::vector<std::string>& extra_sections) {
  std::ifstream file(path);
  if (!file) throw InputError("cannot open config file '" + path + "': " + std::strerror(errno));
  if (std::filesystem::is_directory(path)) throw InputError("config file '" + path + "' is a directory");
  // Boost treats only '#' as a comment; INI files also use ';', inline as in docs/design.md's example.
  std::ostringstream cleaned;
  // Section headers, with the number of key lines before them (their place among the keys).
  std::vector<std::pair<std::string, long>> headers;
  long key_lines = 0, line_number = 0;
  for (std::string line; std::getline(file, line);) {
    if (++line_number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line = line.substr(3);  // a UTF-8 byte order mark
    const auto cut = line.find_first_of(";#");
    const std::string content = cut == std::string::npos ? line : line.substr(0, cut);
    const std::string t = trim(content);
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') {
      headers.push_back({trim(t.substr(1, t.size() - 2)), key_lines});
    } else if (!t.empty()) {
      // Every line Boost would refuse is refused here, with its place: Boost's own message has no line number,
      // and its what() loops without end on a line that contains its placeholder "%invalid_line%" (found by
      // fuzz_config: `clmbench run` hung, its memory growing).
      const std::string where = path + ":" + std::to_string(line_number) + ":" +
                                std::to_string(content.find_first_not_of(" \t\r") + 1) + ": ";
      const std::string shown = "'" + echo_value(t) + "'";
      if (t.front() == '[') throw InputError(where + "a section header needs its closing ']': " + shown);
      const auto eq = t.find('=');
      if (eq == std::string::npos) throw InputError(where + "not a 'key = value' line: " + shown);
      if (trim(t.substr(0, eq)).empty()) throw InputError(where + "a key is missing before '=': " + shown);
      ++key_lines;
    }
    cleaned << content << '\n';
  }
  std::istringstream in(cleaned.str());
  namespace po = boost::program_options;
  po::options_description none;
  po::parsed_options parsed(&none);
  try {
    parsed = po::parse_config_file(in, none, /*allow_unregistered=*/true);
  } catch (const po::error&) {
    // Not reached for the lines refused above; Boost's what() is not called (it can loop, see above).
    throw InputError("config file '" + path + "' is not 'key = value' lines under [section] headers");
  }
  ConfigLayer layer;
  // Keys get the odd places 1, 3, 5, ...; a header before the i-th key line the even place 2 i.
  for (const auto& [section, keys_before] : headers) {
    if (!layer.section_order.count(section)) layer.section_order[section] = 2 * keys_before;
    layer[section];
  }
  long order = 1;
  for (const auto& option : parsed.options) {
    const auto [section, key] = split_name(option.string_key);
    if (section.empty()) throw InputError("config key '" + key + "' in " + path + " is outside any [section]");
    const std::string value = option.value.empty() ? std::string() : trim(option.value.front());
    auto& keys = layer[section];
    if (keys.count(key)) throw InputError("config key '" + section + "." + key + "' is given twice in " + path);
    keys[key] = {value, path, order};
    order += 2;
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
    throw InputError("malformed --set '" + echo_value(assignment) + "' (expected section.key=value, e.g. run.dt=1e-4)");
  }
  // A key the file has keeps its place (the order of [sweep] axes makes the run ids: --set sweep.KEY moved
  // that axis to the end and renamed every run; issue 21); new keys follow the file, in command-line order.
  static std::atomic<long> next_order{1L << 40};
  long order = ++next_order;
  if (const auto sec = layer.find(section); sec != layer.end())
    if (const auto old = sec->second.find(key); old != sec->second.end()) order = old->second.order;
  std::map<std::string, ConfigValue> one{{key, {trim(assignment.substr(eq + 1)), "--set", order}}};
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
    if (auto o = file.section_order.find(section); o != file.section_order.end()) first = o->second;
    for (const auto& [key, value] : keys) first = std::min(first, value.order);
    first_seen[section.substr(dot + 1)] = first;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : first_seen) names.push_back(name);
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return first_seen[a] < first_seen[b]; });
  for (const auto& [section, keys] : file) {
    const auto dot = section.find('.');
    // [sweep.zip] is the sweep's zipped lists, not the section of a run named "zip" (issue 21: `run` said "has no
    // [run.zip] section"); like [sweep], `run` validates it and runs the configured run(s) only.
    if (section == "sweep.zip") continue;
    if (dot != std::string::npos && !first_seen.count(section.substr(dot + 1))) {
      throw InputError("config section [" + section + "] in " + (keys.empty() ? source : keys.begin()->second.origin) +
                       " has no [run." +
                       section.substr(dot + 1) + "] section");
    }
  }
  validate_sweep(file, config.sweep);

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

std::vector<SweepAxis> read_sweep_axes(const ConfigLayer& file) {
  std::vector<SweepAxis> axes;
  validate_sweep(file, axes);
  return axes;
}

std::pair<std::string, std::string> sweep_target(const std::string& sweep_key) {
  const auto dot = sweep_key.find('.');
  if (dot == std::string::npos) return {"run", sweep_key};
  return {sweep_key.substr(0, dot), sweep_key.substr(dot + 1)};
}

std::string config_layer_text(const ConfigLayer& layer) {
  std::vector<std::pair<long, std::string>> sections;
  for (const auto& [section, keys] : layer) {
    long first = 1L << 41;
    if (auto o = layer.section_order.find(section); o != layer.section_order.end()) first = o->second;
    for (const auto& [key, value] : keys) first = std::min(first, value.order);
    sections.push_back({first, section});
  }
  std::stable_sort(sections.begin(), sections.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::ostringstream s;
  for (const auto& [_, section] : sections) {
    s << "[" << section << "]\n";
    std::vector<std::pair<long, std::string>> keys;
    for (const auto& [key, value] : layer.at(section)) keys.push_back({value.order, key});
    std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const bool shape = section == "shape" || section.rfind("shape.", 0) == 0;
    const bool sweep = section == "sweep" || section == "sweep.zip";
    for (const auto& [order, key] : keys) {
      const std::string& text = layer.at(section).at(key).text;
      if (shape) {
        s << key << " = " << with_file_identity(text) << "\n";
      } else if (key == "problem" && !sweep) {
        // A mechanism file with the hash of its contents (PATH@sha256:HEX): part of the run's identity.
        s << key << " = " << (is_mechanism_file(trim(text)) ? mechanism_file_identity(trim(text)) : text) << "\n";
      } else if (sweep && key == "problem") {
        std::istringstream tokens(text);
        s << key << " =";
        for (std::string token; tokens >> token;)
          s << " " << (is_mechanism_file(token) ? mechanism_file_identity(token) : token);
        s << "\n";
      } else if (sweep && key.rfind("shape.", 0) == 0) {
        std::istringstream tokens(text);
        s << key << " =";
        for (std::string token; tokens >> token;) s << " " << with_file_identity(token);
        s << "\n";
      } else {
        s << key << " = " << text << "\n";
      }
    }
  }
  return s.str();
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
    auto section_rows = [&](const std::string& section) {
      for (const auto& o : run_options())
        if (o.section == section)
          if (const auto text = o.text(r)) s << o.key << " = " << *text << "\n";
    };
    section_rows("run");
    if (single) s << "out = " << config.out << "\n";
    s << "[param" << suffix << "]\n";
    for (const auto& [name, value] : r.params) s << name << " = " << format_number(value) << "\n";
    if (!r.shape.empty()) {
      s << "[shape" << suffix << "]\n";
      for (const auto& [name, text] : r.shape) s << name << " = " << text << "\n";
    }
    if (r.q0 || r.qd0) {
      s << "[initial" << suffix << "]\n";
      section_rows("initial");
    }
    s << "[formulation" << suffix << "]\n";
    section_rows("formulation");
    s << "[reference" << suffix << "]\n";
    section_rows("reference");
  }
  if (!config.sweep.empty()) {
    s << "\n# [sweep] and [sweep.zip] as given (expanded by clmbench sweep, not by run):\n";
    for (const auto& axis : config.sweep) {
      s << "# " << (axis.zip ? "[sweep.zip] " : "") << axis.key << " =";
      for (const auto& v : axis.values) s << " " << v;
      s << "\n";
    }
  }
  return s.str();
}

}  // namespace clm
