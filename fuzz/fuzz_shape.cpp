// libFuzzer target: a shape's samples file (core/shape_schedule.cpp, `[shape] NAME = file:PATH`) on arbitrary
// bytes. Every input must end in a ShapeFunction or an InputError; a parsed one must give finite values,
// rates and accelerations everywhere in its time range. Anything else is a finding.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/shape_schedule.hpp"
#include "core/types.hpp"
#include "fuzz/scratch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = clm::fuzz::write_scratch_file("fuzz_shape", ".txt", data, size);
  try {
    const clm::ShapeFunction f = clm::ShapeFunction::parse("file:" + path);
    for (int i = 0; i <= 16; ++i) {
      const double t = f.t_min() + (f.t_max() - f.t_min()) * i / 16.0;
      if (!(t >= f.t_min() && t <= f.t_max())) continue;  // the range's width overflows: its ends only
      if (!std::isfinite(f.value(t)) || !std::isfinite(f.rate(t)) || !std::isfinite(f.acceleration(t))) std::abort();
    }
    (void)f.value(f.t_max());
    (void)clm::ShapeFunction::parse(f.recorded_text());  // its recorded identity reads back
  } catch (const clm::InputError&) {
  }
  return 0;
}
