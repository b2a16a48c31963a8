"""clmbench.Mechanism: a mechanism file in memory (docs/mechanism-files.md), from a file, a string, a dict or
sympy expressions; accepted wherever a problem name is (clmbench.run(problem=mech, ...)).

A Mechanism is given to the suite as a file named by its contents (a content-addressed copy in
$XDG_CACHE_HOME/clmbench/mechanisms, or ~/.cache/...): the run records it as PATH@sha256:HEX like any file, and
the text is read by the suite's own parser (nothing is ever passed to Python's eval).
"""
import hashlib
import math
import os
import threading
import re

__all__ = ["Mechanism", "Equations"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _toml_value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if not math.isfinite(float(v)):
            raise ValueError(f"Mechanism: {where} = {v!r} is not finite")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml_value(x, f'{where}.{k}')}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    try:
        return repr(float(v))  # numpy and sympy numbers
    except (TypeError, ValueError):
        raise ValueError(f"Mechanism: {where} = {v!r} is not a number, string, list or table") from None


def _key(k):
    k = str(k)
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else _toml_value(k, "key")


def _toml(d):
    """TOML text of a dict of the mechanism-file shape: top-level values first, then [sections]."""
    lines, tables = [], []
    for k, v in d.items():
        (tables if isinstance(v, dict) else lines).append((k, v))
    out = [f"{_key(k)} = {_toml_value(v, k)}" for k, v in lines]
    for k, table in tables:
        out.append(f"\n[{_key(k)}]")
        out += [f"{_key(x)} = {_toml_value(y, f'{k}.{x}')}" for x, y in table.items()]
    return "\n".join(out) + "\n"


