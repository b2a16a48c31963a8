"""clmbench from Python (docs/python.md).

    import clmbench
    r = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=1)
    r.t, r.q, r.qd, r.lam, r.energy, r.drift_velocity    # numpy arrays (views of the run's own buffers)
    r.summary["max_rel_energy_error"], r.attrs["rtol"]   # what a results file records of the run
    r.save("sleigh.h5")                                  # the file `clmbench run` writes for the same config
    clmbench.load("sleigh.h5")["chaplygin_sleigh_kkt_dopri5"].q   # any results file, run by run

The keywords are the config file's keys (one option table, `clmbench options`): every [run] key by name, and
param={...}, q0=[...], qd0=[...], formulation_options={...}, shape={...}, reference=True or {...}. A config
file runs as clmbench.run("exp.ini", set={"run.t_end": 2}). Bad input raises ValueError with the command
line's one-line message, an unwritable output OSError; Ctrl-C stops a run (KeyboardInterrupt, nothing written).
"""
import math

import numpy as np

from . import _clmbench
from .mechanism import Equations, Mechanism
from .results import LoadedRun, load

__all__ = ["run", "terms", "options", "save", "load", "sweep", "kozlov", "analyze", "Mechanism", "Equations", "Run",
           "LoadedRun"]

Run = _clmbench.Run

# (section, key) -> row of the option table, read once from the extension (no list of keys is kept here).
_OPTIONS = {(row[0], row[1]): row for row in _clmbench.options()}
_RUN_KEYS = sorted(key for section, key in _OPTIONS if section == "run")


def options():
    """The option table: [{"section", "key", "type", "default", "unit", "description", "attribute"}]."""
    names = ("section", "key", "type", "default", "unit", "description", "attribute")
    return [dict(zip(names, row)) for row in _clmbench.options()]


