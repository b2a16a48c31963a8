#!/usr/bin/env python3
"""Side by side (issue 40): what a researcher writes instead of using clmbench, and clmbench, on the same mechanism at
equal achieved accuracy.

The researcher's script: the mechanism's T, V and constraint rows as sympy expressions (read here from the mechanism
file, so that both sides integrate the same equations), M = d2T/dqd2, c = d/dq(dT/dqd) qd - dT/dq + dV/dq, the rows'
A and bias (Adot qd) derived by sympy, common subexpressions eliminated (sympy.cse), printed as one C function, compiled
with cc -O2 into a shared object, called through ctypes from a Python right-hand side that solves the KKT system
[M -A^T; A 0] [qdd; lambda] = [-c; -bias] with numpy, integrated by scipy's DOP853 (solve_ivp) on an output grid.

clmbench: the same file through clmbench.run (Python) and `clmbench run` (the command), kkt with dop853 where the
build has it (else dopri5), native evaluation (the default).

Both at several tolerances; every run's error is max over the output grid of |q - q_ref|, q_ref from the script's own
equations under DOP853 at rtol 1e-13. For each error target the cheapest run of each side that reaches it gives the
speed ratio (script time / clmbench time: above 1, clmbench is faster). Two pairs: in a Python session, the script's
solve_ivp call against the whole clmbench.run call (CPU); as processes, `python3 runner.py` (numpy, scipy, the compiled
terms, DOP853) against `clmbench run` (wall, process start and the HDF5 file included). One-time costs (sympy's
derivation and the C compile; clmbench's file compile) are reported apart.

    PYTHONPATH=build/python /usr/bin/python3 bench/sympy_dop853.py [--mechanisms sleigh,four_bar,chain16] [--markdown]
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MECHANISMS = {
    "sleigh": (os.path.join(ROOT, "tests/data/mechanisms/chaplygin_sleigh.toml"), 10.0),
    "four_bar": (os.path.join(ROOT, "tests/data/mechanisms/four_bar.toml"), 2.0),
    "chain16": (os.path.join(ROOT, "tests/data/mechanisms/closed_chain_16.toml"), 2.0),
}
RTOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
TARGETS = [1e-6, 1e-8, 1e-10]
EVERY = 0.01


def sympy_of(path):
    """The file's T, V, position rows and velocity rows as sympy expressions, its parameters folded in."""
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    q = [sp.Symbol(c) for c in doc["coordinates"]]
    qd = [sp.Symbol(c + "__d") for c in doc["coordinates"]]
    names = {"pi": sp.pi, "max": sp.Max, "min": sp.Min, "abs": sp.Abs, "atan2": sp.atan2, "sign": sp.sign}
    names.update({str(s): s for s in q + qd})
    params = {}
    for name, p in doc.get("parameters", {}).items():
        params[name] = sp.Float(p["value"] if isinstance(p, dict) else p)
    names.update(params)
    lets = {}

    def parse(text):
        text = re.sub(r"der\(\s*(\w+)\s*\)", r"\1__d", text)
        return sp.sympify(text, locals={**names, **lets}, convert_xor=True)

    pending = dict(doc.get("let", {}))
    while pending:  # lets may refer to lets written after them
        progressed = False
        for k, v in list(pending.items()):
            try:
                e = parse(v)
            except (sp.SympifyError, TypeError, NameError):
                continue
            if any(str(s) in pending for s in e.free_symbols):
                continue
            lets[k] = e
            del pending[k]
            progressed = True
        if not progressed:
            raise RuntimeError(f"{path}: cannot order the [let] names {sorted(pending)}")
    energy = doc["energy"]
    T = parse(energy["T"])
    V = parse(energy.get("V", "0"))
    cons = doc.get("constraints", {})

    def rows(key):
        r = cons.get(key, [])
        return [parse(x) for x in (r.values() if isinstance(r, dict) else r)]

    return q, qd, T, V, rows("position"), rows("velocity")


