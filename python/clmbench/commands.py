"""clmbench.sweep, clmbench.kozlov, clmbench.analyze: the commands' own code, in process (docs/python.md).

Each builds the command line's arguments from its keywords, runs the command with the GIL released (progress and
warnings on stderr as the command prints them), raises its errors (ValueError, OSError), and returns what it
wrote: the runs of the results file (clmbench.load), the printed report as `text`.
"""
import os

from . import _clmbench
from .mechanism import Mechanism
from .results import load

__all__ = ["sweep", "kozlov", "analyze", "CommandResult", "AnalysisResult"]


class CommandResult(dict):
    """The runs a command wrote ({run_id: LoadedRun}), with `.text` (what it printed), `.path` (its file) and,
    for kozlov, `.fit` (the study's fitted slope and its attributes)."""

    def __init__(self, runs, text, path, fit=None):
        super().__init__(runs)
        self.text, self.path, self.fit = text, path, fit

    def __repr__(self):
        return f"<clmbench.CommandResult {self.path}: {len(self)} runs>"

    def varied(self):
        """The configuration keys whose values differ between the runs (a sweep's grid axes: formulation,
        integrator, rtol, param.m, ...), in the runs' attribute order."""
        # The option table's attributes and the problem's parameters are configuration; the rest of a run's
        # attributes record what happened (steps, cpu_time_s, ...).
        configuration = {row[6] for row in _clmbench.options()}
        runs = list(self.values())
        keys = []
        for run in runs:
            for k in run.attrs:
                if k not in keys and (k in configuration or k.startswith(("param.", "shape."))):
                    keys.append(k)
        return [k for k in keys if len({repr(r.attrs.get(k)) for r in runs}) > 1]

    def _repr_html_(self):
        """In a notebook (issue 42): one row per run, the varied keys' values first (not "set 1, 2, 3"), then
        status and the figures; '-' where a figure cannot be computed."""
        from . import _figure, _html_escape

        varied = self.varied()
        figures = (("steps", "steps"), ("max_drift_position", "max |h|"), ("max_drift_velocity", "max |A qd + b|"),
                   ("max_rel_energy_error", "max rel. energy error"), ("q_error_max", "max q error vs reference"),
                   ("wall_time_s", "wall time [s]"))
        shown = [(k, label) for k, label in figures if any(k in r.summary for r in self.values())]
        head = "".join(f"<th>{_html_escape(h)}</th>" for h in ["run"] + varied + ["status"] + [l for _, l in shown])
        rows = []
        for run_id, r in self.items():
            status = r.status + (" (" + r.summary["validity"] + ")" if r.summary.get("validity") else "")
            cells = [run_id] + [_figure(r.attrs.get(k)) if not isinstance(r.attrs.get(k), str) else r.attrs.get(k)
                                for k in varied] + [status] + [_figure(r.summary.get(k)) for k, _ in shown]
            rows.append("<tr>" + "".join(f"<td style='text-align:left'>{_html_escape(c)}</td>" for c in cells) + "</tr>")
        title = f"<b>{_html_escape(self.path)}</b>: {len(self)} runs" + (
            f", varied: {_html_escape(', '.join(varied))}" if varied else "")
        return f"<div>{title}<table><tr>{head}</tr>{''.join(rows)}</table></div>"


def _sets(set):
    if set is None:
        return []
    if not isinstance(set, dict):
        raise ValueError("set must be a dict of 'section.key': value")
    from . import _text  # the one conversion of values to config text

    out = []
    for k, v in set.items():
        out += ["--set", f"{k}={_text(v, f'set[{k!r}]')}"]
    return out


def _call(name, args, echo):
    line = "python: clmbench." + name + "(" + " ".join(args) + ")"
    code, text = _clmbench.command(name, args, line)
    if echo and text:
        print(text, end="")
    if code != 0:
        raise RuntimeError(f"clmbench {name} ended with exit code {code}")
    return text


