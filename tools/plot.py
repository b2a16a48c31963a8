#!/usr/bin/python3
"""Plots a clmbench results file (docs/design.md section 5b).

    tools/plot.py [--all] results/quickstart.h5 [more.h5 ...]
    tools/plot.py FILE.h5 --animate [RUN ...] [--fps F] [--duration S] [--max-frames N] [--trail S] [--window W]
                  [--out PATH]

--animate writes, instead of the PNGs, an animated GIF of the runs' named points (no RUN: the file's first
run; several: overlaid, one colour each): the points joined in declared order, each with a fading trace,
<stem>_animation_<run>.gif (<stem>_animation.gif for several runs). Defaults: 25 fps, the run in real time up
to 8 s, at most 300 frames, a trace of a quarter of the span, the whole path in view unless it spans more than
10 times the mechanism's size: then a window 4 times that size follows the mechanism (--window W: a window W
wide in the points' unit, e.g. metres; --window 0: the whole path) (tools/animate.py says more).

Run it directly: the shebang names the system interpreter /usr/bin/python3, which has the Debian packages
python3-h5py, python3-matplotlib and python3-numpy (and python3-pil for --animate) that tools/setup.sh installs. (`python3 tools/plot.py`
runs whichever python3 comes first on PATH, e.g. a pyenv or virtualenv one without them.)

A `clmbench sweep` file (tens of runs) gets only its work-precision diagrams; --all draws every run's
time series as well. For each file, PNGs beside it (<stem> is the file name without .h5):
    <stem>_drift.png            constraint drift |h(q)| and |A(q) qd + b| (b: moving constraints) against time (log scale)
    <stem>_energy.png           relative energy error |E - E0| / |E0| against time (log scale); for a
                                time-dependent problem the energy balance instead: E - E0 and the work W of
                                the moving constraints, dV/dt and the forces, and |E - E0 - W| (log scale)
    <stem>_lambda.png           multipliers lambda against time, per problem; many multipliers are grouped
                                in panels (four_bar: one panel per pin), one panel per run when several runs
    <stem>_q.png, <stem>_qd.png coordinates and velocities against time, per problem: one panel per
                                coordinate (more than 6: one panel per kind, e.g. x1 x2 x3, per run)
    <stem>_trajectory.png       runs that recorded named points (/runs/<id>/points: a mechanism file's
                                [points], a zoo problem's points()): the x-y path of each, equal axis scaling;
                                in 3D (x, y, z) when a point moves in z (a rolling disc's centre, a top's
                                tip), z stretched to at least a quarter of the longer horizontal side (said in
                                the title); a constant z is given in the legend
    <stem>_body_velocities.png  runs that recorded body velocities (/runs/<id>/body_velocities: a mechanism
                                file's [body_velocities], a zoo problem's body_velocities(), e.g. the sleigh's
                                forward speed u1 and turning rate omega): one panel per velocity
    <stem>_error.png            `clmbench kozlov` files: max |q_i - q_ref,i| over the coordinates of one
                                unit (m, rad) against time, against the study's reference run
    <stem>_difference.png       other files where runs of one problem start from the same parameters and
                                initial data: the same against the first run that finished ok (a difference
                                between runs, not an error); not drawn when no two runs share initial data
    <stem>_extras.png           formulation diagnostics (extras/)
    <stem>_growth.png           long runs (some run with at least GROWTH_SAMPLES samples spanning three decades of
                                time): the running maximum of the relative energy error and of the constraint
                                drift against time on log-log axes, each run's fitted growth exponent p
                                (envelope ~ t^p over the last two decades: 0 bounded, 1/2 random walk, 1 linear
                                drift; the run attributes energy_error_growth and drift_growth) in the legend
    <stem>_kozlov_<study>.png   files with /kozlov: error_q, error_qd and max |A qd| against N (log-log), the
                                fitted line log10(error) = slope log10(N) + intercept and its slope
    <stem>_phase_portrait.png   files of `clmbench analyze --problem chaplygin_sleigh ... --equilibrium --out F.h5`:
                                the (u1, omega) phase plane at the file's parameters, energy ellipses, a fan
                                of trajectories of the reduced flow, the line of equilibria omega = 0 (stable
                                part solid, unstable dashed) and the analysed state with its verdict
    <stem>_eigenvalues.png      `clmbench analyze --speed ... --out` files (/analysis): the eigenvalues of the
                                linearization about steady motion against speed, real parts solid, imaginary
                                parts dashed, the stability changes (weave, capsize speeds) marked
    <stem>_work_precision_cpu.png, <stem>_work_precision_rhs.png
                                files whose runs sweep tolerances (or steps): work-precision diagrams, the max
                                error |q - q_ref| against the closed form or reference run (log-log) and scd,
                                against the integration's CPU time and against rhs evaluations; one curve per
                                formulation x integrator (x N for penalty / added_mass) and per problem,
                                parameters and initial data, points ordered by tolerance (rtol; dt for
                                fixed-step runs), loosest first; a run that failed or diverged is an 'x' at its
                                cost on the panel's worst edge (top of the error axis, bottom of the scd axis),
                                legend "failed / diverged"; CPU times with the spread of their repeated timings as
                                error bars (fastest to slowest) where the file records cpu_time_spread
A figure holds at most 6 panels; more make further pages <name>_2.png, <name>_3.png, ...
Series longer than 5000 samples are drawn as exact envelopes over about 1500 windows (min-max bands for
signed quantities; the window maximum and the running maximum for drift, energy error and differences),
said in the panel title. Zeros on log axes are floored at 1e-17; runs that diverged or failed are drawn
up to where they stopped, dotted, with a cross there and their status in the legend; a run that cannot be
drawn is skipped with one line. Units come from the datasets' `units` attributes, else from the tables
below keyed by the run's problem, else "[-]".
"""
import math
import os
import sys
import textwrap

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    # A file's figures are built, then saved and closed one by one (main); a sweep file makes more than
    # matplotlib's default warning threshold of 20 open figures.
    plt.rcParams["figure.max_open_warning"] = 0
    import h5py
except ImportError as error:  # one line, not a traceback
    print(f"plot.py: error: Python module '{error.name}' is missing for {sys.executable}; run tools/setup.sh "
          "(installs python3-h5py python3-matplotlib python3-numpy) and call tools/plot.py directly",
          file=sys.stderr)
    sys.exit(1)

FLOOR = 1e-17
MAX_PANELS = 6          # panels per figure; more go to further pages
LONG = 5000             # samples above which a series is drawn as an envelope
WINDOWS = 1500          # envelope windows
GROWTH_SAMPLES = 1000   # a run this long (and spanning 3 decades of time) gets the log-log growth plot
MAX_PATH_POINTS = 40000  # trajectory points drawn (every k-th sample beyond)
PANEL_HEIGHT = 2.5      # inches
FIG_WIDTH = 8.5

# Fallbacks for files without `columns` / `units` attributes (docs/design.md section 3).
COORDINATES = {
    "pendulum_polar": (["r", "theta"], ["m", "rad"]),
    "pendulum_cartesian": (["x", "y"], ["m", "m"]),
    "slider_crank": (["theta", "phi", "x"], ["rad", "rad", "m"]),
    "four_bar": (["x1", "y1", "theta1", "x2", "y2", "theta2", "x3", "y3", "theta3"],
                 ["m", "m", "rad"] * 3),
    "chaplygin_sleigh": (["x", "y", "theta"], ["m", "m", "rad"]),
    "rolling_disk": (["x", "y", "theta", "phi"], ["m", "m", "rad", "rad"]),
    "skate_incline": (["x", "y", "phi"], ["m", "m", "rad"]),
    "sphere_in_disguise": (["x", "y", "z"], ["m", "m", "m"]),
    "charged_particle": (["x", "y"], ["m", "m"]),
}
# Units of h(q) (holonomic) or of A qd times seconds (Pfaffian): the unit of one constraint.
CONSTRAINT_UNITS = {"pendulum_polar": "m", "pendulum_cartesian": "m^2", "slider_crank": "m", "four_bar": "m",
                    "closed_chain": "m", "chaplygin_sleigh": "m", "rolling_disk": "m", "skate_incline": "m",
                    "sphere_in_disguise": "m^2"}
# A^T lambda is a generalized force (N on a length, N m on an angle): lambda is a force per unit of
# constraint. The vakonomic and added-mass multipliers multiply A qd in the Lagrangian: one more second.
LAMBDA_UNITS = {"pendulum_polar": "N", "pendulum_cartesian": "N/m", "slider_crank": "N", "four_bar": "N",
                "closed_chain": "N", "chaplygin_sleigh": "N", "rolling_disk": "N", "skate_incline": "N",
                "sphere_in_disguise": "N/m"}
LAMBDA_UNKNOWN = "N or N m per unit of constraint"
BALANCE_DATASETS = ("work_moving_constraints", "work_explicit_time", "work_generalized_forces",
                    "energy_balance_residual")
EXTRA_UNITS = {"repartitions": "count", "dissipation_rate": "W", "modified_energy": "J", "chart_rcond": "-",
               "fb_condition_1": "units of seed-003 eq. 4.1", "fb_condition_2": "units of seed-003 eq. 4.1",
               "invariant_residual": "units of the invariant"}
# The adaptive integrators (`clmbench list integrators` says "adaptive"): their runs are ordered and labelled by
# rtol, the fixed-step ones by dt.
ADAPTIVE = {"dopri5", "dop853", "vern7", "vern9", "radau5", "cvode", "ida"}


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def strings(attrs, key):
    if key not in attrs:
        return None
    v = attrs[key]
    if isinstance(v, (bytes, str)):
        return [text(v)]
    return [text(x) for x in np.asarray(v).ravel()]


def note(message):
    print(f"plot.py: note: {message}")


def matrix(g, key, k):
    if key not in g:
        return np.zeros((k, 0))
    v = np.asarray(g[key][()], dtype=float)
    if v.ndim == 1:
        v = v.reshape(len(v), -1) if len(v) == k and k else v.reshape(k, -1) if k else np.zeros((0, 0))
    return v


def columns_and_units(g, key, problem, n, velocity=False):
    attrs = g[key].attrs if key in g else {}
    names, units = strings(attrs, "columns"), strings(attrs, "units")
    fallback = COORDINATES.get(problem)
    if problem == "closed_chain":
        fallback = ([f"theta_{i + 1}" for i in range(n)], ["rad"] * n)
    if fallback and len(fallback[0]) != n:
        fallback = None
    if not names or len(names) != n:
        names = fallback[0] if fallback else [f"q[{i}]" for i in range(n)]
    if not units or len(units) != n:
        units = ([u + "/s" for u in fallback[1]] if velocity else list(fallback[1])) if fallback else ["-"] * n
    return names, units


def lambda_unit(problem, formulation):
    base = LAMBDA_UNITS.get(problem)
    if base is None:
        return LAMBDA_UNKNOWN
    if formulation in ("vakonomic", "added_mass"):
        return base.replace("N", "N s", 1)
    return base


