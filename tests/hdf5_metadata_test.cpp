// Issue 9, defect 8: datasets carry units and the coordinate names (a reader needs no table of the
// problem's coordinates), and the run's sizes are n_coordinates / n_constraints (the attribute m collided
// with the parameter m, a mass).
#include <gtest/gtest.h>

#include "clmbench_process.hpp"

namespace clm {
namespace {

TEST(Hdf5Metadata, DatasetsCarryColumnNamesAndUnits) {
  testing::ScratchDir dir("metadata");
  ASSERT_EQ(dir.run("run --problem chaplygin_sleigh --formulation kkt --integrator rk4 --t-end 0.1 --out s.h5").exit_code, 0);
  ASSERT_EQ(dir.run("run --problem closed_chain --param n=4 --param gx=0.8 --formulation kkt --integrator rk4 --t-end 0.1 --out c.h5")
                .exit_code,
            0);
  const char* script = R"PY(
import h5py
g = h5py.File("s.h5")["runs/chaplygin_sleigh_kkt_rk4"]
s = lambda v: [x.decode() if isinstance(x, bytes) else x for x in v]
print("q", ",".join(s(g["q"].attrs["columns"])), ",".join(s(g["q"].attrs["units"])))
print("qd", ",".join(s(g["qd"].attrs["units"])))
print("t", g["t"].attrs["units"], "energy", g["energy"].attrs["units"])
print("lambda", ",".join(s(g["lambda"].attrs["columns"])))
print("sizes", g.attrs["n_coordinates"], g.attrs["n_constraints"], g.attrs["param.m"], "m" in g.attrs)
c = h5py.File("c.h5")["runs/closed_chain_kkt_rk4"]
print("chain", ",".join(s(c["q"].attrs["columns"])), ",".join(s(c["q"].attrs["units"])))
)PY";
  testing::write_text(dir / "read.py", script);
  ASSERT_EQ(std::system(("cd '" + dir.path().string() + "' && /usr/bin/python3 read.py > out.txt 2>&1").c_str()), 0)
      << testing::read_text(dir / "out.txt");
  EXPECT_EQ(testing::read_text(dir / "out.txt"),
            "q x,y,theta m,m,rad\n"
            "qd m/s,m/s,rad/s\n"
            "t s energy J\n"
            "lambda lambda1\n"
            "sizes 3 1 1.0 False\n"
            "chain theta_1,theta_2,theta_3,theta_4 rad,rad,rad,rad\n");
}

}  // namespace
}  // namespace clm
