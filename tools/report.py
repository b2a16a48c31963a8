#!/usr/bin/python3
"""A markdown report of clmbench results files: any run or sweep files, or the shipped experiments' REPORT.md.

    tools/report.py FILE.h5 [FILE.h5 ...] [--out REPORT.md]
    tools/report.py [--run] [--results DIR] [--binary PATH] [--out FILE]

With files (any results or sweep file, e.g. a sweep of one's own mechanism file): per file and per problem
(and parameter set, initial data, t_end: the runs that share a reference), for each error target of
WP_TARGETS the cheapest formulation x integrator whose run finished ok with q_error_max at or below it, by
CPU time and by rhs evaluations, with the runner-up; "within timing spread" where the CPU-time margin is
below the spread of the repeated timings (/summary cpu_time_spread); the runs that failed or diverged (status
and message), the runs outside their formulation's validity conditions (/summary validity; never counted as
cheapest: a cell names one that would have been), the long-time growth exponents (energy_error_growth,
drift_growth), and links to the PNGs tools/plot.py wrote beside the file. --out defaults to
<first file's stem>_report.md beside it.

Without files, results/REPORT.md from the shipped experiments:
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


def status_cell(r):
    """A run's status as a table shows it: "ok, flagged" for a run that finished but fails one of its own checks or
    validity conditions (/summary validity), whose one-line reason flagged_notes lists under the table."""
    return "ok, flagged" if r["status"] == "ok" and r.get("validity") else r["status"]


def flagged_notes(rows):
    """The validity line of every flagged run among rows, as notes under a table."""
    return [f"- flagged: {r['run_id']}: {r['validity']}" for r in rows if r["status"] == "ok" and r.get("validity")]


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
    """A markdown table; a '|' inside a cell (a run's message: "|y| exceeded ...") is escaped."""
    def cell(c):
        return str(c).replace("|", "\\|")
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
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
        rows.append([r["run_id"], r["problem"], r["formulation"], r["integrator"], status_cell(r),
                     fmt(r.get("max_drift_position")), fmt(r.get("max_drift_velocity")),
                     fmt(r.get("max_rel_energy_error")), fmt(r.get("error_vs_reference")),
                     fmt(r.get("steps")), f"{r.get('wall_time_s', float('nan')):.4f}"])
    out += ["", f"From {provenance(f)}:", "",
            table(["run", "problem", "formulation", "integrator", "status", "max drift h", "max drift A qd",
                   "max rel. energy error", "error vs reference", "steps", "wall s"], rows),
            *(["", *flagged_notes(summary_rows(f))] if flagged_notes(summary_rows(f)) else []),
            "", plots_line(results, "quickstart_", ["q", "trajectory", "drift", "energy", "lambda", "error_vs_reference"])]
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
            rows.append([title, r["run_id"], r["formulation"], r["integrator"], status_cell(r),
                         r.get("reference_source", "-"), fixed(r.get("scd"), 2) if published else "-",
                         fixed(r.get("mescd"), 2) if published else "-",
                         fmt(r.get("q_error_max")), fmt(r.get("reference_point_error_max")),
                         fmt(r.get("cpu_time_s"))])
            notes += [n.replace("- flagged: ", f"- flagged: {title}, ", 1) for n in flagged_notes([r])]
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


# Their knob is rtol (tools/plot.py's ADAPTIVE); the others' dt.
ADAPTIVE = ("dopri5", "dop853", "vern7", "vern9", "radau5", "cvode", "ida")


def problem_name(problem):
    """A problem as a heading: a zoo name as it is, a mechanism file (PATH@sha256:HEX) by its file name."""
    name = problem.split("@sha256:")[0]
    return os.path.basename(name) if "/" in name or name.endswith(".toml") else name


def combination(f, r):
    """The method a run is a point of: formulation (its N for the limit formulations, projection, Baumgarte gains)
    x integrator, as tools/plot.py's curve_label draws one curve per method: kkt + dopri5 with and without
    projection are two methods in one sweep."""
    rid = r["run_id"]
    form = r["formulation"]
    n = run_attr(f, rid, "formulation.N")
    if form in ("penalty", "added_mass") and isinstance(n, float) and math.isfinite(n):
        form += f" N={n:.0e}"
    projection = run_attr(f, rid, "formulation.projection", "none")
    if projection not in ("none", "", None):
        form += f" + projection ({projection})"
    alpha = run_attr(f, rid, "formulation.baumgarte_alpha", 0.0) or 0.0
    beta = run_attr(f, rid, "formulation.baumgarte_beta", 0.0) or 0.0
    if alpha or beta:
        form += f" + Baumgarte ({alpha:g}, {beta:g})"
    fixed = bool(run_attr(f, rid, "fixed_step", 0)) or r["integrator"] not in ADAPTIVE
    return f"{form} x {r['integrator']}" + (" (fixed step)" if fixed and r["integrator"] in ADAPTIVE else ""), fixed


def knob_of(f, rid, fixed):
    v = run_attr(f, rid, "dt" if fixed else "rtol")
    return f"{'dt' if fixed else 'rtol'} {v:g}" if isinstance(v, float) else "-"


def run_group(f, r):
    """What runs must share to be compared (one reference): problem, parameters, initial data, t_end."""
    a = f["runs"][r["run_id"]].attrs
    params = tuple(sorted((k[6:], run_attr(f, r["run_id"], k)) for k in a if k.startswith("param.")))
    initial = tuple(np.round(np.concatenate([np.asarray(a.get(k, []), dtype=float).ravel() for k in ("q0", "qd0")]), 12))
    return r["problem"], params, initial, r.get("t_end", float("nan"))


def group_titles(keys):
    """A heading per run group: the problem's name, and where one problem has several groups in a file what
    tells them apart (the parameters that differ, t_end, or a set number for initial data)."""
    differ = {}
    for key in keys:
        same = [k for k in keys if k[0] == key[0]]
        differ[key] = [f"{name} = {value:g}" for name, value in key[1] if len({dict(k[1]).get(name) for k in same}) > 1]
        if len({k[3] for k in same}) > 1:
            differ[key].append(f"t_end = {key[3]:g} s")
    titles = {}
    for key in keys:
        same = [k for k in keys if k[0] == key[0]]
        words = differ[key]
        if sum(1 for k in same if differ[k] == words) > 1:  # told apart by their initial data only
            words = words + [f"initial data {same.index(key) + 1}"]
        titles[key] = problem_name(key[0]) + (f" ({', '.join(words)})" if words else "")
    return titles


def wp_points(f):
    """Per run group (problem, parameters, initial data, t_end; headed by group_titles), per method
    (combination): every run's point, {title: {method: [point]}}, and the /summary columns the error and the
    CPU cost were read from. A point: run id, knob (rtol, or dt for fixed-step runs), error, cpu (s), spread and
    repeats of its timing (NaN when not recorded), rhs (evaluations), status, message, validity ("" within the
    conditions), the growth exponents pE and pd, t_reached."""
    rows = summary_rows(f)
    err_key = next((k for k in ("q_error_max", "error_vs_reference") if rows and k in rows[0]), None)
    cpu_key = next((k for k in ("cpu_time_s", "wall_time_s") if rows and k in rows[0]), None)
    nan = float("nan")
    groups = {}
    for r in rows:
        rid = r["run_id"]
        label, fixed = combination(f, r)
        groups.setdefault(run_group(f, r), {}).setdefault(label, []).append(dict(
            id=rid, knob=knob_of(f, rid, fixed), error=r.get(err_key, nan) if err_key else nan,
            cpu=r.get(cpu_key, nan) if cpu_key else nan, spread=r.get("cpu_time_spread", nan),
            repeats=r.get("cpu_time_repeats", nan), rhs=r.get("rhs_evals", nan), status=r["status"],
            message=run_attr(f, rid, "message", ""), validity=r.get("validity", run_attr(f, rid, "validity", "")),
            pE=r.get("energy_error_growth", nan), pd=r.get("drift_growth", nan),
            t_reached=run_attr(f, rid, "t_reached", nan), reference=r.get("reference_source", "-"),
            problem=r["problem"]))
    titles = group_titles(list(groups))
    return {titles[k]: v for k, v in groups.items()}, err_key, cpu_key


COSTS = {"cpu": ("CPU time", "CPU time ratio"), "rhs": ("rhs evaluations", "ratio")}


def cheapest_reaching(curves, target, cost, valid=True):
    """[(cost, method, point)], cheapest first: per method its cheapest run (by cost: "cpu" or "rhs") that
    finished ok with error <= target, among the runs within their formulation's validity conditions (valid) or
    outside them (not valid)."""
    reach = []
    for label, pts in curves.items():
        ok = [p for p in pts if p["status"] == "ok" and bool(p["validity"]) != valid and math.isfinite(p["error"])
              and p["error"] <= target and math.isfinite(p[cost])]
        if ok:
            best = min(ok, key=lambda p: p[cost])
            reach.append((best[cost], label, best))
    return sorted(reach, key=lambda x: x[0])


def ratio_text(ratio):
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.0f}x"


