#include "mechanism_files/rigid_bodies.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include <sstream>

namespace clm {

namespace {

// Node arithmetic with the graph's own simplifications (constants folded, x * 0, x + 0).
struct Nodes {
  ExpressionGraph& g;
  int n;
  int c(double v) { return g.constant(v); }
  int add(int a, int b) { return g.binary(ExprOp::kAdd, a, b); }
  int sub(int a, int b) { return g.binary(ExprOp::kSub, a, b); }
  int mul(int a, int b) { return g.binary(ExprOp::kMul, a, b); }
  int neg(int a) { return g.unary(ExprOp::kNeg, a); }
  int sin(int a) { return g.unary(ExprOp::kSin, a); }
  int cos(int a) { return g.unary(ExprOp::kCos, a); }
  // d/dt of an expression of q and t along the motion: sum_k d/dq_k qd_k + d/dt.
  int rate(int x) {
    int out = c(0);
    for (int k = 0; k < n; ++k)
      if (g.depends_on(x, k)) out = add(out, mul(g.derivative(x, k), g.input(n + k)));
    if (g.depends_on(x, 2 * n)) out = add(out, g.derivative(x, 2 * n));
    return out;
  }
  bool reads_velocities(int x) {
    for (int k = 0; k < n; ++k)
      if (g.depends_on(x, n + k)) return true;
    return false;
  }
  bool reads_state(int x) {
    for (int k = 0; k <= 2 * n; ++k)
      if (g.depends_on(x, k)) return true;
    return false;
  }
};

using M3 = std::array<int, 9>;
using V3 = std::array<int, 3>;

// The elementary rotation about axis ('X', 'Y', 'Z') by angle a.
M3 rotation(Nodes& x, char axis, int a) {
  const int c = x.cos(a), s = x.sin(a), z = x.c(0), o = x.c(1), ms = x.neg(s);
  switch (axis) {
    case 'X': return {o, z, z, z, c, ms, z, s, c};
    case 'Y': return {c, z, s, z, o, z, ms, z, c};
    default: return {c, ms, z, s, c, z, z, z, o};
  }
}

M3 product(Nodes& x, const M3& a, const M3& b) {
  M3 out{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      int acc = x.c(0);
      for (int k = 0; k < 3; ++k) acc = x.add(acc, x.mul(a[3 * i + k], b[3 * k + j]));
      out[3 * i + j] = acc;
    }
  return out;
}

// R^T u (transpose) or R u.
V3 apply(Nodes& x, const M3& R, const V3& u, bool transpose) {
  V3 out{};
  for (int i = 0; i < 3; ++i) {
    int acc = x.c(0);
    for (int k = 0; k < 3; ++k) acc = x.add(acc, x.mul(transpose ? R[3 * k + i] : R[3 * i + k], u[k]));
    out[i] = acc;
  }
  return out;
}

V3 axis_vector(Nodes& x, char axis) {
  return {x.c(axis == 'X' ? 1 : 0), x.c(axis == 'Y' ? 1 : 0), x.c(axis == 'Z' ? 1 : 0)};
}

V3 scaled(Nodes& x, const V3& u, int s) { return {x.mul(u[0], s), x.mul(u[1], s), x.mul(u[2], s)}; }
V3 sum(Nodes& x, const V3& a, const V3& b) { return {x.add(a[0], b[0]), x.add(a[1], b[1]), x.add(a[2], b[2])}; }

}  // namespace

BodyNodes body_nodes(ExpressionGraph& g, int n, const MechanismFile::Body& body, const ParseSource& parse,
                     const FailAt& fail) {
  using Orientation = MechanismFile::Body::Orientation;
  Nodes x{g, n};
  BodyNodes out;
  const std::string what = "body " + body.name;
  // Constants of the body: parameters and numbers only.
  auto constant = [&](const SourceText& s, const std::string& name) {
    const int node = parse(s, what + " " + name);
    if (x.reads_state(node)) fail(s, what + " " + name + " must be a constant (numbers and parameters), not of q, der(q) or t");
    return node;
  };
  // Functions of q and t.
  auto of_position = [&](const SourceText& s, const std::string& name) {
    const int node = parse(s, what + " " + name);
    if (x.reads_velocities(node)) fail(s, what + " " + name + " must not depend on velocities (it is a position)");
    return node;
  };
  out.mass = constant(body.mass, "mass");
  if (g.is_constant(out.mass) && !(g.node(out.mass).value > 0)) {
    std::ostringstream m;
    m << what << " mass must be positive (it is " << g.node(out.mass).value << ")";
    fail(body.mass, m.str());
  }
  for (std::size_t i = 0; i < 3; ++i)
    out.p[i] = i < body.position.size() ? of_position(body.position[i], "position") : x.c(0);
  for (int i = 0; i < 3; ++i) out.v[i] = x.rate(out.p[i]);
  int T = x.c(0);
  for (int i = 0; i < 3; ++i) T = x.add(T, x.mul(out.v[i], out.v[i]));
  T = x.mul(x.mul(x.c(0.5), out.mass), T);
  const int zero = x.c(0), one = x.c(1);
  out.R = {one, zero, zero, zero, one, zero, zero, zero, one};
  out.omega_body = out.omega_space = {zero, zero, zero};
  std::vector<int> a;
  for (const SourceText& s : body.angles) a.push_back(of_position(s, body.orientation == Orientation::kQuaternion ? "quaternion" : "angle"));
  switch (body.orientation) {
    case Orientation::kNone: break;
    case Orientation::kAngle: {
      out.R = rotation(x, 'Z', a[0]);
      out.omega_body = out.omega_space = {zero, zero, x.rate(a[0])};
      break;
    }
    case Orientation::kEuler: {
      const char a1 = body.sequence[0], a2 = body.sequence[1], a3 = body.sequence[2];
      const M3 R1 = rotation(x, a1, a[0]), R2 = rotation(x, a2, a[1]), R3 = rotation(x, a3, a[2]);
      const M3 R12 = product(x, R1, R2), R23 = product(x, R2, R3);
      out.R = product(x, R12, R3);
      const int r1 = x.rate(a[0]), r2 = x.rate(a[1]), r3 = x.rate(a[2]);
      // Omega = a3' e3 + a2' R3^T e2 + a1' (R2 R3)^T e1; omega = a1' e1 + a2' R1 e2 + a3' R1 R2 e3.
      out.omega_body = sum(x, scaled(x, axis_vector(x, a3), r3),
                           sum(x, scaled(x, apply(x, R3, axis_vector(x, a2), true), r2),
                               scaled(x, apply(x, R23, axis_vector(x, a1), true), r1)));
      out.omega_space = sum(x, scaled(x, axis_vector(x, a1), r1),
                            sum(x, scaled(x, apply(x, R1, axis_vector(x, a2), false), r2),
                                scaled(x, apply(x, R12, axis_vector(x, a3), false), r3)));
      break;
    }
    case Orientation::kQuaternion: {
      const int e0 = a[0], e1 = a[1], e2 = a[2], e3 = a[3];
      auto sq = [&](int u) { return x.mul(u, u); };
      auto two = [&](int u, int w) { return x.mul(x.c(2), x.mul(u, w)); };
      out.R = {x.sub(x.sub(x.add(sq(e0), sq(e1)), sq(e2)), sq(e3)), x.sub(two(e1, e2), two(e0, e3)),
               x.add(two(e1, e3), two(e0, e2)),
               x.add(two(e1, e2), two(e0, e3)), x.sub(x.add(x.sub(sq(e0), sq(e1)), sq(e2)), sq(e3)),
               x.sub(two(e2, e3), two(e0, e1)),
               x.sub(two(e1, e3), two(e0, e2)), x.add(two(e2, e3), two(e0, e1)),
               x.add(x.sub(x.sub(sq(e0), sq(e1)), sq(e2)), sq(e3))};
      const int d0 = x.rate(e0), d1 = x.rate(e1), d2 = x.rate(e2), d3 = x.rate(e3);
      // 2 (row . e'), rows of G (body) and E (space).
      auto row = [&](int c0, int c1, int c2, int c3) {
        return x.mul(x.c(2), x.add(x.add(x.mul(c0, d0), x.mul(c1, d1)), x.add(x.mul(c2, d2), x.mul(c3, d3))));
      };
      out.omega_body = {row(x.neg(e1), e0, e3, x.neg(e2)), row(x.neg(e2), x.neg(e3), e0, e1),
                        row(x.neg(e3), e2, x.neg(e1), e0)};
      out.omega_space = {row(x.neg(e1), e0, x.neg(e3), e2), row(x.neg(e2), e3, e0, x.neg(e1)),
                         row(x.neg(e3), x.neg(e2), e1, e0)};
      out.norm = x.mul(x.c(0.5), x.sub(x.add(x.add(sq(e0), sq(e1)), x.add(sq(e2), sq(e3))), x.c(1)));
      break;
    }
  }
  if (body.orientation != Orientation::kNone) {
    // The inertia about the centre of mass in body axes.
    std::array<int, 9> I{};
    I.fill(zero);
    std::vector<int> entries;
    for (const SourceText& s : body.inertia) entries.push_back(constant(s, "inertia"));
    if (entries.size() == 1) {
      I[8] = entries[0];
    } else {
      I[0] = entries[0], I[4] = entries[1], I[8] = entries[2];
      if (entries.size() == 6) {
        I[1] = I[3] = entries[3];
        I[2] = I[6] = entries[4];
        I[5] = I[7] = entries[5];
      }
    }
    // Positive definite (where the entries are numbers: an exported header keeps them parameters). A planar body's
    // one moment about the normal must be positive.
    bool numbers = true;
    for (int e : entries) numbers = numbers && g.is_constant(e);
    if (numbers) {
      Eigen::Matrix3d In;
      for (int k = 0; k < 9; ++k) In(k / 3, k % 3) = g.node(I[k]).value;
      if (entries.size() == 1) In(0, 0) = In(1, 1) = In(2, 2);
      const Eigen::Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(In, Eigen::EigenvaluesOnly).eigenvalues();
      if (!(ev.minCoeff() > 0)) {
        std::ostringstream m;
        m << what << " inertia is not positive definite (eigenvalues " << ev[0] << ", " << ev[1] << ", " << ev[2] << ")";
        fail(body.inertia.front(), m.str());
      }
    }
    const V3 w = out.omega_body;
    int rot = zero;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) rot = x.add(rot, x.mul(w[i], x.mul(I[3 * i + j], w[j])));
    T = x.add(T, x.mul(x.c(0.5), rot));
    if (body.orientation == Orientation::kQuaternion) {
      const int Ireg = x.mul(x.c(1.0 / 3.0), x.add(x.add(I[0], I[4]), I[8]));
      int edot = zero;
      for (int k = 0; k < 4; ++k) edot = x.add(edot, x.mul(a[k], x.rate(a[k])));
      T = x.add(T, x.mul(x.mul(x.c(2), Ireg), x.mul(edot, edot)));
    }
  }
  out.T = T;
  return out;
}