def _text(value, where, caller="clmbench.run", nested=False):
    """A keyword's value as the config file would write it (numbers exactly: repr is the shortest round trip).
    caller names the function in messages; a list is flat (issue 43: a 2-D q0 was flattened silently)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{caller}: {where} = {value!r} is not finite")
        return repr(value)
    if isinstance(value, str):
        if "\n" in value:
            raise ValueError(f"{caller}: {where} holds a newline")
        return value
    if hasattr(value, "__iter__"):
        if nested:
            raise ValueError(f"{caller}: {where} is a list of lists: give a flat list of numbers")
        if getattr(value, "ndim", 1) > 1:
            raise ValueError(f"{caller}: {where} has {value.ndim} dimensions: give a flat list of numbers")
        return " ".join(_text(v, where, caller, nested=True) for v in value)
    # numpy scalars and the like
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        raise ValueError(f"{caller}: {where} = {value!r} is not a number, text or list") from None


def _section(keys, section, values, name):
    if values is None:
        return
    if not isinstance(values, dict):
        raise ValueError(f"clmbench.run: {name} must be a dict of key: value")
    # The option table's sections ([formulation], [reference]) are checked here as the config reader checks a file
    # (issue 43: {"NN": 1e8} ran with the default N); [param] and [shape] name the problem's own parameters and
    # coordinates, which the run checks.
    known = sorted(k for s, k in _OPTIONS if s == section)
    for key, value in values.items():
        if known and str(key) not in known:
            raise ValueError(f"clmbench.run: unknown key {key!r} in {name} (the [{section}] keys: {', '.join(known)})")
        keys.setdefault(section, {})[str(key)] = _text(value, f"{name}[{key!r}]")


def run(config=None, *, set=None, param=None, q0=None, qd0=None, formulation_options=None, shape=None,
        reference=None, progress="auto", **run_keys):
    """Runs a configuration as `clmbench run` does and returns its Run (a list of Runs for a file of several).

    config: a config file (INI) or None; set: {"section.key": value} edits of that file (--set);
    run_keys: any [run] key by name (problem, formulation, integrator, t_end, dt, rtol, atol, output_every, ...;
    problem may be a zoo name or a mechanism file's path); param: {name: value}; q0, qd0: initial data;
    formulation_options: [formulation] keys; shape: [shape] coordinate -> function of t; reference: True/False
    ([reference] compute) or a dict of [reference] keys; progress: "auto" | "always" | "never".
    """
    keys = {}
    if isinstance(run_keys.get("problem"), Mechanism):  # given as the file named by its contents
        run_keys = dict(run_keys, problem=run_keys["problem"].path())
    for key, value in run_keys.items():
        if ("run", key) not in _OPTIONS:
            raise ValueError(f"clmbench.run: unknown keyword '{key}' (the [run] keys: {', '.join(_RUN_KEYS)}; "
                             "and param, q0, qd0, formulation_options, shape, reference, set, progress)")
        keys.setdefault("run", {})[key] = _text(value, key)
    _section(keys, "param", param, "param")
    _section(keys, "formulation", formulation_options, "formulation_options")
    _section(keys, "shape", shape, "shape")
    if q0 is not None:
        keys.setdefault("initial", {})["q0"] = _text(q0, "q0")
    if qd0 is not None:
        keys.setdefault("initial", {})["qd0"] = _text(qd0, "qd0")
    if isinstance(reference, bool):
        keys.setdefault("reference", {})["compute"] = _text(reference, "reference")
    else:
        _section(keys, "reference", reference, "reference")
    sets = []
    if set is not None:
        if not isinstance(set, dict):
            raise ValueError("clmbench.run: set must be a dict of 'section.key': value")
        sets = [f"{k}={_text(v, f'set[{k!r}]')}" for k, v in set.items()]
    if config is not None:
        config = str(config)
    command_line = "python: clmbench.run(" + ", ".join(
        [repr(config)] * (config is not None) + [f"{k}={v!r}" for k, v in sorted(run_keys.items())]) + ")"
    runs = _clmbench.run_config(config, sets, keys, progress, command_line)
    return runs[0] if len(runs) == 1 else runs


def terms(problem, q, qd, t=0.0, param=None, formulation=None):
    """The model's terms at one state (q, qd, t), as a run evaluates them (issue 42): a dict of numpy arrays M (n x n),
    c, F (n), A (m x n), Adot_qd (m), h (the position rows), b (the velocity rows' affine term, zeros without time
    dependence) and the numbers T, V, energy. problem: a zoo name, a mechanism file's path or a Mechanism; param:
    {name: value}. With formulation (one whose state is (q, qd): kkt, schur, penalty, added_mass, vakonomic,
    fernandez_bloch), also its qdd and lambda there (M qdd + c = F + A^T lambda for kkt)."""
    from .mechanism import Mechanism

    if isinstance(problem, Mechanism):
        problem = problem.path()
    params = {}
    for k, v in (param or {}).items():
        try:
            params[str(k)] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"clmbench.terms: param {k} = {v!r} must be a number") from None
    vectors = []
    for name, x in (("q", q), ("qd", qd)):
        try:
            vectors.append([float(v) for v in x])
        except (TypeError, ValueError):
            raise ValueError(f"clmbench.terms: {name} = {x!r} must be a list of numbers") from None
    return _clmbench.terms(str(problem), params, vectors[0], vectors[1], float(t), formulation)


def save(runs, path):
    """Writes runs of one clmbench.run call to a results file, as `clmbench run` writes it."""
    if isinstance(runs, Run):
        runs = [runs]
    _clmbench.save(list(runs), str(path))


def _run_save(self, path):
    """Writes this run's results file (the file `clmbench run` writes for the same configuration)."""
    save([self], path)


def _run_repr(self):
    return (f"<clmbench.Run {self.run_id}: {self.status}, {len(self.t)} samples, n = {self.q.shape[1]}, "
            f"m = {self.lam.shape[1]}>")


def _html_escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _figure(value):
    """A figure as the tables show it: '-' where it cannot be computed (None or NaN)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "-" if value is None else str(value)
    return "-" if x != x else f"{x:.3g}"


def _run_png(run):
    """A small figure of the run's energy change and constraint drift over t, as PNG bytes (None without
    matplotlib)."""
    try:
        import io

        from matplotlib.figure import Figure
    except ImportError:
        return None
    # A Figure of its own, not pyplot's: choosing a backend here would switch a notebook's (inline plots after a
    # run's display went nowhere) and pyplot would keep the figure open.
    fig = Figure(figsize=(7.0, 2.4), dpi=80)
    axes = fig.subplots(1, 2)
    e = np.asarray(run.energy, float)
    axes[0].plot(run.t, e - e[0] if e.size else e)
    axes[0].set_xlabel("t [s]")
    axes[0].set_ylabel("E - E(0)")
    drift = run.drift_position if run.drift_position is not None else run.drift_velocity
    if drift is not None:
        d = np.abs(np.asarray(drift, float))
        axes[1].semilogy(run.t, np.where(d > 0, d, np.nan))  # an exact zero (the start) is no point on a log axis
        axes[1].set_ylabel("drift" + (" |h|" if run.drift_position is not None else " |A qd + b|"))
    axes[1].set_xlabel("t [s]")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _run_repr_html(self):
    """A run in a notebook (issue 42): its summary as a table and a small figure of energy and drift."""
    import base64

    s = self.summary
    rows = [("run", self.run_id), ("problem", self.problem), ("formulation", self.formulation),
            ("integrator", self.integrator), ("status", self.status + (f" ({self.message})" if self.message else "")),
            ("samples", len(self.t)), ("n, m", f"{self.q.shape[1]}, {self.lam.shape[1]}")]
    for key, label in (("steps", "steps"), ("max_drift_position", "max drift |h|"),
                       ("max_drift_velocity", "max drift |A qd + b|"), ("max_rel_energy_error", "max relative energy error"),
                       ("q_error_max", "max q error against the reference"), ("wall_time_s", "wall time [s]")):
        if key in s:
            rows.append((label, _figure(s[key])))
    validity = s.get("validity", "")
    if validity:
        rows.append(("validity", validity))
    table = "".join(f"<tr><th style='text-align:left'>{_html_escape(k)}</th><td style='text-align:left'>"
                    f"{_html_escape(v)}</td></tr>" for k, v in rows)
    png = _run_png(self)
    image = f"<img src='data:image/png;base64,{base64.b64encode(png).decode()}'/>" if png else ""
    return f"<div><table>{table}</table>{image}</div>"


def _run_repr_png(self):
    return _run_png(self)


Run._repr_html_ = _run_repr_html
Run._repr_png_ = _run_repr_png
LoadedRun._repr_html_ = _run_repr_html  # a run read from a file displays as a run made here
LoadedRun._repr_png_ = _run_repr_png
Run.save = _run_save
Run.__repr__ = _run_repr
Run.drift = property(lambda self: self.drift_position if self.drift_position is not None else self.drift_velocity,
                     doc="|h(q)| for holonomic problems, |A(q) qd| otherwise")


from .commands import CommandResult, analyze, kozlov, sweep  # noqa: E402 (they use _text above)
