// The prescribed shape q_a(t) (core/shape_schedule.hpp, issue 13): parsed expressions against their closed
// forms, spline samples against the smooth function they sample at the spline's order, parse errors in one
// line, and evaluation without allocation; the [shape] config wiring (runs/run_config.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "allocation_counter.hpp"
#include "clmbench_process.hpp"
#include "core/loglog_fit.hpp"
#include "core/sha256.hpp"
#include "core/shape_schedule.hpp"
#include "runs/run_config.hpp"

namespace clm {
namespace {

struct Closed {
  std::function<double(double)> value, rate, acceleration;
};

void expect_matches(const std::string& text, const Closed& f) {
  const ShapeFunction s = ShapeFunction::parse(text);
  EXPECT_EQ(s.text(), text);
  for (double t : {-1.3, 0.0, 0.37, 1.0, 2.5}) {
    // Each value is a sum of a few terms of size <= 10: a few ulps of 10.
    EXPECT_NEAR(s.value(t), f.value(t), 1e-13) << text << " at t = " << t;
    EXPECT_NEAR(s.rate(t), f.rate(t), 1e-13) << text << " at t = " << t;
    EXPECT_NEAR(s.acceleration(t), f.acceleration(t), 1e-13) << text << " at t = " << t;
  }
}

TEST(ShapeFunction, ExpressionsMatchTheirClosedForms) {
  expect_matches("0.25", {[](double) { return 0.25; }, [](double) { return 0.0; }, [](double) { return 0.0; }});
  expect_matches("t", {[](double t) { return t; }, [](double) { return 1.0; }, [](double) { return 0.0; }});
  expect_matches("-t^3", {[](double t) { return -t * t * t; }, [](double t) { return -3 * t * t; },
                          [](double t) { return -6 * t; }});
  expect_matches("0.5 - 2*t + 3*t^2 + 1e-1*t^9",
                 {[](double t) { return 0.5 - 2 * t + 3 * t * t + 0.1 * std::pow(t, 9); },
                  [](double t) { return -2 + 6 * t + 0.9 * std::pow(t, 8); },
                  [](double t) { return 6 + 7.2 * std::pow(t, 7); }});
  expect_matches("0.3*sin(2*t + 0.1)",
                 {[](double t) { return 0.3 * std::sin(2 * t + 0.1); }, [](double t) { return 0.6 * std::cos(2 * t + 0.1); },
                  [](double t) { return -1.2 * std::sin(2 * t + 0.1); }});
  expect_matches("sin(2*t)", {[](double t) { return std::sin(2 * t); }, [](double t) { return 2 * std::cos(2 * t); },
                              [](double t) { return -4 * std::sin(2 * t); }});
  expect_matches(" - cos( -3 * t - 0.5 ) + 1 ",
                 {[](double t) { return 1 - std::cos(-3 * t - 0.5); }, [](double t) { return -3 * std::sin(-3 * t - 0.5); },
                  [](double t) { return 9 * std::cos(-3 * t - 0.5); }});
  expect_matches("0.2*cos(t) - 0.1*sin(3.5*t-1) + 2*t",
                 {[](double t) { return 0.2 * std::cos(t) - 0.1 * std::sin(3.5 * t - 1) + 2 * t; },
                  [](double t) { return -0.2 * std::sin(t) - 0.35 * std::cos(3.5 * t - 1) + 2; },
                  [](double t) { return -0.2 * std::cos(t) + 1.225 * std::sin(3.5 * t - 1); }});
}

// `text` is refused with an InputError of one line that contains `needle` (any line: empty needle).
void expect_refused(const std::string& text, const std::string& needle) {
  try {
    ShapeFunction::parse(text);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find(needle), std::string::npos) << m;
  }
}

TEST(ShapeFunction, ParseErrorsAreOneLineNamingTheText) {
  for (const std::string bad : {"", "  ", "2*", "*t", "sin(2*t", "sin(2*x)", "sin(2*t+)", "t^0", "t^10", "t^", "2*x",
                                "1e400", "nan", "inf", "0x10", "2**t", "t*2", "tan(t)", "2t", "+", "1 +",
                                "file:/nonexistent/shape.txt"})
    expect_refused(bad, bad == "  " ? "" : bad);
}

class ShapeFile {
 public:
  explicit ShapeFile(const std::string& name) : path_(std::filesystem::temp_directory_path() / name) {}
  ~ShapeFile() { std::filesystem::remove(path_); }
  std::string write(const std::string& content) {
    std::ofstream(path_) << content;
    return "file:" + path_.string();
  }
  std::string sample(double t0, double t1, int intervals, const std::function<double(double)>& f, bool comma) {
    std::ostringstream s;
    s.precision(17);
    s << "# t value\n";
    for (int i = 0; i <= intervals; ++i) {
      const double t = t0 + (t1 - t0) * i / intervals;
      s << t << (comma ? ", " : "  ") << f(t) << "\n";
    }
    return write(s.str());
  }

