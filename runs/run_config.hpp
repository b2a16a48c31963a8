// The resolved description of one run, and how it is read from an INI config (docs/design.md section 4) plus
// command-line overrides. Everything a user can get wrong is reported here, before anything runs, as an
// InputError with one line naming the offending key, value or file.
//
// Config sections: [run], [param], [initial], [formulation], [reference], [shape], [sweep], [sweep.zip] (the grid
// of `clmbench sweep`, studies/sweep_plan.hpp; validated here, not expanded by `run`). Several runs in one file:
// each section [run.NAME] declares a run called NAME; it reads its keys from [run.NAME], [param.NAME],
// [initial.NAME], [formulation.NAME], [shape.NAME], each key falling back to the unsuffixed section.
// [shape] keys are names of the problem's actuated coordinates, values ShapeFunction texts (core/shape_schedule.hpp). Without any
// [run.NAME] section the file describes a single run (the docs/design.md format, unchanged).
//
// Precedence, highest first: command-line flags (--dt, --param, ...; they apply to every run),
// the file as edited by --set section.key=value, built-in defaults.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/formulation.hpp"
#include "core/integrator.hpp"
#include "core/simulate.hpp"

namespace clm {

// The [reference] section: how the reference run is made that a run's errors (q, qd, lambda, scd, mescd)
// are measured against when its problem has no closed-form motion (runs/reference_cache.hpp).
// Defaults: kkt + dopri5 at rtol 1e-12, atol 1e-14 (docs/design.md section 5: measured accuracy and cost).
struct ReferenceSettings {
  // `clmbench run` computes a reference run only when asked: reference.compute = true, the --reference
  // flag, any other [reference] key or flag, or a [reference] section (even an empty one). A sweep
  // computes one for every run whatever this says. Closed forms are always used.
  bool compute = false;
  std::string formulation = "kkt";
  std::string integrator = "dopri5";
  double rtol = 1e-12;
  double atol = 1e-14;
};

// One run's settings. The defaults of the integrator and driver settings are those of IntegratorSettings
// and SimulationSettings (core), so they are stated once; t_end is the command line's own default.
// Every field a user can set is a row of run_options() (runs/run_options.hpp).
struct RunSpec {
  std::string run_id;  // NAME of [run.NAME], or problem_formulation_integrator for a single run
  bool named = false;  // came from a [run.NAME] section
  std::string problem, formulation, integrator;
  double t_end = 10;
  double dt = IntegratorSettings{}.dt;  // fixed step, or the initial step of an adaptive integrator
  double rtol = IntegratorSettings{}.rtol;
  double atol = IntegratorSettings{}.atol;
  double dt_min = IntegratorSettings{}.dt_min;
  double dt_max = IntegratorSettings{}.dt_max;
  bool fixed_step = IntegratorSettings{}.fixed_step;
  std::string jacobian = "auto";  // implicit integrators: auto | finite_difference | autodiff (run_options.cpp)
  std::string cvode_method = IntegratorSettings{}.cvode_method;  // cvode: bdf | adams
  double output_every = SimulationSettings{}.output_every;  // sample spacing; 0: one sample per accepted step
  double divergence_threshold = SimulationSettings{}.divergence_threshold;  // |y|_inf above it: "diverged"
  long max_steps = SimulationSettings{}.max_steps;  // attempted steps (accepted + rejected) before "failed"
  double max_output_gb = 10;  // estimated uncompressed samples above it: refused before the run (0: no limit)
  bool strict_initial = false;  // given q0/qd0 must already be consistent (to 1e-12)
  // penalty and added_mass: estimate the gap to the N -> infinity motion from a companion run at N / 2
  // (runs/limit_gap.hpp); a Kozlov study, which measures that gap against the limit itself, turns it off.
  bool limit_gap_estimate = true;
  // A mechanism file's evaluation: auto (native where a C compiler is found, else the tape), native, tape
  // (runs/mechanism/file_model.hpp).
  std::string mechanism_evaluation = "auto";
  double timing_budget = 0.05;  // s of CPU time: shorter runs are timed again (runs/runner.hpp); 0: once
  std::map<std::string, double> params;  // every parameter of the problem: defaults overlaid by the config
  std::optional<std::vector<double>> q0, qd0;  // given initial data (projected onto the constraints)
  // [shape]: the prescribed actuated coordinates as (coordinate name, ShapeFunction text), in q order; the
  // parsed schedule is options.shape (core/shape_schedule.hpp). Empty unless the run has a [shape].
  std::vector<std::pair<std::string, std::string>> shape;
  FormulationOptions options;
  ReferenceSettings reference;
  // A run of `clmbench sweep`: its place in the grid (grid order) and the point as "key=value ..."
  // (written as the run attributes sweep_index and sweep_point); -1 / empty outside a sweep.
  long sweep_index = -1;
  std::string sweep_point;

