#!/usr/bin/python3
"""Regenerates results/REPORT.md from the results files of the shipped experiments.

    tools/report.py [--run] [--results DIR] [--binary PATH] [--out FILE]

--run        first runs every shipped experiment (clmbench run / kozlov / sweep into DIR, then tools/plot.py
             on each file); without it the report is made from the .h5 files already in DIR
--results    where the .h5 and .png files are (default results/)
--binary     the clmbench to run (default build/clmbench)
--out        the report (default DIR/REPORT.md)

Every number in the report is read from the HDF5 files (docs/design.md section 5): /summary, /runs/<id>
and /kozlov/<study>; nothing is typed in. A file that is missing gives its section a one-line note instead
of a table; a figure that cannot be computed is "-". The discussion of what the numbers mean, which does
not change from run to run, is docs/findings.md.

Run it directly (the shebang is the system interpreter, which has h5py and numpy; see tools/plot.py).
"""
import argparse
import math
import os
import subprocess
import sys

try:
    import numpy as np
    import h5py
except ImportError as error:
    print(f"report.py: error: Python module '{error.name}' is missing for {sys.executable}; run tools/setup.sh "
          "and call tools/report.py directly", file=sys.stderr)
    sys.exit(1)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KOZLOV_STUDIES = ["friction_sleigh", "friction_skate", "friction_disk",
                  "added_mass_sleigh", "added_mass_skate", "added_mass_disk", "added_mass_skate_flat"]
# The published-benchmark experiments (run files) and the bicycle's speed analysis, in the report's order.
PUBLISHED_RUNS = [("andrews", "Andrews' squeezer, Bari test set (t = 0.03)"),
                  ("car_axis", "car axis, Bari test set (t = 3)"),
                  ("iftomm_pendulum", "IFToMM A01 simple pendulum (P1)"),
                  ("iftomm_n_four_bar", "IFToMM A02 N-four-bar, 40 loops (B0)"),
                  ("iftomm_bricard", "IFToMM A04 Bricard's mechanism (P3)")]
WP_TARGETS = [1e-2, 1e-4, 1e-6, 1e-8, 1e-10]


# ---------------------------------------------------------------------------------------------- reading

def text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray) and v.shape == ():
        return text(v[()])
    return str(v)


def fmt(x, digits=2):
    """A number for a table: '-' for NaN / missing, else %.{digits}e (plain for small integers)."""
    if x is None:
        return "-"
    try:
        x = float(x)
    except (TypeError, ValueError):
        return text(x)
    if not math.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.{digits}e}"


def fixed(x, digits=4):
    if x is None or not math.isfinite(float(x)):
        return "-"
    x = float(x)
    return f"{0.0 if abs(x) < 0.5 * 10 ** -digits else x:.{digits}f}"  # no "-0.00"


def summary_rows(f):
    """The /summary table as a list of dicts (column -> value), one per run."""
    if "summary" not in f:
        return []
    s = f["summary"]
    cols = {k: s[k][()] for k in s if isinstance(s[k], h5py.Dataset)}
    n = len(next(iter(cols.values()))) if cols else 0
    rows = []
    for i in range(n):
        rows.append({k: (text(v[i]) if v.dtype.kind in "OSU" else float(v[i])) for k, v in cols.items()})
    return rows


def run_attr(f, run_id, key, default=None):
    a = f["runs"][run_id].attrs
    if key not in a:
        return default
    v = a[key]
    if isinstance(v, (bytes, str)) or (isinstance(v, np.ndarray) and v.dtype.kind in "OSU"):
        return text(v)
    return float(np.asarray(v).ravel()[0]) if np.asarray(v).size == 1 else np.asarray(v)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def png_link(results, name, label):
    return f"[{label}]({name})" if os.path.exists(os.path.join(results, name)) else f"{label} (not drawn)"


def plots_line(results, prefix, kinds):
    """'Plots: a, b.' linking results/<prefix><kind>.png for each kind, labelled with the kind."""
    return "Plots: " + ", ".join(png_link(results, f"{prefix}{k}.png", k) for k in kinds) + "."


CURRENT_FILE = [""]  # the file a section is reading, for the note when it turns out to be damaged


def open_results(results, name):
    path = os.path.join(results, name)
    CURRENT_FILE[0] = name
    if not os.path.exists(path):
        return None, f"*{name} is missing: run `tools/report.py --run` (or the command above) to make it.*"
    try:
        return h5py.File(path, "r"), None
    except OSError as e:
        return None, f"*{name} cannot be read ({e}).*"


