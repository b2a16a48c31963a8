"""Kozlov's first theorem in one call: the sleigh with anisotropic friction N/2 |A qd|^2 (the penalty formulation)
tends to the nonholonomic motion as N grows, error ~ 1/N. The study runs the reference and the family, fits the
slope, and here the error against N is drawn from the runs it wrote (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kozlov_study.py [CONFIG.ini] [OUT.png]
"""
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import clmbench

here = os.path.dirname(os.path.abspath(__file__))
config = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "experiments", "kozlov_friction_sleigh.ini")
out = sys.argv[2] if len(sys.argv) > 2 else "kozlov_sleigh.png"
with tempfile.TemporaryDirectory() as tmp:
    study = clmbench.kozlov(config, out=os.path.join(tmp, "k.h5"), set={"run.t_end": 2, "kozlov.N": "1e1 1e2 1e3 1e4 1e5"})
    fit = study.fit
    family = [r for r in study.values() if r.formulation == "penalty"]
    N = [r.attrs["formulation.N"] for r in family]
    err = [r.summary["q_error_max"] for r in family]
print(f"fitted slope {fit['slope']:.4f} (Kozlov: -1), intercept {fit['intercept']:.4f}")
for n, e in zip(N, err):
    print(f"  N = {n:8.0e}: max |q_N - q_nonholonomic| = {e:.3e}")
fig, ax = plt.subplots(figsize=(6, 4.5))
ax.loglog(N, err, "o-", label=f"penalty family, fitted slope {fit['slope']:.3f}")
ax.set_xlabel("friction coefficient N")
ax.set_ylabel("max |q_N - q_ref| [m, rad]")
ax.set_title("Chaplygin sleigh: Kozlov's theorem 1 (t = 2 s)", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
