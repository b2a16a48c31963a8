// Mechanism files (docs/mechanism-files.md): a mechanism described in TOML by its coordinates, parameters,
// kinetic and potential energy, generalized forces and constraints, as expressions. read_mechanism_file checks
// the file's shape (sections, types, names, sizes); compile_mechanism builds one ExpressionGraph from it with the
// parameters' values, derives every term the suite needs symbolically and flattens each into a Tape:
//
//   M(q) = d2T/dqd2,  a(q) = dT/dqd at qd = 0 (gyroscopic),  T0(q) = T at qd = 0 (enters as the potential -T0),
//   velocity rows r(q, qd, t): A = dr/dqd (r must be linear in qd), b = r at qd = 0;
//   position rows h(q, t): holonomic constraints (A = dh/dq derived by the core), held as positions also next
//   to velocity rows (a mixed mechanism: the position rows first, then the velocity rows),
//
// then checks them at the initial state (T quadratic in qd, rows linear in qd, M symmetric positive definite,
// everything finite). Every error is one line "FILE:LINE:COLUMN: what is wrong" (an InputError).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "mechanism_files/expression_graph.hpp"
#include "mechanism_files/tape.hpp"

namespace clm {

// An expression as written, with where it starts in the file (1-based line and column of its first character).
struct SourceText {
  std::string text;
  int line = 0, column = 0;
};

struct MechanismParameter {
  std::string name;
  double value = 0;
  std::string unit, description;
  std::optional<double> min, max;
  int line = 0, column = 0;
};

// A mechanism file is text a person writes: far below this.
inline constexpr std::size_t kMaxMechanismFileBytes = 16u << 20;

struct MechanismFile {
  std::string path;    // as given
  std::string sha256;  // of the bytes read (read_mechanism_file; empty from parse_mechanism_text)
  std::string name, description;
  std::vector<std::string> coordinates, units;
  std::vector<MechanismParameter> parameters;
  std::map<std::string, SourceText> lets;
  SourceText kinetic, potential;
  std::vector<std::pair<int, SourceText>> forces;  // coordinate index -> expression
  std::vector<SourceText> position_rows, velocity_rows;
  // The rows' names in the same order, position rows first (`position = { rod = "..." }`); empty entries for rows
  // written as a list. All named or none: a file that names its rows names every one (checked).
  std::vector<std::string> position_names, velocity_names;
  // Every row's name, position rows first; empty when the rows are unnamed (lambda's columns, the exported
  // kConstraintNames).
  std::vector<std::string> constraint_names() const {
    std::vector<std::string> all = position_names;
    all.insert(all.end(), velocity_names.begin(), velocity_names.end());
    if (!all.empty() && all.front().empty()) all.clear();
    return all;
  }
  // Initial values: numbers, or expressions in the parameters (strings); qd empty: at rest.
  std::vector<SourceText> q0, qd0;

