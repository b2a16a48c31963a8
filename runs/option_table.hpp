// The one table of options. Each row says everything about one config key: section, key, type, unit,
// meaning, the rule a value must satisfy, its command-line flag and its HDF5 attribute name, and how it is
// read from and written into the struct it configures. Config parsing, command-line flags, --help, the
// resolved-config text, the run attributes, `clmbench info --run` and docs/options.md are all produced
// from the rows, so adding an option is one row (plus the field it sets).
//
// Defaults are not written in the table: a row reads the default from a default-constructed Target, so the
// struct's member initializer is the one place a default lives.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/integrator.hpp"
#include "core/model.hpp"
#include "core/types.hpp"
#include "core/value_parsing.hpp"

namespace clm {

enum class OptionType { kName, kText, kChoice, kNumber, kCount, kBool, kNumberList };

// An interval a number must lie in, with open or closed ends; prints as "> 0", ">= 0 and < 1", ...
struct NumberRule {
  double lo = -std::numeric_limits<double>::infinity();
  bool lo_open = false;
  double hi = std::numeric_limits<double>::infinity();
  bool hi_open = false;

  bool admits(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  std::string text() const {
    std::string s;
    if (std::isfinite(lo)) s += (lo_open ? "> " : ">= ") + format_number(lo);
    if (std::isfinite(hi)) s += (s.empty() ? "" : " and ") + std::string(hi_open ? "< " : "<= ") + format_number(hi);
    return s.empty() ? "finite" : s;
  }
};
inline NumberRule positive() { return {0, true}; }
inline NumberRule non_negative() { return {0, false}; }
inline NumberRule any_number() { return {}; }

// The value of an option as an HDF5 attribute (bools and counts are stored as integers).
using AttributeValue = std::variant<double, long, std::string, std::vector<double>>;

template <class Target>
struct Option {
  std::string section;      // "run", "initial", "formulation", "kozlov", ...
  std::string key;          // the config key
  OptionType type = OptionType::kNumber;
  std::string unit;         // "s" etc., empty when dimensionless
  std::string description;  // one line; --help, docs/options.md
  std::string flag;         // command-line flag without "--" (empty: config only)
  std::string attribute;    // HDF5 run attribute (empty: not recorded per run)
  std::string rule;         // the admissible values in words ("> 0", "direct or multiplier", ...)
  std::string default_override;  // shown instead of the default value ("(required)", "problem default")
  // Parses `text` (from `where`: "run.dt in x.ini", "--dt"), validates it and stores it. InputError on failure.
  std::function<void(Target&, const std::string& text, const std::string& where)> assign;
  // The value as config text (reads back through assign to the same value); nullopt when unset.
  std::function<std::optional<std::string>(const Target&)> text;
  // The value as an HDF5 attribute; nullopt when unset.
  std::function<std::optional<AttributeValue>(const Target&)> attribute_value;
  // Why a value set for this run does nothing (the formulation or integrator does not read it); empty when
  // it takes effect. Unset (null) for options that always act.
  std::function<std::string(const Target&, const Model&, const Integrator&)> no_effect;

  std::string default_text() const {
    if (!default_override.empty()) return default_override;
    const auto t = text(Target{});
    return t ? *t : std::string("(none)");
  }
  std::string qualified() const { return section + "." + key; }
};

// Row builders. `field` is a generic lambda returning a reference to the member, e.g.
// [](auto& r) -> auto& { return r.integration.dt; }, so one accessor serves reads and writes.
namespace option {

// The descriptive part of a row; the builders below add type, rule and accessors.
template <class Target>
Option<Target> row(std::string section, std::string key, OptionType type, std::string description, std::string flag,
                   std::string attribute) {
  Option<Target> o;
  o.section = std::move(section);
  o.key = std::move(key);
  o.type = type;
  o.description = std::move(description);
  o.flag = std::move(flag);
  o.attribute = std::move(attribute);
  return o;
}

template <class Target, class Field>
Option<Target> number(std::string section, std::string key, Field field, NumberRule rule, std::string unit,
                      std::string description, std::string flag, std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kNumber, std::move(description), std::move(flag),
                                   std::move(attribute));
  o.unit = std::move(unit);
  o.rule = rule.text();
  o.assign = [field, rule](Target& t, const std::string& text, const std::string& where) {
    const double v = parse_number(text, where);
    if (!rule.admits(v)) throw InputError(where + " must be " + rule.text() + " (got " + format_number(v) + ")");
    field(t) = v;
  };
  o.text = [field](const Target& t) -> std::optional<std::string> { return format_number(field(t)); };
  o.attribute_value = [field](const Target& t) -> std::optional<AttributeValue> { return field(t); };
  return o;
}

template <class Target, class Field>
Option<Target> count(std::string section, std::string key, Field field, long min, std::string description,
                     std::string flag, std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kCount, std::move(description), std::move(flag),
                                   std::move(attribute));
  o.rule = "an integer >= " + std::to_string(min);
  o.assign = [field, min, rule = o.rule](Target& t, const std::string& text, const std::string& where) {
    const double v = parse_number(text, where);
    if (!(v >= static_cast<double>(min) && v <= 9e18 && v == std::floor(v)))
      throw InputError(where + " must be " + rule + " (got " + format_number(v) + ")");
    field(t) = static_cast<long>(v);
  };
  o.text = [field](const Target& t) -> std::optional<std::string> { return std::to_string(field(t)); };
  o.attribute_value = [field](const Target& t) -> std::optional<AttributeValue> { return long(field(t)); };
  return o;
}

template <class Target, class Field>
Option<Target> boolean(std::string section, std::string key, Field field, std::string description, std::string flag,
                       std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kBool, std::move(description), std::move(flag),
                                   std::move(attribute));
  o.rule = "true or false";
  o.assign = [field](Target& t, const std::string& text, const std::string& where) {
    field(t) = parse_bool(text, where);
  };
  o.text = [field](const Target& t) -> std::optional<std::string> {
    return std::string(field(t) ? "true" : "false");
  };
  o.attribute_value = [field](const Target& t) -> std::optional<AttributeValue> { return long(field(t) ? 1 : 0); };
  return o;
}