  IntegratorSettings integrator_settings() const;
  SimulationSettings simulation_settings() const;
};

// One [sweep] or [sweep.zip] list: key (a bare [run] key, or section.key: run.KEY, formulation.KEY,
// param.NAME, shape.NAME) and its values as written. The lists of [sweep.zip] vary together (one axis of the grid).
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  bool zip = false;   // from [sweep.zip]
  long order = 0;     // position in the file (the grid's axes follow the file's order)
  std::string origin;  // the config file
};

struct RunConfig {
  std::string source;  // the config file, empty for a run given by flags only
  std::string out;     // the one HDF5 file of this invocation
  std::vector<RunSpec> runs;
  std::vector<SweepAxis> sweep;  // [sweep] then [sweep.zip], each by key; expanded by `clmbench sweep`
};

// One value as written, and where it was written (a file name, "--set", or a flag such as "--dt").
struct ConfigValue {
  std::string text;
  std::string origin;
  long order = 1L << 40;  // position in the file (runs execute in the order their sections appear)
};
// section ("run", "run.sleigh_kkt", "param", ...) -> key -> value
struct ConfigLayer : std::map<std::string, std::map<std::string, ConfigValue>> {
  // Where each [section] header stands in the file (same scale as ConfigValue::order), so that a section
  // without keys still exists and has its place: an empty [run.NAME] is a run with every key inherited.
  std::map<std::string, long> section_order;
};

// Reads an INI file with Boost.Program_options (';' and '#' start comments). Throws InputError for a
// missing file, a syntax error, a key outside a section or a key given twice.
ConfigLayer read_config_file(const std::string& path);
// Same, but sections named in `extra_sections` (e.g. "kozlov") are read without validation: the command
// that owns them validates their keys.
ConfigLayer read_config_file(const std::string& path, const std::vector<std::string>& extra_sections);

// Applies "section.key=value" (the --set flag) to a layer, replacing what the file said.
void apply_set(ConfigLayer& layer, const std::string& assignment);

// The [sweep] and [sweep.zip] lists of a file, each checked (known key, non-empty, every value admissible
// on its own, zip lists of one length); InputError otherwise. In key order, [sweep] first.
std::vector<SweepAxis> read_sweep_axes(const ConfigLayer& file);

// The (section, key) a [sweep] key sets: a bare key is a [run] key, "param.b" is ("param", "b").
std::pair<std::string, std::string> sweep_target(const std::string& sweep_key);

// The file layer as normalized INI text (sections in file order, keys as written): the configuration of a
// sweep as a whole (root attribute sweep_config), whose runs' resolved options are in their attributes.
std::string config_layer_text(const ConfigLayer& layer);

// Resolves and validates every run. `flags` holds command-line flags under the sections run, param, shape,
// initial and formulation (origin = the flag); `out_flag` is --out when given.
RunConfig resolve_run_config(const std::string& source, const ConfigLayer& file, const ConfigLayer& flags,
                             const std::optional<std::string>& out_flag);

// Convenience: read_config_file + apply_set for each --set + resolve_run_config.
RunConfig load_run_config(const std::optional<std::string>& path, const std::vector<std::string>& sets,
                          const ConfigLayer& flags, const std::optional<std::string>& out_flag);

// The complete resolved configuration as INI text (every key explicit, numbers exact); reading it back
// with load_run_config gives the same runs. Stored in every HDF5 file (root attribute "config").
std::string to_config_text(const RunConfig& config);


// Every config key with its default and meaning (--help, the CLI test), made from run_options() plus the
// file-level key run.out and the problem parameters [param] <name>.
struct ConfigKeyInfo {
  std::string section;
  std::string key;
  std::string default_value;
  std::string description;
};
const std::vector<ConfigKeyInfo>& config_keys();

}  // namespace clm