def load_runs(path, only=None):
    """Every run of the file (only: the run ids to load, in the file's order)."""
    runs = []
    with h5py.File(path, "r") as f:
        if "runs" not in f:
            raise SystemExit(f"plot.py: error: {path} has no /runs group (not a clmbench results file?)")
        # The order the runs were executed in (h5py lists groups alphabetically).
        order = [text(x) for x in f["summary/run_id"][()]] if "summary/run_id" in f else []
        order = [r for r in order if r in f["runs"]] + sorted(r for r in f["runs"] if r not in order)
        for run_id in order:
            if only is not None and run_id not in only:
                continue
            try:
                run = load_run(f["runs"][run_id], run_id)
            except Exception as e:  # a damaged or foreign group: skip it, keep the others
                note(f"{path}: run '{run_id}' skipped ({type(e).__name__}: {e})")
                continue
            run["index"] = len(runs)
            runs.append(run)
    # Same label twice (two parameter sets, a sweep's tolerances): tell them apart by what differs, the parameters
    # and the sweep's keys ("b = 0.1"; a sweep's run ids spell its whole grid point), else by run id.
    for label in {r["label"] for r in runs}:
        same = [r for r in runs if r["label"] == label]
        if len(same) < 2:
            continue
        names = sorted({k for r in same for k in r["params"]})
        keys = list(dict.fromkeys(k for r in same for k in sweep_tokens(r) if not k.startswith("param.")))
        apart = {}
        for r in same:
            words = [f"{k} = {r['params'][k]:g}" for k in names if k in r["params"]
                     and len({x["params"].get(k) for x in same}) > 1]
            words += [f"{k} = {sweep_tokens(r)[k]}" for k in keys if k in sweep_tokens(r)
                      and len({sweep_tokens(x).get(k) for x in same}) > 1]
            apart[r["id"]] = ", ".join(words)
        unique = all(apart.values()) and len(set(apart.values())) == len(same)
        for r in same:
            r["label"] += f" ({apart[r['id']] if unique else r['id']})"
            r["short"] += f" ({apart[r['id']] if unique else r['id']})"
    return runs


def load_run(g, run_id):
    a = g.attrs
    t = np.asarray(g["t"][()], dtype=float) if "t" in g else np.zeros(0)
    k = len(t)
    problem, formulation, integrator = (text(a.get(x, "?")) for x in ("problem", "formulation", "integrator"))
    # A mechanism file is recorded as PATH@sha256:HEX (its identity); labels name the file's stem.
    if "@sha256:" in problem:
        problem = os.path.splitext(os.path.basename(problem.split("@sha256:")[0]))[0]
    q, qd, lam = matrix(g, "q", k), matrix(g, "qd", k), matrix(g, "lambda", k)
    for name, v in (("q", q), ("qd", qd), ("lambda", lam)):
        if v.shape[0] != k:
            raise ValueError(f"{name} has {v.shape[0]} rows, t has {k}")
    n = q.shape[1]
    short = f"{formulation}"
    if formulation in ("penalty", "added_mass") and "formulation.N" in a:
        short += f" N={float(a['formulation.N']):.0e}"
    # Projected and unprojected runs of one formulation are different methods (curve_label says the same).
    projection = text(a.get("formulation.projection", "none"))
    if projection not in ("none", ""):
        short += f" + projection ({projection})"
    short += f"/{integrator}"
    status = text(a.get("status", "?"))
    run = {
        "id": run_id, "problem": problem, "formulation": formulation, "integrator": integrator,
        "status": status, "short": short, "label": f"{problem}/{short}",
        "t": t, "q": q, "qd": qd, "lambda": lam, "k": k, "n": n,
        "energy": np.asarray(g["energy"][()], dtype=float) if "energy" in g else np.full(k, np.nan),
        "drift_velocity": np.asarray(g["drift_velocity"][()], dtype=float) if "drift_velocity" in g else None,
        "drift_position": np.asarray(g["drift_position"][()], dtype=float) if "drift_position" in g else None,
        # Formulation diagnostics (Fernandez-Bloch condition residuals, nullspace re-partitions, ...).
        "extras": {x: np.asarray(g["extras"][x][()], dtype=float) for x in g["extras"]} if "extras" in g else {},
        "params": {x[6:]: float(a[x]) for x in a if x.startswith("param.")},
        "sweep_point": text(a.get("sweep_point", "")),  # a sweep's grid point, "key=value ..."
        "q0": np.asarray(a.get("q0", []), dtype=float).ravel(), "qd0": np.asarray(a.get("qd0", []), dtype=float).ravel(),
        "rtol": float(a.get("rtol", np.nan)), "dt": float(a.get("dt", np.nan)),
        "options": {x: a[x] for x in a if x.startswith("formulation.")},
        "energy_error_growth": float(a.get("energy_error_growth", np.nan)),
        "drift_growth": float(a.get("drift_growth", np.nan)),
        # The energy balance of a time-dependent problem (work of the moving constraints, of dV/dt, of the forces,
        # and E - E0 - W); None for the others, which do not record it.
        "balance": {x: np.asarray(g[x][()], dtype=float) for x in BALANCE_DATASETS}
        if all(x in g for x in BALANCE_DATASETS) else None,
    }
    # Whether the problem's statement conserves E (the run's max_rel_energy_error is a number): forces that are
    # identically zero (fx = 0) record a balance but keep the energy error. Files without the attribute: the
    # balance's presence decides, as it did.
    run["conserves_energy"] = (run["balance"] is None if "max_rel_energy_error" not in a
                               else bool(np.isfinite(float(a["max_rel_energy_error"]))))
    run["points"] = recorded_points(g, k)
    run["body_velocities"] = recorded_body_velocities(g, k)
    run["error_series"] = "error_vs_reference" in g  # drawn by plot_error_vs_reference
    run["q_names"], run["q_units"] = columns_and_units(g, "q", problem, n)
    run["qd_names"], run["qd_units"] = columns_and_units(g, "qd", problem, n, velocity=True)
    m = lam.shape[1]
    lam_names = strings(g["lambda"].attrs, "columns") if "lambda" in g else None
    run["lambda_names"] = lam_names if lam_names and len(lam_names) == m else [f"lambda{j + 1}" for j in range(m)]
    run["constraint_kind"] = text(a.get("constraint_kind", ""))
    run["position_rows"] = int(a["position_rows"]) if "position_rows" in a else -1
    lam_units = strings(g["lambda"].attrs, "units") if "lambda" in g else None
    unit = lambda_unit(problem, formulation)
    run["lambda_units"] = lam_units if lam_units and len(lam_units) == m else [unit] * m
    run["t_unit"] = (strings(g["t"].attrs, "units") or ["s"])[0] if "t" in g else "s"
    run["energy_unit"] = (strings(g["energy"].attrs, "units") or ["J"])[0] if "energy" in g else "J"
    if status != "ok":
        end = f" at t = {t[-1]:g}" if k else ", no samples"
        run["short"] += f" [{status}{end}]"
        run["label"] += f" [{status}{end}]"
    # A run outside its formulation's validity conditions (runs/validity_monitor.hpp) says so in every legend.
    run["validity"] = text(a.get("validity", ""))
    if run["validity"]:
        run["short"] += " [outside its conditions]"
        run["label"] += " [outside its conditions]"
    return run


# ---------------------------------------------------------------------------------------------- drawing


def floored(values):
    v = np.abs(np.asarray(values, dtype=float))
    return np.where(np.isfinite(v), np.maximum(v, FLOOR), np.nan)


LINESTYLES = ["-", "--", "-.", ":"]


def color(i, count):
    if count <= 10:
        return f"C{i % 10}"
    return plt.get_cmap("viridis")(i / max(count - 1, 1))


def style(run, i=None, count=1):
    # Formulations often agree to the last bit (kkt and schur), so curves lie on top of each other:
    # later runs are drawn thinner and in another dash pattern, so every one stays visible.
    i = run["index"] if i is None else i
    s = {"linestyle": LINESTYLES[i % len(LINESTYLES)], "linewidth": max(2.6 - 0.45 * i, 1.1),
         "color": color(i, count)}
    if count > 10:
        s["linestyle"], s["linewidth"] = "-", 1.2
    if run["status"] != "ok":
        s["linestyle"] = (0, (1, 1))
    return s


def windows(k):
    edges = np.unique(np.linspace(0, k, min(WINDOWS, k) + 1).astype(int))
    return edges[:-1], edges[1:] - 1


def is_long(t):
    return len(t) > LONG


def draw_signed(ax, t, y, label, st):
    """A signed series: a line, or for long series the exact min-max band over windows."""
    y = np.asarray(y, dtype=float)
    if len(t) == 0:
        return
    if not is_long(t):
        ax.plot(t, y, label=label, **st)
        return
    starts, ends = windows(len(t))
    with np.errstate(invalid="ignore"):
        lo, hi = np.fmin.reduceat(y, starts), np.fmax.reduceat(y, starts)
    tt = np.column_stack([t[starts], t[ends]]).ravel()
    ax.fill_between(tt, np.repeat(lo, 2), np.repeat(hi, 2), color=st["color"], alpha=0.35, linewidth=0,
                    label=label + " (min-max)")
    ax.plot(tt, np.repeat(hi, 2), color=st["color"], linewidth=0.6)
    ax.plot(tt, np.repeat(lo, 2), color=st["color"], linewidth=0.6)


def draw_magnitude(ax, t, y, label, st):
    """|y| on a log axis: a line, or for long series the window maximum and the running maximum (exact)."""
    y = floored(y)
    if len(t) == 0:
        return y
    if not is_long(t):
        ax.semilogy(t, y, label=label, **st)
        return y
    starts, ends = windows(len(t))
    with np.errstate(invalid="ignore"):
        hi = np.fmax.reduceat(y, starts)
        running = np.fmax.accumulate(np.where(np.isnan(y), -np.inf, y))[ends]
    running = np.where(np.isfinite(running), running, np.nan)
    tt = np.column_stack([t[starts], t[ends]]).ravel()
    ax.semilogy(tt, np.repeat(hi, 2), color=st["color"], linewidth=0.7, alpha=0.6, label=label + " (window max)")
    ax.semilogy(t[ends], running, color=st["color"], linewidth=2.0, linestyle="--", label=label + " (running max)")
    return y


def mark_end(ax, run, t, y, st):
    """A cross where a diverged or failed run stopped."""
    if run["status"] != "ok" and len(t) and len(y):
        ax.plot(t[-1], y[-1], marker="x", markersize=9, color=st["color"])


def envelope_note(runs):
    ks = [r["k"] for r in runs if is_long(r["t"])]
    return f"; runs of up to {max(ks)} samples drawn as envelopes over {WINDOWS} windows" if ks else ""


class Panel:
    """One axes: a title, labels, and a function that draws into it."""

    def __init__(self, title, ylabel, draw, xlabel="time t [s]", equal=False, legend_key=None, zlabel=None):
        self.title, self.ylabel, self.draw, self.xlabel = title, ylabel, draw, xlabel
        self.equal, self.legend_key = equal, legend_key
        self.zlabel = zlabel  # a 3D panel (mplot3d axes; its draw sets the box aspect)


def legend_fits(fig, legend):
    """Height and width of a legend as fractions of the figure's (for tests and the fitting loop)."""
    renderer = fig.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    return box.height / fig.bbox.height, box.width / fig.bbox.width