int body_member(const BodyNodes& b, const std::string& m) {
  if (m.size() == 1 && m[0] >= 'x' && m[0] <= 'z') return b.p[m[0] - 'x'];
  if (m.size() == 2 && m[0] == 'v' && m[1] >= 'x' && m[1] <= 'z') return b.v[m[1] - 'x'];
  if (m.size() == 2 && m[0] == 'w' && m[1] >= '1' && m[1] <= '3') return b.omega_body[m[1] - '1'];
  if (m.size() == 2 && m[0] == 'w' && m[1] >= 'x' && m[1] <= 'z') return b.omega_space[m[1] - 'x'];
  if (m.size() == 3 && m[0] == 'R' && m[1] >= '1' && m[1] <= '3' && m[2] >= '1' && m[2] <= '3')
    return b.R[3 * (m[1] - '1') + (m[2] - '1')];
  return -1;
}

const char* body_member_names() { return "x y z vx vy vz w1 w2 w3 wx wy wz R11 .. R33"; }

RollingRows rolling_rows(ExpressionGraph& g, int n, const BodyNodes& body, const MechanismFile::Rolling& roll,
                         const ParseSource& parse, const FailAt& fail) {
  Nodes x{g, n};
  V3 c{};
  for (int i = 0; i < 3; ++i) {
    c[i] = parse(roll.contact[i], "[[rolling]] contact");
    if (x.reads_velocities(c[i]))
      fail(roll.contact[i], "[[rolling]] contact must not depend on velocities (the contact point is a position)");
  }
  const V3& w = body.omega_space;
  // v + omega x c
  const int vx = x.add(body.v[0], x.sub(x.mul(w[1], c[2]), x.mul(w[2], c[1])));
  const int vy = x.add(body.v[1], x.sub(x.mul(w[2], c[0]), x.mul(w[0], c[2])));
  RollingRows rows;
  rows.vx = vx;
  rows.vy = vy;
  // The height as a row where it changes with q or t; where it does not (a ball's centre at r, the contact at -r)
  // it is a constant: zero when the body touches the plane, checked by the caller where the graph knows its value
  // (an exported header's parameters are inputs).
  const int height = x.add(body.p[2], c[2]);
  bool moves = g.depends_on(height, 2 * n);
  for (int k = 0; k < n && !moves; ++k) moves = g.depends_on(height, k);
  if (moves) rows.height = height;
  else if (g.is_constant(height)) rows.height_constant = g.node(height).value;
  if (roll.no_spin) rows.spin = w[2];
  return rows;
}

