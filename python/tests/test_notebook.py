"""The researcher's notebook (issue 42): the derived equations as sympy objects and LaTeX, from_sympy with every section
of the file format, units checked on mechanisms from Python, sweeps and loaded runs that display themselves.
"""
import os
import tomllib

import numpy as np
import pytest
import sympy as sp

import clmbench

SOURCE = os.path.abspath(os.environ.get("CLMBENCH_SOURCE_DIR", "."))
DATA = os.path.join(SOURCE, "tests", "data", "mechanisms")


def zero(expr):
    return sp.simplify(sp.expand_trig(expr)) == 0


def same_matrix(a, b):
    a, b = sp.Matrix(a), sp.Matrix(b)
    return a.shape == b.shape and all(zero(x) for x in (a - b))


def solve_at(eq, state):
    """qdd and lambda from the module's equations_of_motion (linear in them) and, for velocity rows, A qdd + Adot qd
    = 0 (with the position rows' second derivative): the motion the equations state at one numeric state."""
    q, qd, qdd = eq.coordinates, eq.velocities, eq.accelerations
    subs = dict(eq.parameters)
    subs.update({s: v for s, v in zip(q + qd, state)})
    subs[eq.t] = 0
    rows = []
    if eq.h is not None:  # d2/dt2 h = dh/dq qdd + (d/dq (dh/dq qd)) qd = 0
        J = eq.h.jacobian(q)
        rows += list(J * sp.Matrix(qdd) + (J * sp.Matrix(qd)).jacobian(q) * sp.Matrix(qd))
    if eq.A is not None:  # d/dt (A qd + b) = A qdd + (dA/dq qd) qd + db/dq qd = 0
        r = eq.A * sp.Matrix(qd) + eq.b
        rows += list(eq.A * sp.Matrix(qdd) + r.jacobian(q) * sp.Matrix(qd))
    unknowns = list(qdd) + list(eq.multipliers)
    system = [sp.sympify(e).subs(subs) for e in list(eq.equations_of_motion) + rows]
    solution = sp.solve(system, unknowns, dict=True)[0]
    return (np.array([float(solution[s]) for s in qdd]), np.array([float(solution[s]) for s in eq.multipliers]))


@pytest.mark.parametrize("name, state", [
    ("slider_crank.toml", [0.3, -0.2, 0.0, 1.1, 0.4, 0.0]),     # position rows and forces
    ("chaplygin_sleigh.toml", [0.1, 0.2, 0.4, 1.0, 0.3, 0.8]),  # a velocity row
])
def test_equations_against_sympys_own_derivation_and_the_runs_numbers(name, state):
    mech = clmbench.Mechanism.from_file(os.path.join(DATA, name))
    eq = mech.equations()
    qd = eq.velocities
    # M is sympy's Hessian of the T the module states; a the part of dT/dqd at rest.
    assert same_matrix(eq.M, sp.hessian(eq.T, qd))
    if eq.a is not None:
        assert same_matrix(eq.a, sp.Matrix([sp.diff(eq.T, v) for v in qd]).subs({v: 0 for v in qd}))
    # The velocity rows: A = d(row)/dqd and b = row at rest of the rows the file states, read by sympy from its text.
    text = tomllib.loads(mech.text)
    rows = text.get("constraints", {}).get("velocity", [])
    if isinstance(rows, dict):
        rows = list(rows.values())
    if rows:
        local = {str(s): s for s in eq.coordinates + list(eq.parameters)}
        local["der"] = lambda c: qd[eq.coordinates.index(c)]
        stated = sp.Matrix([sp.parse_expr(r, local_dict=local) for r in rows])
        assert same_matrix(eq.A, stated.jacobian(qd))
        assert same_matrix(eq.b, stated.subs({v: 0 for v in qd}))
    # The equations of motion solved by sympy at a state equal the kkt formulation's qdd and lambda there: measured
    # 3.4e-16 and 2.2e-16 (slider_crank), 4.4e-16 and 4.4e-16 (sleigh) relative to max(1, the largest entry).
    n = len(eq.coordinates)
    qdd, lam = solve_at(eq, state)
    at = clmbench.terms(mech, q=state[:n], qd=state[n:], formulation="kkt")
    scale = max(1.0, np.max(np.abs(at["qdd"])))
    assert np.max(np.abs(qdd - at["qdd"])) < 2e-15 * scale, (qdd, at["qdd"])
    assert np.max(np.abs(lam - at["lambda"])) < 2e-15 * max(1.0, np.max(np.abs(at["lambda"]))), (lam, at["lambda"])
    # In a notebook: LaTeX of the terms, in sympy's canonical forms, and as an align* environment.
    shown = eq._repr_latex_()
    assert shown.startswith("$$\\begin{aligned}T &= ") and "M &= " in shown
    tex = eq.latex()
    assert tex.startswith("\\begin{align*}\nT &= ") and tex.endswith("&= 0\n\\end{align*}\n")
    assert "\\dot{" in tex and "_dot" not in tex


