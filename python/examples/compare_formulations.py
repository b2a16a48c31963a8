"""Which formulation keeps the Chaplygin sleigh on its constraint? kkt, schur and nullspace under dopri5, and
penalty (stiff: N = 1e4 by default) under radau5; the drift |A(q) qd| and the energy error against time, in one
figure (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/compare_formulations.py [OUT.png]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import clmbench

out = sys.argv[1] if len(sys.argv) > 1 else "sleigh_formulations.png"
integrators = {"kkt": "dopri5", "schur": "dopri5", "nullspace": "dopri5", "penalty": "radau5"}
runs = {f: clmbench.run(problem="chaplygin_sleigh", formulation=f, integrator=i, t_end=20, rtol=1e-8, atol=1e-10,
                        output_every=0.02, progress="never")
        for f, i in integrators.items()}

fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
for (name, r), style in zip(runs.items(), ("-", "--", "-", "-.")):  # kkt and schur coincide: dashed over solid
    label = f"{name} + {integrators[name]}"
    ax1.semilogy(r.t, np.maximum(r.drift_velocity, 1e-17), style, label=label)
    ax2.semilogy(r.t, np.maximum(np.abs(r.energy - r.energy[0]) / abs(r.energy[0]), 1e-17), style, label=label)
    err = r.summary["q_error_max"]  # against the sleigh's closed form; None ("-") where there is none
    print(f"{label:18s} max drift {r.summary['max_drift_velocity']:.2e}  "
          f"max rel. energy error {r.summary['max_rel_energy_error']:.2e}  "
          f"max q error vs closed form {'-' if err is None else f'{err:.2e}'}")
ax1.set_ylabel("drift |A(q) qd| [m/s]")
ax2.set_ylabel("|E - E0| / |E0|")
ax2.set_xlabel("time t [s]")
ax1.set_ylim(bottom=1e-17)
ax2.set_ylim(bottom=1e-17)
ax1.set_title("Chaplygin sleigh (rtol 1e-8): constraint drift and energy error by formulation", fontsize=10)
ax1.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)
