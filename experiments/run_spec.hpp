// The resolved description of one run, and how it is read from an INI config (DESIGN.md section 4) plus
// command-line overrides. Everything a user can get wrong is reported here, before anything runs, as an
// InputError with one line naming the offending key, value or file.
//
// Config sections: [run], [param], [initial], [formulation], [sweep]. Several runs in one file: each
// section [run.NAME] declares a run called NAME; it reads its keys from [run.NAME], [param.NAME],
// [initial.NAME], [formulation.NAME], each key falling back to the unsuffixed section. Without any
// [run.NAME] section the file describes a single run (the DESIGN.md format, unchanged).
//
// Precedence, highest first: command-line flags (--dt, --param, ...; they apply to every run),
// the file as edited by --set section.key=value, built-in defaults.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"

namespace clm {

struct RunSpec {
  std::string run_id;  // NAME of [run.NAME], or problem_formulation_integrator for a single run
  bool named = false;  // came from a [run.NAME] section
  std::string problem, formulation, integrator;
  double t_end = 10;
  double dt = 1e-3;  // fixed step, or the initial step of an adaptive integrator
  double rtol = 1e-10;
  double atol = 1e-12;
  double output_every = 0.01;  // sample spacing; 0: one sample per accepted step
  double divergence_threshold = 1e12;  // |y|_inf above it ends the run as "diverged"
  bool strict_initial = false;  // given q0/qd0 must already be consistent (to 1e-12)
  std::map<std::string, double> params;  // every parameter of the problem: defaults overlaid by the config
  std::optional<std::vector<double>> q0, qd0;  // given initial data (projected onto the constraints)
  FormulationOptions options;
};

// One [sweep] list: key (a [run] or [formulation] key, or param.NAME) and its values as written.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

struct RunConfig {
  std::string source;  // the config file, empty for a run given by flags only
  std::string out;     // the one HDF5 file of this invocation
  std::vector<RunSpec> runs;
  std::vector<SweepAxis> sweep;  // validated; expanded only by a future `sweep` command
};

// One value as written, and where it was written (a file name, "--set", or a flag such as "--dt").
struct ConfigValue {
  std::string text;
  std::string origin;
  long order = 1L << 40;  // position in the file (runs execute in the order their sections appear)
};
// section ("run", "run.sleigh_kkt", "param", ...) -> key -> value
using ConfigLayer = std::map<std::string, std::map<std::string, ConfigValue>>;

// Reads an INI file with Boost.Program_options (';' and '#' start comments). Throws InputError for a
// missing file, a syntax error, a key outside a section or a key given twice.
ConfigLayer read_config_file(const std::string& path);
// Same, but sections named in `extra_sections` (e.g. "kozlov") are read without validation: the command
// that owns them validates their keys.
ConfigLayer read_config_file(const std::string& path, const std::vector<std::string>& extra_sections);

// Applies "section.key=value" (the --set flag) to a layer, replacing what the file said.
void apply_set(ConfigLayer& layer, const std::string& assignment);

// Resolves and validates every run. `flags` holds command-line flags under the sections run, param,
// initial and formulation (origin = the flag); `out_flag` is --out when given.
RunConfig resolve_run_config(const std::string& source, const ConfigLayer& file, const ConfigLayer& flags,
                             const std::optional<std::string>& out_flag);

// Convenience: read_config_file + apply_set for each --set + resolve_run_config.
RunConfig load_run_config(const std::optional<std::string>& path, const std::vector<std::string>& sets,
                          const ConfigLayer& flags, const std::optional<std::string>& out_flag);

// The complete resolved configuration as INI text (every key explicit, numbers exact); reading it back
// with load_run_config gives the same runs. Stored in every HDF5 file (root attribute "config").
std::string to_config_text(const RunConfig& config);

// Keys of each section, with defaults and meaning, for --help and for validation.
struct ConfigKeyInfo {
  std::string section;
  std::string key;
  std::string default_value;
  std::string description;
};
const std::vector<ConfigKeyInfo>& config_keys();

}  // namespace clm