 private:
  std::filesystem::path path_;
};

TEST(ShapeFunction, SplineReproducesCubicsExactly) {
  // Not-a-knot ends: a cubic is its own spline, on any grid (here non-uniform and comma separated).
  ShapeFile file("clm_shape_cubic.txt");
  auto p = [](double t) { return 1 - 2 * t + 0.5 * t * t - 0.25 * t * t * t; };
  std::ostringstream s;
  s.precision(17);
  for (double t : {0.0, 0.1, 0.35, 0.4, 0.9, 1.3, 2.0}) s << t << "," << p(t) << "\n";
  const ShapeFunction f = ShapeFunction::parse(file.write(s.str()));
  EXPECT_EQ(f.t_min(), 0.0);
  EXPECT_EQ(f.t_max(), 2.0);
  for (double t = 0; t <= 2.0; t += 0.01) {
    EXPECT_NEAR(f.value(t), p(t), 1e-14) << t;
    EXPECT_NEAR(f.rate(t), -2 + t - 0.75 * t * t, 1e-13) << t;
    EXPECT_NEAR(f.acceleration(t), 1 - 1.5 * t, 1e-12) << t;
  }
}

TEST(ShapeFunction, SplineOfSamplesConvergesAtTheCubicSplineOrders) {
  // sin(3 t) sampled with step h: errors O(h^4) in the value, O(h^3) in the rate, O(h^2) in the acceleration,
  // up to the ends (not-a-knot). The local orders approach these from above (value: 4.27, 4.16, 4.09, 4.05, 4.02
  // for h = 0.05 .. 0.0016), so the fit is over h = 0.0125 .. 0.0016.
  std::vector<double> hs, e0, e1, e2;
  ShapeFile file("clm_shape_sin.txt");
  for (int intervals : {160, 320, 640, 1280}) {
    const ShapeFunction f =
        ShapeFunction::parse(file.sample(0, 2, intervals, [](double t) { return std::sin(3 * t); }, intervals == 40));
    double m0 = 0, m1 = 0, m2 = 0;
    // The same relative places in every interval, so that the maxima compare across h.
    for (int i = 0; i < 4 * intervals; ++i) {
      const double t = 2.0 * (i + 0.5) / (4 * intervals);
      m0 = std::max(m0, std::abs(f.value(t) - std::sin(3 * t)));
      m1 = std::max(m1, std::abs(f.rate(t) - 3 * std::cos(3 * t)));
      m2 = std::max(m2, std::abs(f.acceleration(t) + 9 * std::sin(3 * t)));
    }
    hs.push_back(2.0 / intervals);
    e0.push_back(m0);
    e1.push_back(m1);
    e2.push_back(m2);
  }
  const double p0 = fit_loglog(hs, e0).slope, p1 = fit_loglog(hs, e1).slope, p2 = fit_loglog(hs, e2).slope;
  EXPECT_NEAR(p0, 4, 0.1) << e0[0] << " .. " << e0[3];
  EXPECT_NEAR(p1, 3, 0.1) << e1[0] << " .. " << e1[3];
  EXPECT_NEAR(p2, 2, 0.1) << e2[0] << " .. " << e2[3];
}

TEST(ShapeFunction, SamplesAreCheckedAndTheirRangeKept) {
  ShapeFile file("clm_shape_bad.txt");
  for (const auto& [content, expected] : std::vector<std::pair<std::string, std::string>>{
           {"0 0\n1 1\n2 0\n", "at least 4"},
           {"0 0\n1 1\n1 2\n3 0\n", "increase strictly"},
           {"0 0\n1 1 5\n2 2\n3 0\n", "line 2"},
           {"0 0\n1 x\n2 2\n3 0\n", "line 2"},
           {"", "0 samples"}}) {
    try {
      ShapeFunction::parse(file.write(content));
      ADD_FAILURE() << "accepted " << content;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  const ShapeFunction f = ShapeFunction::parse(file.write("0 0\n1 1\n2 4\n3 9\n"));
  EXPECT_NEAR(f.value(3), 9, 1e-14);
  EXPECT_THROW(f.value(3.001), NumericalFailure);
  EXPECT_THROW(f.rate(-0.001), NumericalFailure);
}

TEST(ShapeSchedule, EvaluatesWithoutAllocation) {
  ShapeFile file("clm_shape_alloc.txt");
  ShapeSchedule s;
  s.coordinates = {1, 3};
  s.functions = {ShapeFunction::parse("0.3*sin(2*t) + t^2"),
                 ShapeFunction::parse(file.sample(0, 1, 10, [](double t) { return t * t; }, false))};
  Vec qa(2), qda(2), qdda(2);
  testing::AllocationScope scope;
  for (int i = 0; i < 100; ++i) s.evaluate(0.01 * i, qa, qda, qdda);
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_NEAR(qa[0], 0.3 * std::sin(1.98) + 0.99 * 0.99, 1e-14);
  EXPECT_NEAR(qda[1], 2 * 0.99, 1e-12);  // t^2 is its own spline
}

TEST(ShapeConfig, ShapeSectionNamesActuatedCoordinatesOnly) {
  // A problem without actuated coordinates: any [shape] key is refused in one line that says so.
  testing::ScratchDir dir("shape_config");
  const std::string run = "run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --t-end 0.1 --out x.h5 ";
  testing::expect_one_line_error(dir.run(run + "--shape 'theta=sin(t)'"), 1,
                                 {"[shape] names 'theta'", "chaplygin_sleigh", "no actuated coordinates"});
  testing::expect_one_line_error(dir.run(run + "--shape 'foo=sin(t)'"), 1, {"'foo'"});
  testing::expect_one_line_error(dir.run(run + "--shape '=sin(t)'"), 1, {"malformed --shape"});
  // A [shape] section in a file is read per run like [param].
  testing::write_text(dir / "s.ini",
                      "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\nt_end = 0.1\n"
                      "[shape]\nx = 0.1*t\n");
  testing::expect_one_line_error(dir.run("run s.ini --out x.h5"), 1, {"[shape] names 'x'", "shape.x in"});
  testing::write_text(dir / "w.ini",
                      "[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\n"
                      "[sweep]\nshape.x = 0.1*t sin(t\n");
  testing::expect_one_line_error(dir.run("sweep w.ini --out x.h5"), 1, {"shape.x", "sin(t"});
}

// Issue 21: what a shape file may be, and its identity.
TEST(ShapeFunction, AShapeFileIsARegularFileOfSaneNumbers) {
  // A directory read as "0 samples"; /dev/zero read 1 GB before failing; a FIFO blocked forever.
  expect_refused("file:" + std::filesystem::temp_directory_path().string(), "is a directory");
  expect_refused("file:/dev/zero", "not a regular file");
  const std::string fifo = (std::filesystem::temp_directory_path() / "clm_shape_fifo").string();
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused("file:" + fifo, "not a regular file");
  std::filesystem::remove(fifo);
  // Larger than 64 MiB (a sparse file: nothing is written).
  ShapeFile big("clm_shape_big.txt");
  const std::string big_text = big.write("0 0\n");
  std::filesystem::resize_file(big_text.substr(5), (size_t{64} << 20) + 1);
  expect_refused(big_text, "more than the 67108864");
  // Samples of +-1e308 overflowed into a wrong-cause error far away (computed from uninitialised values).
  ShapeFile huge("clm_shape_huge.txt");
  expect_refused(huge.write("0 1e308\n1 -1e308\n2 1e308\n3 -1e308\n"), "at most 1e+150");
  expect_refused(huge.write("0 0\n1e-300 1e140\n1 0\n2 0\n"), "not finite");
  // A time of 5e-324 (a subnormal) was "expected two numbers".
  ShapeFile tiny("clm_shape_tiny.txt");
  const ShapeFunction f = ShapeFunction::parse(tiny.write("0 0\n5e-324 0\n1 1\n2 2\n3 3\n"));
  EXPECT_EQ(f.t_max(), 3.0);
}

TEST(ShapeFunction, SamplesCarryTheHashOfTheirContents) {
  ShapeFile file("clm_shape_hash.txt");
  const std::string text = file.write("0 0\n1 1\n2 4\n3 9\n");
  const ShapeFunction f = ShapeFunction::parse(text);
  // sha256sum of the file's 16 bytes.
  EXPECT_EQ(f.sha256(), "266d4190a68a5a246aefd1800503c415d80a61f6746f755f0fce53f15da20761");
  EXPECT_EQ(f.recorded_text(), text + "@sha256:" + f.sha256());
  // Read back: the same contents are accepted, changed ones refused in one line naming the file.
  EXPECT_EQ(ShapeFunction::parse(f.recorded_text()).value(2.5), f.value(2.5));
  file.write("0 0\n1 1\n2 4\n3 9.5\n");
  try {
    ShapeFunction::parse(f.recorded_text());
    ADD_FAILURE() << "a changed file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has changed since the configuration naming it was recorded"), std::string::npos)
        << e.what();
  }
  // An expression records itself.
  EXPECT_EQ(ShapeFunction::parse("0.3*sin(2*t)").recorded_text(), "0.3*sin(2*t)");
  EXPECT_EQ(ShapeFunction::parse("0.3*sin(2*t)").sha256(), "");
}

TEST(Sha256, KnownDigests) {
  // FIPS 180-4 examples, and lengths at the padding boundaries (55, 64, 119 bytes: one or two tail blocks;
  // digests from Python's hashlib).
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256_hex(std::string(119, 'a')), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace clm