def family(results, prefix):
    """The names of results/<prefix>*.h5, sorted (the work-precision and long-time families)."""
    return sorted(n for n in os.listdir(results) if n.startswith(prefix) and n.endswith(".h5")) \
        if os.path.isdir(results) else []


def opened(results, names):
    """(name, file or None, note), each file opened when its turn comes (CURRENT_FILE names the one read)."""
    for name in names:
        f, missing = open_results(results, name)
        yield name, f, missing


def open_section_file(results, name, out):
    """results/<name> opened for a section, or None with the note why not added to out."""
    f, missing = open_results(results, name)
    if f is None:
        out += ["", missing]
    return f


def opened_family(results, prefix, out):
    """(name, file) of each results/<prefix>*.h5 that opens; the note for one that does not, or for there being
    none, goes into out."""
    files = family(results, prefix)
    if not files:
        out += ["", f"*No results/{prefix}*.h5: run `tools/report.py --run`.*"]
    for name, f, missing in opened(results, files):
        if f is None:
            out += ["", missing]
            continue
        yield name, f


def provenance(f):
    return f"clmbench {text(f.attrs.get('clmbench_version', '?'))}, commit {text(f.attrs.get('git_commit', '?'))[:12]}"


# ---------------------------------------------------------------------------------------------- sections

def section_quickstart(results):
    out = ["## Quick start", "",
           "`build/clmbench run experiments/quickstart.ini` (results/quickstart.h5). error vs reference is the "
           "max distance in q from the closed-form motion where the problem has one, else \"-\"."]
    f = open_section_file(results, "quickstart.h5", out)
    if f is None:
        return out
    rows = []
    for r in summary_rows(f):
        rows.append([r["run_id"], r["problem"], r["formulation"], r["integrator"], r["status"],
                     fmt(r.get("max_drift_position")), fmt(r.get("max_drift_velocity")),
                     fmt(r.get("max_rel_energy_error")), fmt(r.get("error_vs_reference")),
                     fmt(r.get("steps")), f"{r.get('wall_time_s', float('nan')):.4f}"])
    out += ["", f"From {provenance(f)}:", "",
            table(["run", "problem", "formulation", "integrator", "status", "max drift h", "max drift A qd",
                   "max rel. energy error", "error vs reference", "steps", "wall s"], rows),
            "", plots_line(results, "quickstart_", ["q", "trajectory", "drift", "energy", "lambda", "difference"])]
    return out


def section_kozlov(results):
    out = ["## Kozlov's limit theorems", "",
           "`build/clmbench kozlov experiments/kozlov_<study>.ini` per study. The fit is log10(error) = slope "
           "log10(N) + intercept by least squares over the N of the study, error = max over the sample grid of "
           "|q_N(t_k) - q_ref(t_k)| (docs/findings.md discusses what the slopes show)."]
    for theorem, title in [(1, "Theorem 1: anisotropic friction -> nonholonomic motion"),
                           (2, "Theorem 2: added masses -> vakonomic motion")]:
        rows, slopes, integrator = [], [], "-"
        notes = []
        for study in KOZLOV_STUDIES:
            f, missing = open_results(results, f"kozlov_{study}.h5")
            if f is None:
                notes.append(missing)
                continue
            if "kozlov" not in f or study not in f["kozlov"]:
                notes.append(f"*kozlov_{study}.h5 holds no /kozlov/{study}.*")
                continue
            g = f["kozlov"][study]
            if int(g.attrs.get("theorem", 0)) != theorem:
                continue
            N, err, steps = g["N"][()], g["error_q"][()], g["steps"][()]
            slope = float(g.attrs["slope"])
            slopes.append(slope)
            integrator = text(g.attrs.get("limit_integrator", "-"))
            rows.append([study, text(g.attrs["problem"]), fixed(slope), fixed(g.attrs["intercept"]),
                         fmt(g.attrs["fit_residual"]), f"{N.min():.0e} .. {N.max():.0e}",
                         fmt(err[np.argmax(N)]), f"{steps[np.argmin(N)]} / {steps[np.argmax(N)]}"])
        out += ["", f"### {title}", ""]
        if rows:
            out.append(table(["study", "problem", "slope", "intercept", "fit residual", "N range",
                              "error_q at largest N", f"{integrator} steps smallest / largest N"], rows))
            worst = max(abs(s + 1) for s in slopes)
            out += ["", f"All {len(slopes)} slopes are within {worst:.3f} of -1: the error falls like 1/N, "
                        "as the theorem states." if worst < 0.05 else
                        f"The slopes are up to {worst:.3f} away from -1: not the theorem's 1/N rate."]
            out += ["", "Plots: " + ", ".join(png_link(results, f"kozlov_{s}_kozlov_{s}.png", s)
                                              for s in KOZLOV_STUDIES if int(theorem) == (1 if s.startswith("friction") else 2)) + "."]
        out += [""] + notes if notes else []
    return out