  // Optional sections (docs/mechanism-files.md, "Optional sections").
  // actuated = ["phi", ...]: the shape coordinates a run's [shape] prescribes (indices into q, ascending).
  std::vector<int> actuated;
  // [velocity_basis] columns = [[n expressions in q], ...] (n - m columns, A S = 0): nullspace's S(q).
  // [transversal_frame] columns = [[n expressions in q], ...] (m columns, A X = I): fernandez_bloch's X(q).
  std::vector<std::vector<SourceText>> velocity_basis, transversal_frame;
  SourceText velocity_basis_at, transversal_frame_at;  // where the sections start (for their errors)
  // [closed_form] q = [...], optional qd = [...]: the exact motion, expressions in t and the parameters, where a
  // coordinate name stands for its initial value q(0) and der(name) for qd(0); qd defaults to dq/dt.
  std::vector<SourceText> closed_form_q, closed_form_qd;
  SourceText closed_form_at;
  // [reference]: values published for the file's own parameters and initial state at one time t.
  struct Reference {
    double t = 0;
    std::vector<double> q, qd, lambda;  // lambda empty when not given
    std::string source, description;
    int line = 0, column = 0;
  };
  std::optional<Reference> reference;
  // [points] NAME = ["x", "y"(, "z")] or { position = [...], unit = "m" }: named points of the mechanism,
  // expressions in q and t; the first (in the file's order) is the run's reference point, a function of q only.
  struct Point {
    std::string name, unit;
    std::vector<SourceText> position;
    int line = 0, column = 0;
  };
  std::vector<Point> points;
  // [body_velocities] NAME = "expression" or { value = "...", unit = "m/s", description = "..." }: body-frame
  // velocities (the sleigh's forward speed, a body's omega in its own frame), expressions in q, der(q) and t.
  struct BodyVelocity {
    std::string name, unit, description;
    SourceText value;
    int line = 0, column = 0;
  };
  std::vector<BodyVelocity> body_velocities;
  // [bodies.NAME] (docs/mechanism-files.md, "Rigid bodies"; issue 41): a rigid body by its mass, inertia, centre of
  // mass and orientation, expressions in q (and t for the position and angles); the suite adds its
  // T = 1/2 m |v|^2 + 1/2 Omega . I Omega to the file's T and names its kinematics for every expression
  // (NAME.vx, NAME.w1, NAME.wx, NAME.R11, ...).
  struct Body {
    enum class Orientation { kNone, kEuler, kQuaternion, kAngle };
    std::string name;
    SourceText mass;
    std::vector<SourceText> inertia;   // planar: 1 (about the normal); 3D: 3 principal or 6 (Ixx Iyy Izz Ixy Ixz Iyz)
    std::vector<SourceText> position;  // 2 (a planar body, in the plane z = 0) or 3
    Orientation orientation = Orientation::kNone;
    std::string sequence;            // kEuler: three axes, "ZXZ": R = Rz(a1) Rx(a2) Rz(a3), body to space
    std::vector<SourceText> angles;  // kEuler 3, kQuaternion 4 (e0 first), kAngle 1
    int line = 0, column = 0;
  };
  std::vector<Body> bodies;
  // [[rolling]] body = "NAME", contact = [3 expressions in q] (the contact point minus the centre of mass, space
  // frame), no_spin = false: rolling without slipping on the plane z = 0 (the rows the suite adds: the contact
  // point's velocity, tangential components as velocity rows, its height as a position row where that is not
  // constant; no_spin: the spin about the normal, a velocity row).
  struct Rolling {
    std::string body;
    std::vector<SourceText> contact;
    bool no_spin = false;
    int line = 0, column = 0;
  };
  std::vector<Rolling> rolling;
  // [[joint]] kind = "spherical" | "revolute", body = "NAME", point = [3 expressions] (body frame, from its centre
  // of mass), to = "ground" | "OTHER", to_point = [3] (OTHER's frame, or space coordinates for the ground),
  // revolute: axis = [3] (body frame) and to_axis = [3 numbers] (OTHER's frame or space): position rows that keep
  // the two points together (3) and, for a revolute joint, the axes aligned (2 more).
  struct Joint {
    std::string kind, body, to = "ground";
    std::vector<SourceText> point, to_point, axis, to_axis;
    int line = 0, column = 0;
  };
  std::vector<Joint> joints;
  // [gravity] g = [gx, gy(, gz)]: V gains -m g . position for every body.
  std::vector<SourceText> gravity;
  SourceText gravity_at;
};

// Reads and checks the shape of a mechanism file. Throws InputError ("PATH:LINE:COLUMN: message").
MechanismFile read_mechanism_file(const std::string& path);
// The same from text (tests, the fuzz target); `path` names it in messages.
MechanismFile parse_mechanism_text(const std::string& text, const std::string& path);

// What a mechanism file compiles to for one parameter set: the tapes the Problem evaluates (inputs
// q_0 .. q_{n-1}, qd_0 .. qd_{n-1}, t) and what the model reports.
struct CompiledMechanism {
  std::string path, sha256, name, description;
  std::vector<std::string> coordinates, units;
  std::vector<std::pair<std::string, double>> parameters;  // with the overrides applied
  int n = 0, m = 0;
  bool holonomic = false;        // position rows only: h(q, t) = 0
  int position_rows = 0;         // the rows of h, first (all m when holonomic; 0 < position_rows < m: mixed)
  std::vector<std::string> constraint_names;  // m names, position rows first; empty when the rows are unnamed
  // One line per [bodies.NAME] (mass, inertia, orientation) and per [[rolling]] (the rows it made), for
  // `mechanism check`.
  std::vector<std::string> bodies;
  bool time_dependent = false;   // t in V, h or b, or b(q) != 0
  bool has_forces = false;       // a [forces] section
  bool has_gyroscopic = false;   // T has a term linear in qd
  Tape mass;        // n x n outputs, row-major, at qd = 0
  Tape potential;   // 1 output: V - T0 (q, t)
  Tape constraint;  // position_rows outputs: h (q, t) (holonomic, mixed)
  Tape pfaffian;    // (m - position_rows) x n outputs, row-major: the velocity rows' A (q) (Pfaffian, mixed)
  Tape affine;      // m - position_rows outputs: the velocity rows' b (q, t)
  Tape gyroscopic;  // n outputs: a (q)
  Tape force;       // n outputs: F (q, qd, t)
  Tape kinetic;     // 1 output: T (q, qd) (checks)
  int graph_nodes = 0;  // the size of the expression graph (diagnostics)
  // The dimensional analysis (mechanism_files/unit_check.hpp): what it checked, what it could not (a name without
  // a unit), for `mechanism check`.
  std::string unit_check;
  Vec q0, qd0;