std::vector<int> joint_rows(ExpressionGraph& g, int n, const BodyNodes& body, const BodyNodes* other,
                            const MechanismFile::Joint& joint, const ParseSource& parse, const FailAt& fail) {
  Nodes x{g, n};
  auto vector_of = [&](const std::vector<SourceText>& texts, const std::string& what) {
    V3 out{};
    for (int i = 0; i < 3; ++i) {
      out[i] = parse(texts[i], "[[joint]] " + what);
      if (x.reads_velocities(out[i])) fail(texts[i], "[[joint]] " + what + " must not depend on velocities");
    }
    return out;
  };
  // The joint's point as each side has it, in space.
  const V3 on_body = sum(x, body.p, apply(x, body.R, vector_of(joint.point, "point"), false));
  const V3 to = vector_of(joint.to_point, "to_point");
  const V3 on_other = other ? sum(x, other->p, apply(x, other->R, to, false)) : to;
  std::vector<int> rows;
  for (int i = 0; i < 3; ++i) rows.push_back(x.sub(on_body[i], on_other[i]));
  if (joint.kind == "revolute") {
    const V3 axis = apply(x, body.R, vector_of(joint.axis, "axis"), false);
    // Two unit directions across the other's axis (numbers: the axis is fixed in the other's frame).
    Eigen::Vector3d a;
    for (int i = 0; i < 3; ++i) {
      const int node = parse(joint.to_axis[i], "[[joint]] to_axis");
      if (!g.is_constant(node)) fail(joint.to_axis[i], "[[joint]] to_axis must be numbers (a direction fixed in its frame)");
      a[i] = g.node(node).value;
    }
    if (!(a.norm() > 0)) fail(joint.to_axis[0], "[[joint]] to_axis must not be zero");
    a.normalize();
    Eigen::Index k = 0;
    a.cwiseAbs().minCoeff(&k);
    const Eigen::Vector3d u1 = a.cross(Eigen::Vector3d::Unit(k)).normalized(), u2 = a.cross(u1);
    for (const Eigen::Vector3d& u : {u1, u2}) {
      V3 across{x.c(u[0]), x.c(u[1]), x.c(u[2])};
      if (other) across = apply(x, other->R, across, false);
      int dot = x.c(0);
      for (int i = 0; i < 3; ++i) dot = x.add(dot, x.mul(axis[i], across[i]));
      rows.push_back(dot);
    }
  }
  return rows;
}

}  // namespace clm