def margin_note(first, second, cost):
    """What the margin of the cheapest over the runner-up says: for CPU time, whether it is within the timing
    spread (ratio < 1 + the larger relative spread (max - min) / min of the two runs' repeated timings; nothing
    when neither spread was recorded); for rhs evaluations, a tie when the counts are equal."""
    ratio = second[0] / first[0] if first[0] > 0 else float("inf")
    if cost == "rhs":
        return "tie" if ratio == 1 else ""
    spreads = [p["spread"] for p in (first[2], second[2]) if math.isfinite(p["spread"])]
    if spreads and ratio < 1 + max(spreads):
        return f"{ratio_text(ratio)}, within timing spread"
    return ""


def cost_text(p, cost):
    if cost == "rhs":
        return fmt(p["rhs"])
    out = f"{p['cpu']:.3g} s" if p["cpu"] >= 1 else f"{p['cpu'] * 1e3:.3g} ms"
    if math.isfinite(p["spread"]):
        out += f" (spread {p['spread']:.0%})"
    elif p["repeats"] == 1:
        out += " (timed once)"
    return out


def wp_table(curves, cost, targets=WP_TARGETS):
    """For each accuracy target, the cheapest method (by cost: "cpu" or "rhs") whose run finished ok with its error
    at or below the target, its cost and error, and the runner-up; runs outside their formulation's validity
    conditions are not counted, and the cell says so when one would have been cheaper."""
    rows = []
    for target in targets:
        reach = cheapest_reaching(curves, target, cost)
        flagged = cheapest_reaching(curves, target, cost, valid=False)
        skipped = ""
        if flagged and (not reach or flagged[0][0] < reach[0][0]):
            skipped = (f"not counted: {flagged[0][1]} ({flagged[0][2]['knob']}), cheaper but outside its "
                       "formulation's validity conditions")
        if not reach:
            rows.append([f"{target:.0e}", "none reaches it" + (f" ({skipped})" if skipped else ""), "-", "-", "-"])
            continue
        best = reach[0]
        notes = [best[2]["knob"]] + ([margin_note(best, reach[1], cost)] if len(reach) > 1 else []) + [skipped]
        second = f"{reach[1][1]} ({ratio_text(reach[1][0] / best[0])})" if len(reach) > 1 and best[0] > 0 else "-"
        rows.append([f"{target:.0e}", f"**{best[1]}** ({'; '.join(n for n in notes if n)})", cost_text(best[2], cost),
                     fmt(best[2]["error"]), second])
    what, ratio = COSTS[cost]
    return table(["error target", f"cheapest by {what}", what, "its error", f"runner-up ({ratio})"], rows)


