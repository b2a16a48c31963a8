// The runs of `clmbench sweep`: the Cartesian product of the [sweep] lists (the [sweep.zip] lists vary
// together, as one axis), times the named runs of a multi-run config. Each point's values are applied as
// the highest-precedence config layer (where command-line flags go for `run`), so a sweep value is checked
// exactly like a config value, and every run is resolved before anything starts.
//
// Grid order: the axes in the order their keys appear in the file, the first varying slowest; within a
// point, the named runs in the order of their [run.NAME] sections. A run's id is its index, zero-padded to
// the width of the largest, then the name (multi-run configs) and key=value for every axis, e.g.
// "07_formulation=schur_dt=1e-3": unique, readable, a valid HDF5 name and file name, and a sorted listing
// is grid order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/config_identity.hpp"
#include "runs/run_config.hpp"

namespace clm {

struct PlannedRun {
  RunSpec spec;  // resolved; run_id, sweep_index and sweep_point set
};

struct SweepPlan {
  std::string source;        // the config file
  std::string out;           // --out, [run] out, or results/<config name>.h5
  std::string sweep_config;  // the file (after --set) as normalized INI: root attribute sweep_config
  std::string shape;         // "formulation (3) x dt (3) x param.b (2)"
  std::vector<std::string> varying;  // the keys the grid varies, in grid order (zip keys together)
  std::vector<PlannedRun> runs;      // grid order; runs[i].spec.sweep_index == i
};

// Resolves every run of the grid. InputError (one line: "[sweep] run <id>: ...", naming key and value)
// for the first run that does not resolve.
SweepPlan plan_sweep(const std::string& source, const ConfigLayer& file, const std::optional<std::string>& out_flag);

// The resolved configuration of one run alone (to_config_text): what its part file records as `config`
// and what --resume compares. Made on demand (a plan of many runs does not hold every text).
std::string part_config(const SweepPlan& plan, const RunSpec& spec);

}  // namespace clm