class Mechanism:
    """A mechanism file's text. Mechanism.from_file / from_string / from_dict / from_sympy make one."""

    def __init__(self, text, origin="<string>"):
        if not isinstance(text, str):
            raise ValueError("Mechanism: the text must be a str")
        self.text = text
        self.origin = origin
        m = re.search(r'^name\s*=\s*"([^"]*)"', text, re.M)
        self.name = m.group(1) if m else "mechanism"

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(f.read(), str(path))

    @classmethod
    def from_string(cls, text):
        return cls(text)

    @classmethod
    def from_dict(cls, d):
        """The file's sections as a dict: {"name": ..., "coordinates": [...], "parameters": {...}, "energy":
        {"T": "...", "V": "..."}, "constraints": {...}, "initial": {"q": [...]}, ...}."""
        if not isinstance(d, dict):
            raise ValueError("Mechanism.from_dict needs a dict")
        return cls(_toml(d), "<dict>")

    @classmethod
    def from_sympy(cls, name, coordinates, velocities, T=None, V=0, position_constraints=(), velocity_constraints=(),
                   forces=None, parameters=None, q0=None, qd0=None, description="", units=None, points=None,
                   body_velocities=None, bodies=None, frame=None, origin=None, gravity=None, actuated=None,
                   velocity_basis=None, transversal_frame=None, closed_form=None, reference=None):
        """sympy expressions in plain symbols (coordinates and velocities given as lists of symbols) or in
        dynamicsymbols and their time derivatives, printed into the mechanism-file language.

        position_constraints: rows h(q, t) = 0, velocity_constraints: rows A(q) qd + b = 0 (both: a mixed mechanism,
        the position rows held as positions, first in lambda's order); each a list, or a dict {name: row} to name
        the rows (then name both kinds).
        forces: {coordinate symbol: generalized force}; parameters: {symbol: value} or {symbol: {"value": v, "min":
        lo, "max": hi, "unit": "kg", "description": "..."}}; q0, qd0: numbers or sympy
        expressions in the parameters (q0 defaults to zeros, qd0 to rest); units: one per coordinate ("m", "rad");
        points: {name: (x, y[, z])} or {name: {"position": (x, y[, z]), "unit": "m"}}, expressions of q and t (the
        file's [points], the first the reference point); body_velocities: {name: expression of q, qd and t} or
        {name: {"value": expression, "unit": "m/s", "description": "..."}} ([body_velocities]).

        The optional sections (docs/mechanism-files.md): actuated: the coordinates a run's [shape] prescribes;
        velocity_basis: S(q), n x (n - m), and transversal_frame: X(q), n x m, each a sympy Matrix or a list of
        columns; closed_form: {"q": [...], "qd": [...]} (qd optional), expressions in t, the parameters and the
        coordinates and velocities standing for their values at t = 0; reference: {"t", "q", "qd", "lambda",
        "source", "description"}, values published for these parameters and this initial state.

        bodies: sympy.physics.mechanics RigidBody and Particle objects (issue 41), their kinematics in the coordinates
        and their time derivatives; frame: the inertial ReferenceFrame; origin: a fixed Point, from which a mass
        centre's velocity is taken (d/dt in frame of its position) where it has none set in frame; gravity: a Vector
        in frame, the acceleration of gravity (V gains -m gravity . position for every body, the position relative
        to origin). Each body adds its kinetic energy, 1/2 m v . v + 1/2 omega . I omega about its mass centre, and
        its potential_energy where set, to T and V (which may then be 0)."""
        import sympy as sp

        if bodies:
            T, V = _bodies_energies(bodies, frame, origin, gravity, T if T is not None else 0, V)
        elif T is None:
            raise ValueError("Mechanism.from_sympy: T is required without bodies")

        coordinates, velocities = list(coordinates), list(velocities)
        if len(coordinates) != len(velocities):
            raise ValueError("Mechanism.from_sympy: one velocity per coordinate")
        # dynamicsymbols q(t) and q(t).diff(t) become plain symbols first.
        plain = {}
        for c, v in zip(coordinates, velocities):
            if isinstance(c, sp.Function) or (hasattr(c, "func") and isinstance(c.func, sp.core.function.UndefinedFunction)):
                plain[c] = sp.Symbol(c.func.__name__)
                plain[sp.Derivative(c, c.args[0])] = sp.Symbol(c.func.__name__ + "__der")
                if v != sp.Derivative(c, c.args[0]):
                    plain[v] = plain[sp.Derivative(c, c.args[0])]
        names = {}
        for c in coordinates:
            n = str(plain.get(c, c))
            if not _NAME.match(n):
                raise ValueError(f"Mechanism.from_sympy: coordinate {c} is not a name the file language accepts")
            names[c] = n
        ders = {v: names[c] for c, v in zip(coordinates, velocities)}
        parameters = dict(parameters or {})

        class Printer(sp.printing.str.StrPrinter):
            _functions = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
                          "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp",
                          "log": "log", "sqrt": "sqrt", "Abs": "abs", "Min": "min", "Max": "max", "sign": "sign"}

            def _print_Symbol(self, s):
                if s in ders or plain.get(s) in ders:
                    return f"der({ders.get(s) or ders[plain[s]]})"
                if s.name.endswith("__der"):
                    return f"der({s.name[:-5]})"
                if not _NAME.match(s.name):
                    raise ValueError(f"Mechanism.from_sympy: symbol {s} is not a name the file language accepts")
                return s.name

            def _print_Function(self, e):
                name = type(e).__name__
                if name not in self._functions:
                    raise ValueError(f"Mechanism.from_sympy: function {name} is not in the file language "
                                     f"({', '.join(sorted(set(self._functions.values())))})")
                return f"{self._functions[name]}({', '.join(self._print(a) for a in e.args)})"

            _print_Abs = _print_Min = _print_Max = _print_Function

            def _print_Heaviside(self, e):
                # issue 43: printed as Heaviside(x), which passed here and failed at run time. With sympy's default
                # H(0) = 1/2 it is (1 + sign(x))/2 in the file language; another H(0) is refused.
                if len(e.args) > 1 and sp.nsimplify(e.args[1]) != sp.Rational(1, 2):
                    raise ValueError(f"Mechanism.from_sympy: {e} (H(0) = {e.args[1]}) is not in the file language; "
                                     "Heaviside(x) with H(0) = 1/2 is written (1 + sign(x))/2")
                return f"((1 + sign({self._print(e.args[0])}))/2)"

            def _print_Piecewise(self, e):
                raise ValueError(f"Mechanism.from_sympy: Piecewise is not in the file language; write it with "
                                 "sign, abs, min or max ({e})")

            def _print_DiracDelta(self, e):
                raise ValueError(f"Mechanism.from_sympy: {e} is not in the file language (no distributions)")

            def _print_Exp1(self, e):
                return "exp(1)"

            def _print_Pi(self, e):
                return "pi"

            def _print_Derivative(self, e):
                raise ValueError(f"Mechanism.from_sympy: {e} is not a coordinate's velocity")

        printer = Printer({"full_prec": True})

        def text(expr):
            expr = sp.sympify(expr)
            if plain:
                expr = expr.subs({k: v for k, v in plain.items() if isinstance(k, sp.Derivative)})
                expr = expr.subs({k: v for k, v in plain.items() if not isinstance(k, sp.Derivative)})
            return printer.doprint(expr)  # a symbol named t is the language's time

        d = {"name": name}
        if description:
            d["description"] = description
        d["coordinates"] = [names[c] for c in coordinates]
        if units:
            d["units"] = list(units)
        def number(value, what):
            # issue 43: a symbolic or string value raised sympy's or float()'s message, naming no parameter
            try:
                x = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"Mechanism.from_sympy: {what} = {value!r} must be a number") from None
            if x != x or x in (float("inf"), float("-inf")):
                raise ValueError(f"Mechanism.from_sympy: {what} = {value!r} must be finite")
            return x

        def parameter(k, v):
            # A number, or (issue 42) a dict with the file's keys: value, min, max, unit, description.
            if not isinstance(v, dict):
                return number(v, f"parameter {k}")
            unknown = sorted(set(map(str, v)) - {"value", "min", "max", "unit", "description"})
            if unknown:
                raise ValueError(f"Mechanism.from_sympy: parameter {k}: unknown keys {', '.join(unknown)} (value, min, "
                                 "max, unit, description)")
            if "value" not in v:
                raise ValueError(f"Mechanism.from_sympy: parameter {k} needs a value")
            spec = {"value": number(v["value"], f"parameter {k}")}
            for key in ("min", "max"):
                if key in v:
                    spec[key] = number(v[key], f"parameter {k} {key}")
            for key in ("unit", "description"):
                if key in v:
                    spec[key] = str(v[key])
            return spec

        if parameters:
            d["parameters"] = {str(k): parameter(k, v) for k, v in parameters.items()}
        d["energy"] = {"T": text(T), "V": text(V)}
        if forces:
            d["forces"] = {names[c]: text(f) for c, f in forces.items()}
        if position_constraints or velocity_constraints:
            # A list of rows, or a dict {name: row} (named rows: lambda's columns carry the names; name both kinds).
            def rows(given):
                if isinstance(given, dict):
                    return {str(k): text(r) for k, r in given.items()}
                return [text(r) for r in given]
            d["constraints"] = {"position": rows(position_constraints), "velocity": rows(velocity_constraints)}
        parameter_symbols = {k for k in parameters if isinstance(k, sp.Basic)}

        def initial_value(value, what):
            # A number, or (issue 42) a sympy expression in the parameters, printed into [initial] as the file
            # language's expression (the file evaluates it at the parameters' values, overrides included).
            if isinstance(value, sp.Basic) and not value.is_number:
                stray = value.free_symbols - parameter_symbols
                if stray:
                    raise ValueError(f"Mechanism.from_sympy: {what} = {value} must be a number or an expression in the "
                                     f"parameters ({', '.join(sorted(map(str, stray)))} are not parameters)")
                return text(value)
            return number(value, what)

        given_q0 = q0 if q0 is not None else [0.0] * len(coordinates)
        initial = {"q": [initial_value(x, f"q0[{i}]") for i, x in enumerate(given_q0)]}
        if qd0 is not None:
            initial["qd"] = [initial_value(x, f"qd0[{i}]") for i, x in enumerate(qd0)]
        d["initial"] = initial
        def keyed(value, what, keys, required):
            # A dict with the file's keys (issue 42: units and descriptions of points and body velocities).
            unknown = sorted(set(map(str, value)) - set(keys))
            if unknown:
                raise ValueError(f"Mechanism.from_sympy: {what}: unknown keys {', '.join(unknown)} ({', '.join(keys)})")
            if required not in value:
                raise ValueError(f"Mechanism.from_sympy: {what} needs {required}")

        def point(k, v):
            if isinstance(v, dict):
                keyed(v, f"point {k}", ("position", "unit"), "position")
                spec = {"position": [text(x) for x in v["position"]]}
                if "unit" in v:
                    spec["unit"] = str(v["unit"])
                return spec
            return [text(x) for x in v]

        def body_velocity(k, v):
            if isinstance(v, dict):
                keyed(v, f"body velocity {k}", ("value", "unit", "description"), "value")
                spec = {"value": text(v["value"])}
                for key in ("unit", "description"):
                    if key in v:
                        spec[key] = str(v[key])
                return spec
            return text(v)

        def columns(value, what):
            # A sympy Matrix (its columns) or a list of columns, each n expressions.
            if hasattr(value, "shape") and hasattr(value, "col"):
                cols = [list(value.col(j)) for j in range(value.shape[1])]
            else:
                cols = [list(c) for c in value]
            for j, c in enumerate(cols):
                if len(c) != len(coordinates):
                    raise ValueError(f"Mechanism.from_sympy: {what} column {j} has {len(c)} entries for "
                                     f"{len(coordinates)} coordinates")
            return {"columns": [[text(x) for x in c] for c in cols]}

        if actuated:
            stray = [c for c in actuated if c not in names]
            if stray:
                raise ValueError(f"Mechanism.from_sympy: actuated {', '.join(map(str, stray))} are not coordinates")
            d["actuated"] = [names[c] for c in actuated]
        if points:
            d["points"] = {str(k): point(k, v) for k, v in points.items()}
        if body_velocities:
            d["body_velocities"] = {str(k): body_velocity(k, v) for k, v in body_velocities.items()}
        if velocity_basis is not None:
            d["velocity_basis"] = columns(velocity_basis, "velocity_basis")
        if transversal_frame is not None:
            d["transversal_frame"] = columns(transversal_frame, "transversal_frame")
        if closed_form is not None:
            if not isinstance(closed_form, dict):
                closed_form = {"q": closed_form}
            keyed(closed_form, "closed_form", ("q", "qd"), "q")
            d["closed_form"] = {k: [text(x) for x in v] for k, v in closed_form.items()}
        if reference is not None:
            keyed(reference, "reference", ("t", "q", "qd", "lambda", "source", "description"), "q")
            spec = {}
            for key, value in reference.items():
                if key in ("source", "description"):
                    spec[key] = str(value)
                elif key == "t":
                    spec[key] = number(value, "reference t")
                else:
                    spec[key] = [number(x, f"reference {key}[{i}]") for i, x in enumerate(value)]
            d["reference"] = spec
        return cls(_toml(d), "<sympy>")

    @classmethod
    def from_mechanics(cls, name, coordinates, velocities, bodies, frame, origin=None, gravity=None, **keywords):
        """Mechanism.from_sympy with sympy.physics.mechanics objects (KanesMethod's inputs): bodies (RigidBody,
        Particle), the inertial frame, a fixed origin point and gravity; the other keywords as from_sympy's
        (velocity_constraints, position_constraints, forces, parameters, q0, qd0, ...)."""
        return cls.from_sympy(name, coordinates, velocities, bodies=bodies, frame=frame, origin=origin,
                              gravity=gravity, **keywords)

    def path(self):
        """A file with this text, named by its contents (written once; the same text, the same file)."""
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "clmbench", "mechanisms")
        os.makedirs(root, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", self.name)[:64] or "mechanism"
        path = os.path.join(root, f"{safe}-{digest[:16]}.toml")
        # issue 43: a file of the cache edited by hand was run instead of this text; its contents are checked.
        try:
            with open(path, "rb") as f:
                stored = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            stored = None
        if stored != digest:
            tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self.text)
            os.replace(tmp, path)  # whole or absent
        return path

    def _export(self, fmt):
        from . import _clmbench

        args = ["export", self.path(), "--format", fmt]
        code, text = _clmbench.command("mechanism", args, "python: clmbench.Mechanism." +
                                       ("equations()" if fmt == "sympy" else "latex()"))
        if code != 0:
            raise RuntimeError(f"clmbench mechanism export ended with exit code {code}")
        return text

    def equations(self):
        """The equations the suite derives from this mechanism (issue 42), as sympy objects: an Equations with T, V
        (as stated, bodies and gravity included), M = d2T/dqd2, a (T's part linear in the velocities, dT/dqd at
        qd = 0; None where absent), F (the generalized forces or None), h (the position rows or None), A and b (the
        velocity rows A qd + b = 0, or None), the symbols (coordinates, velocities NAME_dot, accelerations
        NAME_ddot, t, multipliers lambda_1 ..), parameters {symbol: value} and equations_of_motion (Lagrange's
        equations, d/dt dT/dqd - dT/dq + dV/dq - F - C^T lambda = 0, C = [dh/dq; A]). The expressions are those
        `clmbench mechanism export --format sympy` prints: the nodes the run evaluates, over symbolic parameters."""
        text = self._export("sympy")
        namespace = {}
        # The module is the suite's own output: names the file's parser accepted, numbers and sympy calls.
        exec(compile(text, f"<clmbench mechanism export {self.name} --format sympy>", "exec"), namespace)
        return Equations(namespace, self.name)

    def latex(self):
        """The derived equations as LaTeX (an align* environment), as `clmbench mechanism export --format latex`
        writes them (T, V, M's upper triangle, a, F, h, A, b; zero entries left out)."""
        return self._export("latex")

    def __repr__(self):
        return f"<clmbench.Mechanism {self.name} ({self.origin})>"

    def _repr_html_(self):
        """In a notebook (issue 42): its name and origin, and the file's text."""
        def escape(text):
            return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

        return (f"<div><b>clmbench.Mechanism {escape(self.name)}</b> ({escape(self.origin)})"
                f"<pre>{escape(self.text)}</pre></div>")


