#include "runs/published_comparison.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>

#include "core/value_parsing.hpp"

namespace clm {

double matching_digits(double computed, double published) {
  if (std::isnan(computed) || std::isnan(published)) return std::numeric_limits<double>::quiet_NaN();
  const double d = std::abs(computed - published);
  if (d == 0) return std::numeric_limits<double>::infinity();
  return -std::log10(published != 0 ? d / std::abs(published) : d);
}

namespace {

std::string scientific(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15e", v);
  return buf;
}

std::string digits_text(double d) {
  if (std::isnan(d)) return "-";
  if (std::isinf(d)) return "all";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", d);
  return buf;
}

std::string cpu_seconds(double s) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

std::string padded(std::string s, size_t width) {
  if (s.size() < width) s += std::string(width - s.size(), ' ');
  return s;
}

}  // namespace

void print_published_comparison(std::ostream& out, const Model& model, const RunRecord& record) {
  const RunSummary& s = record.summary;
  const PublishedReference* pub = model.published_reference();
  if (s.reference_source != "published" || !pub || s.published_q.size() != pub->q.size()) return;
  out << "run " << record.spec.run_id << " against the published values at t = " << format_number(pub->t) << " ["
      << pub->source << "], " << pub->description << ":\n";
  out << "  " << padded("component", 16) << padded("published", 25) << padded("computed", 25) << "digits\n";
  const std::vector<std::string> names = model.coordinate_names();
  auto row = [&](const std::string& name, double published, double computed) {
    out << "  " << padded(name, 16) << padded(scientific(published), 25) << padded(scientific(computed), 25)
        << digits_text(matching_digits(computed, published)) << "\n";
  };
  for (Eigen::Index i = 0; i < pub->q.size(); ++i) row(names[i], pub->q[i], s.published_q[i]);
  for (Eigen::Index i = 0; i < pub->qd.size(); ++i) row(names[i] + "_dot", pub->qd[i], s.published_qd[i]);
  if (pub->lambda.size() == s.published_lambda.size())
    for (Eigen::Index i = 0; i < pub->lambda.size(); ++i)
      row("lambda_" + std::to_string(i + 1), pub->lambda[i], s.published_lambda[i]);
  out << "  scd " << digits_text(s.scd) << ", mescd " << digits_text(s.mescd) << " (over q and qd), "
      << cpu_seconds(record.cpu_time_s) << " s CPU\n";
}

void print_reference_point_error(std::ostream& out, const Model& model, const RunRecord& record) {
  const ReferencePoint* point = model.reference_point();
  const double e = record.summary.reference_point_error_max;
  if (!point || std::isnan(e)) return;
  const std::vector<std::string> names = model.coordinate_names(), units = model.coordinate_units();
  std::string coords, unit = point->position ? point->unit : units.empty() ? "" : units[point->coordinates.front()];
  if (point->position)
    for (const std::string& c : point->components) coords += (coords.empty() ? "" : ", ") + c;
  else
    for (int i : point->coordinates) coords += (coords.empty() ? "" : ", ") + names[i];
  char value[32];
  std::snprintf(value, sizeof value, "%.2e", e);
  const char* verdict = e <= 1e-3 ? "within both" : e <= 1e-1 ? "within 1e-1 only" : "outside both";
  out << "run " << record.spec.run_id << ": reference point " << point->name << " (" << coords << "): largest error "
      << value << (unit.empty() || unit == "-" ? "" : " " + unit) << " against " << record.reference_message
      << " (IFToMM accuracy limits 1e-1 / 1e-3: " << verdict << ")"
      << (record.status == "ok" ? "" : "; over the samples before the run ended " + record.status) << "\n";
}

}  // namespace clm