def section_published(results):
    out = ["## Published benchmarks", "",
           "`build/clmbench run experiments/<benchmark>.ini` per benchmark (the run also prints every component "
           "beside the published value with the digits matched). reference: what the errors are measured "
           "against (`published`: the benchmark's own values at the default parameters; `closed_form`; "
           "`reference_run`: the experiment's [reference] run). scd and mescd are the Bari test set's digit counts "
           "over (q, qd) at t_end against its published values (\"-\" against a computed reference, where the "
           "maximum q error is the measure); the reference-point error is the IFToMM accuracy measure (limits 1e-1 and "
           "1e-3 m). docs/findings.md discusses how accurate the published Andrews values are."]
    rows, notes = [], []
    for stem, title in PUBLISHED_RUNS:
        f, missing = open_results(results, f"{stem}.h5")
        if f is None:
            notes.append(missing)
            continue
        for r in summary_rows(f):
            # scd and mescd are the test set's measures against its published values; against a computed
            # reference a component that is zero in the exact motion (Bricard's symmetric coordinates) is
            # rounding in the reference, and its "relative error" says nothing: those runs show "-".
            published = r.get("reference_source") == "published"
            rows.append([title, r["run_id"], r["formulation"], r["integrator"], r["status"],
                         r.get("reference_source", "-"), fixed(r.get("scd"), 2) if published else "-",
                         fixed(r.get("mescd"), 2) if published else "-",
                         fmt(r.get("q_error_max")), fmt(r.get("reference_point_error_max")),
                         fmt(r.get("cpu_time_s"))])
    if rows:
        out += ["", table(["benchmark", "run", "formulation", "integrator", "status", "reference", "scd", "mescd",
                           "max q error", "reference-point error", "CPU s"], rows)]
    out += [""] + notes if notes else []
    out += ["", "### Whipple bicycle: stability changes against speed", "",
            "`build/clmbench analyze --problem bicycle --speed 0:10:0.1 --out results/bicycle_speeds.h5`: the "
            "speeds where an eigenvalue of the linearized lean / steer equations crosses the imaginary axis, "
            "bisected, beside the values [Meijaard-2007] publishes."]
    f = open_section_file(results, "bicycle_speeds.h5", out)
    if f is None:
        return out
    a = f["analysis"].attrs
    speed_rows = []
    for key in sorted(k for k in a if k.endswith("_speed") and not k.startswith("published_")):
        computed = float(a[key])
        published = float(a[f"published_{key}"]) if f"published_{key}" in a else None
        digits = (-math.log10(abs(computed - published) / abs(published)) if published and computed != published
                  else (math.inf if published else None))
        speed_rows.append([key.replace("_", " "), f"{computed:.14g}", f"{published:.15g}" if published else "-",
                           ("exact" if digits == math.inf else f"{digits:.1f}") if digits is not None else "-"])
    out += ["", table(["stability change", "computed (m/s)", "published (m/s)", "digits matched"], speed_rows),
            "", "Plot: " + png_link(results, "bicycle_speeds_eigenvalues.png", "eigenvalues against speed") + "."]
    return out


def run_pairs(f, suffix, partner_suffix):
    """(run id, run, partner run) for each run of f whose id ends in suffix and has a partner: the same id with
    partner_suffix instead."""
    runs = f["runs"]
    for rid in runs:
        partner = rid[:-len(suffix)] + partner_suffix
        if rid.endswith(suffix) and partner in runs:
            yield rid, runs[rid], runs[partner]


def max_norm_diff(a, b):
    """Per sample, max over the coordinates of |a - b| (over the samples both runs have)."""
    k = min(len(a), len(b))
    return np.max(np.abs(a[:k] - b[:k]), axis=1) if k else np.array([])


def two_norm_diff(a, b):
    """Per sample, the Euclidean norm of a - b over the coordinates (metres and radians together)."""
    k = min(len(a), len(b))
    return np.linalg.norm(a[:k] - b[:k], axis=1) if k else np.array([])


