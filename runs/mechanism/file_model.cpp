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
    NativeLoad load = load_native_evaluation(file);
    if (!load.functions && evaluation == "native")
      throw InputError("run.mechanism_evaluation = native: " + load.why_not);
    if (!load.functions)
      out.note = load.why_not + "; the tape evaluates it (run.mechanism_evaluation = tape says so quietly)";
    native = std::move(load.functions);
  }
  out.evaluation = native ? "native" : "tape";
  if (mechanism->holonomic)
    out.model = make_holonomic_tape_model(std::move(mechanism), true, std::move(native));
  else if (mechanism->position_rows > 0)
    out.model = make_mixed_tape_model(std::move(mechanism), true, std::move(native));
  else
    out.model = make_pfaffian_tape_model(std::move(mechanism), true, std::move(native));
  return out;
}

}  // namespace clm