def place_legend(fig, ax, room):
    """Outside on the right of the axes, in as many columns (and as small a font) as it takes to fit in
    `room` (a fraction of the figure height); omitted, with a note in the title, if it cannot fit."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    for fontsize in (8, 7, 6):
        for ncol in (1, 2, 3):
            leg = ax.legend(handles, labels, fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                            borderaxespad=0.0, ncol=ncol, handlelength=2.2)
            height, width = legend_fits(fig, leg)
            if height <= room and width <= 1.2:
                return leg
    leg.remove()
    ax.set_title(ax.get_title() + f"\n({len(handles)} curves: legend omitted, colours in run order)", fontsize=9)
    return None


def wrap_to(text, limit, renderer, vertical=False):
    """Wraps a text artist's words onto as few lines as keep it at most `limit` pixels long (its width, or for a
    y label (vertical) its height), in a smaller font (8, 7 pt) if lines of a sixth of it do not. Returns whether
    it changed."""
    words = text.get_text().replace("\n", " ").split()
    if not words:
        return False

    def length():
        box = text.get_window_extent(renderer)
        return box.height if vertical else box.width

    if length() <= limit:
        return False
    joined = " ".join(words)
    for fontsize in (text.get_fontsize(), 8, 7):
        text.set_fontsize(fontsize)
        # The longest lines that fit: as few lines as it takes.
        for chars in range(len(joined), max(len(joined) // 6, 8) - 1, -max(1, len(joined) // 40)):
            text.set_text(textwrap.fill(joined, width=chars, break_long_words=False))
            if length() <= limit:
                return True
    return True


def fit_texts(fig, axes):
    """Long labels wrapped to their room instead of running into their neighbours or off the figure: a y label
    to its axes' height (a multiplier named by its row with the unit "N or N m per unit of constraint" was taller
    than its panel, over the labels above and below), a title and the suptitle to the figure's width. Returns
    whether any changed."""
    renderer = fig.canvas.get_renderer()
    changed = False
    width = fig.bbox.width - 10
    for ax in axes:
        if ax.name == "3d":  # mplot3d lays out its own labels
            continue
        changed |= wrap_to(ax.yaxis.label, ax.get_window_extent(renderer).height, renderer, vertical=True)
        changed |= wrap_to(ax.title, width, renderer)
    if fig._suptitle is not None:
        changed |= wrap_to(fig._suptitle, width, renderer)
    return changed


def render(panels, suptitle, path, sharex=True):
    """Pages of at most MAX_PANELS stacked panels: [(path, figure)]."""
    figures = []
    pages = [panels[i:i + MAX_PANELS] for i in range(0, len(panels), MAX_PANELS)]
    for p, page in enumerate(pages):
        out = path if p == 0 else path.replace(".png", f"_{p + 1}.png")
        equal = any(x.equal for x in page)
        height = (4.2 if equal else PANEL_HEIGHT) * len(page) + 0.9
        if any(x.zlabel for x in page):  # 3D axes are made one by one
            fig = plt.figure(figsize=(7.5, height))
            axes = [fig.add_subplot(len(page), 1, i + 1, projection="3d" if x.zlabel else None)
                    for i, x in enumerate(page)]
        else:
            fig, axes = plt.subplots(len(page), 1, figsize=(FIG_WIDTH if not equal else 7.5, height),
                                     sharex=sharex and not equal, squeeze=False)
            axes = axes[:, 0]
        for ax, panel in zip(axes, page):
            panel.draw(ax)
            ax.set_title(panel.title, fontsize=10)
            ax.set_ylabel(panel.ylabel, fontsize=9)
            if panel.zlabel:  # mplot3d sets labels on the tick labels without padding
                ax.set_zlabel(panel.zlabel, fontsize=9, labelpad=8)
                ax.set_xlabel(panel.xlabel, fontsize=9, labelpad=10)
                ax.set_ylabel(panel.ylabel, fontsize=9, labelpad=10)
            elif panel.equal:
                ax.set_aspect("equal", adjustable="datalim")
                ax.set_xlabel(panel.xlabel, fontsize=9)
            ax.grid(True, which="major", alpha=0.3)
        if not equal:
            axes[-1].set_xlabel(page[-1].xlabel)
        title = suptitle + (f" (page {p + 1} of {len(pages)})" if len(pages) > 1 else "")
        fig.suptitle(title, fontsize=11)
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / height))  # room for the suptitle
        if fit_texts(fig, axes):  # wrapped lines change the layout: once more (room for the suptitle's lines)
            lines = fig._suptitle.get_text().count("\n") + 1
            fig.tight_layout(rect=(0, 0, 1, 1 - (0.3 + 0.18 * (lines - 1)) / height))
            fit_texts(fig, axes)
        # One legend per run of panels with the same curves, on the first of them: it may use their height.
        keys = [x.legend_key if x.legend_key is not None else id(x) for x in page]
        for i, ax in enumerate(axes):
            if i and keys[i] == keys[i - 1]:
                continue
            span = 1
            while i + span < len(page) and keys[i + span] == keys[i]:
                span += 1
            top = ax.get_position().y1
            bottom = axes[i + span - 1].get_position().y0
            place_legend(fig, ax, min(top - bottom + 0.02, top))
        figures.append((out, fig))
    return figures


def by_problem(runs):
    groups = {}
    for r in runs:
        groups.setdefault(r["problem"], []).append(r)
    return groups


def plottable(runs, what):
    keep = []
    for r in runs:
        if r["k"] == 0:
            if not r.get("noted"):
                note(f"run '{r['id']}' has no samples ({r['status']}): skipped in every plot")
                r["noted"] = True
        else:
            keep.append(r)
    return keep


# ------------------------------------------------------------------------------------------ the plots


def plot_drift(runs, stem, name):
    runs = plottable(runs, "drift")
    if not runs:
        return []

    def unit_label(r, velocity):
        u = CONSTRAINT_UNITS.get(r["problem"])
        return f"{u}/s" if (u and velocity) else (u or "constraint unit" + ("/s" if velocity else ""))

    def panel(key, velocity, title, ylabel):
        chosen = [r for r in runs if r[key] is not None]
        units = {unit_label(r, velocity) for r in chosen}
        unit = units.pop() if len(units) == 1 else None

        def draw(ax):
            for r in chosen:
                st = style(r, count=len(runs))
                zero = " (exactly 0)" if len(r[key]) and np.all(r[key] == 0) else ""
                label = r["label"] + zero + ("" if unit else f" [{unit_label(r, velocity)}]")
                y = draw_magnitude(ax, r["t"], r[key], label, st)
                mark_end(ax, r, r["t"], y, st)
        return Panel(title, f"{ylabel} [{unit or 'per problem, see legend'}]", draw) if chosen else None

    panels = [panel("drift_position", False, f"position-level drift (runs with position rows: holonomic, mixed; floor {FLOOR:g})",
                    "|h(q)|"),
              panel("drift_velocity", True, f"velocity-level drift (floor {FLOOR:g})", "|A(q) qd + b|")]
    panels = [p for p in panels if p]
    if not panels:
        return []
    return render(panels, f"{name}: constraint drift{envelope_note(runs)}", f"{stem}_drift.png")


def plot_energy(runs, stem, name):
    runs = [r for r in plottable(runs, "energy") if np.isfinite(r["energy"][0])]
    if not runs:
        return []
    # The energy of a time-dependent or forced problem is not conserved: its runs show the balance E - E0 = W
    # instead of an "error" (docs/design.md section 1, energy balance).
    conserving = [r for r in runs if r["conserves_energy"]]
    balanced = [r for r in runs if not r["conserves_energy"] and r["balance"] is not None]
    unit = runs[0]["energy_unit"]
    panels = []

    if conserving:
        def draw(ax):
            for r in conserving:
                e = r["energy"]
                scale = max(abs(e[0]), np.finfo(float).eps)
                st = style(r, count=len(runs))
                y = draw_magnitude(ax, r["t"], (e - e[0]) / scale, r["label"], st)
                mark_end(ax, r, r["t"], y, st)
        panels.append(Panel(f"energy error of the original Lagrangian (E in {unit}; floor {FLOOR:g})",
                            "|E - E0| / |E0| [-]", draw))
    if balanced:
        def draw_exchange(ax):
            for r in balanced:
                st = style(r, count=len(runs))
                b = r["balance"]
                e = r["energy"]
                draw_signed(ax, r["t"], e - e[0], r["label"] + ": E - E0", st)
                work = b["work_moving_constraints"] + b["work_explicit_time"] + b["work_generalized_forces"]
                draw_signed(ax, r["t"], work, r["label"] + ": W", dict(st, linestyle=":", linewidth=2.2))

        def draw_residual(ax):
            for r in balanced:
                st = style(r, count=len(runs))
                y = draw_magnitude(ax, r["t"], r["balance"]["energy_balance_residual"], r["label"], st)
                mark_end(ax, r, r["t"], y, st)
        panels.append(Panel("E - E0 (lines) and W (dotted), the work of the moving constraints, of dV/dt and of the "
                            "forces since t0", f"E - E0, W [{unit}]", draw_exchange))
        panels.append(Panel(f"energy balance residual (floor {FLOOR:g})", f"|E - E0 - W| [{unit}]", draw_residual))
    title = "relative energy error" if not balanced else "energy balance" if not conserving else \
        "relative energy error and energy balance"
    return render(panels, f"{name}: {title}{envelope_note(runs)}", f"{stem}_energy.png")


def is_long_time(r):
    t = r["t"]
    return r["k"] >= GROWTH_SAMPLES and t[1] - t[0] > 0 and (t[-1] - t[0]) >= 1000 * (t[1] - t[0])


def plot_growth(runs, stem, name):
    """Long-time behaviour on log-log axes: the running maximum of the relative energy error and of the drift
    against elapsed time, the slope of which is the growth exponent the run records."""
    runs = [r for r in plottable(runs, "growth") if is_long_time(r)]
    if not runs:
        return []

    def running_max(t, y):
        """The running maximum of |y| at about 400 log-spaced times after the first sample (exact values)."""
        elapsed = t - t[0]
        y = floored(y)
        run = np.fmax.accumulate(np.where(np.isnan(y), -np.inf, y))
        idx = np.unique(np.geomspace(1, len(t) - 1, 400).astype(int))
        v = run[idx]
        return elapsed[idx], np.where(np.isfinite(v), v, np.nan)

    def exponent(p):
        return f"p = {0.0 if abs(p) < 0.005 else p:.2f}" if np.isfinite(p) else "p = -"  # no "-0.00"

    def panel(series, growth_key, title, ylabel):
        chosen = [(r, y) for r, y in series if y is not None and len(y)]

        def draw(ax):
            for r, y in chosen:
                st = style(r, count=len(runs))
                x, v = running_max(r["t"], y)
                ax.loglog(x, v, label=f"{r['label']}: {exponent(r[growth_key])}", **st)
        return Panel(title, ylabel, draw, xlabel="elapsed time t - t0 [s]") if chosen else None

    energy = []
    for r in runs:
        e = r["energy"]
        energy.append((r, None if not np.isfinite(e[0]) else (e - e[0]) / max(abs(e[0]), np.finfo(float).eps)))
    drift = [(r, r["drift_position"] if r["drift_position"] is not None else r["drift_velocity"]) for r in runs]
    panels = [panel(energy, "energy_error_growth", f"relative energy error, running maximum (floor {FLOOR:g})",
                    "max |E - E0| / |E0| [-]"),
              panel(drift, "drift_growth", f"constraint drift |h(q)| (holonomic) or |A(q) qd|, running maximum "
                    f"(floor {FLOOR:g})", "max drift [constraint unit]")]
    panels = [p for p in panels if p]
    return render(panels, f"{name}: long-time growth (p: slope over the last two decades)", f"{stem}_growth.png") \
        if panels else []


def coordinate_groups(names, units, limit=8):
    """Columns to put in one panel each: every column if at most MAX_PANELS, else by kind (the name
    without its index: x1 x2 x3 -> x) and unit, at most `limit` per panel (evenly chosen, said in the title),
    a kind with more than MAX_PANELS members split into chunks."""
    n = len(names)
    if n <= MAX_PANELS:
        return [([i], "") for i in range(n)]
    kinds = {}
    for i, (nm, u) in enumerate(zip(names, units)):
        kinds.setdefault((nm.rstrip("0123456789").rstrip("_[]"), u), []).append(i)
    if len(kinds) == 1 or len(kinds) > MAX_PANELS:  # no structure: plain chunks
        size = max(2, math.ceil(n / 4))
        chunks = [list(range(i, min(i + size, n))) for i in range(0, n, size)]
    else:
        chunks = list(kinds.values())
    groups = []
    for c in chunks:
        if len(c) > limit:
            pick = sorted({c[int(round(x))] for x in np.linspace(0, len(c) - 1, limit)})
            groups.append((pick, f" ({len(pick)} of {len(c)} shown)"))
        else:
            groups.append((c, ""))
    return groups


def row_kind(run, column):
    """"position" or "velocity" for a multiplier's row of a mixed problem (the first position_rows columns of lambda
    are the position rows: docs/design.md section 5), "" for the others (every row one kind, or not recorded)."""
    if run.get("constraint_kind") != "mixed" or run.get("position_rows", -1) < 0:
        return ""
    return "position" if column < run["position_rows"] else "velocity"


def pin_groups(run):
    """The zoo four_bar's 8 unnamed rows by pin (a file named four_bar.toml whose rows have names: by name)."""
    unnamed = run["lambda_names"] == [f"lambda{j + 1}" for j in range(run["lambda"].shape[1])]
    if run["problem"] == "four_bar" and run["lambda"].shape[1] == 8 and unnamed:
        pins = ["pin O (crank at the origin)", "pin P1 (crank-coupler)", "pin P2 (coupler-rocker)",
                "pin Q (rocker at (L0, 0))"]
        return [([2 * i, 2 * i + 1], f": {pins[i]}, x and y") for i in range(4)]
    return None