def section_vakonomic(results):
    out = ["## Vakonomic vs nonholonomic motion", "",
           "`build/clmbench run experiments/vakonomic_vs_nonholonomic.ini`: the same initial data under kkt "
           "(nonholonomic) and vakonomic; |dq| is the Euclidean norm of q_vak - q_kkt over the coordinates (metres and "
           "radians together), its maximum over the samples."]
    f = open_section_file(results, "vakonomic_vs_nonholonomic.h5", out)
    if f is None:
        return out
    rows = []
    for rid, a, b in run_pairs(f, "_kkt", "_vakonomic"):
        dq = two_norm_diff(a["q"][()], b["q"][()])
        dqd = two_norm_diff(a["qd"][()], b["qd"][()])
        t = a["t"][()][:len(dq)]
        above = np.nonzero(dq > 1e-2)[0]
        rows.append([text(a.attrs["problem"]), "holonomic" if run_attr(f, rid, "holonomic", 0) else "nonholonomic",
                     fmt(dq.max() if len(dq) else None), fmt(dqd.max() if len(dqd) else None),
                     f"{t[above[0]]:.2f}" if len(above) else "never", f"{t[-1]:g}" if len(t) else "-"])
    return out + ["", table(["problem", "constraint", "max abs(dq)", "max abs(dqd)",
                             "first t with abs(dq) > 1e-2", "t_end"], rows)]


def section_fernandez_bloch(results):
    out = ["## Fernandez-Bloch restricted Lagrangian", "",
           "`build/clmbench run experiments/fernandez_bloch.ini`: the restricted flow (fernandez_bloch) against "
           "kkt from the same data, the condition residuals of [seed-003] (extras fb_condition_1, fb_condition_2) "
           "and the constraint drift |A qd|, also started 1e-6 off the constraint (*_off runs)."]
    f = open_section_file(results, "fernandez_bloch.h5", out)
    if f is None:
        return out
    runs = f["runs"]
    rows = []
    for rid, fb, kkt in run_pairs(f, "_fb", "_kkt"):
        t = fb["t"][()]
        dq = max_norm_diff(fb["q"][()], kkt["q"][()])
        at = []
        for T in (1.0, 5.0, 10.0):
            k = np.searchsorted(t[:len(dq)], T - 1e-9)
            at.append(fmt(dq[k]) if k < len(dq) else "-")
        cond = []
        for c in ("fb_condition_1", "fb_condition_2"):
            if "extras" in fb and c in fb["extras"]:
                v = fb["extras"][c][()]
                k = int(np.nanargmax(v))
                cond.append(f"{fmt(v[k])} (t = {t[k]:.2f})")
            else:
                cond.append("-")
        off = runs.get(rid + "_off")
        drift = fmt(fb["drift_velocity"][()].max()) + " / " + (fmt(off["drift_velocity"][()].max()) if off else "-")
        rows.append([text(fb.attrs["problem"]), " / ".join(at), cond[0], cond[1], drift])
    return out + ["", table(["problem", "abs(q_fb - q_kkt) at t = 1 / 5 / 10", "condition 1 max (at)",
                             "condition 2 max (at)", "max abs(A qd), on C / 1e-6 off"], rows),
                  "", "Plots: " + png_link(results, "fernandez_bloch_drift.png", "constraint drift") + ", " +
                  png_link(results, "fernandez_bloch_extras.png", "condition residuals") + "."]


def wp_points(f):
    """Per problem, per (formulation, integrator): (knob, error, cpu, rhs, status) of every run."""
    rows = summary_rows(f)
    err_key = next((k for k in ("q_error_max", "error_vs_reference") if rows and k in rows[0]), None)
    cpu_key = next((k for k in ("cpu_time_s", "wall_time_s") if rows and k in rows[0]), None)
    out = {}
    for r in rows:
        rid = r["run_id"]
        adaptive = not bool(run_attr(f, rid, "fixed_step", 0)) and r["integrator"] in ("dopri5", "radau5", "cvode", "ida")
        knob = f"rtol {run_attr(f, rid, 'rtol'):g}" if adaptive else f"dt {run_attr(f, rid, 'dt'):g}"
        # A projected run is another method than the same formulation without projection (tools/plot.py's
        # curve_label does the same): kkt + dopri5 with and without projection share one sweep.
        projection = run_attr(f, rid, "formulation.projection", "none")
        projection = projection.decode() if isinstance(projection, bytes) else str(projection)
        form = r["formulation"] + (f" + projection ({projection})" if projection not in ("none", "") else "")
        out.setdefault(r["problem"], {}).setdefault((form, r["integrator"]), []).append(
            dict(knob=knob, error=r.get(err_key, float("nan")) if err_key else float("nan"),
                 cpu=r.get(cpu_key, float("nan")) if cpu_key else float("nan"),
                 rhs=r.get("rhs_evals", float("nan")), status=r["status"]))
    return out, err_key, cpu_key