def derive_and_compile(path, workdir):
    """The researcher's derivation: terms by sympy, cse, C, cc -O2; returns (terms function, n, m, seconds)."""
    start = time.perf_counter()
    q, qd, T, V, h, r = sympy_of(path)
    n = len(q)
    qdv = sp.Matrix(qd)
    p = sp.Matrix([sp.diff(T, v) for v in qd])
    M = p.jacobian(qd)
    c = p.jacobian(q) * qdv - sp.Matrix([sp.diff(T, x) for x in q]) + sp.Matrix([sp.diff(V, x) for x in q])
    A_rows, bias = [], []
    for row in h:
        a = sp.Matrix([row]).jacobian(q)
        A_rows.append(a)
        bias.append(((a * qdv).jacobian(q) * qdv)[0])
    for row in r:
        a = sp.Matrix([row]).jacobian(qd)
        A_rows.append(a)
        bias.append((sp.Matrix([row]).jacobian(q) * qdv)[0])
    m = len(A_rows)
    A = sp.Matrix.vstack(*A_rows) if A_rows else sp.zeros(0, n)
    outputs = list(M) + list(c) + list(A) + bias
    subs, reduced = sp.cse(outputs, symbols=sp.numbered_symbols("cse_"))  # not x0, x1: coordinates may be named so
    lines = ["#include <math.h>", "void terms(const double* q, const double* qd, double* out) {"]
    symbols = {str(s): f"q[{i}]" for i, s in enumerate(q)}
    symbols.update({str(s): f"qd[{i}]" for i, s in enumerate(qd)})

    def c_of(e):
        text = sp.ccode(e)
        return re.sub(r"\b(\w+)\b", lambda mt: symbols.get(mt.group(1), mt.group(1)), text)

    for s, e in subs:
        lines.append(f"  const double {s} = {c_of(e)};")
    for k, e in enumerate(reduced):
        lines.append(f"  out[{k}] = {c_of(e)};")
    lines.append("}")
    src = os.path.join(workdir, "terms.c")
    lib = os.path.join(workdir, "terms.so")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run(["cc", "-O2", "-fPIC", "-shared", "-o", lib, src, "-lm"], check=True)
    fn = ctypes.CDLL(lib).terms
    fn.argtypes = [ctypes.POINTER(ctypes.c_double)] * 3
    return fn, n, m, time.perf_counter() - start


def script_rhs(fn, n, m):
    """The right-hand side a researcher writes: the C terms, then numpy's solve of the KKT system."""
    out = np.zeros(n * n + n + m * n + m)
    K = np.zeros((n + m, n + m))
    rhs = np.zeros(n + m)
    ptr = ctypes.POINTER(ctypes.c_double)

    def f(t, y):
        y = np.ascontiguousarray(y)
        fn(y[:n].ctypes.data_as(ptr), y[n:].ctypes.data_as(ptr), out.ctypes.data_as(ptr))
        K[:n, :n] = out[: n * n].reshape(n, n)
        A = out[n * n + n: n * n + n + m * n].reshape(m, n)
        K[:n, n:] = -A.T
        K[n:, :n] = A
        rhs[:n] = -out[n * n: n * n + n]
        rhs[n:] = -out[n * n + n + m * n:]
        x = np.linalg.solve(K, rhs)
        return np.concatenate((y[n:], x[:n]))

    return f


# The script as a process (what `python3 my_script.py` costs once the C is compiled): numpy, scipy, ctypes, the rhs
# above, DOP853 on the grid, q written to an .npy file; timed by its wall clock against `clmbench run`'s.
RUNNER = """
import ctypes, sys
import numpy as np
from scipy.integrate import solve_ivp
lib, n, m, t_end, every, rtol, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *map(float, sys.argv[4:7]), sys.argv[7]
y0 = np.load(out + ".y0.npy")
fn = ctypes.CDLL(lib).terms
ptr = ctypes.POINTER(ctypes.c_double)
fn.argtypes = [ptr] * 3
buf = np.zeros(n * n + n + m * n + m)
K = np.zeros((n + m, n + m))
b = np.zeros(n + m)
def f(t, y):
    y = np.ascontiguousarray(y)
    fn(y[:n].ctypes.data_as(ptr), y[n:].ctypes.data_as(ptr), buf.ctypes.data_as(ptr))
    K[:n, :n] = buf[: n * n].reshape(n, n)
    A = buf[n * n + n: n * n + n + m * n].reshape(m, n)
    K[:n, n:] = -A.T
    K[n:, :n] = A
    b[:n] = -buf[n * n: n * n + n]
    b[n:] = -buf[n * n + n + m * n:]
    return np.concatenate((y[n:], np.linalg.solve(K, b)[:n]))
grid = np.arange(0.0, t_end + every / 2, every)
sol = solve_ivp(f, (0, t_end), y0, method="DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=grid)
np.save(out, sol.y[:n].T)
"""


