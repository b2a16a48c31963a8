// The Model of a run's mechanism file, evaluated as the run asks (run.mechanism_evaluation, issue 40): "native"
// (compiled code, runs/mechanism/native_model.hpp; refused in one line where it cannot be had), "tape" (the
// interpreted tape, the reference), or "auto" (native where a C compiler is found, else the tape with one line
// saying why).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/model.hpp"

namespace clm {

// The coordinates mechanism files are measured for (docs/mechanism-files.md, "Limits"): beyond, a run says so.
inline constexpr int kMeasuredCoordinates = 256;

struct FileModel {
  std::shared_ptr<const Model> model;
  std::string evaluation;  // what evaluates it: "native" or "tape"
  std::string note;        // auto fell back to the tape: why (one line), else empty
};

// problem: a mechanism file (is_mechanism_file); overrides: its parameters. Throws InputError for the file's errors
// and for evaluation = native that cannot be had.
FileModel make_file_model(const std::string& problem, const std::map<std::string, double>& overrides,
                          const std::string& evaluation);

}  // namespace clm