def section_work_precision(results):
    out = ["## Work-precision", "",
           "`build/clmbench sweep experiments/wp_<mechanism>.ini` per mechanism: formulations x integrators x "
           "tolerances (fixed-step methods: step sizes), every run's error against the reference (closed form, or "
           "a reference run at tight tolerance) and its cost. For each accuracy target the cheapest combination "
           "whose error reaches it (CPU time of the run), and the runner-up."]
    for name, f in opened_family(results, "wp_", out):
        points, err_key, cpu_key = wp_points(f)
        stem = name[:-3]
        for problem, curves in points.items():
            n_runs = sum(len(v) for v in curves.values())
            failed = sum(1 for v in curves.values() for p in v if p["status"] != "ok")
            out += ["", f"### {problem} ({name}: {n_runs} runs, {failed} not ok; error = {err_key or '-'}, "
                        f"cost = {cpu_key or '-'})", ""]
            rows = []
            for target in WP_TARGETS:
                reach = []
                for (form, integ), pts in curves.items():
                    ok = [p for p in pts if p["status"] == "ok" and math.isfinite(p["error"])
                          and p["error"] <= target and math.isfinite(p["cpu"])]
                    if ok:
                        best = min(ok, key=lambda p: p["cpu"])
                        reach.append((best["cpu"], f"{form} x {integ}", best))
                reach.sort(key=lambda x: x[0])
                if not reach:
                    rows.append([f"{target:.0e}", "none reaches it", "-", "-", "-"])
                    continue
                cpu, combo, p = reach[0]
                second = f"{reach[1][1]} ({reach[1][0] / cpu:.1f}x)" if len(reach) > 1 else "-"
                rows.append([f"{target:.0e}", f"**{combo}** ({p['knob']})", f"{cpu * 1e3:.3g} ms",
                             fmt(p["error"]), second])
            out.append(table(["error target", "cheapest", "cost", "its error", "runner-up (cost ratio)"], rows))
            out += ["", plots_line(results, f"{stem}_work_precision_", ("cpu", "rhs"))]
    return out


def growth_word(p):
    """What a growth exponent says (runs/growth_envelope.hpp): the nearest of the textbook cases."""
    if p is None or not math.isfinite(p):
        return "-"
    if p < 0.25:
        return "bounded"
    if p < 0.75:
        return "random walk"
    if p < 1.5:
        return "linear"
    return "faster than linear"


def section_long_time(results):
    out = ["## Long-time behaviour", "",
           "`build/clmbench run experiments/long_time_<mechanism>.ini` per mechanism: one long run per integrator "
           "family (all through kkt; rk4 + projection = both/velocity, rk4 + Baumgarte, and the methods that keep the "
           "constraints themselves). p is the slope of the running maximum of the relative energy error (p_E) and of "
           "the constraint drift (p_drift: |h| for holonomic problems, |A qd| otherwise) against time on log-log axes "
           "over the run's last two decades (/summary energy_error_growth, drift_growth): about 0 bounded, 1/2 a "
           "random walk, 1 linear drift."]
    for name, f in opened_family(results, "long_time_", out):
        rows_in = summary_rows(f)
        if not rows_in:
            out += ["", f"*{name} has no runs.*"]
            continue
        first = rows_in[0]
        out += ["", f"### {first['problem']}, t_end = {fmt(first.get('t_end'))} s ({name}; {provenance(f)})", ""]
        rows = []
        for r in rows_in:
            holo = math.isfinite(r.get("max_drift_position", float("nan")))
            proj = run_attr(f, r["run_id"], "formulation.projection", "none")
            alpha = run_attr(f, r["run_id"], "formulation.baumgarte_alpha", 0.0) or 0.0
            knobs = ([f"projection {proj}"] if proj not in (None, "none") else []) + \
                    ([f"Baumgarte {fmt(alpha)}"] if alpha else [])
            method = r["integrator"] + (f" ({', '.join(knobs)})" if knobs else "")
            pe, pd = r.get("energy_error_growth"), r.get("drift_growth")
            rows.append([r["run_id"], method, r["status"], fmt(r.get("max_rel_energy_error")),
                         f"{fixed(pe, 2)} ({growth_word(pe)})",
                         fmt(r.get("max_drift_position") if holo else r.get("max_drift_velocity")),
                         f"{fixed(pd, 2)} ({growth_word(pd)})", fmt(r.get("error_vs_reference")),
                         fmt(r.get("steps")), f"{r.get('cpu_time_s', float('nan')):.3g}"])
        out.append(table(["run", "integrator", "status", "max rel. energy error", "p_E", "max drift", "p_drift",
                          "error vs reference", "steps", "cpu s"], rows))
        stem = name[:-3]
        out += ["", plots_line(results, f"{stem}_", ("growth", "energy", "drift"))]
    return out