def sweep(config, *, out=None, jobs=None, set=None, resume=False, shard=None, progress="auto", echo=False):
    """Runs the grid of a config's [sweep] (clmbench sweep) into `out` (default as the command's) and returns its
    runs. jobs: runs at once (threads); resume: continue from OUT.parts/; shard: "i/n"."""
    args = [str(config)] + _sets(set) + ["--progress", progress]
    if out is not None:
        args += ["--out", str(out)]
    if jobs is not None:
        # issue 43: jobs="abc" gave int()'s message, jobs=2.7 ran with 2
        import numbers

        whole = isinstance(jobs, numbers.Integral) or (isinstance(jobs, numbers.Real) and float(jobs).is_integer())
        if isinstance(jobs, bool) or not whole:
            raise ValueError(f"clmbench.sweep: jobs = {jobs!r} must be a whole number of runs at once (1 or more)")
        if int(jobs) < 1:
            raise ValueError(f"clmbench.sweep: jobs = {jobs!r} must be 1 or more")
        args += ["--jobs", str(int(jobs))]
    if resume:
        args += ["--resume"]
    if shard is not None:
        args += ["--shard", str(shard)]
    text = _call("sweep", args, echo)
    path = _written(text, out)
    return CommandResult(load(path), text, path)


def kozlov(config, *, out=None, set=None, echo=False):
    """A Kozlov limit study (clmbench kozlov): the runs, the printed table (`text`) and the fit (`fit`: slope,
    intercept, residual, ... as the file's /kozlov/<study> attributes)."""
    args = [str(config)] + _sets(set)
    if out is not None:
        args += ["--out", str(out)]
    text = _call("kozlov", args, echo)
    path = _written(text, out)
    import h5py

    fit = {}
    with h5py.File(path, "r") as f:
        if "kozlov" in f:
            for study in f["kozlov"]:
                g = f["kozlov"][study]
                fit[study] = {k: (v.decode() if isinstance(v, bytes) else (v.item() if hasattr(v, "item") else v))
                              for k, v in g.attrs.items()}
    if len(fit) == 1:
        fit = next(iter(fit.values()))
    return CommandResult(load(path), text, path, fit)


class AnalysisResult(str):
    """The report `clmbench analyze` prints (this str), with `.data`: what it writes under /analysis (attributes
    such as rank, dof, integrable, verdict, and datasets such as singular_values, eigenvalues_real; docs/design.md
    section 5), as a dict of numbers, text and numpy arrays."""

    data = {}


def analyze(problem, *, param=None, q0=None, qd0=None, equilibrium=False, speed=None, out=None, echo=False):
    """clmbench analyze: the constraint analysis (rank, integrability, accessibility), or with equilibrium=True
    the relative equilibrium's eigenvalues, or with speed=[...] (or "start:stop:step") the speed scan (the
    bicycle's eigenvalues against speed). Returns the report as an AnalysisResult (a str with .data); out= keeps
    the file it wrote (else a temporary one is read and removed)."""
    import tempfile

    import h5py
    import numpy as np

    if isinstance(problem, Mechanism):
        problem = problem.path()
    args = ["--problem", str(problem)]
    from . import _text

    caller = "clmbench.analyze"
    for k, v in (param or {}).items():
        args += ["--param", f"{k}={_text(v, f'param[{k!r}]', caller)}"]
    for name, value in (("q0", q0), ("qd0", qd0)):
        if value is None:
            continue
        # issue 43: analyze(q0="1,0.5") iterated the string's characters
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            raise ValueError(f"{caller}: {name} = {value!r} must be a list of numbers")
        args += ["--" + name, ",".join(_text(x, name, caller, nested=True) for x in value)]
    if equilibrium:
        args += ["--equilibrium"]
    if speed is not None:
        args += ["--speed", speed if isinstance(speed, str) else ",".join(_text(x, "speed", caller, nested=True)
                                                                           for x in speed)]
    with tempfile.TemporaryDirectory() as tmp:
        path = str(out) if out is not None else os.path.join(tmp, "analysis.h5")
        text = _call("analyze", args + ["--out", path], echo)
        data = {}
        with h5py.File(path, "r") as f:
            if "analysis" in f:
                g = f["analysis"]
                for k, v in g.attrs.items():
                    data[k] = v.decode() if isinstance(v, bytes) else (v.item() if isinstance(v, np.generic) else v)
                for k in g:
                    if isinstance(g[k], h5py.Dataset):
                        data[k] = g[k][()]
    if out is None:  # the temporary file is not the user's: its "wrote" line goes with it
        lines = text.splitlines(keepends=True)
        text = "".join(line for line in lines if line.rstrip("\n") != "wrote " + path)
    result = AnalysisResult(text)
    result.data = data
    return result


def _written(text, out):
    """The file a command wrote: `out`, or the one its last 'wrote PATH' line names."""
    if out is not None:
        return str(out)
    for line in reversed(text.splitlines()):
        if line.startswith("wrote "):
            return line[6:].split(" (")[0]
    raise RuntimeError("the command did not say which file it wrote")
