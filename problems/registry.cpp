// One line per problem (DESIGN.md section 3).
#include "core/problem_registry.hpp"
#include "problems/chaplygin_sleigh.hpp"
#include "problems/closed_chain.hpp"
#include "problems/four_bar.hpp"
#include "problems/pendulum_cartesian.hpp"
#include "problems/pendulum_polar.hpp"
#include "problems/rolling_disk.hpp"
#include "problems/skate_incline.hpp"
#include "problems/slider_crank.hpp"
#include "problems/sphere_in_disguise.hpp"

namespace clm {

Registry<ProblemEntry>& problem_registry() {
  static Registry<ProblemEntry> registry = [] {
    Registry<ProblemEntry> r("problem");
    r.add(problem_entry<PendulumPolar>());
    r.add(problem_entry<PendulumCartesian>());
    r.add(problem_entry<SliderCrank>());
    r.add(problem_entry<FourBar>());
    r.add(problem_entry<ClosedChain>());
    r.add(problem_entry<ChaplyginSleigh>());
    r.add(problem_entry<RollingDisk>());
    r.add(problem_entry<SkateIncline>());
    r.add(problem_entry<SphereInDisguise>());
    return r;
  }();
  return registry;
}

std::shared_ptr<const Model> make_model(const std::string& problem, const std::map<std::string, double>& overrides,
                                        bool use_analytic) {
  return problem_registry().get(problem).make(overrides, use_analytic);
}

}  // namespace clm
