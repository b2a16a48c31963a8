#include "studies/sweep_plan.hpp"

#include "io/config_identity.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/types.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

// One axis of the grid: one [sweep] list, or all [sweep.zip] lists together.
struct GridAxis {
  std::vector<const SweepAxis*> lists;  // same length
  size_t size() const { return lists.front()->values.size(); }
};

// A value as part of a run id / file name: letters, digits and . + - = kept, anything else '_'.
std::string id_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '=';
    out += keep ? c : '_';
  }
  return out;
}

// Run ids are also part-file names (OUT.parts/<id>.h5): well under the 255 bytes of a file name. The
// zero-padded index keeps a clipped id unique.
constexpr size_t kMaxIdLength = 200;

}  // namespace


std::string part_config(const SweepPlan& plan, const RunSpec& spec) {
  RunConfig alone;
  alone.out = plan.out;
  alone.runs = {spec};
  return to_config_text(alone);
}

SweepPlan plan_sweep(const std::string& source, const ConfigLayer& file, const std::optional<std::string>& out_flag) {
  SweepPlan plan;
  plan.source = source;
  // The sweep's identity: its config without the output path (shards of copies that each name their own
  // `out` are one sweep, issue 20).
  ConfigLayer identity = file;
  if (auto run = identity.find("run"); run != identity.end()) run->second.erase("out");
  plan.sweep_config = config_layer_text(identity);
  std::vector<SweepAxis> lists = read_sweep_axes(file);
  std::stable_sort(lists.begin(), lists.end(), [](const SweepAxis& a, const SweepAxis& b) { return a.order < b.order; });

  std::vector<GridAxis> axes;
  std::optional<size_t> zip_axis;
  for (const SweepAxis& list : lists) {
    if (list.zip && zip_axis) {
      axes[*zip_axis].lists.push_back(&list);
      continue;
    }
    if (list.zip) zip_axis = axes.size();
    axes.push_back({{&list}});
  }
  // Counted in double: the product of the axes' sizes overflows size_t (8 axes of 256 values are 2^64 points,
  // which wrapped to 0 and planned "0 runs"); every count up to the limit is exact in a double.
  double grid_points = 1;
  for (const auto& a : axes) {
    grid_points *= static_cast<double>(a.size());
    std::string label;
    for (const auto* l : a.lists) {
      label += (label.empty() ? "" : ", ") + l->key;
      plan.varying.push_back(l->key);
    }
    if (a.lists.size() > 1) label = "(" + label + ")";
    plan.shape += (plan.shape.empty() ? "" : " x ") + label + " (" + std::to_string(a.size()) + ")";
  }
  // Each planned run holds its resolved spec (about a kilobyte): a million runs is a cluster's worth.
  if (grid_points > 1e6)
    throw InputError("the [sweep] grid has " + format_number(grid_points) + " points (at most 1e6; split the sweep)");
  const size_t points = static_cast<size_t>(grid_points);

  // The file without its sweep sections: each point adds its values as the top layer.
  ConfigLayer base = file;
  base.erase("sweep");
  base.erase("sweep.zip");
  // A sweep measures every run against the reference (work-precision): [reference] compute defaults to true
  // here (`run` computes a reference run only when asked); `compute = false` in the file turns it off.
  if (!base["reference"].count("compute")) base["reference"]["compute"] = {"true", "clmbench sweep's default"};

  if (out_flag) {
    plan.out = *out_flag;
  } else if (auto s = file.find("run"); s != file.end() && s->second.count("out")) {
    plan.out = trim(s->second.at("out").text);
  } else {
    plan.out = "results/" + std::filesystem::path(source).stem().string() + ".h5";
  }
  if (plan.out.empty()) throw InputError("empty output file name (run.out / --out)");

  std::vector<size_t> at(axes.size(), 0);  // the point's index along each axis
  size_t width = 0;
  for (size_t point = 0; point < points; ++point) {
    ConfigLayer layer;
    std::string id_part, point_text;
    for (size_t a = 0; a < axes.size(); ++a) {
      for (const SweepAxis* l : axes[a].lists) {
        const std::string& value = l->values[at[a]];
        const auto [section, key] = sweep_target(l->key);
        layer[section][key] = {value, std::string(l->zip ? "[sweep.zip]" : "[sweep]") + " of " + l->origin};
        id_part += "_" + id_text(l->key + "=" + value);
        point_text += (point_text.empty() ? "" : " ") + l->key + "=" + value;
      }
    }
    RunConfig resolved;
    try {
      resolved = resolve_run_config(source, base, layer, plan.out);
    } catch (const InputError& e) {
      throw InputError("[sweep] run " + std::to_string(plan.runs.size()) + " (" + point_text + "): " + e.what());
    }
    if (point == 0) {
      const size_t total = points * resolved.runs.size();
      width = std::to_string(total == 0 ? 0 : total - 1).size();
    }
    for (RunSpec& spec : resolved.runs) {
      const long index = static_cast<long>(plan.runs.size());
      std::string number = std::to_string(index);
      number = std::string(width > number.size() ? width - number.size() : 0, '0') + number;
      std::string id = number + (spec.named ? "_" + spec.run_id : std::string()) + id_part;
      if (id.size() > kMaxIdLength) id.resize(kMaxIdLength);
      spec.sweep_point = (spec.named ? "run=" + spec.run_id + (point_text.empty() ? "" : " ") : std::string()) + point_text;
      spec.run_id = id;
      spec.sweep_index = index;
      spec.named = false;  // one run per part file: written as a plain [run]
      plan.runs.push_back({spec});
    }
    // Next point: the last axis varies fastest.
    for (size_t a = axes.size(); a-- > 0;) {
      if (++at[a] < axes[a].size()) break;
      at[a] = 0;
    }
  }
  if (plan.shape.empty()) plan.shape = "no [sweep] lists: 1 point";
  const size_t per_point = points ? plan.runs.size() / points : 0;
  if (per_point > 1) plan.shape += " x " + std::to_string(per_point) + " named runs";
  return plan;
}

}  // namespace clm
