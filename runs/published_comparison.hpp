// What `clmbench run` prints for a run measured against a problem's published reference values
// (core/published_reference.hpp; reference_source "published"): each component's published value, the
// computed one and the significant digits they share, then the run's scd and mescd and its CPU time.
#pragma once

#include <iosfwd>

#include "core/model.hpp"
#include "runs/runner.hpp"

namespace clm {

// Digits shared by a computed value c and a published one r: -log10 |c - r| / |r| (the Bari test set's
// scd for one component); for r = 0 the absolute -log10 |c|. +inf for an exact match, NaN for a NaN.
double matching_digits(double computed, double published);

// Nothing when the run was not measured against published values.
void print_published_comparison(std::ostream& out, const Model& model, const RunRecord& record);

// For a problem with a benchmark reference point (IFToMM's P1, P3, B0) and a run with a reference: the
// point's largest error and where it stands against the IFToMM library's accuracy limits 1e-1 and 1e-3.
void print_reference_point_error(std::ostream& out, const Model& model, const RunRecord& record);

}  // namespace clm
