#include "mechanism_files/mechanism_file.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "core/input_file.hpp"
#include "core/sha256.hpp"
#include "core/value_parsing.hpp"
#include "mechanism_files/expression_parser.hpp"

namespace clm {

namespace {

struct Where {
  int line = 0, column = 0;
};
Where where(const toml::node& n) { return {static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)}; }

class Reader {
 public:
  Reader(const toml::table& root, std::string path) : root_(root), path_(std::move(path)) {}

  MechanismFile read() {
    MechanismFile f;
    f.path = path_;
    check_keys(root_, "the top level",
               {"name", "description", "coordinates", "units", "parameters", "let", "energy", "forces", "constraints",
                "initial"});
    f.name = required_string(root_, "name");
    if (f.name.empty()) fail_at(root_["name"].node(), "name must not be empty");
    for (char c : f.name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
        fail_at(root_["name"].node(), "name '" + echo_value(f.name) + "' may hold letters, digits, '_' and '-' only");
    if (auto d = root_["description"]) f.description = string_of(*d.node(), "description");
    f.coordinates = string_array(root_, "coordinates", true);
    if (f.coordinates.empty()) fail_at(root_["coordinates"].node(), "coordinates must name at least one coordinate");
    if (root_["units"]) {
      f.units = string_array(root_, "units", false);
      if (f.units.size() != f.coordinates.size())
        fail_at(root_["units"].node(), "units has " + std::to_string(f.units.size()) + " entries for " +
                                           std::to_string(f.coordinates.size()) + " coordinates");
    } else {
      f.units.assign(f.coordinates.size(), "");
    }
    // Names: one namespace for coordinates, parameters, [let], t, der and the functions.
    std::set<std::string> taken;
    auto claim = [&](const std::string& name, int line, int column, const char* what) {
      if (!valid_identifier(name))
        throw_at(path_, line, column, std::string(what) + " '" + echo_value(name) + "' is not a name (a letter or '_', then letters, digits, '_')");
      if (reserved(name)) throw_at(path_, line, column, std::string(what) + " '" + name + "' is a reserved name");
      if (!taken.insert(name).second) throw_at(path_, line, column, "duplicate name '" + name + "'");
    };
    {
      const toml::array& arr = *root_["coordinates"].as_array();
      for (std::size_t i = 0; i < f.coordinates.size(); ++i) {
        const Where w = where(arr[i]);
        claim(f.coordinates[i], w.line, w.column, "coordinate");
      }
    }
    if (auto p = root_["parameters"]) {
      const toml::table* t = p.as_table();
      if (!t) fail_at(p.node(), "[parameters] must be a table");
      for (auto&& [key, node] : *t) {
        MechanismParameter par;
        par.name = std::string(key.str());
        const Where w = where(node);
        par.line = w.line;
        par.column = w.column;
        claim(par.name, w.line, w.column, "parameter");
        if (auto v = node.value<double>(); v && (node.is_number())) {
          par.value = *v;
        } else if (const toml::table* spec = node.as_table()) {
          check_keys(*spec, "parameter " + par.name, {"value", "unit", "description", "min", "max"});
          par.value = required_number(*spec, "value", "parameter " + par.name);
          if (auto u = (*spec)["unit"]) par.unit = string_of(*u.node(), "unit");
          if (auto d = (*spec)["description"]) par.description = string_of(*d.node(), "description");
          if (auto lo = (*spec)["min"]) par.min = number_of(*lo.node(), "min");
          if (auto hi = (*spec)["max"]) par.max = number_of(*hi.node(), "max");
        } else {
          throw_at(path_, w.line, w.column, "parameter " + par.name + " must be a number or a table { value = ..., unit = ..., ... }");
        }
        if (!std::isfinite(par.value)) throw_at(path_, w.line, w.column, "parameter " + par.name + " must be finite");
        f.parameters.push_back(par);
      }
      // In the order the file writes them (toml++ keeps a table's keys sorted).
      std::stable_sort(f.parameters.begin(), f.parameters.end(), [](const MechanismParameter& a, const MechanismParameter& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
      });
    }
    if (auto l = root_["let"]) {
      const toml::table* t = l.as_table();
      if (!t) fail_at(l.node(), "[let] must be a table of name = \"expression\"");
      for (auto&& [key, node] : *t) {
        const std::string name(key.str());
        const Where w = where(node);
        claim(name, w.line, w.column, "[let] name");
        f.lets[name] = expression_of(node, "[let] " + name);
      }
    }
    const toml::table* energy = root_["energy"].as_table();
    if (!energy) {
      if (root_["energy"]) fail_at(root_["energy"].node(), "[energy] must be a table with T and V");
      throw_at(path_, 1, 1, "missing [energy] section (T = \"kinetic energy\", V = \"potential\")");
    }
    check_keys(*energy, "[energy]", {"T", "V"});
    if (!(*energy)["T"]) fail_at(root_["energy"].node(), "[energy] needs T, the kinetic energy");
    f.kinetic = expression_of(*(*energy)["T"].node(), "T");
    if ((*energy)["V"]) f.potential = expression_of(*(*energy)["V"].node(), "V");
    else f.potential = {"0", 0, 0};
    if (auto fo = root_["forces"]) {
      const toml::table* t = fo.as_table();
      if (!t) fail_at(fo.node(), "[forces] must be a table of coordinate = \"generalized force\"");
      for (auto&& [key, node] : *t) {
        const std::string name(key.str());
        const auto it = std::find(f.coordinates.begin(), f.coordinates.end(), name);
        const Where w = where(node);
        if (it == f.coordinates.end())
          throw_at(path_, w.line, w.column, "[forces] key '" + echo_value(name) + "' is not a coordinate (coordinates: " + join(f.coordinates) + ")");
        f.forces.emplace_back(static_cast<int>(it - f.coordinates.begin()), expression_of(node, "force on " + name));
      }
    }
    if (auto c = root_["constraints"]) {
      const toml::table* t = c.as_table();
      if (!t) fail_at(c.node(), "[constraints] must be a table with position and velocity arrays");
      check_keys(*t, "[constraints]", {"position", "velocity"});
      f.position_rows = expression_array(*t, "position");
      f.velocity_rows = expression_array(*t, "velocity");
    }
    const toml::table* initial = root_["initial"].as_table();
    if (!initial) {
      if (root_["initial"]) fail_at(root_["initial"].node(), "[initial] must be a table with q and qd");
      throw_at(path_, 1, 1, "missing [initial] section (q = [...], qd = [...])");
    }
    check_keys(*initial, "[initial]", {"q", "qd"});
    f.q0 = initial_values(*initial, "q", f.coordinates.size());
    if ((*initial)["qd"]) f.qd0 = initial_values(*initial, "qd", f.coordinates.size());
    return f;
  }

 private:
  static bool valid_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }
  static bool reserved(const std::string& s) {
    static const std::set<std::string> kReserved = {"t", "pi", "der",  "sin",  "cos",  "tan",  "asin", "acos",
                                                    "atan", "atan2", "sinh", "cosh", "tanh", "exp",  "log",
                                                    "sqrt", "abs",  "min",  "max",  "pow",  "sign"};
    return kReserved.count(s) > 0 || (s.size() > 4 && s.substr(s.size() - 4) == "_dot");
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }
  [[noreturn]] void fail_at(const toml::node* n, const std::string& message) const {
    if (!n) throw_at(path_, 1, 1, message);
    const Where w = where(*n);
    throw_at(path_, w.line, w.column, message);
  }
  void check_keys(const toml::table& t, const std::string& what, std::initializer_list<const char*> known) const {
    for (auto&& [key, node] : t) {
      bool ok = false;
      for (const char* k : known) ok = ok || key.str() == k;
      if (!ok) {
        std::string names;
        for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
        const Where w = where(node);
        throw_at(path_, w.line, w.column, "unknown key '" + echo_value(std::string(key.str())) + "' in " + what + " (known: " + names + ")");
      }
    }
  }
  std::string string_of(const toml::node& n, const std::string& what) const {
    if (const auto* s = n.as_string()) return s->get();
    fail_at(&n, what + " must be a string");
  }
  double number_of(const toml::node& n, const std::string& what) const {
    if (!n.is_number()) fail_at(&n, what + " must be a number");
    const double v = *n.value<double>();
    if (!std::isfinite(v)) fail_at(&n, what + " must be finite");
    return v;
  }
  std::string required_string(const toml::table& t, const char* key) const {
    if (!t[key]) throw_at(path_, 1, 1, std::string("missing ") + key);
    return string_of(*t[key].node(), key);
  }
  double required_number(const toml::table& t, const char* key, const std::string& what) const {
    if (!t[key]) fail_at(&t, what + " needs " + key);
    return number_of(*t[key].node(), what + " " + key);
  }
  std::vector<std::string> string_array(const toml::table& t, const char* key, bool required) const {
    if (!t[key]) {
      if (required) throw_at(path_, 1, 1, std::string("missing ") + key + " = [\"...\", ...]");
      return {};
    }
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), std::string(key) + " must be an array of strings");
    std::vector<std::string> out;
    for (const toml::node& el : *arr) out.push_back(string_of(el, std::string("each entry of ") + key));
    return out;
  }
  std::vector<SourceText> initial_values(const toml::table& t, const char* key, std::size_t n) const {
    if (!t[key]) fail_at(&t, std::string("[initial] needs ") + key);
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), std::string(key) + " must be an array of numbers (or expressions in the parameters)");
    if (arr->size() != n)
      fail_at(t[key].node(), std::string(key) + " has " + std::to_string(arr->size()) + " entries for " +
                                 std::to_string(n) + " coordinates");
    std::vector<SourceText> out;
    for (const toml::node& el : *arr) out.push_back(expression_of(el, std::string("each entry of ") + key));
    return out;
  }
  // An expression: a string (its first character's position: one past the opening quote of a one-line string)
  // or a number.
  SourceText expression_of(const toml::node& n, const std::string& what) const {
    const Where w = where(n);
    if (const auto* s = n.as_string()) return {s->get(), w.line, w.column + 1};
    if (n.is_number()) {
      // 17 significant digits: the number the file wrote, to the bit, when parsed back.
      const double v = *n.value<double>();
      if (!std::isfinite(v)) throw_at(path_, w.line, w.column, what + " must be finite");
      std::ostringstream text;
      text.precision(17);
      text << v;
      return {text.str(), w.line, w.column};
    }
    throw_at(path_, w.line, w.column, what + " must be an expression in a string");
  }
  std::vector<SourceText> expression_array(const toml::table& t, const char* key) const {
    if (!t[key]) return {};
    const toml::array* arr = t[key].as_array();
    if (!arr) fail_at(t[key].node(), std::string("constraints.") + key + " must be an array of expressions");
    std::vector<SourceText> out;
    for (const toml::node& el : *arr) out.push_back(expression_of(el, std::string(key) + " row"));
    return out;
  }

  const toml::table& root_;
  std::string path_;
};

}  // namespace

