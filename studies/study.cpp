#include "studies/study.hpp"

#include "runs/results_writer.hpp"

namespace clm {

namespace detail {

std::pair<ConfigLayer, std::map<std::string, ConfigValue>> read_study_layers(const std::string& path,
                                                                             const std::vector<std::string>& sets,
                                                                             const std::string& section) {
  ConfigLayer file = read_config_file(path, {section});
  std::map<std::string, ConfigValue> own;
  if (auto s = file.find(section); s != file.end()) {
    own = s->second;
    file.erase(s);
  }
  const std::string prefix = section + ".";
  for (const auto& assignment : sets) {
    const auto eq = assignment.find('=');
    const std::string name = eq == std::string::npos ? std::string() : trim(assignment.substr(0, eq));
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size()) {
      own[name.substr(prefix.size())] = {trim(assignment.substr(eq + 1)), "--set", 1L << 40};
    } else {
      apply_set(file, assignment);
    }
  }
  if (own.empty())
    throw InputError("config file '" + path + "' has no [" + section + "] section (see clmbench " + section + " --help)");
  for (const auto& [name, keys] : file) {
    if (name.find('.') != std::string::npos || name == "sweep") {
      throw InputError("config section [" + name + "] in " + path + " is not used by " +
                       section + " (one study per file: [run], [param], [initial], [formulation], [" + section + "])");
    }
  }
  return {std::move(file), std::move(own)};
}

std::string study_key_where(const std::string& section, const std::string& key, const ConfigValue& v) {
  return section + "." + key + (v.origin == "--set" ? std::string(" (--set)") : " in " + v.origin);
}

}  // namespace detail

std::vector<PreparedRun> prepare_runs(const std::vector<RunSpec>& specs, std::ostream& log) {
  std::vector<PreparedRun> runs;
  for (const RunSpec& spec : specs) runs.push_back(prepare_run(spec, log));
  return runs;
}

RunRecord run_and_write(PreparedRun& run, ResultsWriter& writer, bool keep_samples) {
  RunRecord record = execute_run(run, &writer.run_observer(), keep_samples);
  run.formulation.reset();  // free the workspace early; the record has been written
  return record;
}

}  // namespace clm
