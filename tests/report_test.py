#!/usr/bin/python3
"""Tests of tools/report.py against results files made by the clmbench binary.

    /usr/bin/python3 tests/report_test.py build/clmbench

Runs the shipped quickstart, one Kozlov study, the vakonomic comparison and the Fernandez-Bloch runs into a
temporary directory, makes the report from them and checks that its tables carry the numbers of the files
(formatted, not retyped), "-" for a figure that cannot be computed (NaN), a note for each missing file, and
that a damaged file does not stop the report. Prints "N passed, M failed"; exit 1 on failure.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from script_support import ROOT, check, finish, run

REPORT = os.path.join(ROOT, "tools", "report.py")


def row_of(report, first_cell):
    for line in report.splitlines():
        if line.startswith(f"| {first_cell} |"):
            return [c.strip() for c in line.strip().strip("|").split("|")]
    return None


def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        for args, out in [(["run", "experiments/quickstart.ini"], "quickstart.h5"),
                          (["kozlov", "experiments/kozlov_friction_sleigh.ini"], "kozlov_friction_sleigh.h5"),
                          (["run", "experiments/vakonomic_vs_nonholonomic.ini"], "vakonomic_vs_nonholonomic.h5"),
                          (["run", "experiments/fernandez_bloch.ini"], "fernandez_bloch.h5"),
                          # The long-time study, shortened (3 decades of samples still give growth exponents).
                          (["run", "experiments/long_time_sleigh.ini", "--set", "run.t_end=20", "--progress", "never"],
                           "long_time_sleigh.h5"),
                          (["run", "experiments/andrews.ini"], "andrews.h5"),
                          (["analyze", "--problem", "bicycle", "--speed", "4:7:1"], "bicycle_speeds.h5")]:
            p = run([binary] + args + ["--out", os.path.join(tmp, out)], cwd=ROOT)
            check(p.returncode == 0, f"clmbench {' '.join(args)}: {p.stderr.strip()}")

        p = run([REPORT, "--results", tmp])
        check(p.returncode == 0, f"report.py exit {p.returncode}: {p.stderr.strip()[-300:]}")
        report = open(os.path.join(tmp, "REPORT.md")).read()

        # Quickstart: every /summary row, numbers as in the file, "-" where there is no closed form.
        with h5py.File(os.path.join(tmp, "quickstart.h5")) as f:
            ids = [x.decode() for x in f["summary/run_id"][()]]
            err = f["summary/error_vs_reference"][()]
            energy = f["summary/max_rel_energy_error"][()]
        for i, rid in enumerate(ids):
            row = row_of(report, rid)
            check(row is not None, f"quickstart row {rid}")
            if row is None:
                continue
            check(row[7] == f"{energy[i]:.2e}", f"{rid}: energy error {row[7]} vs {energy[i]:.2e}")
            want = "-" if not np.isfinite(err[i]) else f"{err[i]:.2e}"
            check(row[8] == want, f"{rid}: error vs reference {row[8]} vs {want}")
        check(row_of(report, "pendulum_kkt") is not None and row_of(report, "pendulum_kkt")[8] == "-",
              "the pendulum has no closed-form motion: its error column is '-'")

        # Kozlov: the fitted slope of the file, to 4 decimals; the other studies are missing, with a note.
        with h5py.File(os.path.join(tmp, "kozlov_friction_sleigh.h5")) as f:
            slope = float(f["kozlov/friction_sleigh"].attrs["slope"])
        row = row_of(report, "friction_sleigh")
        check(row is not None and row[2] == f"{slope:.4f}", f"kozlov slope {row and row[2]} vs {slope:.4f}")
        check("kozlov_friction_skate.h5 is missing" in report, "a missing study is named")
        check("within" in report and "of -1" in report, "the slope verdict is stated")

        # Vakonomic vs nonholonomic: the holonomic pendulum never separates, the sleigh does.
        row = row_of(report, "pendulum_polar")
        check(row is not None and row[4] == "never", f"pendulum row {row}")
        row = row_of(report, "chaplygin_sleigh")
        check(row is not None and float(row[2]) > 1, f"sleigh separates: {row}")

        # Fernandez-Bloch: the disk's restricted flow is the nonholonomic one to the tolerance.
        row = row_of(report, "rolling_disk")
        check(row is not None and all(float(x) < 1e-8 for x in row[1].split(" / ")), f"disk row {row}")

        # Published benchmarks: each Andrews run's scd as in the file; the missing ones named; the bicycle's
        # bisected speeds beside the published ones with the digits they share.
        with h5py.File(os.path.join(tmp, "andrews.h5")) as f:
            ids_a = [x.decode() for x in f["summary/run_id"][()]]
            scd = f["summary/scd"][()]
        andrews = [l for l in report.splitlines() if l.startswith("| Andrews' squeezer")]
        check(len(andrews) == len(ids_a), f"{len(andrews)} Andrews rows for {len(ids_a)} runs")
        for i, rid in enumerate(ids_a):
            cells = next(([c.strip() for c in l.strip().strip("|").split("|")] for l in andrews
                          if f"| {rid} |" in l), None)
            check(cells is not None and cells[5] == "published" and cells[6] == f"{scd[i]:.2f}",
                  f"Andrews {rid}: {cells} vs scd {scd[i]:.2f}")
        check("car_axis.h5 is missing" in report, "a missing benchmark is named")
        with h5py.File(os.path.join(tmp, "bicycle_speeds.h5")) as f:
            weave = float(f["analysis"].attrs["weave_speed"])
        row = row_of(report, "weave speed")
        check(row is not None and row[1] == f"{weave:.14g}" and row[2] == "4.29238253634111"
              and float(row[3]) > 12, f"weave speed row {row}")

        # Long-time: every run's growth exponents as in the file, with the word for them.
        with h5py.File(os.path.join(tmp, "long_time_sleigh.h5")) as f:
            ids_lt = [x.decode() for x in f["summary/run_id"][()]]
            pe = f["summary/energy_error_growth"][()]
            pd = f["summary/drift_growth"][()]
        check(len(ids_lt) >= 5, f"long_time_sleigh has {len(ids_lt)} runs")
        section = report[report.index("## Long-time behaviour"):] if "## Long-time behaviour" in report else ""
        check(bool(section), "the report has a long-time section")
        for i, rid in enumerate(ids_lt):
            row = row_of(section, rid)
            check(row is not None, f"long-time row {rid}")
            if row is None:
                continue
            for cell, value in ((row[4], pe[i]), (row[6], pd[i])):
                want = "-" if not np.isfinite(value) else f"{0.0 if abs(value) < 0.005 else value:.2f}"
                check(cell.startswith(want + " ("), f"{rid}: growth {cell} vs {want}")

        # No sweep files: the work-precision section says so instead of an empty table.
        check("No results/wp_*.h5" in report, "work-precision section without files")

        # A NaN in the file is "-" in the report, and a damaged file is a note, not a crash.
        q = os.path.join(tmp, "quickstart.h5")
        with h5py.File(q, "r+") as f:
            d = f["summary/max_rel_energy_error"]
            v = d[()]
            v[0] = np.nan
            d[...] = v
        shutil.copy(os.path.join(ROOT, "tests", "data", "damaged_global_heap.h5"),
                    os.path.join(tmp, "fernandez_bloch.h5"))
        p = run([REPORT, "--results", tmp, "--out", os.path.join(tmp, "R2.md")])
        check(p.returncode == 0, f"report.py with a NaN and a damaged file: exit {p.returncode}: {p.stderr[-300:]}")
        if p.returncode == 0:
            r2 = open(os.path.join(tmp, "R2.md")).read()
            row = row_of(r2, ids[0])
            check(row is not None and row[7] == "-", f"NaN energy error shown as '-': {row}")
            check("fernandez_bloch.h5 cannot be read" in r2, "the damaged file is named")
            check("No results/wp_*.h5" in r2, "the section after it is still made")

        # Work-precision: a sweep with kkt + dopri5 with and without projection (wp_ali3p_four_bar.ini, shortened)
        # reports them as two methods, not one curve mixing both.
        wp_dir = os.path.join(tmp, "wp")
        os.makedirs(wp_dir)
        p = run([binary, "sweep", "experiments/wp_ali3p_four_bar.ini", "--set", "run.t_end=0.2", "--progress", "never",
                 "--out", os.path.join(wp_dir, "wp_ali3p_four_bar.h5")], cwd=ROOT)
        check(p.returncode == 0, f"clmbench sweep wp_ali3p_four_bar.ini: {p.stderr.strip()[-300:]}")
        p = run([REPORT, "--results", wp_dir])
        check(p.returncode == 0, f"report.py on the sweep: exit {p.returncode}: {p.stderr[-300:]}")
        if p.returncode == 0:
            wp = open(os.path.join(wp_dir, "REPORT.md")).read()
            section = wp[wp.index("## Work-precision"):]
            check("kkt + projection (both) x dopri5" in section, "the projected runs are a method of their own")
            check("**kkt x dopri5**" in section or "| kkt x dopri5" in section or "kkt x dopri5 (" in section,
                  "the unprojected runs are one too")

        # An unwritable report is one line and exit 2, and leaves no temporary behind.
        p = run([REPORT, "--results", tmp, "--out", os.path.join(tmp, "no_such_dir", "R.md")])
        errors = [l for l in p.stderr.splitlines() if "error:" in l]  # (the damaged file above still warns)
        check(p.returncode == 2 and len(errors) == 1 and errors[0].startswith("report.py: error: cannot write"),
              f"unwritable report: exit {p.returncode}: {p.stderr[-200:]}")
        check(not os.path.exists(os.path.join(tmp, "no_such_dir")), "no directory or temporary left")

    return finish()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: tests/report_test.py CLMBENCH_BINARY", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(os.path.abspath(sys.argv[1])))
