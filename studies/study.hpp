// The skeleton every study shares (kozlov today; the long-time and work-precision studies next): a
// single-run config plus the study's own section, read through the study's option rows; a family of runs,
// every one prepared (and so checked) before the first starts, each executed, recorded and written whatever
// its status; a printed table; one HDF5 group of derived numbers (ResultGroup) beside the runs.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/option_table.hpp"
#include "runs/run_config.hpp"
#include "runs/runner.hpp"

namespace clm {

class ResultsWriter;

// A study's config: the single-run layers (the study's section removed) and the study's settings.
template <class Settings>
struct StudyConfig {
  ConfigLayer file;  // [run], [param], [initial], [formulation] as edited by --set
  Settings settings;
  std::map<std::string, ConfigValue> given;  // the study section's keys as written (presence checks)
};

namespace detail {
// Reads the file, splits off [section] (its --set edits too) and refuses [run.NAME] / [sweep] sections.
std::pair<ConfigLayer, std::map<std::string, ConfigValue>> read_study_layers(const std::string& path,
                                                                             const std::vector<std::string>& sets,
                                                                             const std::string& section);
std::string study_key_where(const std::string& section, const std::string& key, const ConfigValue& v);
}  // namespace detail

// Reads CONFIG.ini with --set edits; the study's section is parsed through `rows` (unknown keys, bad values:
// InputError naming section.key and where it was written).
template <class Settings>
StudyConfig<Settings> read_study_config(const std::string& path, const std::vector<std::string>& sets,
                                        const std::string& section, const std::vector<Option<Settings>>& rows) {
  StudyConfig<Settings> c;
  std::tie(c.file, c.given) = detail::read_study_layers(path, sets, section);
  for (const auto& [key, value] : c.given) {
    const Option<Settings>* row = nullptr;
    for (const auto& r : rows)
      if (r.key == key) row = &r;
    if (!row) {
      std::string known;
      for (const auto& r : rows) known += (known.empty() ? "" : ", ") + r.key;
      throw InputError("unknown config key '" + section + "." + key + "' in " + value.origin + " (known keys of [" +
                       section + "]: " + known + ")");
    }
    row->assign(c.settings, value.text, detail::study_key_where(section, key, value));
  }
  return c;
}

// The study section as resolved config text ([section] and one line per set row).
template <class Settings>
std::string study_section_text(const std::string& section, const std::vector<Option<Settings>>& rows,
                               const Settings& settings) {
  std::string s = "\n[" + section + "]\n";
  for (const auto& r : rows)
    if (const auto text = r.text(settings)) s += r.key + " = " + *text + "\n";
  return s;
}

// "  [section]\n    key = default    description" lines for --help.
template <class Settings>
std::string study_keys_help(const std::string& section, const std::vector<Option<Settings>>& rows) {
  std::string s = "  [" + section + "]\n";
  for (const auto& r : rows) {
    std::string lhs = "    " + r.key + " = " + r.default_text();
    if (lhs.size() < 36) s += lhs + std::string(36 - lhs.size(), ' ') + r.description + "\n";
    else s += lhs + "\n" + std::string(36, ' ') + r.description + "\n";
  }
  return s;
}

// Prepares every run of the family (InputError before anything runs).
std::vector<PreparedRun> prepare_runs(const std::vector<RunSpec>& specs, std::ostream& log);

// Executes one prepared run, streams it to the results file and frees its workspace; the record (with
// its samples when keep_samples) is returned for the study's own numbers.
RunRecord run_and_write(PreparedRun& run, ResultsWriter& writer, bool keep_samples);

}  // namespace clm
