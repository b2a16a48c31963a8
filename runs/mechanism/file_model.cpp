#include "runs/mechanism/file_model.hpp"

#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/native_library.hpp"
#include "runs/mechanism/tape_models.hpp"

namespace clm {

FileModel make_file_model(const std::string& problem, const std::map<std::string, double>& overrides,
                          const std::string& evaluation) {
  const MechanismFile file = read_named_mechanism_file(problem);
  auto mechanism = compile_mechanism(file, overrides);  // the file's checks, at these parameters
  FileModel out;
  std::shared_ptr<const NativeFunctions> native;
  if (evaluation != "tape") {
    NativeLoad load = load_native_evaluation(file, /*compile_any_size=*/evaluation == "native");
    if (!load.functions && evaluation == "native")
      throw InputError("run.mechanism_evaluation = native: " + load.why_not);
    if (!load.functions)
      out.note = load.why_not + "; the tape evaluates it (run.mechanism_evaluation = tape says so quietly)";
    native = std::move(load.functions);
  }
  out.evaluation = native ? "native" : "tape";
  // The scale the suite is measured for (issue 43: 2,000 coordinates took 61 s to check and made no step in 100 s):
  // dense terms cost O(n^2) memory and derivation, the saddle-point solve O(n^3) a step.
  if (mechanism->n > kMeasuredCoordinates) {
    const std::string scale = "n = " + std::to_string(mechanism->n) + " coordinates is beyond the " +
                              std::to_string(kMeasuredCoordinates) + " mechanism files are measured for (dense M and "
                              "A: memory and derivation grow as n^2, each step's solve as n^3; closed_chain(256): "
                              "mechanism check 6.2 s and 725 MB)";
    out.note = out.note.empty() ? scale : out.note + "; " + scale;
  }
  if (mechanism->holonomic)
    out.model = make_holonomic_tape_model(std::move(mechanism), true, std::move(native));
  else if (mechanism->position_rows > 0)
    out.model = make_mixed_tape_model(std::move(mechanism), true, std::move(native));
  else
    out.model = make_pfaffian_tape_model(std::move(mechanism), true, std::move(native));
  return out;
}

}  // namespace clm