  // Optional sections (empty tapes where the file has none).
  std::vector<int> actuated;
  Tape velocity_basis;     // n x (n - m) outputs, row-major: S (q)
  Tape transversal_frame;  // n x m outputs, row-major: X (q)
  Tape closed_form;        // 2n outputs: q(t), qd(t) with the inputs q, qd holding q(0), qd(0)
  std::optional<MechanismFile::Reference> reference;
  std::string reference_withheld;  // why `reference` is not given to this parameter set (it is the file's)
  struct Point {
    std::string name, unit;
    int components = 0;
  };
  std::vector<Point> points;
  Tape point_positions;  // the points' components, one after another (q, t; the first point's of q only)
  struct BodyVelocity {
    std::string name, unit, description;
  };
  std::vector<BodyVelocity> body_velocities;
  Tape body_velocity_values;  // one output per body velocity (q, qd, t)
};

// Builds the tapes for the parameter values (overrides by name: unknown names and values outside [min, max]
// throw InputError) and checks them at the initial state.
std::shared_ptr<const CompiledMechanism> compile_mechanism(const MechanismFile& file,
                                                           const std::map<std::string, double>& overrides = {});

// The derived terms as nodes of one graph whose inputs are q (n), qd (n), t and the parameters (in the file's
// order), the parameters not folded in: what `clmbench mechanism export` writes as C++ (export_header.hpp).
// The file is checked first as compile_mechanism checks it.
struct SymbolicMechanism {
  ExpressionGraph graph{0};
  int n = 0, m = 0;
  int position_rows = 0;  // as CompiledMechanism's
  bool holonomic = false, time_dependent = false, has_forces = false, has_gyroscopic = false;
  // constraint: the position rows h; pfaffian, affine: the velocity rows' A and b (after them)
  std::vector<int> mass, constraint, pfaffian, affine, gyroscopic, force, q0, qd0;  // qd0 empty: zero
  int potential = -1;  // V - T0
  int kinetic = -1, potential_energy = -1;  // T (q, qd) and V (q, t) as the file states them (export --format sympy)
  // The optional sections (empty where the file has none), as CompiledMechanism's tapes.
  std::vector<int> velocity_basis, transversal_frame, closed_form, point_positions, body_velocities;
};
SymbolicMechanism symbolic_mechanism(const MechanismFile& file);

// Throws the one-line InputError "PATH:LINE:COLUMN: message" (PATH: message when line is 0).
[[noreturn]] void throw_at(const std::string& path, int line, int column, const std::string& message);

// Whether a problem name names a mechanism file: PATH ending in .toml, or PATH@sha256:HEX (a recorded
// configuration: the file with the contents it must have).
bool is_mechanism_file(const std::string& problem);
// Reads the mechanism file a problem name names; with @sha256:HEX, refuses other contents in one line.
MechanismFile read_named_mechanism_file(const std::string& problem);
// What a configuration records for a mechanism file: PATH@sha256:HEX of its contents now (the name as given
// when it cannot be read: the run reports that).
std::string mechanism_file_identity(const std::string& problem);

}  // namespace clm