def max_error(q, q_ref):
    k = min(len(q), len(q_ref))
    return float(np.max(np.linalg.norm(q[:k] - q_ref[:k], axis=1)))


def cheapest(points, target):
    ok = [(cost, err) for cost, err in points if err <= target]
    return min(ok) if ok else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "clmbench"))
    ap.add_argument("--markdown", action="store_true", help="print the result table as markdown")
    args = ap.parse_args()
    import clmbench

    integrators = ["dop853", "vern9", "dopri5"]
    rows = []
    for key in args.mechanisms.split(","):
        path, t_end = MECHANISMS[key]
        grid = np.arange(0.0, t_end + EVERY / 2, EVERY)
        # The initial state clmbench starts from (the file's, projected onto the constraints), for both sides.
        first = clmbench.run(problem=path, formulation="kkt", integrator="dopri5", t_end=EVERY, output_every=EVERY,
                             progress="never", timing_budget=0)
        y0 = np.concatenate((first.q[0], first.qd[0]))
        with tempfile.TemporaryDirectory() as work:
            fn, n, m, derive_s = derive_and_compile(path, work)
            f = script_rhs(fn, n, m)
            ref = solve_ivp(f, (0, t_end), y0, method="DOP853", rtol=1e-13, atol=1e-15, t_eval=grid)
            q_ref = ref.y[:n].T
            script, script_process = [], []
            runner = os.path.join(work, "runner.py")
            with open(runner, "w") as fh:
                fh.write(RUNNER)
            np.save(os.path.join(work, "q.npy.y0.npy"), y0)
            for rtol in RTOLS:
                start = time.process_time()
                sol = solve_ivp(f, (0, t_end), y0, method="DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=grid)
                cost = time.process_time() - start
                script.append((cost, max_error(sol.y[:n].T, q_ref)))
                start = time.perf_counter()
                subprocess.run([sys.executable, runner, os.path.join(work, "terms.so"), str(n), str(m), str(t_end),
                                str(EVERY), str(rtol), os.path.join(work, "q.npy")], check=True)
                script_process.append((time.perf_counter() - start, max_error(np.load(os.path.join(work, "q.npy")), q_ref)))
        python_points, command_points = {}, {}
        for integrator in integrators:
            pts, cmd = [], []
            for rtol in RTOLS:
                start = time.process_time()
                r = clmbench.run(problem=path, formulation="kkt", integrator=integrator, t_end=t_end, rtol=rtol,
                                 atol=rtol * 1e-2, output_every=EVERY, progress="never", timing_budget=0)
                cost = time.process_time() - start
                pts.append((cost, max_error(np.asarray(r.q), q_ref)))
                with tempfile.TemporaryDirectory() as d:
                    start = time.perf_counter()
                    subprocess.run([args.binary, "run", "--problem", path, "--formulation", "kkt", "--integrator",
                                    integrator, "--t-end", str(t_end), "--rtol", str(rtol), "--atol", str(rtol * 1e-2),
                                    "--output-every", str(EVERY), "--timing-budget", "0", "--progress", "never",
                                    "--out", os.path.join(d, "o.h5")], check=True, capture_output=True)
                    cmd.append((time.perf_counter() - start, pts[-1][1]))
            python_points[integrator], command_points[integrator] = pts, cmd
        for target in TARGETS:
            s = cheapest(script, target)
            best_py = min((p for p in (cheapest(v, target) for v in python_points.values()) if p), default=None)
            best_cmd = min((p for p in (cheapest(v, target) for v in command_points.values()) if p), default=None)
            sp_ = cheapest(script_process, target)
            rows.append((key, n, m, target, s, best_py, sp_, best_cmd, derive_s))
    print("| mechanism | n, m | error target | script: solve_ivp CPU s | clmbench.run CPU s | ratio | script process "
          "wall s | `clmbench run` wall s | ratio | sympy derive + cc s |")
    print("|" + "---|" * 10)
    for key, n, m, target, s, py, sproc, cmd, derive_s in rows:
        def cell(x):
            return f"{x[0]:.4f} ({x[1]:.1e})" if x else "-"

        def ratio(a, b):
            return f"{a[0] / b[0]:.2f}x" if a and b else "-"
        print(f"| {key} | {n}, {m} | {target:.0e} | {cell(s)} | {cell(py)} | {ratio(s, py)} | {cell(sproc)} | "
              f"{cell(cmd)} | {ratio(sproc, cmd)} | {derive_s:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