def series_panels(runs, key, names_key, units_key, what, grouping=coordinate_groups):
    """Panels of q, qd or lambda: per problem, per column group; runs overlaid when a panel holds one
    column, one panel per run when it holds several columns and there are several runs."""
    panels = []
    for problem, group in by_problem(runs).items():
        group = [r for r in group if r[key].shape[1] > 0]
        if not group:
            continue
        if all(not np.any(np.isfinite(r[key])) for r in group):
            note(f"{problem}: {what} is NaN throughout in every run (e.g. substituted): no {what} panel")
            continue
        ref = max(group, key=lambda r: r[key].shape[1])
        names, units = ref[names_key], ref[units_key]
        groups = (pin_groups(ref) if key == "lambda" else None) or grouping(names, units)
        facets = [None] if all(len(c) == 1 for c, _ in groups) or len(group) == 1 else group
        for facet in facets:
            for cols, extra in groups:
                chosen = group if facet is None else [facet]
                # Units per run (vakonomic multipliers are in N s where kkt's are in N): all of them.
                unit_set = sorted({r[units_key][c] for r in chosen for c in cols if c < len(r[units_key])})
                unit = unit_set[0] if len(unit_set) == 1 else ", ".join(unit_set)
                colnames = ", ".join(names[c] for c in cols)
                # A mixed problem's multipliers: which rows hold positions (h = 0) and which velocities (A qd = 0).
                kinds = [row_kind(ref, c) for c in cols] if key == "lambda" else []
                if kinds and all(kinds) and len(set(kinds)) == 1:
                    colnames_kind = f"{colnames} ({kinds[0]} row{'s' if len(cols) > 1 else ''})"
                else:
                    colnames_kind = ", ".join(f"{names[c]} ({k} row)" if k else names[c] for c, k in zip(cols, kinds)) \
                        if kinds else colnames
                title = f"{problem}: {colnames_kind}{extra}" if len(cols) <= 4 else f"{problem}{extra}"
                if facet is not None:
                    title += f"  [{facet['short']}]"
                nan_runs = [r["id"] for r in chosen if not np.any(np.isfinite(r[key]))]
                if nan_runs:
                    title += f"  (NaN: {', '.join(nan_runs)})"
                if len(unit_set) > 1:
                    ylabel = f"{what} [{' or '.join(unit_set)}, see legend]"
                else:
                    ylabel = f"{colnames if len(cols) == 1 else what} [{unit}]"

                def draw(ax, cols=cols, chosen=chosen, names=names, unit_set=unit_set):
                    for i, r in enumerate(chosen):
                        for j, c in enumerate(cols):
                            if c >= r[key].shape[1] or not np.any(np.isfinite(r[key][:, c])):
                                continue
                            if len(cols) == 1:
                                st, label = style(r, i, len(chosen)), r["short"]
                                if key == "lambda":  # the multiplier's row by name in its legend
                                    label = f"{names[c]}: {label}"
                                if len(unit_set) > 1:
                                    label += f" [{r[units_key][c]}]"
                            else:
                                st = {"color": f"C{j % 10}", "linewidth": 1.4, "linestyle": "-"}
                                if r["status"] != "ok":
                                    st["linestyle"] = (0, (1, 1))
                                label = names[c]
                            draw_signed(ax, r["t"], r[key][:, c], label, st)
                            mark_end(ax, r, r["t"], r[key][:, c], st)
                # Panels of one column share the legend of their runs; a multiplier's legend names its row, so is
                # its own.
                legend_key = ((problem, "runs") if key != "lambda" else (problem, "runs", cols[0])) if len(cols) == 1 \
                    else (problem, facet and facet["id"], tuple(cols))
                panels.append(Panel(title, ylabel, draw, legend_key=legend_key))
    return panels


def plot_series(runs, stem, name, key):
    runs = plottable(runs, key)
    what = {"q": "coordinates q", "qd": "velocities qd", "lambda": "multipliers lambda"}[key]
    panels = series_panels(runs, key, f"{key}_names", f"{key}_units", key)
    if not panels:
        if key == "lambda" and runs:
            note(f"{name}: no multipliers to plot (m = 0 or NaN throughout)")
        return []
    suffix = " (M qdd + c = F + A^T lambda)" if key == "lambda" else ""
    return render(panels, f"{name}: {what} against time{suffix}{envelope_note(runs)}", f"{stem}_{key}.png")


def recorded_points(g, k):
    """The named points a run recorded (/points, a mechanism file's [points]): [(name, unit, x, y, z or None)]."""
    if "points" not in g:
        return []
    data = matrix(g, "points", k)
    columns = strings(g["points"].attrs, "columns") or []
    units = strings(g["points"].attrs, "units") or []
    if data.shape[0] != k or len(columns) != data.shape[1]:
        note("the run's /points do not match its samples: not drawn")
        return []
    out, j = [], 0
    while j < len(columns):
        name = columns[j].rsplit(".", 1)[0]
        width = 1
        while j + width < len(columns) and columns[j + width].rsplit(".", 1)[0] == name:
            width += 1
        if width >= 2:
            unit = units[j] if j < len(units) and units[j] not in ("", "-") else ""
            out.append((name, unit, data[:, j], data[:, j + 1], data[:, j + 2] if width >= 3 else None))
        j += width
    return out


def recorded_body_velocities(g, k):
    """The body velocities a run recorded (/body_velocities): [(name, unit, description, values)]."""
    if "body_velocities" not in g:
        return []
    data = matrix(g, "body_velocities", k)
    attrs = g["body_velocities"].attrs
    columns = strings(attrs, "columns") or []
    units = strings(attrs, "units") or []
    descriptions = strings(attrs, "descriptions") or []
    if data.shape[0] != k or len(columns) != data.shape[1]:
        note("the run's /body_velocities do not match its samples: not drawn")
        return []
    return [(name, units[j] if j < len(units) else "-", descriptions[j] if j < len(descriptions) else "", data[:, j])
            for j, name in enumerate(columns)]


def moves_in_z(z, x, y):
    """Whether a recorded z varies: such a point is drawn in 3D; a constant z (a planar motion at some height) is
    said in the legend instead."""
    if z is None or not np.any(np.isfinite(z)):
        return False
    scale = max(float(np.nanmax(np.abs(np.concatenate([x, y, z])))), 1.0)
    return float(np.nanmax(z) - np.nanmin(z)) > 1e-9 * scale


def trajectory_points(r):
    """The run's named points in the plane: [(label, x, y)], or None when it recorded none (tools/animate.py's
    view; the trajectory plot draws a point that moves in z in 3D). Every point comes from the run's /points (a
    mechanism file's [points], a zoo problem's points(): problems/point_spec.hpp); no problem is known here by
    name."""
    if not r.get("points"):
        return None
    return [(f"{name} (x, y)" if z is None else f"{name} (x, y; z not drawn)", x, y) for name, _, x, y, z in r["points"]]


def spatial_points(r, space):
    """The run's named points for the trajectory plot: [(label, (x, y) or in space (x, y, z))]; in the plane a
    constant z is said in the label, in space a point without z is drawn at z = 0 (said)."""
    out = []
    for name, _, x, y, z in r.get("points") or []:
        has_z = z is not None and np.any(np.isfinite(z))
        if space:
            out.append((name if has_z else f"{name} (no z: at 0)", (x, y, z if has_z else np.zeros_like(x))))
        else:
            out.append((f"{name} (z = {float(np.nanmean(z)):.3g} throughout)" if has_z else name, (x, y)))
    return out


Z_MIN_SHARE = 0.25  # a 3D path's z axis is drawn at least this share of its longer horizontal side


def box_aspect(facet):
    """(x, y, z) lengths of a 3D panel's box: the data's extents (equal scaling), z stretched to at least
    Z_MIN_SHARE of the larger of x and y (a disc rolling far at a height that changes by centimetres), and the
    factor z is stretched by (1: not)."""
    ext = []
    for c in range(3):
        v = np.concatenate([p[c] for r, pts in facet for _, p in pts])
        v = v[np.isfinite(v)]
        ext.append(float(v.max() - v.min()) if len(v) else 0.0)
    side = max(ext[0], ext[1], 1e-12)
    z = max(ext[2], Z_MIN_SHARE * side)
    return (max(ext[0], 1e-3 * side), max(ext[1], 1e-3 * side), z), (z / ext[2] if ext[2] > 0 else 1.0)


def plot_trajectory(runs, stem, name):
    panels = []
    for problem, group in by_problem(plottable(runs, "trajectory")).items():
        if not any(r.get("points") for r in group):
            note(f"{problem}: the runs recorded no named points (/points): no trajectory (a mechanism file declares "
                 "them in [points], a zoo problem by points(): problems/point_spec.hpp)")
            continue
        # In space when a point of some run moves in z (a rolling disc's centre, a top's tip), else in the plane.
        space = any(moves_in_z(z, x, y) for r in group for _, _, x, y, z in r.get("points") or [])
        pts = [(r, spatial_points(r, space)) for r in group]
        pts = [(r, x) for r, x in pts if x]
        if not pts:
            note(f"{problem}: coordinates do not match the problem's planar layout: no trajectory")
            continue
        npts = max(len(x) for _, x in pts)
        facets = [pts] if npts * len(pts) <= 16 else [[x] for x in pts]

        def draw(ax, items, box):  # box: a 3D panel's box aspect, None in the plane
            for i, (r, points) in enumerate(items):
                stride = max(1, math.ceil(r["k"] / MAX_PATH_POINTS))
                for j, (pname, c) in enumerate(points):
                    st = style(r, i, len(items)) if len(points) == 1 else {
                        "color": f"C{(j + (i * len(points) if len(items) > 1 else 0)) % 10}",
                        "linewidth": max(2.2 - 0.4 * i, 0.9), "linestyle": LINESTYLES[i % 4]}
                    if r["status"] != "ok":
                        st["linestyle"] = (0, (1, 1))
                    label = pname if len(items) == 1 else f"{pname}, {r['short']}"
                    if is_long(r["t"]) and len(items) == 1 and len(points) == 1:
                        # A long path retraced many times is a solid band as a line: dots coloured by time
                        # show where the motion went when.
                        sc = ax.scatter(*[v[::stride] for v in c], c=r["t"][::stride], s=0.4, cmap="viridis",
                                        label=label + " (colour: time)", rasterized=True)
                        ax.figure.colorbar(sc, ax=ax, orientation="horizontal", pad=0.15, fraction=0.05,
                                            aspect=40).set_label("time t [s]")
                    else:
                        ax.plot(*[v[::stride] for v in c], label=label, **st)
                    ax.plot(*[v[:1] for v in c], marker="o", color=st["color"], markersize=5)
                    ax.plot(*[v[-1:] for v in c], marker="s" if r["status"] == "ok" else "x", color=st["color"],
                            markersize=6)
                if i == 0:
                    draw_at_start(ax, r, space=box is not None)
            ax.plot([], [], "ko", markersize=4, label="start (o), end (square)")
            if box:
                ax.set_box_aspect(box)
                # Fewer ticks on a short side of the box (equal scaling makes a 60 m by 6 m path's y side short):
                # labels that do not run into each other.
                for axis, side in zip((ax.xaxis, ax.yaxis, ax.zaxis), box):
                    axis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=max(2, round(7 * side / max(box)))))

        for facet in facets:
            title = f"{problem}: path in space" if space else f"{problem}: path in the plane"
            if len(facet) == 1:
                title += f"  [{facet[0][0]['short']}]"
            longest = max(r["k"] for r, _ in facet)
            if longest > MAX_PATH_POINTS:
                title += f"\n(every {math.ceil(longest / MAX_PATH_POINTS)}th of {longest} samples)"
            box = None
            if space:
                box, stretch = box_aspect(facet)
                if stretch > 1.05:
                    title += f"\n(z drawn {stretch:.3g}x the scale of x and y)"
            units = {u for r, _ in facet for _, u, _, _, _ in (r.get("points") or [])}
            unit = units.pop() if len(units) == 1 else ("m" if not any(r.get("points") for r, _ in facet) else "")
            axis = lambda c: f"{c} [{unit or '-'}]"  # a file's [points] entry without a unit: "[-]", as elsewhere
            panels.append(Panel(title, axis("y"), lambda ax, items=facet, box=box: draw(ax, items, box),
                                xlabel=axis("x"), equal=True, zlabel=axis("z") if space else None))
    if not panels:
        return []
    return render(panels, f"{name}: trajectories", f"{stem}_trajectory.png", sharex=False)