def section_work_precision(results):
    out = ["## Work-precision", "",
           "`build/clmbench sweep experiments/wp_<mechanism>.ini` per mechanism: formulations x integrators x "
           "tolerances (fixed-step methods: step sizes), every run's error against the reference (closed form, or "
           "a reference run at tight tolerance) and its cost. For each accuracy target the cheapest combination "
           "whose error reaches it (CPU time of the run), and the runner-up; \"within timing spread\" where the "
           "margin is smaller than the spread of the repeated timings."]
    for name, f in opened_family(results, "wp_", out):
        points, err_key, cpu_key = wp_points(f)
        stem = name[:-3]
        for problem, curves in points.items():
            n_runs = sum(len(v) for v in curves.values())
            failed = sum(1 for v in curves.values() for p in v if p["status"] != "ok")
            out += ["", f"### {problem} ({name}: {n_runs} runs, {failed} not ok; error = {err_key or '-'}, "
                        f"cost = {cpu_key or '-'})", "", wp_table(curves, "cpu")]
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


def growth_cell(p):
    """A growth exponent and what it says, "0.02 (bounded)"; "-" when it cannot be computed."""
    return f"{fixed(p, 2)} ({growth_word(p)})" if p is not None and math.isfinite(p) else "-"


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
            rows.append([r["run_id"], method, status_cell(r), fmt(r.get("max_rel_energy_error")),
                         f"{fixed(pe, 2)} ({growth_word(pe)})",
                         fmt(r.get("max_drift_position") if holo else r.get("max_drift_velocity")),
                         f"{fixed(pd, 2)} ({growth_word(pd)})", fmt(r.get("error_vs_reference")),
                         fmt(r.get("steps")), f"{r.get('cpu_time_s', float('nan')):.3g}"])
        out.append(table(["run", "integrator", "status", "max rel. energy error", "p_E", "max drift", "p_drift",
                          "error vs reference", "steps", "cpu s"], rows))
        if flagged_notes(rows_in):
            out += [""] + flagged_notes(rows_in)
        stem = name[:-3]
        out += ["", plots_line(results, f"{stem}_", ("growth", "energy", "drift"))]
    return out


