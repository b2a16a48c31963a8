"""clmbench.load: the runs of any results file (docs/design.md section 5) as objects with the names of a Run."""
import numpy as np

__all__ = ["load", "LoadedRun"]


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _value(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "SO":
            return [_text(x) for x in v.ravel()]
        return v
    if isinstance(v, np.generic):
        return v.item()
    return v


class LoadedRun:
    """One /runs/<id> group read whole: t, q, qd, lam, energy, drift_position (None for Pfaffian problems),
    drift_velocity, drift, lam (lambda_columns), points (point_columns), body_velocities (body_velocity_columns), error_vs_reference, summary (its /summary row, NaN figures as None), attrs, and the names a Run has."""

    def __init__(self, run_id, group, summary):
        self.run_id = run_id
        self.attrs = {k: _value(v) for k, v in group.attrs.items()}
        for name in ("problem", "formulation", "integrator", "status", "message"):
            setattr(self, name, self.attrs.get(name, ""))
        self.params = {k[6:]: v for k, v in self.attrs.items() if k.startswith("param.")}

        def data(name):
            return np.asarray(group[name][()], dtype=float) if name in group else None

        self.t, self.q, self.qd, self.lam = data("t"), data("q"), data("qd"), data("lambda")
        self.energy, self.drift_position, self.drift_velocity = data("energy"), data("drift_position"), data("drift_velocity")
        self.points = data("points")
        self.point_columns = [_text(x) for x in group["points"].attrs.get("columns", [])] if "points" in group else []
        self.body_velocities = data("body_velocities")
        self.body_velocity_columns = ([_text(x) for x in group["body_velocities"].attrs.get("columns", [])]
                                      if "body_velocities" in group else [])
        self.error_vs_reference = data("error_vs_reference")
        self.coordinate_names = [_text(x) for x in group["q"].attrs.get("columns", [])] if "q" in group else []
        self.coordinate_units = [_text(x) for x in group["q"].attrs.get("units", [])] if "q" in group else []
        self.lambda_columns = [_text(x) for x in group["lambda"].attrs.get("columns", [])] if "lambda" in group else []
        self.summary = summary

    @property
    def drift(self):
        """|h(q)| for holonomic problems, |A(q) qd| otherwise."""
        return self.drift_position if self.drift_position is not None else self.drift_velocity

    def __repr__(self):
        return f"<clmbench.LoadedRun {self.run_id}: {self.status}, {len(self.t)} samples>"


def load(path):
    """The runs of a results file, in the order of its /summary (a dict run_id -> LoadedRun keeps that order).
    A file that is not one (not HDF5, damaged, another program's, a run without its datasets) is one ValueError
    naming the file and what is wrong (issue 43: RuntimeError, KeyError, AttributeError, or a run with q = None)."""
    try:
        return _load(path)
    except ValueError:
        raise
    except (OSError, KeyError, AttributeError, TypeError, RuntimeError, IndexError) as e:
        raise ValueError(f"{path}: not a readable clmbench results file ({type(e).__name__}: {e})") from None


# What every run of a results file has (docs/design.md, "Results files").
_RUN_DATASETS = ("t", "q", "qd")


def _load(path):
    import h5py  # only here: the package itself does not need it

    with h5py.File(path, "r") as f:
        if "runs" not in f:
            raise ValueError(f"{path}: not a clmbench results file (no /runs)")
        rows = {}
        if "summary" in f and "run_id" in f["summary"]:
            s = f["summary"]
            ids = [_text(x) for x in s["run_id"][()]]
            for i, run_id in enumerate(ids):
                row = {}
                for column in s:
                    v = _value(s[column][i])
                    row[column] = None if isinstance(v, float) and np.isnan(v) else v
                rows[run_id] = row
        order = list(rows) + [r for r in f["runs"] if r not in rows]
        for r in order:
            if r not in f["runs"]:
                continue
            g = f["runs"][r]
            if not isinstance(g, h5py.Group):
                raise ValueError(f"{path}: /runs/{r} is not a run (not a group)")
            missing = [d for d in _RUN_DATASETS if d not in g] + (["attribute status"] if "status" not in g.attrs else [])
            if missing:
                raise ValueError(f"{path}: /runs/{r} is not a complete run (missing {', '.join(missing)})")
        return {r: LoadedRun(r, f["runs"][r], rows.get(r, {})) for r in order if r in f["runs"]}
