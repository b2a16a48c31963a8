// The Formulation interface: one way of writing the constrained equations as y' = f(t, y), in the manner
// of RBDL's interchangeable constrained solvers. A formulation owns its Model workspace and every
// buffer the hot path needs, allocated once at construction.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/ode.hpp"
#include "core/registry.hpp"

namespace clm {

// Options that apply across formulations ([formulation] section of a config).
struct FormulationOptions {
  double baumgarte_alpha = 0;  // velocity-level Baumgarte gain (kkt, schur): -2 alpha A qd
  double baumgarte_beta = 0;   // position-level gain (kkt, schur; holonomic): -beta^2 h
  double N = 1e4;              // penalty / added-mass coefficient (issue 3)
  double k = 0;                // penalty position spring for holonomic problems (issue 3)
  // nullspace with coordinate partitioning: re-pick the independent coordinates when |A|_1 |A_D^-1|_1
  // exceeds this. Measured: at 1e6 kkt and nullspace differ by 2e-7 on the sleigh (1e-2 on a slack
  // chain); at 10 by 1e-11 (5e-7), and a re-pick costs one QR of A.
  double repartition_threshold = 10;
  // vakonomic: initial multipliers lambda(0) (m values, vakonomic sign convention of DESIGN.md section 1);
  // empty means zeros, the limit of added_mass started on the constraint (seed 004, Theorem 2).
  std::vector<double> lambda0;
  // added_mass: "direct" integrates (M + N A^T A) qdd = ... on (q, qd) (DESIGN.md's form); "multiplier"
  // integrates (q, qd, lambda = -N A qd) with the vakonomic KKT matrix plus compliance 1/N (issue 3).
  std::string added_mass_form = "direct";
  // fernandez_bloch: start this far off the constraint on purpose, qd0 += offset X (1,..,1)/sqrt(m) after
  // the projection onto A qd = 0, so |A qd0| = offset (drift study of the restricted flow, issue 4).
  double initial_offset = 0;
};

// What a run records at one sample time.
struct Observation {
  Vec q, qd, lambda;
  double energy = 0;
  double drift_position = 0;  // |h(q)|, holonomic problems only
  double drift_velocity = 0;  // |A(q) qd|
  std::vector<double> extras;  // values for Formulation::extra_names()
};

class Formulation : public OdeSystem {
 public:
  Formulation(std::shared_ptr<const Model> model, FormulationOptions options);
  ~Formulation() override;

  virtual std::string name() const = 0;
  // Maps a consistent (q, qd) to the formulation's state y.
  virtual void initial_state(const Vec& q, const Vec& qd, Vec& y) = 0;
  // Reads q, qd and lambda back out of y (not on the hot path); energy and drift are filled by the base.
  virtual void observe(double t, const Vec& y, Observation& obs);
  virtual std::vector<std::string> extra_names() const { return {}; }
  // Which motion the formulation computes for nonholonomic constraints: the nonholonomic one (kkt, schur,
  // nullspace, penalty as N -> inf) or the vakonomic one (vakonomic, added_mass as N -> inf; Kozlov,
  // seed 004). A problem's closed form is the nonholonomic motion, so it is a reference only for the former.
  virtual bool vakonomic_motion() const { return false; }

  const Model& model() const { return *model_; }
  const FormulationOptions& options() const { return options_; }

 protected:
  // Formulation-specific part of observe(): q, qd, lambda (and extras).
  virtual void read_state(double t, const Vec& y, Observation& obs) = 0;
  // Checks that A(q) has full row rank m; throws InputError naming the problem and the rank found.
  void require_full_rank(const Vec& q) const;

  std::shared_ptr<const Model> model_;
  FormulationOptions options_;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  int n_, m_;
};

struct FormulationEntry {
  std::string name;
  std::string description;
  // Empty when the formulation applies to the model, otherwise the reason it does not.
  std::function<std::string(const Model&)> refuses;
  std::function<std::unique_ptr<Formulation>(std::shared_ptr<const Model>, const FormulationOptions&)> make;
};

Registry<FormulationEntry>& formulation_registry();

}  // namespace clm
