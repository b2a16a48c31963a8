#!/usr/bin/python3
"""Time of one clmbench.run call on the runs of bench/bench_run_call.cpp (chaplygin sleigh, kkt + rk4, S steps of
1e-3 s, 11 samples), median of many calls, CPU time of this thread. The Python package's fixed overhead is this
minus build/bench_run_call's BM_RunCall/steps:S (docs/python.md, README Performance).

    PYTHONPATH=build/python tools/bench_python_overhead.py
"""
import statistics
import time

import clmbench

for steps in (1, 100):
    kw = dict(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", dt=0.001, t_end=steps * 1e-3,
              output_every=steps * 1e-4, progress="never")
    clmbench.run(**kw)
    times = []
    for _ in range(7):
        start = time.thread_time()
        for _ in range(200):
            r = clmbench.run(**kw)
            r.q  # the arrays handed over
        times.append((time.thread_time() - start) / 200)
    print(f"clmbench.run steps:{steps}  {statistics.median(times) * 1e6:.1f} us CPU per call (median of 7 x 200)")