def draw_at_start(ax, r, space=None):
    """The mechanism at t = 0 in grey: segments between consecutive named points (a linkage's pins in chain
    order, the sleigh's centre of mass and blade, a pendulum's pivot and bob); nothing for a single point. In
    space (a 3D panel) at the points' z (0 for a point without)."""
    pts = r.get("points") or []
    if len(pts) < 2 or r["k"] == 0:
        return
    coords = [[x[0] for _, _, x, _, _ in pts], [y[0] for _, _, _, y, _ in pts]]
    if space:
        coords.append([z[0] if z is not None else 0.0 for _, _, _, _, z in pts])
    ax.plot(*coords, color="0.55", linewidth=3, solid_capstyle="round", label="mechanism at t = 0 (named points joined)",
            zorder=0)


def plot_body_velocities(runs, stem, name):
    """One panel per declared body velocity (by problem and name); no problem is known here by name."""
    panels = []
    for problem, group in by_problem(plottable(runs, "body velocity")).items():
        series = [r for r in group if r.get("body_velocities")]
        if not series:
            continue
        names = []  # in the order the runs declare them
        for r in series:
            for v in r["body_velocities"]:
                if v[0] not in names:
                    names.append(v[0])
        for vname in names:
            def draw(ax, vname=vname, series=series):
                for i, r in enumerate(series):
                    for v in r["body_velocities"]:
                        if v[0] == vname:
                            st = style(r, i, len(series))
                            draw_signed(ax, r["t"], v[3], r["short"], st)
                            mark_end(ax, r, r["t"], v[3], st)
            first = next(v for r in series for v in r["body_velocities"] if v[0] == vname)
            _, unit, description, _ = first
            title = f"{problem}: {vname}" + (f" ({description})" if description else "")
            panels.append(Panel(title, f"{vname} [{unit}]", draw, legend_key=(problem,)))
    if not panels:
        return []
    return render(panels, f"{name}: body-frame velocities{envelope_note(runs)}", f"{stem}_body_velocities.png")


def comparison_groups(runs, kozlov_refs):
    """[(reference, [other runs], why)]: runs of one problem with the same parameters and initial data."""
    ok = [r for r in runs if r["k"] > 0]
    groups = []
    for r in ok:
        for g in groups:
            s = g[0]
            if (s["problem"] == r["problem"] and s["params"] == r["params"] and len(s["q0"]) == len(r["q0"])
                    and len(s["qd0"]) == len(r["qd0"]) and s["n"] == r["n"]
                    and np.allclose(s["q0"], r["q0"], rtol=1e-12, atol=1e-14)
                    and np.allclose(s["qd0"], r["qd0"], rtol=1e-12, atol=1e-14)):
                g.append(r)
                break
        else:
            groups.append([r])
    out = []
    for g in groups:
        if len(g) < 2:
            continue
        ref = next((r for r in g if r["id"] in kozlov_refs), None)
        why = "the study's reference run" if ref else "the first run that finished ok"
        if ref is None:
            ref = next((r for r in g if r["status"] == "ok"), None)
        if ref is None:
            note(f"{g[0]['problem']}: no run finished ok: no difference plot")
            continue
        out.append((ref, [r for r in g if r is not ref], why))
    return out


def plot_error(runs, stem, name, path):
    refs = set()
    with h5py.File(path, "r") as f:
        if "kozlov" in f:
            refs = {text(f["kozlov"][s].attrs.get("reference_run", "")) for s in f["kozlov"]}
    panels = []
    skipped = False
    for ref, others, why in comparison_groups(runs, refs):
        # Runs that stored their error against the true motion are drawn from it (plot_error_vs_reference); the
        # difference between runs is for those without (no closed form, no [reference] run) and Kozlov's studies.
        if not refs and ref["error_series"] and all(r["error_series"] for r in others):
            skipped = True
            continue
        units = []
        for u in ref["q_units"]:
            if u not in units:
                units.append(u)
        rinfo = f"{ref['id']} ({ref['formulation']}/{ref['integrator']}"
        rinfo += f", rtol {ref['rtol']:g})" if ref["integrator"] in ADAPTIVE else f", dt {ref['dt']:g})"
        for unit in units:
            cols = [i for i, u in enumerate(ref["q_units"]) if u == unit]
            colnames = ", ".join(ref["q_names"][i] for i in cols)

            def draw(ax, cols=cols, ref=ref, others=others):
                for i, r in enumerate(others):
                    t = r["t"]
                    inside = t <= ref["t"][-1] * (1 + 1e-12) + 1e-300
                    t = t[inside]
                    same = len(t) <= len(ref["t"]) and np.allclose(t, ref["t"][:len(t)], rtol=1e-9, atol=1e-12)
                    d = np.zeros(len(t))
                    for c in cols:
                        qr = ref["q"][:len(t), c] if same else np.interp(t, ref["t"], ref["q"][:, c])
                        d = np.fmax(d, np.abs(r["q"][:len(t), c] - qr))
                    # Differences are noisy: solid lines, told apart by colour.
                    st = dict(style(r, i + 1, len(others) + 1), linewidth=1.3)
                    if r["status"] == "ok":
                        st["linestyle"] = "-"
                    label = r["short"] + ("" if same else " (reference interpolated)")
                    if len(d) and np.all(d == 0):
                        label += " (identical)"
                    y = draw_magnitude(ax, t, d, label, st)
                    mark_end(ax, r, t, y, st)
            panels.append(Panel(f"{ref['problem']}: max over {colnames} of |q_i - q_i,ref|\n"
                                f"against {rinfo}, {why}",
                                f"|q - q_ref| [{unit}]", draw, legend_key=(ref["id"], "error")))
    if not panels:
        if not skipped and not any(r["error_series"] for r in runs):
            note(f"{name}: no two runs share problem, parameters and initial data: no difference plot")
        return []
    # Named for what it measures: against a Kozlov study's reference run (an accurate run of the limit system)
    # it is an error; against the first run that finished ok it is only a difference between runs.
    what = "error against the Kozlov study's reference run" if refs else "difference to a reference run"
    return render(panels, f"{name}: {what} (floor {FLOOR:g}){envelope_note(runs)}",
                  f"{stem}_error.png" if refs else f"{stem}_difference.png")


def load_error_series(path):
    """[(entry, t, E)] for every run that stored its error against the reference at each sample
    (/runs/<id>/error_vs_reference, E of K rows: |q - q_ref|, |qd - qd_ref|, |lambda - lambda_ref|); entry is the
    run's load_work_precision entry. Only t and that dataset are read (a sweep of hundreds of runs stays small)."""
    entries = {e["id"]: e for e in load_work_precision(path)}
    out = []
    with h5py.File(path, "r") as f:
        if "runs" not in f:
            return out
        order = [text(x) for x in f["summary/run_id"][()]] if "summary/run_id" in f else []
        order = [r for r in order if r in f["runs"]] + sorted(r for r in f["runs"] if r not in order)
        for run_id in order:
            g = f["runs"][run_id]
            if run_id not in entries or "error_vs_reference" not in g or "t" not in g:
                continue
            t = np.asarray(g["t"][()], dtype=float)
            e = np.asarray(g["error_vs_reference"][()], dtype=float).reshape(-1, 3)
            if len(e) != len(t):
                note(f"{path}: run '{run_id}': error_vs_reference has {len(e)} rows, t has {len(t)}: skipped")
                continue
            qd_units = strings(g["qd"].attrs, "units") if "qd" in g else None
            lam_units = strings(g["lambda"].attrs, "units") if "lambda" in g else None
            entry = dict(entries[run_id], validity=text(g.attrs.get("validity", "")), qd_units=list(qd_units or []),
                         lambda_units=list(lam_units or [lambda_unit(entries[run_id]["problem"],
                                                                     entries[run_id]["formulation"])]))
            out.append((entry, t, e))
    return out


def plot_error_vs_reference(path, stem, name):
    """<stem>_error_vs_reference.png: each run's error against the true motion over time, from the series the
    run stored (/runs/<id>/error_vs_reference): against the closed form, or the reference run at tight
    tolerance. One panel per quantity (q, qd, lambda) for a file of a few runs; for a sweep, one panel per
    formulation x integrator with a curve per tolerance (colour from loose to tight). A run that failed or
    diverged ends in a cross at the time it stopped."""
    series = load_error_series(path)
    if not series:
        return []
    groups = {}
    for e, t, err in series:
        key = (e["problem"], e["params"], e["initial"], e["t_end"])
        groups.setdefault(key, []).append((e, t, err))
    keys = list(groups)
    titles = group_titles(keys, {key: [e for e, _, _ in groups[key]] for key in keys}, stem=True)
    panels = []
    for key in keys:
        members = groups[key]
        title = titles[key]
        sources = sorted({e["reference_source"] for e, _, _ in members})
        against = ("the closed-form motion" if sources == ["closed_form"] else
                   members[0][0]["reference_message"].split(":")[0] if sources == ["reference_run"] else
                   "closed forms and reference runs")
        def units_of(key):
            units = []
            for e, _, _ in members:
                for u in e[key]:
                    if u not in units and u != "-":
                        units.append(u)
            return ", ".join(units) if units else "-"

        unit = units_of("q_units")
        curves = {}
        for m in members:
            curves.setdefault(curve_label(m[0]), []).append(m)
        sweep = max(len(c) for c in curves.values()) > 1

        def draw(ax, runs, column, by_knob):
            runs = sorted(runs, key=lambda m: -(m[0]["dt"] if m[0]["fixed"] else m[0]["rtol"])) if by_knob else runs
            for i, (e, t, err) in enumerate(runs):
                y = floored(err[:, column])
                if not np.any(np.isfinite(y)):
                    continue
                col = plt.cm.viridis(i / max(len(runs) - 1, 1)) if by_knob else color(i, len(runs))
                label = knob_text(e) if by_knob else f"{curve_label(e)}, {knob_text(e)}"
                if e["validity"] and not by_knob:
                    label += " [outside its formulation's conditions]"
                if e["status"] != "ok":
                    label += f" [{e['status']} at t = {t[-1]:g}]" if len(t) else f" [{e['status']}]"
                # Formulations often agree to the last bit (kkt and schur): later runs of a panel of methods are
                # drawn thinner and dashed, so that one lying on another stays visible.
                dash = "-" if by_knob else LINESTYLES[i % len(LINESTYLES)]
                ax.semilogy(t, y, color=col, linewidth=1.3 if by_knob else max(2.6 - 0.5 * i, 1.0), label=label,
                            linestyle=dash if e["status"] == "ok" else (0, (1, 1)))
                if e["status"] != "ok" and len(t):
                    finite = np.flatnonzero(np.isfinite(y))
                    if len(finite):
                        ax.plot(t[finite[-1]], y[finite[-1]], marker="x", markersize=9, color=col)

        if sweep:
            for label, runs in curves.items():
                outside = sum(1 for e, _, _ in runs if e["validity"])
                flag = f"\n{outside} of {len(runs)} runs outside the formulation's conditions (run attribute validity)" \
                    if outside else ""
                panels.append(Panel(f"{title}, {label}: |q - q_ref| against {against}{flag}", f"|q - q_ref| [{unit}]",
                                    lambda ax, r=runs: draw(ax, r, 0, True), legend_key=(key, label)))
        else:
            runs = [m for c in curves.values() for m in c]
            for column, (what, ylabel) in enumerate([("q", f"|q - q_ref| [{unit}]"),
                                                     ("qd", f"|qd - qd_ref| [{units_of('qd_units')}]"),
                                                     ("lambda", f"|lambda - lambda_ref| [{units_of('lambda_units')}]")]):
                if not any(np.any(np.isfinite(err[:, column])) for _, _, err in runs):
                    continue
                panels.append(Panel(f"{title}: |{what} - {what}_ref| against {against}", ylabel,
                                    lambda ax, r=runs, c=column: draw(ax, r, c, False), legend_key=(key, "error")))
    return render(panels, f"{name}: error against the reference over time (floor {FLOOR:g})",
                  f"{stem}_error_vs_reference.png")


