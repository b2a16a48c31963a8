// One line per problem (docs/design.md section 3). Registration lives in the experiments layer: it instantiates
// each problem's capability builders (experiments/problem_capabilities.hpp), which come from formulations
// and experiments, so problems/ stays free of them (problems, formulations and integrators are siblings).
#include "core/problem_registry.hpp"
#include "experiments/problem_capabilities.hpp"
#include "problems/andrews_squeezer.hpp"
#include "problems/ball_on_turntable.hpp"
#include "problems/bicycle.hpp"
#include "problems/bricard.hpp"
#include "problems/car_axis.hpp"
#include "problems/chaplygin_sleigh.hpp"
#include "problems/charged_particle.hpp"
#include "problems/closed_chain.hpp"
#include "problems/contact_oscillator.hpp"
#include "problems/contact_oscillator_nr.hpp"
#include "problems/driven_pendulum.hpp"
#include "problems/four_bar.hpp"
#include "problems/iftomm_pendulum.hpp"
#include "problems/kinematic_car.hpp"
#include "problems/n_four_bar.hpp"
#include "problems/pendulum_cartesian.hpp"
#include "problems/pendulum_polar.hpp"
#include "problems/roller_racer.hpp"
#include "problems/rolling_disk.hpp"
#include "problems/skate_incline.hpp"
#include "problems/slider_crank.hpp"
#include "problems/snakeboard.hpp"
#include "problems/sphere_in_disguise.hpp"
#include "problems/suslov.hpp"
#include "problems/unicycle.hpp"

namespace clm {

namespace {
template <Problem P>
ProblemEntry registered() {
  return problem_entry<P>([](Model& model, const P& p) { add_capabilities(model, p); });
}
}  // namespace

Registry<ProblemEntry>& problem_registry() {
  static Registry<ProblemEntry> registry = [] {
    Registry<ProblemEntry> r("problem");
    r.add(registered<PendulumPolar>());
    r.add(registered<PendulumCartesian>());
    r.add(registered<SliderCrank>());
    r.add(registered<FourBar>());
    r.add(registered<ClosedChain>());
    r.add(registered<ChaplyginSleigh>());
    r.add(registered<RollingDisk>());
    r.add(registered<SkateIncline>());
    r.add(registered<SphereInDisguise>());
    r.add(registered<AndrewsSqueezer>());
    r.add(registered<ContactOscillator>());
    r.add(registered<ContactOscillatorNr>());
    r.add(registered<ChargedParticle>());
    r.add(registered<Bricard>());
    r.add(registered<IftommPendulum>());
    r.add(registered<DrivenPendulum>());
    r.add(registered<CarAxis>());
    r.add(registered<BallOnTurntable>());
    r.add(registered<Suslov>());
    r.add(registered<Bicycle>());
    r.add(registered<NFourBar>());
    r.add(registered<KinematicCar>());
    r.add(registered<Unicycle>());
    r.add(registered<Snakeboard>());
    r.add(registered<RollerRacer>());
    return r;
  }();
  return registry;
}

std::shared_ptr<const Model> make_model(const std::string& problem, const std::map<std::string, double>& overrides,
                                        bool use_analytic) {
  return problem_registry().get(problem).make(overrides, use_analytic);
}

}  // namespace clm
