"""The Python package against the command (tools/test.sh runs these through ctest; docs/python.md).

Results equal to `clmbench run`'s bit for bit, arrays as views of the run's buffers, the option table's keys,
one-line errors as ValueError / OSError, the GIL released while a run integrates, Ctrl-C as KeyboardInterrupt.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

import h5py
import numpy as np
import pytest

import clmbench

BINARY = os.path.abspath(os.environ.get("CLMBENCH_BINARY", "build/clmbench"))
SOURCE = os.path.abspath(os.environ.get("CLMBENCH_SOURCE_DIR", "."))
H5_TOOL = os.path.join(SOURCE, "tests", "support", "h5_tool.py")


def command(cwd, *args):
    p = subprocess.run([BINARY, *args], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


def same_file(a, b):
    p = subprocess.run([sys.executable, H5_TOOL, "compare", str(a), str(b)], capture_output=True, text=True)
    return p.returncode == 0, p.stdout


def test_run_returns_arrays_equal_to_the_commands_file(tmp_path, monkeypatch):
    (tmp_path / "cmd").mkdir()
    (tmp_path / "py").mkdir()
    args = ["--problem", "chaplygin_sleigh", "--formulation", "kkt", "--integrator", "dopri5", "--t-end", "1",
            "--rtol", "1e-9"]
    command(tmp_path / "cmd", "run", *args, "--out", "a.h5")
    r = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=1, rtol=1e-9,
                     progress="never")
    assert r.status == "ok"
    with h5py.File(tmp_path / "cmd" / "a.h5") as f:
        g = f["runs"][r.run_id]
        for name, mine in (("t", r.t), ("q", r.q), ("qd", r.qd), ("lambda", r.lam), ("energy", r.energy),
                           ("drift_velocity", r.drift_velocity), ("error_vs_reference", r.error_vs_reference),
                           ("points", r.points)):
            assert np.array_equal(g[name][()], mine, equal_nan=True), name  # bit for bit
        # The error against the closed form at every sample, whose maximum is the summary's figure.
        assert r.error_vs_reference.shape == (len(r.t), 3)
        assert np.max(r.error_vs_reference[:, 0]) == r.summary["q_error_max"] > 0
        assert g.attrs["rtol"] == r.attrs["rtol"] == 1e-9
        # Every attribute of the file's run group, and no other (clocks aside: another process timed them).
        assert set(g.attrs) == set(r.attrs)
        for k in g.attrs:
            if not (k.endswith("_time_s") or k.startswith("cpu_time_")):
                v = g.attrs[k]
                v = v.decode() if isinstance(v, bytes) else ([] if isinstance(v, h5py.Empty) else v)
                assert np.array_equal(v, r.attrs[k]) or (v != v and r.attrs[k] != r.attrs[k]), k
        assert f["summary"]["max_rel_energy_error"][0] == r.summary["max_rel_energy_error"]
    # save() writes the file the command writes (the call that made it aside: provenance).
    monkeypatch.chdir(tmp_path / "py")
    r.save("a.h5")
    ok, diff = same_file(tmp_path / "cmd" / "a.h5", tmp_path / "py" / "a.h5")
    assert ok, diff


def test_arrays_are_views_with_their_shapes(tmp_path):
    r = clmbench.run(problem="four_bar", formulation="kkt", integrator="dopri5", t_end=0.5, output_every=0.01,
                     progress="never")
    k = len(r.t)
    assert k == 51
    assert r.q.shape == (k, 9) and r.qd.shape == (k, 9) and r.lam.shape == (k, 8)
    assert r.energy.shape == (k,) and r.drift_position.shape == (k,) and r.drift.shape == (k,)
    for a in (r.t, r.q, r.qd, r.lam, r.energy):
        assert a.dtype == np.float64
        assert not a.flags.owndata  # a view of the run's own buffer, no copy
        assert not a.flags.writeable  # the record is what save() writes: read-only
    assert r.coordinate_names[:3] == ["x1", "y1", "theta1"]
    assert r.params["L1"] > 0
    # Pfaffian problems record no |h|.
    s = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", t_end=0.1, dt=1e-3,
                     progress="never")
    assert s.drift_position is None and s.drift.shape == s.t.shape


def test_keywords_are_the_config_keys(tmp_path):
    r = clmbench.run(problem="chaplygin_sleigh", formulation="penalty", integrator="radau5", t_end=0.2,
                     param={"b": 0.4}, q0=[0, 0, 0.1], qd0=[1, 0, 0], formulation_options={"N": 1e3},
                     progress="never")
    assert r.params["b"] == 0.4
    assert r.attrs["formulation.N"] == 1e3
    assert list(r.attrs["q0"])[:3] == [0, 0, 0.1]
    ini = tmp_path / "e.ini"
    ini.write_text("[run]\nproblem = pendulum_cartesian\nformulation = kkt\nintegrator = dopri5\nt_end = 1\n")
    a = clmbench.run(str(ini), set={"run.t_end": 0.5}, progress="never")
    assert a.t[-1] == 0.5
    two = tmp_path / "two.ini"
    two.write_text("[run]\nproblem = pendulum_cartesian\nintegrator = dopri5\nt_end = 0.2\n"
                   "[run.a]\nformulation = kkt\n[run.b]\nformulation = schur\n")
    runs = clmbench.run(two, progress="never")
    assert [x.run_id for x in runs] == ["a", "b"]
    assert np.allclose(runs[0].q, runs[1].q, atol=1e-8)
    keys = {(o["section"], o["key"]) for o in clmbench.options()}
    assert ("run", "t_end") in keys and ("formulation", "N") in keys


def test_bad_input_raises_with_the_commands_message(tmp_path):
    with pytest.raises(ValueError, match="unknown keyword 'tend'"):
        clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", tend=1)
    with pytest.raises(ValueError, match="unknown problem 'sleigh'"):
        clmbench.run(problem="sleigh", formulation="kkt", integrator="dopri5", progress="never")
    with pytest.raises(ValueError, match="t_end"):
        clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=-1, progress="never")
    with pytest.raises(ValueError, match="not finite"):
        clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=float("nan"))
    r = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", t_end=0.01, dt=1e-3,
                     progress="never")
    (tmp_path / "plain_file").write_text("x")
    with pytest.raises(OSError, match="plain_file"):
        r.save(tmp_path / "plain_file" / "a.h5")  # a folder that cannot be made
    assert (tmp_path / "plain_file").read_text() == "x"


def test_warnings_are_the_commands_each_once(tmp_path, capfd):
    # An option the run does not read (named when the run is prepared) and what the run found (stiffness, the
    # limit gap of penalty at N = 1e6 above the run's tolerance): each printed once, as `clmbench run` prints them.
    ini = tmp_path / "w.ini"
    ini.write_text("[run]\nproblem = chaplygin_sleigh\nformulation = penalty\nintegrator = dopri5\nt_end = 0.05\n"
                   "output_every = 0.05\ntiming_budget = 0\n[formulation]\nN = 1e6\nbaumgarte_beta = 2\n")
    capfd.readouterr()
    clmbench.run(str(ini), progress="never")
    ours = [line for line in capfd.readouterr().err.splitlines() if "warning" in line]
    theirs = [line for line in command(tmp_path, "run", str(ini), "--out", str(tmp_path / "w.h5")).stderr.splitlines()
              if "warning" in line]
    assert (len(ours) == 3 and "baumgarte_beta = 2 has no effect" in ours[0] and "became stiff" in ours[1]
            and "limit gap: penalty at N = 1e+06" in ours[2]), ours
    assert ours == theirs


def test_a_second_writer_of_one_output_in_one_process_is_refused(tmp_path):
    # issue 43, bad 5: Run.save(OUT) in one thread while clmbench.sweep(out=OUT) ran in another both returned in 2
    # of 5 trials and the saved run was lost (the output's lock was shared within a process). Now the second
    # writer is refused in one line and the sweep's output is whole.
    ini = tmp_path / "s.ini"
    ini.write_text("[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = rk4\nt_end = 2\ndt = 1e-4\n"
                   "output_every = 0.5\ntiming_budget = 0\n[sweep]\nparam.m = 1 2 3\nparam.b = 0.1 0.2 0.3\n"
                   "dt = 1e-4 2e-4 3e-4\n")
    out = tmp_path / "s.h5"
    run = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", t_end=0.1, dt=1e-3,
                       progress="never")
    failures = []

    def sweep():
        try:
            clmbench.sweep(ini, out=out, progress="never")
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    worker = threading.Thread(target=sweep)
    worker.start()
    while not (tmp_path / "s.h5.lock").exists() and worker.is_alive():
        time.sleep(0.001)
    assert worker.is_alive(), "the sweep ended before its lock was seen"
    with pytest.raises(OSError, match="is being written by another writer in this process"):
        run.save(out)
    worker.join()
    assert failures == []
    assert len(clmbench.load(out)) == 27


def test_samples_that_would_not_fit_in_memory_are_refused_before_the_run():
    # issue 43: a run whose samples exceeded memory ended "unexpected error: std::bad_alloc" after computing; the
    # command streams samples to its file, Python keeps them: estimated and refused first, with the figures.
    # 1e11 samples of 10 numbers: 8e3 GB. In a child process limited to 4 GB of address space, so that a refusal
    # that did not happen cannot take this machine's memory.
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "import clmbench\n"
        "try:\n"
        "    clmbench.run(problem='chaplygin_sleigh', formulation='kkt', integrator='dopri5', t_end=1e8,\n"
        "                 output_every=1e-3, max_output_gb=0, progress='never')\n"
        "except ValueError as e:\n"
        "    print(e)\n"
        "    sys.exit(0)\n"
        "sys.exit(1)\n")
    done = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"the samples of the run would take about 8e\+03 GB, more than the [0-9.e+]+ GB this machine "
                     r"has available in memory", done.stdout), done.stdout


def test_terms_are_the_models_at_a_state():
    # issue 42: M, c, F, A, b, h and a formulation's qdd and lambda at one state, the numbers a run uses.
    th, thd = 0.4, 0.8
    s = clmbench.terms("chaplygin_sleigh", q=[0.1, 0.2, th], qd=[1.0, 0.3, thd], formulation="kkt")
    assert np.array_equal(s["M"], np.diag([1.0, 1.0, 0.5]))  # m, m, Ic
    assert np.allclose(s["A"], [[-np.sin(th), np.cos(th), -0.3]], rtol=0, atol=2e-16)  # sin and cos to an ulp
    assert s["A"].shape == (1, 3) and s["h"].shape == (0,) and s["c"].shape == (3,)
    # kkt: M qdd + c = F + A^T lambda and A qdd + Adot qd = 0, to round-off.
    assert np.max(np.abs(s["M"] @ s["qdd"] + s["c"] - s["F"] - s["A"].T @ s["lambda"])) < 1e-15
    assert abs((s["A"] @ s["qdd"])[0] + s["Adot_qd"][0]) < 1e-15
    # A run's multiplier at its first sample is the same number.
    run = clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=0.1, progress="never")
    at0 = clmbench.terms("chaplygin_sleigh", q=run.q[0], qd=run.qd[0], formulation="kkt")
    assert abs(at0["lambda"][0] - run.lam[0, 0]) <= 1e-15 * max(1.0, abs(run.lam[0, 0]))
    # A pendulum's position row and energy at a state: h = (x^2 + y^2 - L^2)/2, E = T + V.
    p = clmbench.terms("pendulum_cartesian", q=[0.6, -0.9], qd=[0.1, 0.2], param={"L": 1.0})
    assert abs(p["h"][0] - (0.36 + 0.81 - 1.0) / 2) < 1e-15 and abs(p["energy"] - p["T"] - p["V"]) < 1e-15
    with pytest.raises(ValueError, match="has 3 coordinates; q has 2 entries"):
        clmbench.terms("chaplygin_sleigh", q=[0, 0], qd=[0, 0, 0])
    with pytest.raises(ValueError, match="integrates other velocity coordinates"):
        clmbench.terms("chaplygin_sleigh", q=[0, 0, 0], qd=[0, 0, 0], formulation="nullspace")


def test_a_run_displays_itself_in_a_notebook():
    # issue 42: a Run printed as an object in a notebook; now _repr_html_ (its summary as a table, a figure of the
    # energy change and the drift inline) and _repr_png_ (the figure).
    r = clmbench.run(problem="pendulum_cartesian", formulation="kkt", integrator="rk4", dt=1e-2, t_end=1,
                     progress="never")
    html = r._repr_html_()
    assert html.startswith("<div><table>") and "pendulum_cartesian_kkt_rk4" in html
    assert "<th style='text-align:left'>status</th><td style='text-align:left'>ok</td>" in html
    assert f"{r.summary['max_drift_position']:.3g}" in html
    assert "max q error against the reference</th><td style='text-align:left'>-</td>" in html  # no reference: "-"
    assert "data:image/png;base64," in html
    png = r._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    m = clmbench.Mechanism.from_string('name = "a<b"\ncoordinates = ["x"]\n[energy]\nT = "der(x)^2/2"\n')
    assert m._repr_html_() == ('<div><b>clmbench.Mechanism a&lt;b</b> (&lt;string&gt;)<pre>name = "a&lt;b"\n'
                               'coordinates = ["x"]\n[energy]\nT = "der(x)^2/2"\n</pre></div>')


def test_the_gil_is_released_while_a_run_integrates():
    done = threading.Event()
    result = {}

    def work():
        result["run"] = clmbench.run(problem="closed_chain", formulation="kkt", integrator="dopri5", t_end=3,
                                     param={"n": 16}, rtol=1e-11, progress="never")
        done.set()

    t = threading.Thread(target=work)
    start = time.perf_counter()
    t.start()
    ticks = 0
    while not done.is_set():  # Python keeps running beside the run: the GIL is not held by it
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - start
    assert result["run"].status == "ok"
    assert elapsed > 0.05, elapsed  # long enough to mean something
    assert ticks > 0.3 * elapsed / 0.001 * 0.5, (ticks, elapsed)


def test_ctrl_c_stops_a_run_with_keyboard_interrupt(tmp_path):
    # After a save (whose writer held SIGINT to remove its temporary file), Python's handler is back: Ctrl-C is
    # a KeyboardInterrupt, not the end of the interpreter.
    clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="rk4", t_end=0.01, dt=1e-3,
                 progress="never").save(tmp_path / "before.h5")
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        clmbench.run(problem="closed_chain", formulation="kkt", integrator="dopri5", t_end=1e4, param={"n": 16},
                     output_every=0.01, progress="never")
    assert time.perf_counter() - start < 5
    timer.cancel()


def test_the_examples_run(tmp_path):
    """python/examples: each runs, draws its PNG and prints what it measured."""
    examples = os.path.join(SOURCE, "python", "examples")
    for script, args, says in (
            ("compare_formulations.py", [str(tmp_path / "f.png")], "nullspace + dopri5"),
            ("work_precision_sympy.py", [str(tmp_path / "w.png")], "nullspace rtol 1e-11"),
            ("kozlov_study.py", [os.path.join(SOURCE, "experiments", "kozlov_friction_sleigh.ini"),
                                 str(tmp_path / "k.png")], "fitted slope -0.99")):
        p = subprocess.run([sys.executable, os.path.join(examples, script), *args], capture_output=True, text=True,
                           env=dict(os.environ, MPLBACKEND="Agg",
                                    PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(clmbench.__file__)))),
                           cwd=tmp_path)
        assert p.returncode == 0, script + ": " + p.stderr
        assert says in p.stdout, script + ": " + p.stdout
        assert os.path.getsize(args[-1]) > 10000, script


def test_load_reads_back_what_run_saved(tmp_path):
    r = clmbench.run(problem="four_bar", formulation="kkt", integrator="dopri5", t_end=0.3, progress="never")
    r.save(tmp_path / "f.h5")
    runs = clmbench.load(tmp_path / "f.h5")
    assert list(runs) == [r.run_id]
    back = runs[r.run_id]
    for name in ("t", "q", "qd", "lam", "energy", "drift_position", "drift_velocity"):
        assert np.array_equal(getattr(back, name), getattr(r, name)), name
    assert back.summary == r.summary
    assert back.attrs["rtol"] == r.attrs["rtol"] and back.params == r.params
    assert back.coordinate_names == r.coordinate_names
    with pytest.raises(ValueError, match="not a clmbench results file"):
        with h5py.File(tmp_path / "other.h5", "w") as f:
            f["x"] = 1
        clmbench.load(tmp_path / "other.h5")


def _sleigh_run(problem):
    return clmbench.run(problem=problem, formulation="kkt", integrator="dopri5", t_end=3, rtol=1e-10, atol=1e-10,
                        progress="never")


def test_mechanisms_from_sympy_run_as_the_zoo_sleigh():
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    zoo = _sleigh_run("chaplygin_sleigh")
    m, Ic, b = sp.symbols("m Ic b")
    params = {m: 1.0, Ic: 0.5, b: 0.3}
    x, y, th, xd, yd, thd = sp.symbols("x y theta xd yd thetad")
    plain = clmbench.Mechanism.from_sympy(
        "knife_edge", [x, y, th], [xd, yd, thd], T=m / 2 * (xd**2 + yd**2) + Ic / 2 * thd**2,
        velocity_constraints=[-sp.sin(th) * xd + sp.cos(th) * yd - b * thd], parameters=params,
        q0=[0, 0, 0], qd0=[1.0, 0.24, 0.8])
    assert 'T = "Ic*der(theta)**2/2 + m*(der(x)**2 + der(y)**2)/2"' in plain.text
    t = sp.Symbol("t")
    X, Y, TH = dynamicsymbols("x y theta")
    dyn = clmbench.Mechanism.from_sympy(
        "knife_edge", [X, Y, TH], [X.diff(t), Y.diff(t), TH.diff(t)],
        T=m / 2 * (X.diff(t)**2 + Y.diff(t)**2) + Ic / 2 * TH.diff(t)**2,
        velocity_constraints=[-sp.sin(TH) * X.diff(t) + sp.cos(TH) * Y.diff(t) - b * TH.diff(t)], parameters=params,
        q0=[0, 0, 0], qd0=[1.0, 0.24, 0.8])
    assert dyn.text == plain.text
    r = _sleigh_run(plain)
    assert "@sha256:" in r.problem
    # The same terms (symbolic derivatives of the same T) in the same operation order: the zoo's run to the bit.
    assert np.array_equal(r.q, zoo.q)
    with pytest.raises(ValueError, match="function besseli is not in the file language"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 * sp.besseli(0, x))

    # Points (of q and t) and body velocities (of q and qd) from sympy: recorded by the run, equal to the zoo
    # sleigh's own (problems/chaplygin_sleigh.hpp) on the same motion.
    marked = clmbench.Mechanism.from_sympy(
        "knife_edge", [x, y, th], [xd, yd, thd], T=m / 2 * (xd**2 + yd**2) + Ic / 2 * thd**2,
        velocity_constraints=[-sp.sin(th) * xd + sp.cos(th) * yd - b * thd], parameters=params,
        q0=[0, 0, 0], qd0=[1.0, 0.24, 0.8], points={"centre_of_mass": (x, y), "blade": (x - b * sp.cos(th), y - b * sp.sin(th)),
                                                   "clock": (sp.cos(t), sp.sin(t))},
        body_velocities={"u1": xd * sp.cos(th) + yd * sp.sin(th), "omega": thd})
    r = _sleigh_run(marked)
    assert r.point_columns[:4] == zoo.point_columns and r.point_columns[4:] == ["clock.x", "clock.y"]
    assert np.array_equal(r.q, zoo.q)
    assert np.max(np.abs(r.points[:, :4] - zoo.points)) < 1e-15
    assert np.max(np.abs(r.points[:, 4] - np.cos(r.t))) < 1e-15  # a point of t moves with the sample's time
    assert r.body_velocity_columns == zoo.body_velocity_columns == ["u1", "omega"]
    assert np.max(np.abs(r.body_velocities - zoo.body_velocities)) < 1e-15


def test_from_sympy_edges(tmp_path, monkeypatch):
    # issue 43: Heaviside passed and failed at run time; a symbolic or string parameter value did not name the
    # parameter; a file of the mechanism cache edited by hand was run instead of the Mechanism's own text.
    import sympy as sp

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    x, xd, k = sp.symbols("x xd k")
    # A spring whose stiffness switches on at x = 0: Heaviside with H(0) = 1/2 is (1 + sign(x))/2.
    mech = clmbench.Mechanism.from_sympy("switch", [x], [xd], T=xd**2 / 2, V=k * x**2 / 2 * sp.Heaviside(x),
                                         parameters={k: 4.0}, q0=[0.5], qd0=[0.0])
    assert 'V = "k*x**2*((1 + sign(x))/2)/2"' in mech.text
    r = clmbench.run(problem=mech, formulation="kkt", integrator="dop853", t_end=0.5, rtol=1e-12, atol=1e-14,
                     progress="never")
    assert r.status == "ok"
    # x > 0 throughout: x = 0.5 cos(2 t).
    assert np.max(np.abs(r.q[:, 0] - 0.5 * np.cos(2 * r.t))) < 1e-10
    with pytest.raises(ValueError, match="H\\(0\\) = 0"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, V=sp.Heaviside(x, 0))
    with pytest.raises(ValueError, match="Piecewise is not in the file language"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, V=sp.Piecewise((x, x > 0), (0, True)))
    for value in (sp.Symbol("a"), "four"):
        with pytest.raises(ValueError, match=f"parameter k = {value!r} must be a number".replace("(", "\\(")):
            clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, V=k * x**2, parameters={k: value})
    with pytest.raises(ValueError, match="q0\\[0\\] = 'zero' must be a number"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, q0=["zero"])
    # issue 42: q0 and qd0 may be expressions in the parameters (the file evaluates them, overrides included).
    amp = sp.Symbol("amp")
    started = clmbench.Mechanism.from_sympy("spring", [x], [xd], T=xd**2 / 2, V=k * x**2 / 2, parameters={k: 4.0, amp: 0.3},
                                            q0=[amp], qd0=[2 * amp])
    assert 'q = ["amp"]' in started.text and 'qd = ["2*amp"]' in started.text
    r = clmbench.run(problem=started, formulation="kkt", integrator="dop853", t_end=1, rtol=1e-12, atol=1e-14,
                     param={"amp": 0.5}, progress="never")
    assert r.q[0, 0] == 0.5 and r.qd[0, 0] == 1.0  # at the overridden amplitude
    # issue 42: parameters with the file's min, max, unit and description.
    bounded = clmbench.Mechanism.from_sympy("spring", [x], [xd], T=xd**2 / 2, V=k * x**2 / 2,
                                            parameters={k: {"value": 4.0, "min": 0, "unit": "N/m",
                                                            "description": "stiffness"}}, q0=[0.1])
    assert 'k = { value = 4.0, min = 0.0, unit = "N/m", description = "stiffness" }' in bounded.text, bounded.text
    with pytest.raises(ValueError, match="parameter k = -1 is below its min 0"):
        clmbench.run(problem=bounded, formulation="kkt", integrator="dop853", t_end=0.1, param={"k": -1},
                     progress="never")
    with pytest.raises(ValueError, match="parameter k: unknown keys maxx"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, parameters={k: {"value": 1, "maxx": 2}})
    with pytest.raises(ValueError, match=r"q0\[0\] = 2\*y must be a number or an expression in the parameters \(y are"):
        clmbench.Mechanism.from_sympy("bad", [x], [xd], T=xd**2 / 2, q0=[2 * sp.Symbol("y")])
    # The cache file edited by hand is written again from the Mechanism's text before it runs.
    path = mech.path()
    with open(path, "a", encoding="utf-8") as f:
        f.write("# edited\n")
    assert mech.path() == path
    assert open(path, encoding="utf-8").read() == mech.text


def test_mechanisms_from_dict_string_and_file(tmp_path):
    d = {"name": "pendulum", "coordinates": ["x", "y"], "parameters": {"m": 1.0, "L": 1.0, "g": 9.81},
         "energy": {"T": "m/2*(der(x)^2 + der(y)^2)", "V": "m*g*y"},
         "constraints": {"position": ["(x^2 + y^2 - L^2)/2"]}, "initial": {"q": [0.6, -0.8]}}
    mech = clmbench.Mechanism.from_dict(d)
    (tmp_path / "p.toml").write_text(mech.text)
    for m in (mech, clmbench.Mechanism.from_string(mech.text), clmbench.Mechanism.from_file(tmp_path / "p.toml")):
        r = clmbench.run(problem=m, formulation="kkt", integrator="dopri5", t_end=1, progress="never")
        assert r.status == "ok" and r.q.shape[1] == 2
        assert abs(np.hypot(r.q[-1, 0], r.q[-1, 1]) - 1) < 1e-6
    bad = clmbench.Mechanism.from_string(mech.text.replace("m*g*y", "m*g*z"))
    with pytest.raises(ValueError, match=r"\.toml:\d+:\d+: unknown symbol 'z'"):
        clmbench.run(problem=bad, formulation="kkt", integrator="dopri5", t_end=1, progress="never")


def test_sweep_kozlov_and_analyze_are_the_commands(tmp_path):
    (tmp_path / "cmd").mkdir()
    ini = tmp_path / "s.ini"
    ini.write_text("[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = dopri5\nt_end = 0.5\n"
                   "[sweep]\nformulation = kkt nullspace\nparam.b = 0.1 0.3\n")
    command(tmp_path / "cmd", "sweep", str(ini), "--out", "s.h5", "--jobs", "2")
    runs = clmbench.sweep(ini, out=tmp_path / "s.h5", jobs=2, progress="never")
    assert len(runs) == 4 and all(r.status == "ok" for r in runs.values())
    ok, diff = same_file(tmp_path / "cmd" / "s.h5", tmp_path / "s.h5")
    assert ok, diff  # the command's file (the invocation aside)
    k_ini = tmp_path / "k.ini"
    k_ini.write_text("[run]\nproblem = chaplygin_sleigh\nintegrator = radau5\nt_end = 0.5\nrtol = 1e-10\n"
                     "atol = 1e-12\ndt = 1e-4\noutput_every = 0.01\n[kozlov]\ntheorem = 1\nN = 1e2 1e3 1e4\n"
                     "reference_integrator = dopri5\nreference_rtol = 1e-12\nreference_atol = 1e-14\n")
    k = clmbench.kozlov(k_ini, out=tmp_path / "k.h5")
    assert -1.005 < k.fit["slope"] < -0.995, k.fit  # Kozlov's theorem 1, error ~ 1/N: measured -0.9976
    assert "slope" in k.text
    mine = clmbench.analyze("chaplygin_sleigh", q0=[0, 0, 0.3])
    theirs = command(tmp_path, "analyze", "--problem", "chaplygin_sleigh", "--q0", "0,0,0.3").stdout
    assert mine == theirs and "not integrable" in mine
    assert mine.data["rank"] == 1 and mine.data["dof"] == 2 and mine.data["integrable"] == 0
    assert mine.data["singular_values"].shape == (1,)
    with pytest.raises(ValueError, match="cannot open config file"):
        clmbench.sweep(tmp_path / "none.ini")


def test_a_mixed_mechanism_from_sympy_with_named_rows_runs_as_its_file(tmp_path):
    """Position rows beside velocity rows (a mixed mechanism), named by dicts: the same motion as the mechanism
    file it reproduces (tests/data/mechanisms/cart_pendulum.toml), lambda's columns named by the rows, the rod's
    |h| recorded as drift_position."""
    import sympy as sp

    m, I, b, mp, L, k, g, alpha = sp.symbols("m I b mp L k g alpha")
    params = {m: 2.0, I: 0.3, b: 0.25, mp: 0.7, L: 0.8, k: 1.5, g: 9.81, alpha: 0.4}
    x, y, th, xp, yp = q = sp.symbols("x y theta xp yp")
    xd, yd, thd, xpd, ypd = qd = sp.symbols("xd yd thetad xpd ypd")
    mech = clmbench.Mechanism.from_sympy(
        "cart_pendulum", q, qd,
        T=m / 2 * (xd**2 + yd**2) + I / 2 * thd**2 + mp / 2 * (xpd**2 + ypd**2),
        V=k / 2 * (x**2 + y**2) + mp * g * sp.sin(alpha) * xp,
        position_constraints={"rod": ((xp - x)**2 + (yp - y)**2 - L**2) / 2},
        velocity_constraints={"blade": -sp.sin(th) * xd + sp.cos(th) * yd - b * thd}, parameters=params)
    assert 'rod = "' in mech.text and 'blade = "' in mech.text
    fd = clmbench.run(problem=os.path.join(SOURCE, "tests", "data", "mechanisms", "cart_pendulum.toml"),
                      formulation="kkt", integrator="dopri5", t_end=2, rtol=1e-11, progress="never")
    q0, qd0 = fd.q[0].tolist(), fd.qd[0].tolist()
    r = clmbench.run(problem=mech, formulation="kkt", integrator="dopri5", t_end=2, rtol=1e-11, progress="never",
                     q0=q0, qd0=qd0)
    # Measured: 4.7e-15 (sympy's printing orders the operations differently from the file's text); max |h| 2.6e-12.
    assert np.max(np.abs(r.q - fd.q)) < 5e-14
    assert r.drift_position is not None and np.max(r.drift_position) < 1e-11
    r.save(tmp_path / "mixed.h5")
    with h5py.File(tmp_path / "mixed.h5") as f:
        g_ = f["runs"][list(f["runs"])[0]]
        assert [c.decode() if isinstance(c, bytes) else c for c in g_["lambda"].attrs["columns"]] == ["rod", "blade"]
        assert g_.attrs["constraint_kind"] in ("mixed", b"mixed")
    assert r.lambda_columns == ["rod", "blade"]
    assert clmbench.load(tmp_path / "mixed.h5")[r.run_id].lambda_columns == ["rod", "blade"]
    assert fd.lambda_columns == ["rod", "blade"]


def test_the_rolling_disc_from_sympy_mechanics_agrees_with_kanes_method():
    """sympy.physics.mechanics' own rolling disc: written here as energies and rolling rows in (yaw, lean, spin,
    contact point), run by the suite (kkt + dopri5), against sympy's KanesMethod equations of the same disc
    integrated by RK4 (h = 1e-3): an independent derivation and integration."""
    import sympy as sp
    from sympy.physics.mechanics import (KanesMethod, Point, ReferenceFrame, RigidBody, cross, dot,
                                         dynamicsymbols, inertia)  # noqa: F401

    t = sp.Symbol("t")
    r, m, g = sp.symbols("r m g")
    params = {r: 0.5, m: 1.0, g: 9.81}
    q1, q2, q3, x, y = dynamicsymbols("q1 q2 q3 x y")
    N = ReferenceFrame("N")
    Yf = N.orientnew("Y", "Axis", [q1, N.z])
    L = Yf.orientnew("L", "Axis", [q2, Yf.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w = R.ang_vel_in(N)
    r_cm = x * N.x + y * N.y + r * L.z
    v_cm = r_cm.dt(N)
    I = inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    T = m / 2 * dot(v_cm, v_cm) + dot(w, dot(I, w)) / 2
    v_contact = v_cm + cross(w, -r * L.z)  # the disc's material point on the ground
    rows = [sp.simplify(dot(v_contact, N.x)), sp.simplify(dot(v_contact, N.y))]
    assert sp.simplify(dot(v_contact, N.z)) == 0  # the third row holds by the coordinates
    coords = [q1, q2, q3, x, y]
    vel = [c.diff(t) for c in coords]
    q0, qd_ang = [0.0, 0.3, 0.0, 0.0, 0.0], [0.8, 0.0, 4.0]  # leaning 0.3 rad, turning, spinning
    xd, yd = sp.symbols("xd_ yd_")
    at0 = [row.subs(dict(zip(vel, qd_ang + [xd, yd]))).subs(dict(zip(coords, q0))).subs(params) for row in rows]
    sol = sp.solve(at0, [xd, yd])
    qd0 = qd_ang + [float(sol[xd]), float(sol[yd])]
    disc = clmbench.Mechanism.from_sympy("rolling_disc", coords, vel, T=T, V=m * g * dot(r_cm, N.z),
                                         velocity_constraints=rows, parameters=params, q0=q0, qd0=qd0)
    run = clmbench.run(problem=disc, formulation="kkt", integrator="dopri5", t_end=2, rtol=1e-12, atol=1e-12,
                       output_every=0.5, progress="never")
    assert run.status == "ok" and run.summary["max_rel_energy_error"] < 1e-11

    # sympy's example (the disc about its contact point, generalized speeds u = the disc's rate in L).
    Q1, Q2, Q3, U1, U2, U3 = dynamicsymbols("Q1 Q2 Q3 U1 U2 U3")
    N2 = ReferenceFrame("N2")
    Y2 = N2.orientnew("Y2", "Axis", [Q1, N2.z])
    L2 = Y2.orientnew("L2", "Axis", [Q2, Y2.x])
    R2 = L2.orientnew("R2", "Axis", [Q3, L2.y])
    w_qd = R2.ang_vel_in(N2)
    R2.set_ang_vel(N2, U1 * L2.x + U2 * L2.y + U3 * L2.z)
    C = Point("C")
    C.set_vel(N2, 0)
    Dmc = C.locatenew("Dmc", r * L2.z)
    Dmc.v2pt_theory(C, N2, R2)
    I2 = inertia(L2, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    KM = KanesMethod(N2, q_ind=[Q1, Q2, Q3], u_ind=[U1, U2, U3], kd_eqs=[dot(R2.ang_vel_in(N2) - w_qd, uv) for uv in L2])
    KM.kanes_equations([RigidBody("D", Dmc, R2, m, (I2, Dmc))], [(Dmc, -m * g * Y2.z)])
    states = [Q1, Q2, Q3, U1, U2, U3]
    MM = sp.lambdify(states, KM.mass_matrix_full.subs(params))
    F = sp.lambdify(states, KM.forcing_full.subs(params))
    u0 = sp.lambdify([Q1, Q2, Q3, Q1.diff(t), Q2.diff(t), Q3.diff(t)], [dot(w_qd, uv) for uv in L2])
    s = np.array(q0[:3] + list(u0(*q0[:3], *qd_ang)), float)

    def f(s):
        return np.linalg.solve(np.array(MM(*s), float), np.array(F(*s), float).ravel())

    # The same disc as a rigid body and a rolling contact (mechanisms/rolling_disc.toml, issue 41): no energy or row
    # written by hand.
    bodies = clmbench.run(problem=os.path.join(os.path.dirname(__file__), "..", "..", "mechanisms", "rolling_disc.toml"),
                          formulation="kkt", integrator="dopri5", t_end=2, rtol=1e-12, atol=1e-12, output_every=0.5,
                          progress="never")
    assert bodies.status == "ok" and bodies.summary["max_rel_energy_error"] < 1e-11
    assert np.allclose(bodies.q[0], q0, rtol=0, atol=1e-15) and np.allclose(bodies.qd[0], qd0, rtol=0, atol=1e-15)

    # And as sympy.physics.mechanics objects, KanesMethod's inputs (a RigidBody in the frame R, its mass centre
    # located from a fixed origin): from_mechanics builds T and V from them.
    O = Point("O")
    O.set_vel(N, 0)
    centre = O.locatenew("centre", r_cm)
    disc_body = RigidBody("disc", centre, R, m, (I, centre))
    mech = clmbench.Mechanism.from_mechanics("rolling_disc_mechanics", coords, vel, [disc_body], N, origin=O,
                                             gravity=-g * N.z, velocity_constraints=rows, parameters=params, q0=q0,
                                             qd0=qd0)
    mechanics = clmbench.run(problem=mech, formulation="kkt", integrator="dopri5", t_end=2, rtol=1e-12, atol=1e-12,
                             output_every=0.5, progress="never")
    assert mechanics.status == "ok"
    print(f"rolling disc from mechanics objects: max |q - q(T by hand)| {np.max(np.abs(mechanics.q - run.q)):.2e}")
    assert np.max(np.abs(mechanics.q - run.q)) < 1e-13  # measured 0: the same T

    h, worst, worst_bodies = 1e-3, 0.0, 0.0
    for k in range(1, 2001):
        k1 = f(s)
        k2 = f(s + h / 2 * k1)
        k3 = f(s + h / 2 * k2)
        k4 = f(s + h * k3)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if k % 500 == 0:
            worst = max(worst, np.abs(run.q[k // 500, :3] - s[:3]).max())
            worst_bodies = max(worst_bodies, np.abs(bodies.q[k // 500, :3] - s[:3]).max())
    print(f"rolling disc: max |(yaw, lean, spin) - Kane's method + RK4| {worst:.2e} (from sympy), "
          f"{worst_bodies:.2e} ([bodies] and [[rolling]])")
    assert worst < 3e-10  # measured 9.8e-11 (RK4 at h = 1e-3 and dopri5 at rtol 1e-12)
    assert worst_bodies < 3e-10


def test_ctrl_c_stops_a_sweep_and_resume_finishes_it(tmp_path):
    ini = tmp_path / "long.ini"
    ini.write_text("[run]\nproblem = closed_chain\nformulation = kkt\nintegrator = dopri5\nt_end = 3\nrtol = 1e-11\n"
                   "[param]\nn = 16\n[sweep]\nparam.L = " + " ".join(f"{0.1 * k:.1f}" for k in range(1, 13)) + "\n")
    out = tmp_path / "long.h5"
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt, match="resume=True"):
        clmbench.sweep(ini, out=out, jobs=2, progress="never")
    timer.cancel()
    assert not out.exists()  # complete or absent
    runs = clmbench.sweep(ini, out=out, jobs=2, resume=True, progress="never")
    assert len(runs) == 12 and all(r.status == "ok" for r in runs.values())
    assert "resumed" in runs.text


def test_typos_in_option_dicts_are_refused():
    # issue 43 item 4: formulation_options={"NN": 1e8} ran with the default N, reference={"rtoll": 1e-12} was ignored.
    with pytest.raises(ValueError, match=r"unknown key 'NN' in formulation_options \(the \[formulation\] keys: N, "):
        clmbench.run(problem="chaplygin_sleigh", formulation="penalty", integrator="radau5", t_end=0.1,
                     formulation_options={"NN": 1e8}, progress="never")
    with pytest.raises(ValueError, match=r"unknown key 'rtoll' in reference \(the \[reference\] keys: atol, compute"):
        clmbench.run(problem="chaplygin_sleigh", formulation="kkt", integrator="dopri5", t_end=0.1,
                     reference={"rtoll": 1e-12}, progress="never")
    r = clmbench.run(problem="chaplygin_sleigh", formulation="penalty", integrator="radau5", t_end=0.1,
                     formulation_options={"N": 1e6}, reference={"rtol": 1e-12}, progress="never", timing_budget=0)
    assert r.attrs["formulation.N"] == 1e6


def test_malformed_keywords_are_refused_in_one_line(tmp_path):
    # issue 43 (minor): a 2-D q0 was flattened silently, analyze(q0="1,0.5") iterated the string, analyze's errors
    # were labelled "clmbench.run:", sweep(jobs="abc") gave int()'s message and jobs=2.7 ran with 2.
    import numpy as np
    with pytest.raises(ValueError, match=r"clmbench.run: q0 is a list of lists: give a flat list of numbers"):
        clmbench.run(problem="pendulum_polar", formulation="kkt", integrator="dopri5", t_end=0.1,
                     q0=[[1.0], [0.5]], progress="never")
    with pytest.raises(ValueError, match=r"clmbench.run: qd0 has 2 dimensions"):
        clmbench.run(problem="pendulum_polar", formulation="kkt", integrator="dopri5", t_end=0.1,
                     qd0=np.zeros((2, 1)), progress="never")
    with pytest.raises(ValueError, match=r"clmbench.analyze: q0 = '1,0.5' must be a list of numbers"):
        clmbench.analyze("pendulum_polar", q0="1,0.5")
    with pytest.raises(ValueError, match=r"clmbench.analyze: q0 is a list of lists"):
        clmbench.analyze("pendulum_polar", q0=[[1.0, 0.5]])
    ini = tmp_path / "s.ini"
    ini.write_text("[run]\nproblem = pendulum_polar\nformulation = kkt\nintegrator = dopri5\nt_end = 0.1\n"
                   "[sweep]\nrtol = 1e-6 1e-8\n")
    for jobs in ("abc", 2.7, 0, True):
        with pytest.raises(ValueError, match=r"clmbench.sweep: jobs = "):
            clmbench.sweep(str(ini), out=str(tmp_path / "o.h5"), jobs=jobs, progress="never")
    assert len(clmbench.sweep(str(ini), out=str(tmp_path / "o.h5"), jobs=np.int64(2), progress="never")) == 2


def test_loading_what_is_not_a_results_file_is_one_value_error(tmp_path):
    # issue 43 (minor): load of a damaged or foreign file raised RuntimeError / KeyError / AttributeError, or gave a
    # run with q = None.
    import h5py
    text = tmp_path / "text.h5"
    text.write_text("not hdf5")
    with pytest.raises(ValueError, match=r"text.h5: not a readable clmbench results file \(OSError"):
        clmbench.load(str(text))
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f.create_group("runs/a").create_dataset("t", data=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"foreign.h5: /runs/a is not a complete run \(missing q, qd, attribute status\)"):
        clmbench.load(str(foreign))
    good = tmp_path / "good.h5"
    clmbench.run(problem="pendulum_polar", formulation="kkt", integrator="dopri5", t_end=0.1, progress="never",
                 timing_budget=0).save(str(good))
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"truncated.h5: not a readable clmbench results file"):
        clmbench.load(str(truncated))
    assert len(clmbench.load(str(good))) == 1