def test_latex_of_a_file_and_its_command():
    mech = clmbench.Mechanism.from_file(os.path.join(SOURCE, "mechanisms", "coin_on_incline.toml"))
    tex = mech.latex()
    assert "\\begin{align*}" in tex and "A_{1,4} &= -a \\cos\\left(\\phi\\right)" in tex
    assert "V &= x m g \\sin\\left(\\alpha\\right)" in tex


def knife_edge(**extra):
    """A knife edge on a level plane, written with every section from_sympy takes."""
    x, y, th = sp.symbols("x y theta")
    xd, yd, thd = sp.symbols("xd yd thetad")
    m, J, w, l = sp.symbols("m J w l")
    u = xd * sp.cos(th) + yd * sp.sin(th)
    keywords = dict(
        T=m / 2 * (xd**2 + yd**2) + J / 2 * thd**2, V=0,
        velocity_constraints={"blade": -xd * sp.sin(th) + yd * sp.cos(th)},
        parameters={m: {"value": 2.0, "unit": "kg", "min": 0, "description": "mass"},
                    J: {"value": 0.3, "unit": "kg m^2", "min": 0, "max": 10, "description": "inertia"},
                    w: {"value": 0.7, "unit": "rad/s", "description": "turning rate at the start"},
                    l: {"value": 0.1, "unit": "m", "description": "blade to nose"}},
        units=["m", "m", "rad"], q0=[0, 0, 0.2], qd0=[sp.cos(0.2), sp.sin(0.2), w],
        description="knife edge, every section", actuated=[th],
        points={"blade": {"position": (x, y), "unit": "m"}, "nose": (x + l * sp.cos(th), y + l * sp.sin(th))},
        body_velocities={"u": {"value": u, "unit": "m/s", "description": "forward speed"}, "omega": thd},
        velocity_basis=sp.Matrix([[sp.cos(th), 0], [sp.sin(th), 0], [0, 1]]),
        transversal_frame=[[-sp.sin(th), sp.cos(th), 0]],
        closed_form={"q": [x + u / thd * (sp.sin(th + thd * sp.Symbol("t")) - sp.sin(th)),
                           y - u / thd * (sp.cos(th + thd * sp.Symbol("t")) - sp.cos(th)),
                           th + thd * sp.Symbol("t")]},
        reference={"t": 1.0, "q": [0.1, 0.2, 0.3], "qd": [0.4, 0.5, 0.6], "source": "a test",
                   "description": "values to round-trip"})
    keywords.update(extra)
    return clmbench.Mechanism.from_sympy("knife_edge", [x, y, th], [xd, yd, thd], **keywords), (x, y, th, xd, yd, thd)


