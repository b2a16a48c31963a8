// A registered model with external generalized forces F_j(t) added on some of its coordinates, each read from a
// shape function (core/shape_schedule.hpp; in the round-trip tests of issue 13 the spline through the actuator
// forces that prescribed_shape recorded): everything else is the inner model's. Lets kkt be driven by the
// forces that held a prescribed shape, so that the two formulations can be compared on the same motion.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"
#include "core/shape_schedule.hpp"
#include "recorded_run.hpp"

namespace clm::testing {

class ForcedModel final : public Model {
 public:
  ForcedModel(std::shared_ptr<const Model> inner, std::vector<int> coordinates, std::vector<ShapeFunction> forces)
      : inner_(std::move(inner)), coordinates_(std::move(coordinates)), forces_(std::move(forces)) {}
  std::string name() const override { return inner_->name(); }
  std::string description() const override { return inner_->description(); }
  int n() const override { return inner_->n(); }
  int m() const override { return inner_->m(); }
  bool holonomic() const override { return inner_->holonomic(); }
  bool has_generalized_force() const override { return true; }
  int position_rows() const override { return inner_->position_rows(); }
  std::vector<std::pair<std::string, double>> parameters() const override { return inner_->parameters(); }
  std::unique_ptr<ModelWorkspace> make_workspace() const override { return inner_->make_workspace(); }
  void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                ModelTerms& out) const override {
    inner_->evaluate(t, q, qd, what, ws, out);
    if (what & kForce)
      for (size_t j = 0; j < coordinates_.size(); ++j) out.F[coordinates_[j]] += forces_[j].value(t);
  }
  void default_initial(Vec& q0, Vec& qd0) const override { inner_->default_initial(q0, qd0); }

 private:
  std::shared_ptr<const Model> inner_;
  std::vector<int> coordinates_;
  std::vector<ShapeFunction> forces_;
};

// The actuator forces a prescribed_shape run recorded, one function of t per actuated coordinate: each column
// written with every digit to a temporary sample file and read back as `file:` samples (the not-a-knot spline
// of core/shape_schedule.hpp). `stem` names the files (distinct per test, so that parallel tests do not meet).
inline std::vector<ShapeFunction> recorded_actuator_forces(const RecordedRun& run, const std::string& stem) {
  std::vector<ShapeFunction> forces;
  const Eigen::Index na = run.obs.empty() ? 0 : run.obs.front().actuator_force.size();
  for (Eigen::Index j = 0; j < na; ++j) {
    const std::filesystem::path file =
        std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(j) + ".txt");
    {
      std::ofstream out(file);
      out.precision(17);
      for (size_t k = 0; k < run.t.size(); ++k) out << run.t[k] << " " << run.obs[k].actuator_force[j] << "\n";
      out.close();
      if (!out) throw std::runtime_error("cannot write " + file.string());
    }
    forces.push_back(ShapeFunction::parse("file:" + file.string()));
    std::filesystem::remove(file);
  }
  return forces;
}

}  // namespace clm::testing
