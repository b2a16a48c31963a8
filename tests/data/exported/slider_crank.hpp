// SliderCrankFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/slider_crank.toml (sha256 5adf7d90d1ec6bfc4aa379193ad53204c2affd302c47a05c79f348fbbf53e5ec).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, h, the forces)
// as templated straight-line code; equal to the file's tapes to round-off (parameter products the tapes fold
// into constants are computed here). Do not edit: export again.
// Promote it to the zoo: problems/NAME.hpp, runs/zoo/NAME.cpp and a line in runs/zoo/zoo.def (docs/guide/extending.md).
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/elementary_functions.hpp"
#include "core/problem.hpp"

namespace clm {

struct SliderCrankFile {
  static constexpr const char* kName = "slider_crank_file";
  static constexpr const char* kDescription = "slider-crank (seed 000): crank 2 L1, rod 2 L2, slider on the x axis; q = (theta, phi, x)";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"theta", "phi", "x"};
  static constexpr const char* kCoordinateUnits[] = {"rad", "rad", "m"};

  double m1 = 1.0;
  double m2 = 1.0;
  double m3 = 0.5;
  double I1 = 0.02;
  double I2 = 0.08;
  double L1 = 0.25;
  double L2 = 0.5;
  double g = 9.81;
  double tau = 0.0;
  double f = 0.0;
  static constexpr std::array kParameters = {
      ParameterSpec<SliderCrankFile>{"m1", &SliderCrankFile::m1, "crank mass [kg]"},
      ParameterSpec<SliderCrankFile>{"m2", &SliderCrankFile::m2, "rod mass [kg]"},
      ParameterSpec<SliderCrankFile>{"m3", &SliderCrankFile::m3, "slider mass [kg]"},
      ParameterSpec<SliderCrankFile>{"I1", &SliderCrankFile::I1, "crank moment of inertia about its centre of mass [kg m^2]"},
      ParameterSpec<SliderCrankFile>{"I2", &SliderCrankFile::I2, "rod moment of inertia about its centre of mass [kg m^2]"},
      ParameterSpec<SliderCrankFile>{"L1", &SliderCrankFile::L1, "half crank length (crank pin at 2 L1) [m]"},
      ParameterSpec<SliderCrankFile>{"L2", &SliderCrankFile::L2, "half rod length (rod length 2 L2) [m]"},
      ParameterSpec<SliderCrankFile>{"g", &SliderCrankFile::g, "gravity, along -y [m/s^2]"},
      ParameterSpec<SliderCrankFile>{"tau", &SliderCrankFile::tau, "constant torque on the crank [N m]"},
      ParameterSpec<SliderCrankFile>{"f", &SliderCrankFile::f, "constant force on the slider along x [N]"},
  };

