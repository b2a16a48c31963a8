// Rigid bodies of a mechanism file as nodes of its expression graph (issue 41; docs/mechanism-files.md, "Rigid
// bodies"): from a [bodies.NAME] table (mass, inertia, centre of mass, orientation) the body's kinematics and kinetic
// energy, from a [[rolling]] table the rows of rolling without slipping on the plane z = 0. Everything is derived
// symbolically on the graph like the file's own expressions, so the tapes, the native code, check, export and
// analyze see no difference between a T written by hand and one built here.
//
//   position p(q, t) (a planar body: (x, y, 0)), velocity v = sum_k dp/dq_k qd_k + dp/dt;
//   R (body to space): Euler angles R = R_a1(a1) R_a2(a2) R_a3(a3) for the sequence a1 a2 a3; a unit quaternion
//     e (e0 first) R = the usual quadratic form, exact on |e| = 1; a planar angle R = Rz(theta);
//   body angular velocity Omega (R^T dR/dt = [Omega]x) and space omega = R Omega: for Euler angles
//     Omega = a3' e_3 + a2' R_3(a3)^T e_2 + a1' (R_2(a2) R_3(a3))^T e_1, for the quaternion Omega = 2 G(e) e',
//     G = [[-e1, e0, e3, -e2], [-e2, -e3, e0, e1], [-e3, e2, -e1, e0]];
//   T = 1/2 m v . v + 1/2 Omega . I Omega, plus for a quaternion 2 Ireg (e . e')^2 with Ireg = trace(I) / 3, zero
//     on the motion (d/dt |e|^2 = 0), which makes M positive definite along e (G e = 0); its norm row
//     (e . e - 1) / 2 is a position row;
//   joints: a spherical joint keeps a point of the body (p + R point) at a point of another body or of the ground
//     (3 position rows); a revolute joint also keeps the body's axis R axis across two directions perpendicular to
//     the other's axis (2 more);
//   rolling: the contact point's velocity v + omega x c (c = contact point minus centre of mass, space frame) has
//     zero x and y components (velocity rows) and the contact point stays on the plane, p_z + c_z = 0 (a position
//     row, omitted where it is constant on the graph: a ball's centre at height r); no_spin: omega_z = 0.
#pragma once

#include <array>
#include <functional>
#include <string>

#include "mechanism_files/expression_graph.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace clm {

struct BodyNodes {
  std::array<int, 3> p{}, v{}, omega_body{}, omega_space{};
  std::array<int, 9> R{};  // row-major
  int T = -1;              // the body's kinetic energy (with the quaternion's regularization)
  int mass = -1;
  int norm = -1;           // a quaternion's norm row (e . e - 1) / 2, else -1
};

// n: the coordinates (graph inputs 0 .. n-1, their velocities n .. 2n-1, t at 2n). parse: the compiler's parser of
// a SourceText (errors at the text's place). Throws InputError (FILE:LINE:COLUMN) for an inertia or mass that reads
// q, qd or t, and a position or angle that reads velocities.
using ParseSource = std::function<int(const SourceText&, const std::string& what)>;
using FailAt = std::function<void(const SourceText&, const std::string& message)>;
BodyNodes body_nodes(ExpressionGraph& g, int n, const MechanismFile::Body& body, const ParseSource& parse,
                     const FailAt& fail);

// A member of a body by the name expressions use (x y z vx vy vz w1 w2 w3 wx wy wz R11 .. R33), or -1.
int body_member(const BodyNodes& b, const std::string& member);
// The members' names, for the known-names list of error messages.
const char* body_member_names();

// The rows a [[rolling]] makes: the contact point's tangential velocity (2 velocity rows), its height (a position
// row; -1 where the height reads neither q nor t: then `height_constant` holds its value where the graph knows it),
// and the spin about the normal (no_spin; else -1).
struct RollingRows {
  int vx = -1, vy = -1, height = -1, spin = -1;
  double height_constant = 0;
};
RollingRows rolling_rows(ExpressionGraph& g, int n, const BodyNodes& body, const MechanismFile::Rolling& roll,
                         const ParseSource& parse, const FailAt& fail);

// The position rows of a [[joint]]: 3 (spherical) or 5 (revolute). `other` is null for the ground.
std::vector<int> joint_rows(ExpressionGraph& g, int n, const BodyNodes& body, const BodyNodes* other,
                            const MechanismFile::Joint& joint, const ParseSource& parse, const FailAt& fail);

}  // namespace clm
