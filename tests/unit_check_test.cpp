// The dimensional analysis of mechanism files (issue 42; mechanism_files/unit_check.hpp): units read, dimensions
// propagated, each wrong T, V, force and row on a test file named in one line FILE:LINE:COLUMN with both
// dimensions, and every shipped file passing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/types.hpp"
#include "mechanism_files/dimension_algebra.hpp"
#include "mechanism_files/dimensions.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "mechanism_files/unit_check.hpp"

namespace clm {
namespace {

const std::string kSource = CLMBENCH_SOURCE_DIR;
const std::string kData = kSource + "/tests/data/unit_errors/";

Dimension unit(const std::string& text) {
  std::string why;
  const auto d = parse_unit(text, &why);
  EXPECT_TRUE(d.has_value()) << text << ": " << why;
  return d.value_or(Dimension{});
}

TEST(Units, ReadsTheUnitsFilesWrite) {
  const Dimension L = length(), M = mass(), T = time_dimension(), E = energy();
  EXPECT_EQ(unit("kg m^2/s^2"), E);
  EXPECT_EQ(unit("N m"), E);
  EXPECT_EQ(unit("J"), E);
  EXPECT_EQ(unit("kg*m^2*s^-2"), E);
  EXPECT_EQ(unit("m/s/s"), L / T / T);
  EXPECT_EQ(unit("m/s^2"), L / T / T);
  EXPECT_EQ(unit("kg m^2/s"), M * L * L / T);
  EXPECT_EQ(unit("N s/m"), M / T);
  EXPECT_EQ(unit("J/(kg K)"), L * L / T / T / Dimension::base(4));
  EXPECT_EQ(unit("1/s"), Dimension::none() / T);
  EXPECT_EQ(unit("rad/s"), Dimension::none() / T);
  EXPECT_EQ(unit("rpm"), Dimension::none() / T);
  EXPECT_EQ(unit("-"), Dimension::none());
  EXPECT_EQ(unit("rad"), Dimension::none());
  EXPECT_EQ(unit("deg"), Dimension::none());
  EXPECT_EQ(unit("mm"), L);
  EXPECT_EQ(unit("km"), L);
  EXPECT_EQ(unit("ms"), T);
  EXPECT_EQ(unit("min"), T);
  EXPECT_EQ(unit("g"), M);
  EXPECT_EQ(unit("kN"), E / L);
  EXPECT_EQ(unit("Pa"), M / L / T / T);
  EXPECT_EQ(unit("m^(1/2)") * unit("m^(1/2)"), L);
  EXPECT_EQ(unit("mol"), Dimension::base(5));
}

TEST(Units, RefusesWhatItCannotRead) {
  for (const char* bad : {"kgm", "m/s2", "m^", "(m", "m^(1/0)", "m^x", "N·m", "", "m/", "s^(1/4)"}) {
    std::string why;
    EXPECT_FALSE(parse_unit(bad, &why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(Units, WritesDimensionsAsMessagesNameThem) {
  EXPECT_EQ(to_string(energy()), "kg m^2 / s^2");
  EXPECT_EQ(to_string(Dimension::none() / time_dimension()), "1 / s");
  EXPECT_EQ(to_string(*length().power(1, 2)), "m^(1/2)");
  EXPECT_EQ(to_string(Dimension::none()), "1");
  EXPECT_EQ(describe(energy() / length()), "kg m / s^2 (a force)");
}

// The dimension of an expression in x (m), v (m/s, as der(x)), w (1/s), c (no unit).
DimensionValue dimension(const std::string& text) {
  DimensionAlgebra algebra(
      [](std::string_view id) -> std::optional<DimensionValue> {
        if (id == "x") return DimensionValue::known(length());
        if (id == "w") return DimensionValue::known(Dimension::none() / time_dimension());
        if (id == "t") return DimensionValue::known(time_dimension());
        if (id == "c") return DimensionValue::unknown();
        return std::nullopt;
      },
      [](std::string_view id) -> std::optional<DimensionValue> {
        if (id == "x") return DimensionValue::known(length() / time_dimension());
        return std::nullopt;
      });
  return parse_dimension(text, algebra);
}

std::string error_of(const std::string& text) {
  try {
    dimension(text);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Units, PropagatesThroughEveryOperation) {
  EXPECT_EQ(*dimension("x*der(x)^2").dimension, length() * length() * length() / time_dimension() / time_dimension());
  EXPECT_EQ(*dimension("sqrt(x^2 + x^2)").dimension, length());
  EXPECT_EQ(*dimension("x^(3/2)/x^(1/2)").dimension, length());
  EXPECT_EQ(*dimension("pow(x, 2)").dimension, length() * length());
  EXPECT_EQ(*dimension("sin(w*t) + atan2(x, x)").dimension, Dimension::none());
  EXPECT_EQ(*dimension("abs(x) - min(x, x)").dimension, length());
  EXPECT_EQ(*dimension("sign(x)").dimension, Dimension::none());
  // A number alone in a sum takes the other side's dimension; as a factor it is dimensionless.
  EXPECT_EQ(*dimension("x - 1").dimension, length());
  EXPECT_EQ(*dimension("0.5*x").dimension, length());
  EXPECT_TRUE(dimension("2*3").number);
  // A name without a unit: unknown, never a mismatch; a sum with a known side is that side.
  EXPECT_FALSE(dimension("c*x").dimension.has_value());
  EXPECT_EQ(*dimension("c*x + x").dimension, length());
  EXPECT_EQ(*dimension("sin(c)").dimension, Dimension::none());
}

TEST(Units, NamesTheOperatorAndBothDimensions) {
  EXPECT_EQ(error_of("x + der(x)"), "'+' joins m (a length) and m / s (a velocity), which differ");
  EXPECT_EQ(error_of("sin(x)"), "sin() of a quantity of dimension m (a length): its argument must be dimensionless");
  EXPECT_EQ(error_of("x^x"), "an exponent of dimension m (a length): an exponent must be dimensionless");
  EXPECT_EQ(error_of("x^(w*t)"), "a quantity of dimension m (a length) raised to a power that is not a number: its "
                                 "dimension would change with the power");
  EXPECT_EQ(error_of("x^0.3"), "a quantity of dimension m (a length) raised to a power that is not a ratio of "
                               "integers p/q with q <= 6");
  // A constant whose unit is unstated (9.81, not 2 or 1/2) earns the hint.
  EXPECT_EQ(error_of("cos(9.81*t)"), "cos() of a quantity of dimension s (a time): its argument must be dimensionless"
                                     " (a number is dimensionless: a constant with a unit is a parameter with that unit)");
  EXPECT_EQ(error_of("cos(2*t)"), "cos() of a quantity of dimension s (a time): its argument must be dimensionless");
}

// Exponents are bounded (+-10000), so that no product of a long unit or expression overflows (found by reading the
// code for the fuzz target: 100,000 factors m^999 would have).
TEST(Units, RefusesExponentsBeyondTheBound) {
  std::string unit, expression = "x";
  for (int k = 0; k < 20; ++k) {
    unit += "m^999 ";
    expression += "*x^999";
  }
  std::string why;
  EXPECT_FALSE(parse_unit(unit, &why).has_value());
  EXPECT_EQ(why, "an exponent beyond 10000");
  EXPECT_TRUE(parse_unit("m^999 m^999", &why).has_value());
  EXPECT_EQ(error_of(expression), "a dimension with an exponent beyond 10000");
}

std::string compile_error(const std::string& path) {
  try {
    compile_mechanism(read_mechanism_file(path));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(UnitCheck, CatchesAWrongTVForceAndRowInOneLine) {
  struct Case {
    const char* file;
    const char* expected;
  } cases[] = {
      {"wrong_T.toml", ":13:6: T has dimension kg m^3 / s^2, expected kg m^2 / s^2 (an energy)"},
      {"wrong_V.toml", ":14:6: V has dimension kg m, expected kg m^2 / s^2 (an energy)"},
      {"number_in_V.toml", ":14:6: V has dimension kg m, expected kg m^2 / s^2 (an energy) (a number is "
                           "dimensionless: a constant with a unit is a parameter with that unit)"},
      {"wrong_force.toml", ":17:6: the force on x has dimension kg m / s (a momentum), expected kg m / s^2 (a force)"},
      // The column of the '-' that joins x^2 + y^2 (m^2) to L (m).
      {"wrong_row.toml", ":20:25: '-' joins m^2 and m (a length), which differ in position row 1"},
      {"unknown_unit.toml", ":9:28: unit 'm/s2' of parameter g is not one the suite reads (a number after a symbol: "
                            "a power is written with '^' (s^2))"},
  };
  for (const Case& c : cases) {
    const std::string path = kData + c.file;
    const std::string message = compile_error(path);
    EXPECT_EQ(message.rfind(path + c.expected, 0), 0u) << "expected: " << path << c.expected << "\ngot: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(UnitCheck, SaysWhatANameWithoutAUnitLeavesUnchecked) {
  const auto consistent = compile_mechanism(read_mechanism_file(kData + "consistent.toml"));
  EXPECT_EQ(consistent->unit_check, "checked T, V, forces (1), rows (1)");
  const auto partial = compile_mechanism(read_mechanism_file(kData + "unitless_parameter.toml"));
  EXPECT_EQ(partial->unit_check, "checked T, V, forces (1); unchecked rows (1): no unit on parameter L");
  const auto none = compile_mechanism(parse_mechanism_text(
      "name = \"bare\"\ncoordinates = [\"x\"]\n[parameters]\nk = 2.0\n[energy]\nT = \"der(x)^2/2\"\nV = \"k*x^2/2\"\n"
      "[initial]\nq = [1.0]\n",
      "bare.toml"));
  EXPECT_EQ(none->unit_check, "unchecked: the file declares no units (coordinates' units, parameters' unit)");
  // V reads k, which has no unit: held to no dimension (its inside is checked), and the summary says so.
  const auto scale_unstated = compile_mechanism(parse_mechanism_text(
      "name = \"p\"\ncoordinates = [\"theta\"]\nunits = [\"rad\"]\n[parameters]\nk = 2.0\n"
      "J = { value = 0.1, unit = \"kg m^2\" }\n[energy]\nT = \"J*der(theta)^2/2\"\nV = \"-k*cos(theta)\"\n"
      "[initial]\nq = [1.0]\n",
      "p.toml"));
  EXPECT_EQ(scale_unstated->unit_check, "checked T; unchecked V: no unit on parameter k");
  // Without units, t is in the file's own time unit too: sin(t) is no mismatch.
  const auto forced = compile_mechanism(parse_mechanism_text(
      "name = \"bare\"\ncoordinates = [\"x\"]\n[energy]\nT = \"der(x)^2/2\"\nV = \"1 - cos(x)\"\n"
      "[forces]\nx = \"sin(t)\"\n[initial]\nq = [1.0]\n",
      "bare.toml"));
  EXPECT_EQ(forced->unit_check, "unchecked: the file declares no units (coordinates' units, parameters' unit)");
}

// Every mechanism file the project ships (mechanisms/, the tests' data, the examples) passes, with every name given a
// unit: nothing left unchecked.
TEST(UnitCheck, PassesEveryShippedFile) {
  int files = 0;
  for (const char* dir : {"/mechanisms", "/tests/data/mechanisms"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kSource + dir)) {
      if (entry.path().extension() != ".toml") continue;
      const std::string path = entry.path().string();
      std::shared_ptr<const CompiledMechanism> c;
      ASSERT_NO_THROW(c = compile_mechanism(read_mechanism_file(path))) << path;
      EXPECT_EQ(c->unit_check.rfind("checked T, V", 0), 0u) << path << ": " << c->unit_check;
      EXPECT_EQ(c->unit_check.find("unchecked"), std::string::npos) << path << ": " << c->unit_check;
      ++files;
    }
  }
  EXPECT_GE(files, 28);
}

}  // namespace
}  // namespace clm