# ---------------------------------------------------------------------------------------------- any results file

# What tools/plot.py writes beside FILE.h5: <stem>_<kind>.png (more pages <stem>_<kind>_2.png ...), in the order a
# report links them.
PLOT_KINDS = ["work_precision_cpu", "work_precision_rhs", "error_vs_reference", "trajectory", "drift", "energy",
              "growth", "lambda", "q", "qd", "body_velocities", "error", "difference", "extras", "kozlov_*",
              "phase_portrait", "eigenvalues"]


def file_plots(path):
    """The PNGs tools/plot.py wrote for the results file path (beside it), in PLOT_KINDS order; not those of
    another results file in the folder whose name extends this one's (wp.h5 beside wp_sleigh.h5)."""
    stem = os.path.splitext(os.path.abspath(path))[0]
    folder, base = os.path.dirname(stem), os.path.basename(stem) + "_"
    names = os.listdir(folder)
    longer = [n[:-3] + "_" for n in names if n.endswith(".h5") and n.startswith(base)]
    found = []
    for n in names:
        if not (n.startswith(base) and n.endswith(".png")) or any(n.startswith(x) for x in longer):
            continue
        kind = n[len(base):-4]
        head, _, page = kind.rpartition("_")
        if head and page.isdigit():  # a further page of a figure
            kind = head
        rank = PLOT_KINDS.index(kind) if kind in PLOT_KINDS else \
            PLOT_KINDS.index("kozlov_*") if kind.startswith("kozlov_") else None
        if rank is not None:
            found.append((rank, n))
    return [os.path.join(folder, n) for _, n in sorted(found)]


def plural(n, word):
    return f"{n} {word}{'s' if n != 1 else ''}"


def method_table(title, header, rows):
    return ["", f"#### {title}", "", table(header, rows)] if rows else []