namespace {

constexpr std::string_view kHashMark = "@sha256:";

// PATH and HEX of PATH@sha256:HEX (HEX empty without the mark).
std::pair<std::string, std::string> split_identity(const std::string& problem) {
  const auto mark = problem.rfind(kHashMark);
  if (mark == std::string::npos) return {problem, ""};
  return {problem.substr(0, mark), problem.substr(mark + kHashMark.size())};
}

}  // namespace

void throw_at(const std::string& path, int line, int column, const std::string& message) {
  std::ostringstream s;
  s << path;
  if (line > 0) s << ":" << line << ":" << column;
  s << ": " << message;
  throw InputError(s.str());
}

bool is_mechanism_file(const std::string& problem) {
  const std::string path = split_identity(problem).first;
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
}

MechanismFile read_named_mechanism_file(const std::string& problem) {
  const auto [path, expected] = split_identity(problem);
  MechanismFile f = read_mechanism_file(path);
  if (!expected.empty() && expected != f.sha256)
    throw InputError("mechanism file " + path + " has changed since the result was computed (sha256 " + f.sha256 +
                     ", recorded " + expected + "): restore it, or name it without @sha256 to use it as it is now");
  return f;
}

std::string mechanism_file_identity(const std::string& problem) {
  const std::string path = split_identity(problem).first;
  try {
    return path + std::string(kHashMark) + sha256_hex(read_input_file(path, "mechanism file", kMaxMechanismFileBytes));
  } catch (const InputError&) {
    return problem;
  }
}

MechanismFile parse_mechanism_text(const std::string& text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw_at(path, static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column),
         "not TOML: " + echo_value(std::string(e.description())));  // toml++ may quote a newline it saw
  }
  return Reader(root, path).read();
}

MechanismFile read_mechanism_file(const std::string& path) {
  const std::string text = read_input_file(path, "mechanism file", kMaxMechanismFileBytes);
  MechanismFile f = parse_mechanism_text(text, path);
  f.sha256 = sha256_hex(text);
  return f;
}

}  // namespace clm