template <class Target, class Field>
Option<Target> choice(std::string section, std::string key, Field field, std::vector<std::string> choices,
                      std::string description, std::string flag, std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kChoice, std::move(description), std::move(flag),
                                   std::move(attribute));
  for (size_t i = 0; i < choices.size(); ++i)
    o.rule += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  o.assign = [field, choices, rule = o.rule](Target& t, const std::string& text, const std::string& where) {
    const std::string v = trim(text);
    for (const auto& c : choices)
      if (v == c) {
        field(t) = v;
        return;
      }
    throw InputError("bad value '" + echo_value(v) + "' for " + where + " (expected " + rule + ")");
  };
  o.text = [field](const Target& t) -> std::optional<std::string> { return std::string(field(t)); };
  o.attribute_value = [field](const Target& t) -> std::optional<AttributeValue> { return std::string(field(t)); };
  return o;
}

// A list of numbers held in a std::vector<double> (empty: unset) or a std::optional<std::vector<double>>.
template <class Target, class Field>
Option<Target> number_list(std::string section, std::string key, Field field, std::string rule,
                           std::string description, std::string flag, std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kNumberList, std::move(description), std::move(flag),
                                   std::move(attribute));
  o.rule = std::move(rule);
  o.assign = [field](Target& t, const std::string& text, const std::string& where) {
    field(t) = parse_number_list(text, where);
  };
  auto values = [field](const Target& t) -> const std::vector<double>* {
    const auto& f = field(t);
    if constexpr (requires { f.has_value(); }) {
      return f ? &*f : nullptr;
    } else {
      return f.empty() ? nullptr : &f;
    }
  };
  o.text = [values](const Target& t) -> std::optional<std::string> {
    const auto* v = values(t);
    if (!v) return std::nullopt;
    std::string s;
    for (double x : *v) s += (s.empty() ? "" : " ") + format_number(x);
    return s;
  };
  // Recorded even when unset (an empty list: a null dataspace, which `info --run` shows as "(unset)"), so that
  // every key of the table is an attribute of the run.
  o.attribute_value = [values](const Target& t) -> std::optional<AttributeValue> {
    const auto* v = values(t);
    return v ? *v : std::vector<double>{};
  };
  return o;
}

// A registry name (problem, formulation, integrator) or free text; `check` validates it (may be empty).
template <class Target, class Field>
Option<Target> name(std::string section, std::string key, Field field, std::function<void(const std::string&)> check,
                    std::string rule, std::string description, std::string flag, std::string attribute) {
  Option<Target> o = row<Target>(std::move(section), std::move(key), OptionType::kName, std::move(description), std::move(flag),
                                   std::move(attribute));
  o.rule = std::move(rule);
  o.assign = [field, check, rule = o.rule](Target& t, const std::string& text, const std::string& where) {
    const std::string v = trim(text);
    // Control characters are refused (echo_value would show them escaped); a long value is not (a mechanism
    // file's identity PATH@sha256:HEX is over 70 characters).
    for (const unsigned char c : v)
      if (c < 0x20 || c == 0x7f)
        throw InputError("bad value '" + echo_value(v) + "' for " + where + " (expected " + rule + ")");
    if (check) check(v);
    field(t) = v;
  };
  o.text = [field](const Target& t) -> std::optional<std::string> {
    const std::string& v = field(t);
    if (v.empty()) return std::nullopt;
    return v;
  };
  o.attribute_value = [field](const Target& t) -> std::optional<AttributeValue> {
    const std::string& v = field(t);
    if (v.empty()) return std::nullopt;
    return v;
  };
  return o;
}

}  // namespace option

// Markdown table of a set of rows (docs/options.md).
template <class Target>
std::string options_markdown(const std::vector<Option<Target>>& rows) {
  std::string s = "| key | default | unit | admissible | flag | HDF5 attribute | meaning |\n|---|---|---|---|---|---|---|\n";
  auto cell = [](std::string v) {
    std::string out;
    for (char c : v) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  for (const auto& o : rows) {
    s += "| `" + o.qualified() + "` | " + cell(o.default_text()) + " | " + (o.unit.empty() ? "-" : o.unit) + " | " +
         cell(o.rule) + " | " + (o.flag.empty() ? std::string("-") : "`--" + o.flag + "`") + " | " +
         (o.attribute.empty() ? std::string("-") : "`" + o.attribute + "`") + " | " + cell(o.description) + " |\n";
  }
  return s;
}

}  // namespace clm