def test_from_sympy_round_trips_every_section():
    mech, (x, y, th, xd, yd, thd) = knife_edge()
    d = tomllib.loads(mech.text)
    local = {"x": x, "y": y, "theta": th, "t": sp.Symbol("t"), "m": sp.Symbol("m"), "J": sp.Symbol("J"),
             "w": sp.Symbol("w"), "l": sp.Symbol("l"), "der": lambda c: {x: xd, y: yd, th: thd}[c]}

    def read(text):
        return sp.parse_expr(text, local_dict=local)

    assert d["description"] == "knife edge, every section" and d["units"] == ["m", "m", "rad"]
    assert d["parameters"]["J"] == {"value": 0.3, "unit": "kg m^2", "min": 0.0, "max": 10.0, "description": "inertia"}
    assert d["actuated"] == ["theta"]
    assert zero(read(d["constraints"]["velocity"]["blade"]) - (-xd * sp.sin(th) + yd * sp.cos(th)))
    assert zero(read(d["initial"]["qd"][2]) - sp.Symbol("w"))
    assert d["points"]["blade"] == {"position": ["x", "y"], "unit": "m"}
    assert zero(read(d["points"]["nose"][0]) - (x + sp.Symbol("l") * sp.cos(th)))
    assert d["body_velocities"]["u"]["unit"] == "m/s" and d["body_velocities"]["u"]["description"] == "forward speed"
    assert zero(read(d["body_velocities"]["u"]["value"]) - (xd * sp.cos(th) + yd * sp.sin(th)))
    assert zero(read(d["body_velocities"]["omega"]) - thd)
    basis = [[read(e) for e in column] for column in d["velocity_basis"]["columns"]]
    assert same_matrix(sp.Matrix(basis).T, sp.Matrix([[sp.cos(th), 0], [sp.sin(th), 0], [0, 1]]))
    assert [[read(e) for e in c] for c in d["transversal_frame"]["columns"]] == [[-sp.sin(th), sp.cos(th), 0]]
    assert zero(read(d["closed_form"]["q"][2]) - (th + thd * sp.Symbol("t")))
    assert d["reference"] == {"t": 1.0, "q": [0.1, 0.2, 0.3], "qd": [0.4, 0.5, 0.6], "source": "a test",
                              "description": "values to round-trip"}
    # The suite reads it back whole: mechanism check passes, its units checked.
    code, text = clmbench._clmbench.command("mechanism", ["check", mech.path()], "test")
    assert code == 0, text
    assert "units" in text and "checked T, V" in text and "unchecked" not in text


def test_from_sympy_units_are_checked():
    # A T with a length too many: one line naming both dimensions (issue 42).
    x, y, th, xd, yd, thd = sp.symbols("x y theta xd yd thetad")
    m = sp.Symbol("m")
    J, w = sp.symbols("J w")
    bad, _ = knife_edge(T=w * (m / 2 * (xd**2 + yd**2) + J / 2 * thd**2))  # w in rad/s: an energy per second
    with pytest.raises(ValueError, match=r"T has dimension .* expected kg m\^2 / s\^2 \(an energy\)"):
        bad.equations()
    with pytest.raises(ValueError, match="unknown keys colour"):
        knife_edge(points={"blade": {"position": (x, y), "colour": "red"}})


def test_a_sweep_displays_its_grid_by_value(tmp_path):
    config = tmp_path / "grid.ini"
    config.write_text("[run]\nproblem = pendulum_cartesian\nformulation = kkt\nintegrator = rk4\nt_end = 0.5\n"
                      "[sweep]\ndt = 0.01 0.005\n")
    result = clmbench.sweep(str(config), out=str(tmp_path / "grid.h5"), progress="never")
    assert result.varied() == ["dt"]
    html = result._repr_html_()
    assert "varied: dt" in html and "<th>dt</th>" in html
    assert "<td style='text-align:left'>0.005</td>" in html and "<td style='text-align:left'>0.01</td>" in html
    run = next(iter(result.values()))
    assert run._repr_html_().startswith("<div><table>") and run._repr_png_()[:4] == b"\x89PNG"


def test_a_runs_figure_leaves_the_notebooks_matplotlib_alone():
    # A run's display drew with pyplot after matplotlib.use("Agg"): later inline plots in the notebook went nowhere.
    import matplotlib

    before = matplotlib.get_backend()
    r = clmbench.run(problem="pendulum_cartesian", formulation="kkt", integrator="rk4", dt=1e-2, t_end=0.2,
                     progress="never")
    assert r._repr_png_()[:4] == b"\x89PNG"
    assert matplotlib.get_backend() == before
    if "matplotlib.pyplot" in __import__("sys").modules:
        import matplotlib.pyplot as plt

        assert plt.get_fignums() == []  # no figure left open
