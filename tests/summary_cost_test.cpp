// Issue 9, defect 1: the summary's reference motion is carried from sample to sample, so the closed form
// integrates each stretch of time once (the sleigh's x, y are quadratures): the work is linear in the run
// length. Before, every sample integrated from 0 to t_k, O(samples^2): 147 s for t_end = 1000.
#include <gtest/gtest.h>

#include <cmath>

#include "core/problem_registry.hpp"
#include "runs/run_summary.hpp"

namespace clm {
namespace {

// Delegates to a model and adds up the time spans its closed form is asked to integrate.
class CountingModel final : public Model {
 public:
  explicit CountingModel(std::shared_ptr<const Model> m) : m_(std::move(m)) {}
  std::string name() const override { return m_->name(); }
  std::string description() const override { return m_->description(); }
  int n() const override { return m_->n(); }
  int m() const override { return m_->m(); }
  bool holonomic() const override { return m_->holonomic(); }
  int position_rows() const override { return m_->position_rows(); }
  std::vector<std::pair<std::string, double>> parameters() const override { return m_->parameters(); }
  std::unique_ptr<ModelWorkspace> make_workspace() const override { return m_->make_workspace(); }
  void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws, ModelTerms& out) const override {
    m_->evaluate(t, q, qd, what, ws, out);
  }
  void default_initial(Vec& q0, Vec& qd0) const override { m_->default_initial(q0, qd0); }
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const override {
    integrated += std::abs(t);
    return m_->closed_form(t, q0, qd0, q, qd);
  }
  bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0, Vec& q,
                        Vec& qd) const override {
    integrated += std::abs(t - t_prev);
    return m_->closed_form_from(t_prev, q_prev, t, q0, qd0, q, qd);
  }
  bool closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const override {
    return m_->closed_form_multiplier(q, qd, lambda);
  }
  mutable double integrated = 0;

 private:
  std::shared_ptr<const Model> m_;
};

TEST(SummaryCost, TheReferenceIntegratesEachStretchOfTimeOnce) {
  const auto sleigh = make_model("chaplygin_sleigh");
  const CountingModel model(sleigh);
  Vec q0(3), qd0(3);
  model.default_initial(q0, qd0);
  RunSummaryAccumulator summary(model, q0, qd0, false);
  // Feed the exact motion at 2001 samples over [0, 200]: the error must stay at rounding level.
  const double t_end = 200;
  const int K = 2000;
  Observation obs;
  obs.lambda = Vec::Zero(1);
  for (int k = 0; k <= K; ++k) {
    const double t = t_end * k / K;
    sleigh->closed_form(t, q0, qd0, obs.q, obs.qd);  // directly from 0: the independent reference
    summary.add(t, obs);
  }
  const double direct = model.integrated;
  EXPECT_LE(direct, 1.0 + 1e-9 + t_end) << "the reference integrated " << direct << " s of motion for a " << t_end
                                         << " s run";
  const RunSummary s = summary.finish();
  EXPECT_EQ(s.reference, "q");
  // Carried vs direct closed form over t up to 200 (x ~ 200): measured 3.1e-11, the rounding of 2000 steps.
  EXPECT_LT(s.q_error_vs_reference, 1e-10);
}

}  // namespace
}  // namespace clm
