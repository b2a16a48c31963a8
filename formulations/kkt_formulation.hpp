// Full KKT system (seed 000, eq. 2.6): [M -A^T; A 0] [qdd; lambda] = [F - c; -Adot qd], one (n+m) LU
// solve per evaluation. Sign convention: M qdd + c = F + A^T lambda.
#pragma once

#include "formulations/acceleration_formulation.hpp"

namespace clm {

class KktFormulation final : public AccelerationFormulation {
 public:
  KktFormulation(std::shared_ptr<const Model> model, FormulationOptions options);
  std::string name() const override { return "kkt"; }

 protected:
  void solve_accelerations() override;

 private:
  Mat K_;
  Vec b_, x_, gamma_;
  Eigen::PartialPivLU<Mat> lu_;
};

}  // namespace clm
