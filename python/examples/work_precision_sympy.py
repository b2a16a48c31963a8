"""A mechanism derived in sympy, then a work-precision diagram: the knife edge (Chaplygin sleigh) written as
energies and a velocity constraint, run under kkt and nullspace with dopri5 at five tolerances, each measured
against a reference run the suite computes (kkt + dopri5 at rtol 1e-13); error against CPU time (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/work_precision_sympy.py [OUT.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import sympy as sp

import clmbench

out = sys.argv[1] if len(sys.argv) > 1 else "knife_edge_work_precision.png"
x, y, th, xd, yd, thd, m, Ic, b = sp.symbols("x y theta xd yd thetad m Ic b")
T = m / 2 * (xd**2 + yd**2) + Ic / 2 * thd**2
blade = -sp.sin(th) * xd + sp.cos(th) * yd - b * thd  # no sideways slip at the blade, a distance b behind
knife = clmbench.Mechanism.from_sympy("knife_edge", [x, y, th], [xd, yd, thd], T=T, velocity_constraints=[blade],
                                      parameters={m: 1.0, Ic: 0.2, b: 0.3}, q0=[0, 0, 0], qd0=[1.0, 0.3, 1.0])

fig, ax = plt.subplots(figsize=(7, 5))
for formulation, marker in (("kkt", "o"), ("nullspace", "s")):
    cpu, err = [], []
    for rtol in (1e-4, 1e-6, 1e-8, 1e-10, 1e-11):
        r = clmbench.run(problem=knife, formulation=formulation, integrator="dopri5", t_end=10, rtol=rtol,
                         atol=rtol * 1e-2, output_every=0.1, progress="never",
                         reference={"rtol": 1e-13, "atol": 1e-15})
        cpu.append(r.summary["cpu_time_s"])
        err.append(r.summary["q_error_max"])
        print(f"{formulation:9s} rtol {rtol:.0e}: max |q - q_ref| {err[-1]:.2e}, {cpu[-1] * 1e3:.2f} ms CPU")
    ax.loglog(cpu, err, marker=marker, label=f"{formulation} + dopri5 (rtol 1e-4 .. 1e-11)")
ax.set_xlabel("CPU time of the run [s]")
ax.set_ylabel("max over samples of |q - q_ref| [m, rad]")
ax.set_title("knife edge from sympy: work-precision against a reference run (t = 10 s)", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