def plot_kozlov(path, stem):
    """Error against N on log-log axes for each /kozlov/<study>, with the least-squares line."""
    figures = []
    with h5py.File(path, "r") as f:
        if "kozlov" not in f:
            return []
        for study in f["kozlov"]:
            g = f["kozlov"][study]
            a = g.attrs
            try:
                N = np.asarray(g["N"][()], dtype=float)
                status = [text(x) for x in g["status"][()]] if "status" in g else ["ok"] * len(N)
                fitted = text(a.get("fitted_error", "error_q"))
                slope, intercept = float(a.get("slope", np.nan)), float(a.get("intercept", np.nan))
                resid = float(a.get("fit_residual", np.nan))
                lo, hi = float(a.get("fit_N_min", 0)), float(a.get("fit_N_max", np.inf))
            except (KeyError, ValueError, TypeError) as e:
                note(f"kozlov study '{study}' skipped ({e})")
                continue
            theorem = int(a.get("theorem", 0))
            fig, ax = plt.subplots(figsize=(7.5, 5.2))
            series = [("error_q", "max_t |q_N - q_ref| (Euclidean over q: m and rad)", "o", "C0"),
                      ("error_qd", "max_t |qd_N - qd_ref| (over qd: m/s and rad/s)", "s", "C1"),
                      ("constraint_violation", "max_t |A qd_N| [m/s]", "^", "C2"),
                      ("error_q_closed_form", "max_t |q_N - q_closed_form| (vakonomic closed form)", "D", "C3")]
            for key, label, marker, col in series:
                if key not in g:
                    continue
                y = np.asarray(g[key][()], dtype=float)
                ok = np.isfinite(y) & (y > 0)
                mark = " (fitted)" if key == fitted else ""
                hollow = key == "error_q_closed_form"  # on top of error_q: open markers keep both visible
                ax.loglog(N[ok], y[ok], marker=marker, linestyle="-" if key == fitted else ":", color=col,
                          linewidth=1.8 if key == fitted else 1.0, markersize=11 if hollow else 7,
                          markerfacecolor="none" if hollow else col, markeredgewidth=1.5 if hollow else 1.0,
                          label=label + mark)
            bad = [n for n, s in zip(N, status) if s != "ok"]
            for n in bad:
                ax.axvline(n, color="red", linestyle="--", alpha=0.5)
            if bad:
                ax.plot([], [], color="red", linestyle="--", label="diverged/failed (excluded): N = "
                        + ", ".join(f"{n:.0e}" for n in bad))
            if np.isfinite(slope) and fitted in g:
                y = np.asarray(g[fitted][()], dtype=float)
                inside = (N >= lo) & (N <= hi) & np.isfinite(y) & (y > 0)
                if np.any(inside):
                    xs = np.logspace(np.log10(N[inside].min()), np.log10(N[inside].max()), 50)
                    ax.loglog(xs, 10 ** (intercept + slope * np.log10(xs)), color="black", linestyle="--",
                              linewidth=1.2, label=f"fit to {fitted}: slope {slope:.3f} (residual {resid:.2g})")
            # Theorem 1: friction R = N/2 |A qd|^2 with A qd in m/s, so N in kg/s; Theorem 2: added mass, kg.
            unit = {1: "kg/s: viscous friction coefficient", 2: "kg: added mass"}.get(theorem, "-")
            ax.set_xlabel(f"N [{unit}]")
            ax.set_ylabel("max over [0, T] of the error [m, rad; m/s, rad/s]")
            ax.set_title(f"{study}: Theorem {theorem}, {text(a.get('problem', '?'))}\n"
                         f"{text(a.get('limit_formulation', '?'))} ({text(a.get('limit_integrator', '?'))}) -> "
                         f"{text(a.get('reference_formulation', '?'))} (run {text(a.get('reference_run', '?'))}), "
                         f"T = {float(a.get('t_end', np.nan)):g} s", fontsize=10)
            ax.grid(True, which="both", alpha=0.25)
            ax.legend(fontsize=8, loc="lower left")
            fig.tight_layout()
            figures.append((f"{stem}_kozlov_{study}.png", fig))
    return figures


# ------------------------------------------------------------------------------ phase portrait (analyze)


def sleigh_flow(u, w, b, beta):
    """The sleigh's reduced equations [seed-000, after eq. 2.18]: u' = b w^2, w' = -beta u w
    (tests/equilibrium_test.cpp checks them against the suite's autodiff reduced equations)."""
    return b * w * w, -beta * u * w


def has_analysis(path):
    with h5py.File(path, "r") as f:
        return "analysis" in f


def plot_phase_portrait(path, stem):
    """`clmbench analyze --problem chaplygin_sleigh ... --equilibrium --out F.h5`: the (u1, omega) phase plane
    of the sleigh at the file's parameters: energy ellipses m u^2 + (m b^2 + Ic) w^2 = 2E, a fan of
    trajectories of the reduced flow (RK4), the line of equilibria omega = 0, stable part solid and unstable
    part dashed (stable where beta u > 0, beta = m b / (m b^2 + Ic)), and the analysed state with its verdict."""
    with h5py.File(path, "r") as f:
        if "analysis" not in f or "equilibrium_verdict" not in f["analysis"].attrs:
            return []
        g = f["analysis"]
        a = g.attrs
        if text(a.get("problem", "")) != "chaplygin_sleigh":
            return []
        m, Ic, b = (float(a[f"param.{k}"]) for k in ("m", "Ic", "b"))
        v = np.asarray(g["equilibrium_v"][()], dtype=float)
        verdict = text(a["equilibrium_verdict"])
        eig = np.asarray(g["equilibrium_eigenvalues_real"][()], dtype=float)
    K = m * b * b + Ic
    beta = m * b / K
    u_star = float(v[0])
    # Axes: a few energy levels up to the analysed state's, at least a unit speed.
    umax = 1.25 * max(abs(u_star), 1.0)
    wmax = umax * math.sqrt(m / K)
    fig, ax = plt.subplots(figsize=(7.5, 6.2))
    th = np.linspace(0, 2 * np.pi, 400)
    scale = umax / 1.25
    for i, c in enumerate(np.array([0.2, 0.425, 0.675, 0.9]) * scale):
        ax.plot(c * np.cos(th), c * math.sqrt(m / K) * np.sin(th), color="0.6", linewidth=0.9, linestyle=":",
                label="energy levels m u1^2 + (m b^2 + Ic) omega^2 = 2E" if i == 0 else None)
    # A fan of trajectories, each started just off an unstable equilibrium (b != 0; anywhere when b = 0), above
    # and below the axis: each traces half an energy ellipse to a stable equilibrium. RK4.
    side = -np.sign(beta) if beta != 0 else 1.0
    steps = 3000
    starts = []
    for c in np.array([0.3, 0.55, 0.8, 1.0]) * scale:
        for sign in (1, -1):
            ang = 0.04 if side > 0 else np.pi - 0.04
            starts.append((c * np.cos(ang), sign * c * math.sqrt(m / K) * np.sin(ang)))
    for i, (u, w) in enumerate(starts):
        # Long enough to settle: about 12 e-foldings of the approach rate beta c (c = |(u, w)|, b != 0).
        c = math.hypot(u, w * math.sqrt(K / m))
        dt = (12 / (abs(beta) * c) if beta != 0 else 3 / max(wmax, 1e-3)) / steps
        us, ws = [u], [w]
        for _ in range(steps):
            k1 = sleigh_flow(u, w, b, beta)
            k2 = sleigh_flow(u + dt / 2 * k1[0], w + dt / 2 * k1[1], b, beta)
            k3 = sleigh_flow(u + dt / 2 * k2[0], w + dt / 2 * k2[1], b, beta)
            k4 = sleigh_flow(u + dt * k3[0], w + dt * k3[1], b, beta)
            u += dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            w += dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            us.append(u)
            ws.append(w)
        us, ws = np.asarray(us), np.asarray(ws)
        ax.plot(us, ws, color="C0", linewidth=1.2, label="trajectories of the reduced flow" if i == 0 else None)
        # An arrow at half the arc length, in the direction of motion.
        arc = np.concatenate([[0], np.cumsum(np.hypot(np.diff(us), np.diff(ws) * math.sqrt(K / m)))])
        j = min(int(np.searchsorted(arc, arc[-1] / 2)), len(us) - 2)
        ax.annotate("", xy=(us[j + 1], ws[j + 1]), xytext=(us[j], ws[j]),
                    arrowprops=dict(arrowstyle="-|>", color="C0", lw=1.2, mutation_scale=14))
    # The line of equilibria omega = 0: stable where beta u > 0.
    ax.plot([0, umax * np.sign(beta or 1)], [0, 0], color="red", linewidth=3,
            label="stable equilibria (beta u1 > 0)" if beta != 0 else "equilibria (b = 0: marginal)")
    ax.plot([0, -umax * np.sign(beta or 1)], [0, 0], color="red", linewidth=2.2,
            linestyle="--" if beta != 0 else "-", label="unstable equilibria (beta u1 < 0)" if beta != 0 else None)
    ax.plot([u_star], [0], marker="o", markersize=9, color="black", linestyle="none",
            label=f"analysed: u1 = {u_star:.3g}, {verdict} (eigenvalues " + ", ".join(f"{x:.3g}" for x in eig) + ")")
    ax.set_xlim(-umax, umax)
    ax.set_ylim(-wmax, wmax)
    ax.set_xlabel("u1 = xd cos(theta) + yd sin(theta) [m/s]")
    ax.set_ylabel("omega = thetad [rad/s]")
    ax.set_title(f"Chaplygin sleigh phase plane (m = {m:g}, Ic = {Ic:g}, b = {b:g}, beta = {beta:.3g})\n"
                 "u1' = b omega^2, omega' = -beta u1 omega; equilibria omega = 0 [seed-000]", fontsize=10)
    ax.grid(True, alpha=0.25)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    fig.tight_layout()
    return [(f"{stem}_phase_portrait.png", fig)]


# ------------------------------------------------------------------------------ work-precision diagrams