def group_section(title, curves, err_key):
    """A run group of a results file: work-precision tables by CPU time and by rhs evaluations, the runs that did
    not finish ok, the runs outside their formulation's validity conditions and the long-time growth exponents."""
    points = [p for c in curves.values() for p in c]
    problem = points[0]["problem"]
    counts = {s: sum(1 for p in points if p["status"] == s) for s in ("ok", "diverged", "failed")}
    counts["other"] = len(points) - sum(counts.values())
    flagged = [p for p in points if p["validity"]]
    sources = sorted({p["reference"] for p in points})
    where = problem_name(problem)
    if where != problem:  # a mechanism file: its path (and content hash)
        path, _, sha = problem.partition("@sha256:")
        where = f"mechanism file `{path}`" + (f" (sha256 {sha[:12]})" if sha else "")
    out = ["", f"### {title}", "",
           f"{where}: {plural(len(points), 'run')}, {plural(len(curves), 'method')}; " +
           ", ".join(f"{n} {s}" for s, n in counts.items() if n) +
           (f"; {len(flagged)} outside their formulation's validity conditions" if flagged else "") +
           f". Error = {err_key or '-'} against the reference ({', '.join(sources)})."]
    if any(math.isfinite(p["error"]) for p in points):
        out += ["", "#### Work-precision: cheapest method reaching each error target", "",
                "By CPU time of the integration:", "", wp_table(curves, "cpu"), "",
                "By right-hand-side evaluations:", "", wp_table(curves, "rhs")]
    else:
        out += ["", f"No run has an error against a reference ({err_key or 'no error column'} is \"-\": no closed form "
                    "and no reference run): no work-precision table."]
    not_ok = [p for p in points if p["status"] != "ok"]
    if not_ok:
        out += ["", f"{len(not_ok)} runs that did not finish ok are not counted (below)."]
    method = {p["id"]: label for label, c in curves.items() for p in c}
    out += method_table("Runs that did not finish (not counted)",
                        ["run", "method", "knob", "status", "stopped at t", "message"],
                        [[p["id"], method[p["id"]], p["knob"], f"**{p['status']}**",
                          f"{p['t_reached']:g}" if math.isfinite(p["t_reached"]) else "-",
                          p["message"] or "-"] for p in not_ok])
    out += method_table("Runs outside their formulation's validity conditions (not counted as cheapest)",
                        ["run", "method", "knob", "status", "why"],
                        [[p["id"], method[p["id"]], p["knob"], p["status"], p["validity"]] for p in flagged])
    grown = [p for p in points if math.isfinite(p["pE"]) or math.isfinite(p["pd"])]
    if grown:
        out += method_table("Long-time behaviour: growth exponents (0 bounded, 1/2 random walk, 1 linear)",
                            ["run", "method", "knob", "status", "p_E (energy error)", "p_drift (constraint drift)"],
                            [[p["id"], method[p["id"]], p["knob"], p["status"], growth_cell(p["pE"]), growth_cell(p["pd"])]
                             for p in grown])
    else:
        out += ["", "Long-time behaviour: no run is long enough for growth exponents (energy_error_growth and "
                    "drift_growth are \"-\" for every run; a run needs samples over three decades of time)."]
    return out


def file_section(path, report_dir):
    """One results file of any kind (a run, a sweep, a researcher's mechanism-file sweep): a section per run
    group, and links to the PNGs tools/plot.py wrote for it."""
    name = os.path.basename(path)
    out = [f"## {name}"]
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        return out + ["", f"*{name} cannot be read ({e}).*"]
    with f:
        rows = summary_rows(f)
        counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("ok", "diverged", "failed")}
        flagged = sum(1 for r in rows if r.get("validity"))
        out += ["", f"`{path}`: {provenance(f)}; {plural(len(rows), 'run')}" +
                ("" if not rows else ": " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)) +
                (f"; {flagged} outside their formulation's validity conditions" if flagged else "") + "."]
        if rows:
            out += ["", "A run's CPU time is the minimum of its repeated timings, its spread their relative spread "
                        "(max - min) / min (/summary cpu_time_repeats, cpu_time_spread): a cheapest method whose margin "
                        "over the runner-up is smaller than the larger spread of the two says \"within timing spread\"."
                    if "cpu_time_spread" in rows[0] else
                    "This file records no timing spread (written before repeated timings): CPU-time margins are "
                    "single timings."]
        pngs = file_plots(path)
        out += ["", "Plots: " + ", ".join(f"[{os.path.basename(p)[len(os.path.splitext(name)[0]) + 1:-4]}]"
                                          f"({os.path.relpath(p, report_dir)})" for p in pngs) + "."
                if pngs else f"Plots: none yet (`tools/plot.py {path}` draws them beside the file)."]
        if not rows:
            return out + ["", f"*{name} has no runs (/summary): nothing to tabulate.*"]
        groups, err_key, _ = wp_points(f)
        for title, curves in groups.items():
            out += group_section(title, curves, err_key)
    return out


