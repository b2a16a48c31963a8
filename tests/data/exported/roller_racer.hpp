// RollerRacerFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/roller_racer.toml (sha256 015f3cb4f75c38aa192875c53429bcd8efbddf12b86ce0bcded1b12bb6acd104).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, A, b)
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
#include "problems/point_spec.hpp"

namespace clm {

struct RollerRacerFile {
  static constexpr const char* kName = "roller_racer_file";
  static constexpr const char* kDescription = "two platforms on wheel axles joined by a revolute joint, joint angle phi actuated";
  static constexpr int kDof = 4;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "phi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad"};
  static constexpr std::array kActuatedCoordinates = {3};
  static constexpr const char* kReferencePointName = "front_axle";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";

  double m1 = 1.0;
  double I1 = 0.2;
  double d1 = 0.3;
  double m2 = 0.5;
  double I2 = 0.02;
  double d2 = 0.5;
  static constexpr std::array kParameters = {
      ParameterSpec<RollerRacerFile>{"m1", &RollerRacerFile::m1, "mass of the front platform, centred on its axle [kg]"},
      ParameterSpec<RollerRacerFile>{"I1", &RollerRacerFile::I1, "moment of inertia of the front platform [kg m^2]"},
      ParameterSpec<RollerRacerFile>{"d1", &RollerRacerFile::d1, "front axle to joint [m]"},
      ParameterSpec<RollerRacerFile>{"m2", &RollerRacerFile::m2, "mass of the rear platform, centred on its axle [kg]"},
      ParameterSpec<RollerRacerFile>{"I2", &RollerRacerFile::I2, "moment of inertia of the rear platform [kg m^2]"},
      ParameterSpec<RollerRacerFile>{"d2", &RollerRacerFile::d2, "joint to rear axle [m]"},
  };

  int dof() const { return 4; }
  int constraints() const { return 2; }
  void validate() const {
    if (!std::isfinite(m1)) throw InputError("roller_racer_file: parameter m1 must be finite");
    if (m1 < 0.0) throw InputError("roller_racer_file: parameter m1 is below its min 0.0");
    if (!std::isfinite(I1)) throw InputError("roller_racer_file: parameter I1 must be finite");
    if (I1 < 0.0) throw InputError("roller_racer_file: parameter I1 is below its min 0.0");
    if (!std::isfinite(d1)) throw InputError("roller_racer_file: parameter d1 must be finite");
    if (d1 < 0.0) throw InputError("roller_racer_file: parameter d1 is below its min 0.0");
    if (!std::isfinite(m2)) throw InputError("roller_racer_file: parameter m2 must be finite");
    if (m2 < 0.0) throw InputError("roller_racer_file: parameter m2 is below its min 0.0");
    if (!std::isfinite(I2)) throw InputError("roller_racer_file: parameter I2 must be finite");
    if (I2 < 0.0) throw InputError("roller_racer_file: parameter I2 is below its min 0.0");
    if (!std::isfinite(d2)) throw InputError("roller_racer_file: parameter d2 must be finite");
    if (d2 < 0.0) throw InputError("roller_racer_file: parameter d2 is below its min 0.0");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v15 = q_in[2] + q_in[3];
    const T v16 = sin(q_in[2]);
    const T v17 = T(d1) * v16;
    const T v20 = sin(v15);
    const T v21 = T(d2) * v20;
    const T v25 = cos(q_in[2]);
    const T v26 = T(d1) * v25;
    const T v29 = cos(v15);
    const T v30 = T(d2) * v29;
    const T v34 = T(m1) / T(2.0);
    const T v39 = T(I1) / T(2.0);
    const T v43 = T(m2) / T(2.0);
    const T v49 = T(I2) / T(2.0);
    const T v60 = T(2.0) * v34;
    const T v61 = T(2.0) * v43;
    const T v62 = v60 + v61;
    const T v63 = v17 + v21;
    const T v64 = T(2.0) * v63;
    const T v65 = v43 * v64;
    const T v66 = v21 * T(2.0);
    const T v67 = v43 * v66;
    const T v73 = -v26;
    const T v74 = v73 - v30;
    const T v75 = T(2.0) * v74;
    const T v76 = v43 * v75;
    const T v77 = -v30;
    const T v78 = T(2.0) * v77;
    const T v79 = v43 * v78;
    const T v90 = T(2.0) * v39;
    const T v91 = v63 * v64;
    const T v92 = v74 * v75;
    const T v93 = v91 + v92;
    const T v94 = v43 * v93;
    const T v95 = v90 + v94;
    const T v96 = T(2.0) * v49;
    const T v97 = v95 + v96;
    const T v98 = v63 * v66;
    const T v99 = v74 * v78;
    const T v100 = v98 + v99;
    const T v101 = v43 * v100;
    const T v102 = v96 + v101;
    const T v108 = v21 * v66;
    const T v109 = v77 * v78;
    const T v110 = v108 + v109;
    const T v111 = v43 * v110;
    const T v112 = v96 + v111;
    out(0, 0) = v62;
    out(0, 1) = T(0.0);
    out(0, 2) = v65;
    out(0, 3) = v67;
    out(1, 0) = T(0.0);
    out(1, 1) = v62;
    out(1, 2) = v76;
    out(1, 3) = v79;
    out(2, 0) = v65;
    out(2, 1) = v76;
    out(2, 2) = v97;
    out(2, 3) = v102;
    out(3, 0) = v67;
    out(3, 1) = v79;
    out(3, 2) = v102;
    out(3, 3) = v112;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    return T(0.0);
  }