WP_MEASURES = {  # x axis of a work-precision diagram: (run attribute, axis label, file suffix)
    "cpu": ("cpu_time_s", "CPU time of the integration [s]", "work_precision_cpu"),
    "rhs": ("rhs_evals", "right-hand-side evaluations [count]", "work_precision_rhs"),
}


def attr_float(a, key):
    try:
        return float(a[key]) if key in a else np.nan
    except (TypeError, ValueError):
        return np.nan


def load_work_precision(path):
    """One entry per run from the /runs/<id> attributes (no samples are read): what it ran, its tolerance or
    step, its cost (cpu_time_s, rhs_evals; cpu_time_spread, the relative spread (max - min) / min of its repeated
    timings, NaN when timed once or not recorded) and its errors against the reference (q_error_max, scd)."""
    entries = []
    with h5py.File(path, "r") as f:
        if "runs" not in f:
            return entries
        for run_id in f["runs"]:
            g = f["runs"][run_id]
            a = g.attrs
            if "q_error_max" not in a:  # written before work-precision figures existed
                continue
            formulation, integrator = text(a.get("formulation", "?")), text(a.get("integrator", "?"))
            q_units = strings(g["q"].attrs, "units") if "q" in g else None
            entries.append({
                "id": run_id, "problem": text(a.get("problem", "?")), "formulation": formulation,
                "integrator": integrator, "status": text(a.get("status", "?")),
                "rtol": attr_float(a, "rtol"), "dt": attr_float(a, "dt"), "N": attr_float(a, "formulation.N"),
                # Runs of one formulation and integrator that differ in these are different methods (one curve
                # each): kkt + dopri5 with and without projection in one sweep (wp_ali3p_four_bar.ini).
                "projection": text(a.get("formulation.projection", "none")),
                "baumgarte": (attr_float(a, "formulation.baumgarte_alpha"), attr_float(a, "formulation.baumgarte_beta")),
                # A fixed-step method, or an adaptive one told to take fixed steps: its knob is dt, not rtol.
                "fixed": integrator not in ADAPTIVE or bool(int(a.get("fixed_step", 0))),
                "cpu_time_s": attr_float(a, "cpu_time_s"), "rhs_evals": attr_float(a, "rhs_evals"),
                "cpu_time_spread": attr_float(a, "cpu_time_spread"),
                "q_error_max": attr_float(a, "q_error_max"), "scd": attr_float(a, "scd"),
                "reference_source": text(a.get("reference_source", "none")),
                "reference_message": text(a.get("reference_message", "")),
                "validity": text(a.get("validity", "")),  # runs/validity_monitor.hpp: "" within the conditions
                "params": tuple(sorted((x[6:], float(a[x])) for x in a if x.startswith("param."))),
                "initial": tuple(np.round(np.concatenate([np.asarray(a.get("q0", []), dtype=float).ravel(),
                                                          np.asarray(a.get("qd0", []), dtype=float).ravel()]), 12)),
                "t_end": attr_float(a, "t_end"),
                "q_units": [u for u in (q_units or [])],
                # A sweep's grid point, "key=value ..." (sweep_index order): names what a group of runs varied.
                "sweep_point": text(a.get("sweep_point", "")),
            })
    return entries


def curve_label(e):
    label = f"{e['formulation']}"
    if e["formulation"] in ("penalty", "added_mass") and np.isfinite(e["N"]):
        label += f" N={e['N']:.0e}"
    if e.get("projection", "none") not in ("none", ""):
        label += f" + projection ({e['projection']})"
    alpha, beta = e.get("baumgarte", (np.nan, np.nan))
    if (np.isfinite(alpha) and alpha != 0) or (np.isfinite(beta) and beta != 0):
        label += f" + Baumgarte ({alpha:g}, {beta:g})"
    label += f" / {e['integrator']}"
    if e["integrator"] in ADAPTIVE and e["fixed"]:
        label += " (fixed step)"
    return label


def work_precision_groups(entries):
    """[(title, {curve label: [entries ordered by tolerance, loosest first]}, {curve label: [failed entries]})]:
    one group per problem, parameter set, initial data and t_end (the runs that share a reference); one curve
    per formulation x integrator (and N for the limit formulations) of the runs that finished ok with a finite
    error; the runs of the group that failed or diverged apart, by curve (they have no error to draw: a mark at
    their cost). A group is drawn when some curve has two tolerances or more (a tolerance sweep; failed runs
    count) and some run finished ok: runs that differ in something else at one tolerance (initial_offset,
    Baumgarte gains) are not a work-precision curve."""
    groups, failed = {}, {}
    for e in entries:
        key = (e["problem"], e["params"], e["initial"], e["t_end"])
        if e["status"] in ("failed", "diverged"):
            failed.setdefault(key, {}).setdefault(curve_label(e), []).append(e)
            continue
        ok = (e["status"] == "ok" and e["reference_source"] != "none" and np.isfinite(e["q_error_max"])
              and e["q_error_max"] >= 0)
        if not ok:
            continue
        groups.setdefault(key, {}).setdefault(curve_label(e), []).append(e)
    out = []
    keys = list(groups)
    titles = group_titles(keys, {key: [e for c in list(groups[key].values()) + list(failed.get(key, {}).values())
                                       for e in c] for key in keys})
    for key in keys:
        curves, lost = groups[key], failed.get(key, {})
        for runs in list(curves.values()) + list(lost.values()):
            # Loosest tolerance first: rtol for adaptive runs, the step for fixed-step ones.
            runs.sort(key=lambda e: -(e["dt"] if e["fixed"] else e["rtol"]))
        if max(len({knob_text(e) for e in c + lost.get(label, [])}) for label, c in curves.items()) < 2 and \
                not any(len({knob_text(e) for e in c + curves.get(label, [])}) > 1 for label, c in lost.items()):
            continue
        out.append((titles[key], curves, lost))
    return out


def problem_title(problem, stem=False):
    """A problem as a title: a zoo name as it is, a mechanism file (PATH@sha256:HEX) by its file name (stem: without
    .toml)."""
    name = problem.split("@sha256:")[0]
    if "/" in name or name.endswith(".toml"):
        name = os.path.basename(name)
        if stem:
            name = os.path.splitext(name)[0]
    return name


def sweep_tokens(e):
    """A run's sweep point as {key: value} ({} outside a sweep); "run=NAME" (a named [run.NAME]) left out."""
    pairs = (x.split("=", 1) for x in e.get("sweep_point", "").split() if "=" in x)
    return {k: v for k, v in pairs if k != "run"}


def group_titles(keys, members, stem=False):
    """{key: title} for run groups keyed (problem, params, initial data, t_end), members[key] their runs'
    load_work_precision entries: the problem's name and, where one problem has several groups, what tells them
    apart, by name and value: the parameters that differ ("b = 0.1"), t_end ("T = 5 s", also when nothing else
    differs), the keys of the sweep's grid points that hold one value in a group and differ between groups
    ("qd0 = 1,0,0"; parameters and t_end named once), else the initial data's number among the problem's groups
    (tools/report.py's group_titles heads its tables alike, without the sweep keys)."""
    def fixed_tokens(key):  # the sweep keys with one value over the group's runs
        tokens = [sweep_tokens(e) for e in members[key]]
        return {k: v for k, v in tokens[0].items() if all(t.get(k) == v for t in tokens)} if tokens else {}

    words = {}
    for key in keys:
        same = [k for k in keys if k[0] == key[0]]
        if len(same) == 1:
            words[key] = []
            continue
        w = [f"{name} = {value:g}" for name, value in key[1] if len({dict(k[1]).get(name) for k in same}) > 1]
        fixed = {k: fixed_tokens(k) for k in same}
        w += [f"{name} = {value}" for name, value in fixed[key].items()
              if not name.startswith("param.") and name != "t_end"
              and len({fixed[k].get(name) for k in same}) > 1]
        if len({k[3] for k in same}) > 1 or not w:
            w.append(f"T = {key[3]:g} s")
        words[key] = w
    titles = {}
    for key in keys:
        same = [k for k in keys if k[0] == key[0]]
        w = words[key]
        if sum(1 for k in same if words[k] == w) > 1:  # told apart by their initial data only
            w = w + [f"initial data {same.index(key) + 1}"]
        titles[key] = problem_title(key[0], stem) + (f" ({', '.join(w)})" if w else "")
    return titles


def knob_text(e):
    return f"dt {e['dt']:.0e}" if e["fixed"] else f"rtol {e['rtol']:.0e}"


def plot_work_precision(path, stem, name):
    """Error against cost, one curve per formulation x integrator: <stem>_work_precision_cpu.png (CPU time)
    and <stem>_work_precision_rhs.png (rhs evaluations); per group of runs two panels, the max q error
    (log-log) and scd (significant correct digits at t_end). A run that failed or diverged is an 'x' in its
    curve's colour at its cost on the edge of the panel where the accuracy is worst (top of the error panel,
    bottom of the scd panel: it reached none), its tolerance in the curve's legend entry, and the panel has a
    legend entry "failed / diverged". CPU times carry their spread as error bars, from the minimum (cpu_time_s)
    to the slowest repeat, min (1 + cpu_time_spread), where the file records a spread."""
    groups = work_precision_groups(load_work_precision(path))
    if not groups:
        return []
    figures = []
    for measure, (key, xlabel, suffix) in WP_MEASURES.items():
        panels = []
        for title, curves, lost in groups:
            members = [e for c in curves.values() for e in c]
            units = []
            for e in members:
                for u in e["q_units"]:
                    if u not in units and u != "-":
                        units.append(u)
            sources = sorted({e["reference_source"] for e in members})
            against = ("the closed-form motion" if sources == ["closed_form"] else
                       members[0]["reference_message"].split(":")[0] if sources == ["reference_run"] else
                       "closed forms and reference runs")

            def draw(ax, curves=curves, lost=lost, key=key, what="q_error_max"):
                labels = list(curves) + [label for label in lost if label not in curves]
                for i, label in enumerate(labels):
                    points = curves.get(label, [])
                    col = color(i, len(labels))
                    x = np.array([p[key] for p in points], dtype=float)
                    y = np.array([p[what] for p in points], dtype=float)
                    keep = np.isfinite(x) & (x > 0) & np.isfinite(y)
                    if what == "q_error_max":
                        y = np.maximum(y, FLOOR)
                    failed = lost.get(label, [])
                    text = (f"{label}: {knob_text(points[0])} .. {knob_text(points[-1])}" if len(points) > 1 else
                            f"{label}: {knob_text(points[0])}" if points else f"{label}: no run finished ok")
                    if failed:
                        text += f"; failed / diverged at {', '.join(knob_text(e) for e in failed)}"
                    outside = [e for e in points if e.get("validity")]
                    if outside:
                        text += (" [outside its formulation's conditions]" if len(outside) == len(points) else
                                 f" [outside its formulation's conditions at {', '.join(knob_text(e) for e in outside)}]")
                    if np.any(keep):
                        # Formulations often agree to the last bit (kkt and schur): later curves are drawn thinner
                        # with smaller markers, so that one lying on another stays visible.
                        ax.plot(x[keep], y[keep], marker="os^vD<>ph*"[i % 10], linestyle=LINESTYLES[i % 4], color=col,
                                linewidth=max(2.4 - 0.25 * i, 0.9), markersize=max(8.0 - 0.6 * i, 3.5), label=text)
                        text = "_nolegend_"
                        if key == "cpu_time_s":  # the repeated timings: from the minimum to the slowest
                            spread = np.array([p.get("cpu_time_spread", np.nan) for p in points], dtype=float)
                            bars = keep & np.isfinite(spread) & (spread >= 0)
                            if np.any(bars):
                                ax.errorbar(x[bars], y[bars], xerr=[np.zeros(int(bars.sum())), x[bars] * spread[bars]],
                                            fmt="none", ecolor=col, elinewidth=0.8, capsize=0, alpha=0.6)
                    if failed:
                        # No accuracy reached: on the worst edge of the panel (top of the error axis, bottom of
                        # the scd axis) at the run's cost (the left edge when it has none).
                        edge = 1.0 if what == "q_error_max" else 0.0
                        cost = np.array([e[key] for e in failed], dtype=float)
                        at = np.isfinite(cost) & (cost > 0)
                        mark = dict(marker="x", markersize=9, markeredgewidth=2, linestyle="none", color=col,
                                    clip_on=False, zorder=5)
                        if np.any(at):
                            ax.plot(cost[at], np.full(int(at.sum()), edge), transform=ax.get_xaxis_transform(),
                                    label=text, **mark)
                            text = "_nolegend_"
                        if not np.all(at):
                            ax.plot(np.zeros(int((~at).sum())), np.full(int((~at).sum()), edge),
                                    transform=ax.transAxes, label=text, **mark)
                if lost:
                    ax.plot([], [], marker="x", markersize=9, markeredgewidth=2, linestyle="none", color="0.3",
                            label="failed / diverged (no accuracy reached: at the axis edge, at its cost)")
                ax.set_xscale("log")
                if what == "q_error_max":
                    ax.set_yscale("log")
                ax.set_xlabel(WP_MEASURES["cpu" if key == "cpu_time_s" else "rhs"][1], fontsize=9)  # x ranges differ
                ax.grid(True, which="both", alpha=0.25)

            unit = ", ".join(units) if units else "-"
            panels.append(Panel(f"{title}: max over t of |q - q_ref| against {against}",
                                f"max |q - q_ref| [{unit}]", draw, xlabel=xlabel, legend_key=(title, "wp")))
            panels.append(Panel(f"{title}: significant correct digits at t_end (Bari test set)",
                                "scd [digits]", lambda ax, d=draw: d(ax, what="scd"), xlabel=xlabel,
                                legend_key=(title, "wp")))
        bars = measure == "cpu" and any(np.isfinite(e["cpu_time_spread"]) for _, c, _ in groups for p in c.values()
                                         for e in p)
        figures += render(panels, f"{name}: work-precision ({'CPU time' if measure == 'cpu' else 'rhs evaluations'};"
                          " points ordered by tolerance, loosest first" +
                          ("; bars: repeated timings, fastest to slowest" if bars else "") + ")",
                          f"{stem}_{suffix}.png", sharex=False)
    return figures