class Equations:
    """A mechanism's derived equations (Mechanism.equations()): attributes T, V, M, a, F, h, A, b, coordinates,
    velocities, accelerations, t, parameters, multipliers, constraint_names, equations_of_motion; in a notebook they
    display as LaTeX (sympy's printing, which cancels what the graph leaves written out, such as 2*(m/2))."""

    def __init__(self, namespace, name):
        self.name = name
        # The names the exported module lists as its own (clmbench mechanism export --format sympy): no second list.
        self._TERMS, self._SYMBOLS = tuple(namespace["_terms"]), tuple(namespace["_symbols"])
        for key in self._TERMS + self._SYMBOLS:
            setattr(self, key, namespace[key])

    def as_dict(self):
        """{name: sympy object} of the terms (None where absent) and the symbols."""
        return {key: getattr(self, key) for key in self._TERMS + self._SYMBOLS}

    def numeric(self, expr, values=None):
        """expr with the parameters' values substituted (values: {symbol or name: value} overriding them)."""
        import sympy as sp

        subs = dict(self.parameters)
        by_name = {str(k): k for k in subs}
        for k, v in (values or {}).items():
            subs[by_name.get(str(k), k)] = v
        return sp.sympify(expr).subs(subs)

    def __repr__(self):
        present = [k for k in self._TERMS if getattr(self, k) is not None]
        return (f"<clmbench.Equations {self.name}: {', '.join(present)}; n = {len(self.coordinates)}, "
                f"m = {len(self.multipliers)}>")

    def latex(self):
        """The terms and the equations of motion as a LaTeX align* environment, in sympy's canonical forms (2 m/2 is
        m; Mechanism.latex() writes the graph's nodes as they are)."""
        return "\\begin{align*}\n" + " \\\\\n".join(self._latex_lines()) + "\n\\end{align*}\n"

    def _repr_latex_(self):
        return "$$\\begin{aligned}" + " \\\\ ".join(self._latex_lines()) + "\\end{aligned}$$"

    def _latex_lines(self):
        import sympy as sp

        # Velocities and accelerations dotted over their coordinate (the symbols are named x_dot, x_ddot).
        names = {}
        for q, v, a in zip(self.coordinates, self.velocities, self.accelerations):
            names[v] = "\\dot{%s}" % sp.latex(q)
            names[a] = "\\ddot{%s}" % sp.latex(q)
        lines = []
        for key in self._TERMS:
            value = getattr(self, key)
            if value is not None and not (hasattr(value, "shape") and 0 in value.shape):
                lines.append(f"{key} &= {sp.latex(value, symbol_names=names)}")
        lines += [f"{sp.latex(e, symbol_names=names)} &= 0" for e in self.equations_of_motion]
        return lines