  template <class T>
  void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kConstraints, kDof>& out) const {
    using namespace elementary;
    const T v15 = q_in[2] + q_in[3];
    const T v16 = sin(q_in[2]);
    const T v17 = T(d1) * v16;
    const T v20 = sin(v15);
    const T v21 = T(d2) * v20;
    const T v25 = cos(q_in[2]);
    const T v26 = T(d1) * v25;
    const T v29 = cos(v15);
    const T v30 = T(d2) * v29;
    const T v63 = v17 + v21;
    const T v73 = -v26;
    const T v74 = v73 - v30;
    const T v77 = -v30;
    const T v113 = -v16;
    const T v117 = -v20;
    const T v121 = v63 * v117;
    const T v122 = v29 * v74;
    const T v123 = v121 + v122;
    const T v124 = v21 * v117;
    const T v125 = v29 * v77;
    const T v126 = v124 + v125;
    out(0, 0) = v113;
    out(0, 1) = v25;
    out(0, 2) = T(0.0);
    out(0, 3) = T(0.0);
    out(1, 0) = v117;
    out(1, 1) = v29;
    out(1, 2) = v123;
    out(1, 3) = v126;
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"front_axle", "m", 2}, {"rear_axle", "m", 2}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v15 = q_in[2] + q_in[3];
    const T v16 = sin(q_in[2]);
    const T v17 = T(d1) * v16;
    const T v20 = sin(v15);
    const T v21 = T(d2) * v20;
    const T v25 = cos(q_in[2]);
    const T v26 = T(d1) * v25;
    const T v29 = cos(v15);
    const T v30 = T(d2) * v29;
    const T v127 = q_in[0] - v26;
    const T v128 = v127 - v30;
    const T v129 = q_in[1] - v17;
    const T v130 = v129 - v21;
    out[0] = q_in[0];
    out[1] = q_in[1];
    out[2] = v128;
    out[3] = v130;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(4);
    qd0.resize(4);
    q0[0] = T(0.0);
    q0[1] = T(0.0);
    q0[2] = T(0.0);
    q0[3] = T(0.0);
    qd0[0] = T(0.5);
    qd0[1] = T(0.0);
    qd0[2] = T(0.0);
    qd0[3] = T(0.0);
  }
};

}  // namespace clm