def plot_extras(runs, stem, name):
    """One panel per formulation diagnostic (absolute value, log scale), one curve per run that has it."""
    runs = [r for r in runs if r["k"] > 0]
    names = sorted({k for r in runs for k in r["extras"]})
    panels = []
    for extra in names:
        series = [(r, r["extras"][extra]) for r in runs if extra in r["extras"] and len(r["extras"][extra]) == r["k"]]
        if not series:
            continue
        # Counters (e.g. nullspace re-partitions) are whole numbers: a linear step plot, not a log scale.
        counter = all(np.all(np.isfinite(v) & (v == np.round(v)) & (v >= 0)) for _, v in series)
        unit = EXTRA_UNITS.get(extra, "as defined by the formulation")

        def draw(ax, series=series, counter=counter):
            for i, (r, v) in enumerate(series):
                label = r["label"] + f" ({r['id']})" * (r["id"] not in r["label"])
                st = style(r, i, len(series))
                if counter:
                    ax.step(r["t"], v, where="post", label=label + (" (0 throughout)" if not np.any(v) else ""), **st)
                else:
                    y = draw_magnitude(ax, r["t"], v, label, st)
                    mark_end(ax, r, r["t"], y, st)
            if counter:
                ax.set_ylim(bottom=-0.5, top=max(1.0, max(float(np.max(v)) for _, v in series) * 1.1 + 0.5))
        panels.append(Panel(extra, f"{extra if counter else '|' + extra + '|'} [{unit}]", draw))
    if not panels:
        return []
    return render(panels, f"{name}: formulation diagnostics (extras/, floor {FLOOR:g})", f"{stem}_extras.png")


def plot_speed_analysis(path, stem):
    """Eigenvalues against speed from /analysis (clmbench analyze --speed --out): the classic bicycle plot of
    [Meijaard-2007], Figure 3 (real parts solid, imaginary parts dashed, stability changes marked)."""
    with h5py.File(path, "r") as f:
        if "analysis" not in f:
            return []
        g = f["analysis"]
        speed = np.asarray(g["speed"][()], dtype=float)
        re = np.asarray(g["eigenvalues_real"][()], dtype=float).reshape(len(speed), -1)
        im = np.asarray(g["eigenvalues_imag"][()], dtype=float).reshape(len(speed), -1)
        problem = text(g.attrs.get("problem", "?"))
        unit = text(g.attrs.get("speed_unit", ""))
        # The computed stability changes (weave_speed, capsize_speed, weave_speed_2 ...); the published values
        # recorded beside them (published_<name>_speed, + _source) are not changes of their own.
        changes = [(k[:-len("_speed")] if k.endswith("_speed") else k, float(g.attrs[k]))
                   for k in g.attrs if (k.endswith("_speed") or "_speed_" in k) and not k.startswith("published_")]
    order = np.argsort(speed, kind="stable")
    speed, re, im = speed[order], re[order], im[order]
    # The file sorts each row by real part; for lines, follow each eigenvalue from speed to speed instead
    # (the permutation closest to the previous row; rows hold few eigenvalues), so crossings draw no jumps.
    ev = re + 1j * im
    if ev.shape[1] <= 6:
        import itertools
        for k in range(1, len(speed)):
            best = min(itertools.permutations(range(ev.shape[1])),
                       key=lambda p: np.sum(np.abs(ev[k, list(p)] - ev[k - 1])))
            ev[k] = ev[k, list(best)]
    re, im = ev.real, ev.imag
    fig, ax = plt.subplots(figsize=(FIG_WIDTH, 4.8))
    for j in range(re.shape[1]):
        ax.plot(speed, re[:, j], "-", color="C0", linewidth=1.4, label="real part" if j == 0 else None)
        ax.plot(speed, np.abs(im[:, j]), "--", color="C1", linewidth=1.0,
                label="imaginary part (abs)" if j == 0 else None)
    ax.axhline(0, color="0.3", linewidth=0.6)
    low = max(np.nanmin(re), -4 * max(1.0, np.nanmax(np.abs(im)), np.nanmax(re)))
    ax.set_ylim(low, max(1.0, np.nanmax(re), np.nanmax(np.abs(im))) * 1.05)
    for k, (name, v) in enumerate(sorted(changes, key=lambda c: c[1])):
        ax.axvline(v, color=f"C{k + 2}", linewidth=1.0, linestyle=":")
        ax.annotate(f"{name} {v:.6g}", (v, ax.get_ylim()[1]), textcoords="offset points", xytext=(3, -12 - 12 * k),
                    fontsize=8, color=f"C{k + 2}")
    ax.set_xlabel(f"speed [{unit}]" if unit else "speed")
    ax.set_ylabel("eigenvalue [1/s]")
    ax.set_title(f"{problem}: eigenvalues of the linearization about steady motion")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(True, linewidth=0.3)
    return [(f"{stem}_eigenvalues.png", fig)]


def is_sweep_file(path):
    """A `clmbench sweep` output (root attribute sweep_config): many runs, compared by work precision."""
    with h5py.File(path, "r") as f:
        return "sweep_config" in f.attrs


def sweep_representatives(path, limit=8):
    """The run ids a sweep's trajectory figure draws: per problem and formulation x integrator, the run that
    finished ok at the tightest tolerance (smallest rtol; smallest dt for fixed-step runs); at most `limit`."""
    best = {}
    for e in load_work_precision(path):
        if e["status"] != "ok":
            continue
        key = (e["problem"], e["params"], e["initial"], curve_label(e))
        knob = e["dt"] if e["fixed"] else e["rtol"]
        if key not in best or knob < best[key][0]:
            best[key] = (knob, e["id"])
    return [run_id for _, run_id in list(best.values())[:limit]]


def build_figures(path, all_runs=False):
    """Every figure for one results file, unsaved: [(png path, matplotlib figure)] (tests inspect them).
    A sweep file gets its work-precision diagrams only, unless all_runs: its tens of runs' time series
    would be pages of unreadable panels (and every sample of every run in memory)."""
    stem = os.path.splitext(path)[0]
    name = os.path.basename(stem)
    with h5py.File(path, "r") as f:
        # An `analyze --out` file holds /analysis alone (no /runs, no /summary).
        analysis_only = "analysis" in f and ("runs" not in f or len(f["runs"]) == 0)
        if analysis_only and "speed" in f["analysis"]:
            return plot_speed_analysis(path, stem)
    sweep = is_sweep_file(path) and not all_runs
    runs = [] if sweep or analysis_only else load_runs(path)
    if sweep:
        note(f"{name}: a sweep file: work-precision, error against time and the trajectories and body velocities "
             "of each method's tightest run (tools/plot.py --all FILE draws every run's time series too)")
    elif not runs and not has_analysis(path):  # an `analyze --out` file has no runs by design
        note(f"{path}: no runs")
    figures = []
    for make in () if not runs else (plot_drift, plot_energy, plot_growth, lambda r, s, n: plot_series(r, s, n, "lambda"),
                 lambda r, s, n: plot_series(r, s, n, "q"), lambda r, s, n: plot_series(r, s, n, "qd"),
                 plot_trajectory, plot_body_velocities, lambda r, s, n: plot_error(r, s, n, path), plot_extras):
        try:
            figures += make(runs, stem, name)
        except Exception as e:  # one plot failing must not cost the others
            note(f"{name}: a plot failed ({type(e).__name__}: {e})")
    try:
        figures += plot_error_vs_reference(path, stem, name)
    except Exception as e:  # one plot failing must not cost the others
        note(f"{name}: the error-against-reference plot failed ({type(e).__name__}: {e})")
    if sweep:
        # The declared points' paths of the tightest run of each method: what the mechanism did, without every
        # run's samples in memory.
        representatives = None
        try:
            representatives = load_runs(path, only=set(sweep_representatives(path)))
            figures += plot_trajectory(representatives, stem, name)
        except Exception as e:  # one plot failing must not cost the others
            note(f"{name}: the trajectory plot failed ({type(e).__name__}: {e})")
        try:  # ... and their declared body velocities
            if representatives:
                figures += plot_body_velocities(representatives, stem, name)
        except Exception as e:
            note(f"{name}: the body-velocity plot failed ({type(e).__name__}: {e})")
    figures += plot_kozlov(path, stem)
    figures += plot_phase_portrait(path, stem)
    try:
        figures += plot_work_precision(path, stem, name)
    except Exception as e:  # one plot failing must not cost the others
        note(f"{name}: the work-precision plot failed ({type(e).__name__}: {e})")
    return figures


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 1
    if "--animate" in argv[1:]:  # an animated GIF of a file's runs instead of the PNGs (tools/animate.py)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import animate
        return animate.main(argv[1:])
    all_runs = "--all" in argv[1:]
    for path in [a for a in argv[1:] if a != "--all"]:
        if not os.path.exists(path):
            print(f"plot.py: error: no such file '{path}'", file=sys.stderr)
            return 1
        try:
            figures = build_figures(path, all_runs)
        except OSError as e:
            print(f"plot.py: error: cannot read '{path}': {e}", file=sys.stderr)
            return 2
        for out, fig in figures:
            # Complete or absent: a PNG is written beside its name and renamed over it once whole.
            tmp = f"{out}.tmp-{os.getpid()}"
            try:
                fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
                os.replace(tmp, out)
            except OSError as e:
                if os.path.exists(tmp):
                    os.remove(tmp)
                print(f"plot.py: error: cannot write '{out}': {e.strerror or e}", file=sys.stderr)
                return 2
            finally:
                plt.close(fig)
            print(f"plot.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
