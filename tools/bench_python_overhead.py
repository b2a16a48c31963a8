#!/usr/bin/python3
"""Time of one clmbench.run call on the runs of bench/bench_run_call.cpp (chaplygin sleigh, kkt + rk4, S steps of
1e-3 s, 11 samples), median of many calls, CPU time of this thread. The Python package's fixed overhead is this
minus build/bench_run_call's BM_RunCall/steps:S (docs/python.md, docs/guide/performance.md).

    PYTHONPATH=build/python tools/bench_python_overhead.py
"""
import statistics
import time

import clmbench

# With the default run.timing_budget (a short run is integrated again until 0.05 s of CPU are spent, for its timing
# spread) and without (timing_budget = 0: timed once, what BM_RunCall measures): the repeats are what a short call
# costs beyond the run (issue 40).
for steps, budget in ((1, 0), (100, 0), (1, None), (100, None)):
    kw = dict(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", dt=0.001, t_end=steps * 1e-3,
              output_every=steps * 1e-4, progress="never")
    if budget is not None:
        kw["timing_budget"] = budget
    clmbench.run(**kw)
    times = []
    for _ in range(7):
        start = time.thread_time()
        calls = 200 if budget == 0 else 10
        for _ in range(calls):
            r = clmbench.run(**kw)
            r.q  # the arrays handed over
        times.append((time.thread_time() - start) / calls)
    label = "timing_budget 0" if budget == 0 else "default timing_budget"
    print(f"clmbench.run steps:{steps} {label:22s} {statistics.median(times) * 1e6:.1f} us CPU per call "
          f"(median of 7 x {calls})")