  int dof() const { return 3; }
  int constraints() const { return 2; }
  void validate() const {
    if (!std::isfinite(m1)) throw InputError("slider_crank_file: parameter m1 must be finite");
    if (m1 < 0.0) throw InputError("slider_crank_file: parameter m1 is below its min 0.0");
    if (!std::isfinite(m2)) throw InputError("slider_crank_file: parameter m2 must be finite");
    if (m2 < 0.0) throw InputError("slider_crank_file: parameter m2 is below its min 0.0");
    if (!std::isfinite(m3)) throw InputError("slider_crank_file: parameter m3 must be finite");
    if (m3 < 0.0) throw InputError("slider_crank_file: parameter m3 is below its min 0.0");
    if (!std::isfinite(I1)) throw InputError("slider_crank_file: parameter I1 must be finite");
    if (I1 < 0.0) throw InputError("slider_crank_file: parameter I1 is below its min 0.0");
    if (!std::isfinite(I2)) throw InputError("slider_crank_file: parameter I2 must be finite");
    if (I2 < 0.0) throw InputError("slider_crank_file: parameter I2 is below its min 0.0");
    if (!std::isfinite(L1)) throw InputError("slider_crank_file: parameter L1 must be finite");
    if (L1 < 0.0) throw InputError("slider_crank_file: parameter L1 is below its min 0.0");
    if (!std::isfinite(L2)) throw InputError("slider_crank_file: parameter L2 must be finite");
    if (L2 < 0.0) throw InputError("slider_crank_file: parameter L2 is below its min 0.0");
    if (!std::isfinite(g)) throw InputError("slider_crank_file: parameter g must be finite");
    if (!std::isfinite(tau)) throw InputError("slider_crank_file: parameter tau must be finite");
    if (!std::isfinite(f)) throw InputError("slider_crank_file: parameter f must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v19 = T(m2) * T(-2.0);
    const T v20 = T(L1) * v19;
    const T v21 = T(L2) * v20;
    const T v22 = q_in[0] - q_in[1];
    const T v23 = cos(v22);
    const T v24 = v21 * v23;
    const T v45 = T(m1) * T(L1);
    const T v46 = T(L1) * v45;
    const T v47 = T(I1) + v46;
    const T v48 = T(m2) * T(4.0);
    const T v49 = T(L1) * v48;
    const T v50 = T(L1) * v49;
    const T v51 = v47 + v50;
    const T v52 = v51 / T(2.0);
    const T v58 = T(m2) * T(L2);
    const T v59 = T(L2) * v58;
    const T v60 = T(I2) + v59;
    const T v61 = v60 / T(2.0);
    const T v65 = T(m3) / T(2.0);
    const T v86 = T(2.0) * v52;
    const T v90 = T(2.0) * v61;
    const T v93 = T(2.0) * v65;
    out(0, 0) = v86;
    out(0, 1) = v24;
    out(0, 2) = T(0.0);
    out(1, 0) = v24;
    out(1, 1) = v90;
    out(1, 2) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v93;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v69 = T(m1) * T(g);
    const T v70 = T(L1) * v69;
    const T v71 = sin(q_in[0]);
    const T v72 = v70 * v71;
    const T v73 = T(m2) * T(g);
    const T v74 = T(L1) * T(2.0);
    const T v75 = v71 * v74;
    const T v76 = sin(q_in[1]);
    const T v77 = T(L2) * v76;
    const T v78 = v75 - v77;
    const T v79 = v73 * v78;
    const T v80 = v72 + v79;
    return v80;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v71 = sin(q_in[0]);
    const T v74 = T(L1) * T(2.0);
    const T v75 = v71 * v74;
    const T v76 = sin(q_in[1]);
    const T v94 = cos(q_in[0]);
    const T v95 = v74 * v94;
    const T v96 = T(L2) * T(2.0);
    const T v97 = cos(q_in[1]);
    const T v98 = v96 * v97;
    const T v99 = v95 - v98;
    const T v100 = v99 - q_in[2];
    const T v101 = v76 * v96;
    const T v102 = v75 - v101;
    out[0] = v100;
    out[1] = v102;
  }

  template <class T, class Q, class Out>
  void generalized_force([[maybe_unused]] const T& t_in, [[maybe_unused]] const Q& q_in, [[maybe_unused]] const Q& qd_in, Out& out) const {
    using namespace elementary;
    out[0] = T(tau);
    out[1] = T(0.0);
    out[2] = T(f);
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(3);
    qd0.resize(3);
    const T v30 = T(L2) * T(0.8);
    const T v31 = v30 / T(L1);
    const T v32 = v31 < T(1.0) ? v31 : T(1.0);
    const T v33 = t_asin(v32);
    const T v34 = v33 < T(0.7853981633974483) ? v33 : T(0.7853981633974483);
    const T v35 = sin(v34);
    const T v36 = T(L1) * v35;
    const T v37 = v36 / T(L2);
    const T v38 = t_asin(v37);
    const T v39 = T(3.141592653589793) - v38;
    const T v40 = cos(v34);
    const T v41 = T(L1) * v40;
    const T v42 = cos(v39);
    const T v43 = T(L2) * v42;
    const T v44 = v41 / v43;
    const T v74 = T(L1) * T(2.0);
    const T v96 = T(L2) * T(2.0);
    const T v103 = v40 * v74;
    const T v104 = v42 * v96;
    const T v105 = v103 - v104;
    const T v106 = T(L1) * T(-2.0);
    const T v107 = v35 * v106;
    const T v108 = sin(v39);
    const T v109 = v96 * v108;
    const T v110 = v44 * v109;
    const T v111 = v107 + v110;
    q0[0] = v34;
    q0[1] = v39;
    q0[2] = v105;
    qd0[0] = T(1.0);
    qd0[1] = v44;
    qd0[2] = v111;
  }
};

}  // namespace clm
