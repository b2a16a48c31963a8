#!/usr/bin/python3
"""Plots a clmbench results file (DESIGN.md section 5b).

    /usr/bin/python3 tools/plot.py results/quickstart.h5 [more.h5 ...]

For each file, one PNG per quantity beside it, one curve per run labelled problem/formulation/integrator:
    <stem>_drift.png    constraint drift |h(q)| and |A(q) qd| against time (log scale)
    <stem>_energy.png   relative energy error |E - E0| / |E0| against time (log scale)
    <stem>_lambda.png   multipliers lambda against time
When the file has /kozlov (clmbench kozlov), also one PNG per study:
    <stem>_kozlov_<study>.png   error_q, error_qd and max |A qd| against N (log-log), the fitted line
                                log10(error) = slope log10(N) + intercept and the slope in the legend
Zeros on log axes are floored at 1e-17 (exact conservation shows as a flat line at the floor); runs
that diverged or failed are drawn up to where they stopped, dashed, with their status in the legend.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FLOOR = 1e-17


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def load_runs(path):
    runs = []
    with h5py.File(path, "r") as f:
        if "runs" not in f:
            raise SystemExit(f"plot.py: error: {path} has no /runs group (not a clmbench results file?)")
        # The order the runs were executed in (h5py lists groups alphabetically).
        order = [text(x) for x in f["summary/run_id"][()]] if "summary/run_id" in f else []
        order = [r for r in order if r in f["runs"]] + sorted(r for r in f["runs"] if r not in order)
        for run_id in order:
            g = f["runs"][run_id]
            a = g.attrs
            run = {
                "id": run_id,
                "label": f"{text(a['problem'])}/{text(a['formulation'])}/{text(a['integrator'])}",
                "status": text(a.get("status", "?")),
                "t": g["t"][()],
                "energy": g["energy"][()],
                "lambda": g["lambda"][()],
                "drift_velocity": g["drift_velocity"][()],
                "drift_position": g["drift_position"][()] if "drift_position" in g else None,
                # Formulation diagnostics (Fernandez-Bloch condition residuals, nullspace re-partitions, ...).
                "extras": {k: g["extras"][k][()] for k in g["extras"]} if "extras" in g else {},
            }
            if run["status"] != "ok":
                run["label"] += f" [{run['status']} at t = {run['t'][-1] if len(run['t']) else 0:g}]"
            run["index"] = len(runs)
            runs.append(run)
    # Same problem/formulation/integrator twice (e.g. two parameter sets): tell them apart by run id.
    labels = [r["label"] for r in runs]
    for r in runs:
        if labels.count(r["label"]) > 1:
            r["label"] += f" ({r['id']})"
    return runs


def floored(values):
    v = np.abs(np.asarray(values, dtype=float))
    return np.where(np.isfinite(v), np.maximum(v, FLOOR), np.nan)


LINESTYLES = ["-", "--", "-.", ":"]


def style(run):
    # Formulations often agree to the last bit (kkt and schur), so curves lie on top of each other:
    # later runs are drawn thinner and in another dash pattern, so every one stays visible.
    i = run["index"]
    s = {"linestyle": LINESTYLES[i % len(LINESTYLES)], "linewidth": max(2.8 - 0.5 * i, 1.3), "color": f"C{i % 10}"}
    if run["status"] != "ok":
        s["linestyle"] = (0, (1, 1))
    return s


def mark_end(ax, run, y):
    """A cross where a diverged or failed run stopped."""
    if run["status"] != "ok" and len(run["t"]):
        ax.plot(run["t"][-1], y[-1], marker="x", markersize=9, color=style(run)["color"])


def place_legend(ax):
    """Inside the axes for a few curves; outside on the right for many, so it never hides the data."""
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) > 5:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=8, loc="best")


def finish(fig, ax, title, path):
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    place_legend(ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def plot_drift(runs, stem, name):
    holonomic = [r for r in runs if r["drift_position"] is not None]
    panels = 2 if holonomic else 1
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.6 * panels), sharex=True, squeeze=False)
    axes = axes[:, 0]
    if holonomic:
        ax = axes[0]
        for r in holonomic:
            y = floored(r["drift_position"])
            zero = " (exactly 0)" if len(y) and np.all(r["drift_position"] == 0) else ""
            ax.semilogy(r["t"], y, label=r["label"] + zero, **style(r))
            mark_end(ax, r, y)
        ax.set_ylabel("position drift |h(q)|")
        ax.set_title(f"{name}: position-level constraint drift (holonomic runs; floor {FLOOR:g})")
        ax.grid(True, alpha=0.3)
        place_legend(ax)
    ax = axes[-1]
    for r in runs:
        y = floored(r["drift_velocity"])
        zero = " (exactly 0)" if len(y) and np.all(r["drift_velocity"] == 0) else ""
        ax.semilogy(r["t"], y, label=r["label"] + zero, **style(r))
        mark_end(ax, r, y)
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("velocity drift |A(q) qd|")
    finish(fig, ax, f"{name}: velocity-level constraint drift (floor {FLOOR:g})", f"{stem}_drift.png")


def plot_energy(runs, stem, name):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for r in runs:
        e = r["energy"]
        if len(e) == 0:
            continue
        scale = max(abs(e[0]), np.finfo(float).eps)
        y = floored((e - e[0]) / scale)
        ax.semilogy(r["t"], y, label=r["label"], **style(r))
        mark_end(ax, r, y)
    ax.set_xlabel("time t [s]")
    ax.set_ylabel("relative energy error |E - E0| / |E0|")
    finish(fig, ax, f"{name}: energy error of the original Lagrangian (floor {FLOOR:g})", f"{stem}_energy.png")


def plot_lambda(runs, stem, name):
    # One panel per problem: multipliers of different mechanisms differ by orders of magnitude.
    problems = []
    for r in runs:
        p = r["label"].split("/")[0]
        if p not in problems:
            problems.append(p)
    fig, axes = plt.subplots(len(problems), 1, figsize=(8, 3.4 * len(problems) + 0.6), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, problem in zip(axes, problems):
        for r in runs:
            if r["label"].split("/")[0] != problem:
                continue
            lam = r["lambda"].reshape(len(r["t"]), -1)
            for j in range(lam.shape[1]):
                suffix = f" lambda[{j}]" if lam.shape[1] > 1 else ""
                st = style(r)
                if lam.shape[1] > 1:
                    st["color"] = f"C{(r['index'] + j) % 10}"
                ax.plot(r["t"], lam[:, j], label=r["label"] + suffix, **st)
                mark_end(ax, r, lam[:, j])
        ax.set_ylabel("lambda [N]")
        ax.set_title(problem)
        ax.grid(True, alpha=0.3)
        place_legend(ax)
    axes[-1].set_xlabel("time t [s]")
    fig.suptitle(f"{name}: constraint multipliers (M qdd + c = F + A^T lambda)")
    fig.tight_layout()
    path = f"{stem}_lambda.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def plot_kozlov(path, stem):
    """Error against N on log-log axes for each /kozlov/<study>, with the least-squares line."""
    with h5py.File(path, "r") as f:
        if "kozlov" not in f:
            return
        for study in f["kozlov"]:
            g = f["kozlov"][study]
            a = g.attrs
            N = g["N"][()]
            status = [text(x) for x in g["status"][()]] if "status" in g else ["ok"] * len(N)
            fitted = text(a.get("fitted_error", "error_q"))
            slope, intercept, resid = float(a["slope"]), float(a["intercept"]), float(a["fit_residual"])
            lo, hi = float(a.get("fit_N_min", 0)), float(a.get("fit_N_max", np.inf))
            fig, ax = plt.subplots(figsize=(7.5, 5.2))
            series = [("error_q", "max |q_N - q_ref|", "o", "C0"), ("error_qd", "max |qd_N - qd_ref|", "s", "C1"),
                      ("constraint_violation", "max |A qd_N|", "^", "C2")]
            for key, label, marker, color in series:
                y = np.asarray(g[key][()], dtype=float)
                ok = np.isfinite(y) & (y > 0)
                mark = " (fitted)" if key == fitted else ""
                ax.loglog(N[ok], y[ok], marker=marker, linestyle="-" if key == fitted else ":", color=color,
                          linewidth=1.8 if key == fitted else 1.0, markersize=7, label=label + mark)
            bad = [n for n, s in zip(N, status) if s != "ok"]
            for n in bad:
                ax.axvline(n, color="red", linestyle="--", alpha=0.5)
            if bad:
                ax.plot([], [], color="red", linestyle="--", label="diverged/failed (excluded): N = "
                        + ", ".join(f"{n:.0e}" for n in bad))
            if np.isfinite(slope):
                y = np.asarray(g[fitted][()], dtype=float)
                inside = (N >= lo) & (N <= hi) & np.isfinite(y) & (y > 0)
                xs = np.logspace(np.log10(N[inside].min()), np.log10(N[inside].max()), 50)
                ax.loglog(xs, 10 ** (intercept + slope * np.log10(xs)), color="black", linestyle="--", linewidth=1.2,
                          label=f"fit to {fitted}: slope {slope:.3f} (residual {resid:.2g})")
            ax.set_xlabel("N (penalty / added-mass coefficient)")
            ax.set_ylabel("max over [0, T] of the error")
            theorem = int(a.get("theorem", 0))
            ax.set_title(f"{study}: Theorem {theorem}, {text(a['problem'])}\n"
                         f"{text(a['limit_formulation'])} ({text(a.get('limit_integrator', '?'))}) -> "
                         f"{text(a['reference_formulation'])}, T = {float(a.get('t_end', np.nan)):g}", fontsize=10)
            ax.grid(True, which="both", alpha=0.25)
            ax.legend(fontsize=8, loc="lower left")
            fig.tight_layout()
            out = f"{stem}_kozlov_{study}.png"
            fig.savefig(out, dpi=120)
            plt.close(fig)
            print(f"plot.py: wrote {out}")


def plot_extras(runs, stem, name):
    """One panel per formulation diagnostic (absolute value, log scale), one curve per run that has it."""
    names = sorted({k for r in runs for k in r["extras"]})
    if not names:
        return
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 3.2 * len(names) + 0.4), sharex=True, squeeze=False)
    for ax, extra in zip(axes[:, 0], names):
        series = [(r, np.asarray(r["extras"][extra], dtype=float)) for r in runs
                  if extra in r["extras"] and len(r["extras"][extra]) == len(r["t"])]
        # Counters (e.g. nullspace re-partitions) are whole numbers: a linear step plot, not a log scale.
        counter = all(np.all(np.isfinite(v) & (v == np.round(v)) & (v >= 0)) for _, v in series)
        for r, v in series:
            label = r["label"] + f" ({r['id']})" * (r["id"] not in r["label"])
            if counter:
                ax.step(r["t"], v, where="post", label=label + (" (0 throughout)" if not np.any(v) else ""), **style(r))
            else:
                y = floored(v)
                ax.semilogy(r["t"], y, label=label, **style(r))
                mark_end(ax, r, y)
        if counter:
            ax.set_ylim(bottom=-0.5, top=max(1.0, max(float(np.max(v)) for _, v in series) * 1.1 + 0.5))
        ax.set_ylabel(extra if counter else f"|{extra}|")
        ax.set_title(extra)
        ax.grid(True, alpha=0.3)
        place_legend(ax)
    axes[-1, 0].set_xlabel("time t [s]")
    fig.suptitle(f"{name}: formulation diagnostics (extras/, floor {FLOOR:g})")
    fig.tight_layout()
    path = f"{stem}_extras.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 1
    for path in argv[1:]:
        if not os.path.exists(path):
            print(f"plot.py: error: no such file '{path}'", file=sys.stderr)
            return 1
        runs = load_runs(path)
        stem = os.path.splitext(path)[0]
        name = os.path.basename(stem)
        plot_drift(runs, stem, name)
        plot_energy(runs, stem, name)
        plot_lambda(runs, stem, name)
        plot_extras(runs, stem, name)
        plot_kozlov(path, stem)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