def files_report(paths, report_dir):
    lines = [f"# clmbench results: {', '.join(os.path.basename(p) for p in paths)}", "",
             f"Generated by `tools/report.py {' '.join(paths)}`. Numbers are read from the HDF5 files (/summary and "
             "/runs/<id>, docs/design.md section 5); \"-\" is a figure that cannot be computed. Per problem (and "
             "parameter set): for each error target the cheapest formulation x integrator whose run finished ok with "
             "max over the samples of |q - q_ref| at or below it, by CPU time and by right-hand-side evaluations, "
             "and the runner-up; runs that failed or diverged, and runs outside their formulation's validity "
             "conditions, are listed and not counted."]
    for path in paths:
        try:
            lines += [""] + file_section(path, report_dir)
        except (OSError, KeyError, ValueError, IndexError) as e:  # a damaged or foreign file: say so, go on
            lines += ["", f"## {os.path.basename(path)}", "",
                      f"*This file could not be tabulated ({type(e).__name__}: {e}).*"]
            print(f"report.py: warning: {path}: {e}", file=sys.stderr)
    return lines


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


def shipped_report(results):
    """results/REPORT.md: the sections of the shipped experiments, read from results/."""
    lines = ["# clmbench: the shipped experiments, measured", "",
             "Generated by `tools/report.py` from the results files in this directory (regenerate everything: "
             "`tools/build.sh && tools/report.py --run`). Numbers are read from the HDF5 files; \"-\" is a figure "
             "that cannot be computed. What the numbers mean: [docs/findings.md](../docs/findings.md)."]
    for section in (section_quickstart, section_kozlov, section_published, section_vakonomic,
                    section_fernandez_bloch, section_work_precision, section_long_time):
        try:
            lines += [""] + section(results)
        except (OSError, KeyError, ValueError, IndexError) as e:  # a damaged or foreign file: say so, go on
            title = section.__name__.replace("section_", "").replace("_", " ")
            lines += ["", f"## {title}", "", f"*This section could not be made: {CURRENT_FILE[0]} cannot be read "
                                              f"({type(e).__name__}: {e}).*"]
            print(f"report.py: warning: {title}: {e}", file=sys.stderr)
    return lines


def write_report(out, lines):
    """Complete or absent: written beside the report and renamed over it only when the write succeeded. The exit
    code: 0, or 2 when it cannot be written."""
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


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", metavar="FILE.h5",
                   help="results or sweep files to report on (without: the shipped experiments' results/REPORT.md)")
    p.add_argument("--run", action="store_true", help="run the shipped experiments first")
    p.add_argument("--results", default=None)
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "clmbench"))
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    if a.files:
        if a.run or a.results:
            p.error("--run and --results make the shipped experiments' report; not with FILE arguments")
        for path in a.files:
            if not os.path.isfile(path):
                print(f"report.py: error: no such file '{path}'", file=sys.stderr)
                return 1
        out = a.out or os.path.splitext(a.files[0])[0] + "_report.md"
        return write_report(out, files_report(a.files, os.path.dirname(os.path.abspath(out))))
    results = a.results or os.path.join(ROOT, "results")
    if a.run:
        if not os.access(a.binary, os.X_OK):
            print(f"report.py: error: no clmbench at {a.binary}: build first (tools/build.sh)", file=sys.stderr)
            return 1
        run_all(a.binary, results)
    return write_report(a.out or os.path.join(results, "REPORT.md"), shipped_report(results))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
