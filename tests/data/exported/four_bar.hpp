// FourBarFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/four_bar.toml (sha256 14befc0b5c948d64f5713f7d4ae1dbb4f4c6a24508b1e149e901e50a35928d71).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, h)
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

struct FourBarFile {
  static constexpr const char* kName = "four_bar_file";
  static constexpr const char* kDescription = "grounded four-bar linkage, 3 free uniform bars in body coordinates (x_i, y_i, theta_i), 8 pin constraints";
  static constexpr int kDof = 9;
  static constexpr int kConstraints = 8;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"x1", "y1", "theta1", "x2", "y2", "theta2", "x3", "y3", "theta3"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "m", "m", "rad", "m", "m", "rad"};

  double L0 = 1.0;
  double L1 = 0.4;
  double L2 = 1.2;
  double L3 = 0.8;
  double m1 = 0.4;
  double m2 = 1.2;
  double m3 = 0.8;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<FourBarFile>{"L0", &FourBarFile::L0, "ground link length: distance between the ground pins [m]"},
      ParameterSpec<FourBarFile>{"L1", &FourBarFile::L1, "crank length (bar 1, pinned at the origin) [m]"},
      ParameterSpec<FourBarFile>{"L2", &FourBarFile::L2, "coupler length (bar 2) [m]"},
      ParameterSpec<FourBarFile>{"L3", &FourBarFile::L3, "rocker length (bar 3, pinned at (L0, 0)) [m]"},
      ParameterSpec<FourBarFile>{"m1", &FourBarFile::m1, "crank mass [kg]"},
      ParameterSpec<FourBarFile>{"m2", &FourBarFile::m2, "coupler mass [kg]"},
      ParameterSpec<FourBarFile>{"m3", &FourBarFile::m3, "rocker mass [kg]"},
      ParameterSpec<FourBarFile>{"g", &FourBarFile::g, "gravity, along -y [m/s^2]"},
  };

  int dof() const { return 9; }
  int constraints() const { return 8; }
  void validate() const {
    if (!std::isfinite(L0)) throw InputError("four_bar_file: parameter L0 must be finite");
    if (L0 < 0.0) throw InputError("four_bar_file: parameter L0 is below its min 0.0");
    if (!std::isfinite(L1)) throw InputError("four_bar_file: parameter L1 must be finite");
    if (L1 < 0.0) throw InputError("four_bar_file: parameter L1 is below its min 0.0");
    if (!std::isfinite(L2)) throw InputError("four_bar_file: parameter L2 must be finite");
    if (L2 < 0.0) throw InputError("four_bar_file: parameter L2 is below its min 0.0");
    if (!std::isfinite(L3)) throw InputError("four_bar_file: parameter L3 must be finite");
    if (L3 < 0.0) throw InputError("four_bar_file: parameter L3 is below its min 0.0");
    if (!std::isfinite(m1)) throw InputError("four_bar_file: parameter m1 must be finite");
    if (m1 < 0.0) throw InputError("four_bar_file: parameter m1 is below its min 0.0");
    if (!std::isfinite(m2)) throw InputError("four_bar_file: parameter m2 must be finite");
    if (m2 < 0.0) throw InputError("four_bar_file: parameter m2 is below its min 0.0");
    if (!std::isfinite(m3)) throw InputError("four_bar_file: parameter m3 must be finite");
    if (m3 < 0.0) throw InputError("four_bar_file: parameter m3 is below its min 0.0");
    if (!std::isfinite(g)) throw InputError("four_bar_file: parameter g must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v27 = T(L1) * T(m1);
    const T v28 = T(L1) * v27;
    const T v30 = v28 / T(12.0);
    const T v31 = T(L2) * T(m2);
    const T v32 = T(L2) * v31;
    const T v33 = v32 / T(12.0);
    const T v34 = T(L3) * T(m3);
    const T v35 = T(L3) * v34;
    const T v36 = v35 / T(12.0);
    const T v112 = T(m1) / T(2.0);
    const T v117 = v30 / T(2.0);
    const T v121 = T(m2) / T(2.0);
    const T v127 = v33 / T(2.0);
    const T v131 = T(m3) / T(2.0);
    const T v137 = v36 / T(2.0);
    const T v150 = T(2.0) * v112;
    const T v155 = T(2.0) * v117;
    const T v158 = T(2.0) * v121;
    const T v163 = T(2.0) * v127;
    const T v166 = T(2.0) * v131;
    const T v171 = T(2.0) * v137;
    out(0, 0) = v150;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = T(0.0);
    out(0, 4) = T(0.0);
    out(0, 5) = T(0.0);
    out(0, 6) = T(0.0);
    out(0, 7) = T(0.0);
    out(0, 8) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v150;
    out(1, 2) = T(0.0);
    out(1, 3) = T(0.0);
    out(1, 4) = T(0.0);
    out(1, 5) = T(0.0);
    out(1, 6) = T(0.0);
    out(1, 7) = T(0.0);
    out(1, 8) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v155;
    out(2, 3) = T(0.0);
    out(2, 4) = T(0.0);
    out(2, 5) = T(0.0);
    out(2, 6) = T(0.0);
    out(2, 7) = T(0.0);
    out(2, 8) = T(0.0);
    out(3, 0) = T(0.0);
    out(3, 1) = T(0.0);
    out(3, 2) = T(0.0);
    out(3, 3) = v158;
    out(3, 4) = T(0.0);
    out(3, 5) = T(0.0);
    out(3, 6) = T(0.0);
    out(3, 7) = T(0.0);
    out(3, 8) = T(0.0);
    out(4, 0) = T(0.0);
    out(4, 1) = T(0.0);
    out(4, 2) = T(0.0);
    out(4, 3) = T(0.0);
    out(4, 4) = v158;
    out(4, 5) = T(0.0);
    out(4, 6) = T(0.0);
    out(4, 7) = T(0.0);
    out(4, 8) = T(0.0);
    out(5, 0) = T(0.0);
    out(5, 1) = T(0.0);
    out(5, 2) = T(0.0);
    out(5, 3) = T(0.0);
    out(5, 4) = T(0.0);
    out(5, 5) = v163;
    out(5, 6) = T(0.0);
    out(5, 7) = T(0.0);
    out(5, 8) = T(0.0);
    out(6, 0) = T(0.0);
    out(6, 1) = T(0.0);
    out(6, 2) = T(0.0);
    out(6, 3) = T(0.0);
    out(6, 4) = T(0.0);
    out(6, 5) = T(0.0);
    out(6, 6) = v166;
    out(6, 7) = T(0.0);
    out(6, 8) = T(0.0);
    out(7, 0) = T(0.0);
    out(7, 1) = T(0.0);
    out(7, 2) = T(0.0);
    out(7, 3) = T(0.0);
    out(7, 4) = T(0.0);
    out(7, 5) = T(0.0);
    out(7, 6) = T(0.0);
    out(7, 7) = v166;
    out(7, 8) = T(0.0);
    out(8, 0) = T(0.0);
    out(8, 1) = T(0.0);
    out(8, 2) = T(0.0);
    out(8, 3) = T(0.0);
    out(8, 4) = T(0.0);
    out(8, 5) = T(0.0);
    out(8, 6) = T(0.0);
    out(8, 7) = T(0.0);
    out(8, 8) = v171;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v141 = q_in[1] * T(m1);
    const T v142 = q_in[4] * T(m2);
    const T v143 = v141 + v142;
    const T v144 = q_in[7] * T(m3);
    const T v145 = v143 + v144;
    const T v146 = T(g) * v145;
    return v146;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v173 = T(L1) * T(0.5);
    const T v174 = cos(q_in[2]);
    const T v175 = v173 * v174;
    const T v176 = q_in[0] - v175;
    const T v177 = sin(q_in[2]);
    const T v178 = v173 * v177;
    const T v179 = q_in[1] - v178;
    const T v180 = q_in[0] + v175;
    const T v181 = T(L2) * T(0.5);
    const T v182 = cos(q_in[5]);
    const T v183 = v181 * v182;
    const T v184 = q_in[3] - v183;
    const T v185 = v180 - v184;
    const T v186 = q_in[1] + v178;
    const T v187 = sin(q_in[5]);
    const T v188 = v181 * v187;
    const T v189 = q_in[4] - v188;
    const T v190 = v186 - v189;
    const T v191 = q_in[3] + v183;
    const T v192 = T(L3) * T(0.5);
    const T v193 = cos(q_in[8]);
    const T v194 = v192 * v193;
    const T v195 = q_in[6] - v194;
    const T v196 = v191 - v195;
    const T v197 = q_in[4] + v188;
    const T v198 = sin(q_in[8]);
    const T v199 = v192 * v198;
    const T v200 = q_in[7] - v199;
    const T v201 = v197 - v200;
    const T v202 = q_in[6] + v194;
    const T v203 = v202 - T(L0);
    const T v204 = q_in[7] + v199;
    out[0] = v176;
    out[1] = v179;
    out[2] = v185;
    out[3] = v190;
    out[4] = v196;
    out[5] = v201;
    out[6] = v203;
    out[7] = v204;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(9);
    qd0.resize(9);
    const T v40 = -T(L2);
    const T v42 = T(L1) * T(0.8660254037844386);
    const T v43 = T(L2) * T(L2);
    const T v44 = T(L3) * T(L3);
    const T v45 = v43 - v44;
    const T v47 = T(L1) * T(0.5000000000000001);
    const T v48 = T(L0) - v47;
    const T v49 = v48 * v48;
    const T v50 = -v42;
    const T v51 = v50 * v50;
    const T v52 = v49 + v51;
    const T v53 = sqrt(v52);
    const T v54 = v53 * v53;
    const T v55 = v45 + v54;
    const T v57 = v53 * T(2.0);
    const T v58 = v55 / v57;
    const T v59 = v50 / v53;
    const T v60 = v58 * v59;
    const T v61 = v42 + v60;
    const T v63 = v58 * v58;
    const T v64 = v43 - v63;
    const T v65 = T(0.0) < v64 ? v64 : T(0.0);
    const T v66 = sqrt(v65);
    const T v67 = v48 / v53;
    const T v68 = v66 * v67;
    const T v69 = v61 + v68;
    const T v70 = v69 - v42;
    const T v71 = v58 * v67;
    const T v72 = v47 + v71;
    const T v73 = v59 * v66;
    const T v74 = v72 - v73;
    const T v75 = v74 - v47;
    const T v76 = atan2(v70, v75);
    const T v77 = sin(v76);
    const T v78 = v40 * v77;
    const T v79 = -T(L3);
    const T v80 = -v69;
    const T v81 = T(L0) - v74;
    const T v82 = atan2(v80, v81);
    const T v83 = sin(v82);
    const T v84 = v79 * v83;
    const T v85 = cos(v76);
    const T v86 = T(L2) * v85;
    const T v87 = cos(v82);
    const T v88 = T(L3) * v87;
    const T v89 = T(L1) * T(2.0);
    const T v90 = T(0.8660254037844386) * v89;
    const T v91 = -T(L1);
    const T v92 = T(2.0) * v91;
    const T v93 = T(0.5000000000000001) * v92;
    const T v94 = v78 * v88;
    const T v95 = v84 * v86;
    const T v96 = v94 - v95;
    const T v97 = T(0.8660254037844386) * v92;
    const T v98 = T(0.5000000000000001) * v89;
    const T v99 = v88 * v90;
    const T v100 = v84 * v93;
    const T v101 = v99 - v100;
    const T v102 = v101 / v96;
    const T v103 = T(L2) * v102;
    const T v104 = v77 * v103;
    const T v105 = v97 - v104;
    const T v106 = v85 * v103;
    const T v107 = v98 + v106;
    const T v108 = v78 * v93;
    const T v109 = v86 * v90;
    const T v110 = v108 - v109;
    const T v111 = v110 / v96;
    const T v173 = T(L1) * T(0.5);
    const T v181 = T(L2) * T(0.5);
    const T v192 = T(L3) * T(0.5);
    const T v205 = T(0.5000000000000001) * v173;
    const T v206 = T(0.8660254037844386) * v173;
    const T v207 = v85 * v181;
    const T v208 = v47 + v207;
    const T v209 = v77 * v181;
    const T v210 = v42 + v209;
    const T v211 = v87 * v192;
    const T v212 = v74 + v211;
    const T v213 = v83 * v192;
    const T v214 = v69 + v213;
    const T v215 = v97 * T(0.5);
    const T v216 = v98 * T(0.5);
    const T v217 = v102 * v181;
    const T v218 = v77 * v217;
    const T v219 = v97 - v218;
    const T v220 = v85 * v217;
    const T v221 = v98 + v220;
    const T v222 = v111 * v192;
    const T v223 = v83 * v222;
    const T v224 = v105 - v223;
    const T v225 = v87 * v222;
    const T v226 = v107 + v225;
    q0[0] = v205;
    q0[1] = v206;
    q0[2] = T(1.0471975511965976);
    q0[3] = v208;
    q0[4] = v210;
    q0[5] = v76;
    q0[6] = v212;
    q0[7] = v214;
    q0[8] = v82;
    qd0[0] = v215;
    qd0[1] = v216;
    qd0[2] = T(2.0);
    qd0[3] = v219;
    qd0[4] = v221;
    qd0[5] = v102;
    qd0[6] = v224;
    qd0[7] = v226;
    qd0[8] = v111;
  }
};

}  // namespace clm
