#include "runs/recorded_options.hpp"

#include <vector>

#include "runs/run_options.hpp"

namespace clm {

RunOptions read_run_options(const std::string& path, const std::string& run_id) {
  std::vector<RecordedOption> recorded;
  for (const auto& o : run_options())
    if (!o.attribute.empty()) recorded.push_back({o.qualified(), o.attribute, o.type == OptionType::kBool});
  return read_run_attributes(path, run_id, recorded);
}

}  // namespace clm