# ---------------------------------------------------------------------------------------------- running

def experiments():
    """(output file, command) of every shipped experiment, in the order of the report."""
    items = [("quickstart.h5", ["run", "experiments/quickstart.ini"])]
    items += [(f"kozlov_{s}.h5", ["kozlov", f"experiments/kozlov_{s}.ini"]) for s in KOZLOV_STUDIES]
    items += [("vakonomic_vs_nonholonomic.h5", ["run", "experiments/vakonomic_vs_nonholonomic.ini"]),
              ("fernandez_bloch.h5", ["run", "experiments/fernandez_bloch.ini"])]
    items += [(f"{stem}.h5", ["run", f"experiments/{stem}.ini", "--progress", "never"]) for stem, _ in PUBLISHED_RUNS]
    items.append(("bicycle_speeds.h5", ["analyze", "--problem", "bicycle", "--speed", "0:10:0.1"]))
    for n in sorted(os.listdir(os.path.join(ROOT, "experiments"))):
        if n.startswith("wp_") and n.endswith(".ini"):
            items.append((n[:-4] + ".h5", ["sweep", f"experiments/{n}"]))
    for n in sorted(os.listdir(os.path.join(ROOT, "experiments"))):
        if n.startswith("long_time_") and n.endswith(".ini"):
            items.append((n[:-4] + ".h5", ["run", f"experiments/{n}", "--progress", "never"]))
    return items


def run_all(binary, results):
    os.makedirs(results, exist_ok=True)
    failures = 0
    for out, command in experiments():
        path = os.path.join(results, out)
        cmd = [binary] + command + ["--out", path]
        print("report.py: " + " ".join(cmd), flush=True)
        if subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL).returncode != 0:
            print(f"report.py: warning: {' '.join(command)} failed; its section will say so", file=sys.stderr)
            failures += 1
            continue
        subprocess.run([os.path.join(ROOT, "tools", "plot.py"), path], cwd=ROOT, stdout=subprocess.DEVNULL)
    return failures


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="store_true", help="run the shipped experiments first")
    p.add_argument("--results", default=os.path.join(ROOT, "results"))
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "clmbench"))
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    if a.run:
        if not os.access(a.binary, os.X_OK):
            print(f"report.py: error: no clmbench at {a.binary}: build first (tools/build.sh)", file=sys.stderr)
            return 1
        run_all(a.binary, a.results)
    lines = ["# clmbench: the shipped experiments, measured", "",
             "Generated by `tools/report.py` from the results files in this directory (regenerate everything: "
             "`tools/build.sh && tools/report.py --run`). Numbers are read from the HDF5 files; \"-\" is a figure "
             "that cannot be computed. What the numbers mean: [docs/findings.md](../docs/findings.md)."]
    for section in (section_quickstart, section_kozlov, section_published, section_vakonomic,
                    section_fernandez_bloch, section_work_precision, section_long_time):
        try:
            lines += [""] + section(a.results)
        except (OSError, KeyError, ValueError, IndexError) as e:  # a damaged or foreign file: say so, go on
            title = section.__name__.replace("section_", "").replace("_", " ")
            lines += ["", f"## {title}", "", f"*This section could not be made: {CURRENT_FILE[0]} cannot be read "
                                              f"({type(e).__name__}: {e}).*"]
            print(f"report.py: warning: {title}: {e}", file=sys.stderr)
    out = a.out or os.path.join(a.results, "REPORT.md")
    # Complete or absent: written beside the report and renamed over it only when the write succeeded.
    tmp = out + ".tmp"
    try:
        with open(tmp, "w") as fh:
            fh.write("\n".join(lines) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        print(f"report.py: error: cannot write '{out}': {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"report.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