def _bodies_energies(bodies, frame, origin, gravity, T, V):
    """T and V of sympy.physics.mechanics bodies (Mechanism.from_sympy's bodies=): 1/2 m v . v + 1/2 omega . I omega
    about the mass centre, the potential_energy each has, and -m gravity . position."""
    from sympy.physics.mechanics import Particle, RigidBody
    from sympy.physics.vector import dot

    if frame is None:
        raise ValueError("Mechanism.from_sympy: bodies need frame=, the inertial ReferenceFrame")
    for body in bodies:
        if isinstance(body, RigidBody):
            point = body.masscenter
        elif isinstance(body, Particle):
            point = body.point
        else:
            raise ValueError(f"Mechanism.from_sympy: {body!r} is not a sympy.physics.mechanics RigidBody or Particle")
        try:
            v = point.vel(frame)
        except ValueError:
            if origin is None:
                raise ValueError(f"Mechanism.from_sympy: the velocity of {point} in {frame} is not set: set it, or "
                                 "give origin= (a fixed Point) to take it from its position") from None
            v = point.pos_from(origin).dt(frame)
        T = T + body.mass * dot(v, v) / 2
        if isinstance(body, RigidBody):
            w = body.frame.ang_vel_in(frame)
            inertia = body.central_inertia
            T = T + dot(w, dot(inertia, w)) / 2
        V = V + body.potential_energy
        if gravity is not None:
            if origin is None:
                raise ValueError("Mechanism.from_sympy: gravity needs origin= (a fixed Point) for the positions")
            V = V - body.mass * dot(gravity, point.pos_from(origin))
    return T, V
