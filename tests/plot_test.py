#!/usr/bin/python3
"""Tests of tools/plot.py against result files made by the clmbench binary.

    /usr/bin/python3 tests/plot_test.py build/clmbench

Makes small results files in a temporary directory, runs tools/plot.py on them (directly, through its
shebang, with a broken python3 first on PATH), and checks: the expected PNGs exist, are not trivial and
not blank; every axis label carries a unit; every legend fits in its figure, every y label in its panel's height
and every title in the figure's width (check_labels_fit); the column grouping keeps panels readable; the
multipliers' legends name their rows and points that move in z are drawn in 3D (check_mixed); a sweep's groups
titled by the parameter values they ran at (sweep_group_titles); the work-precision diagrams of a tolerance sweep (log axes, legend outside, one curve per
formulation x integrator, points ordered by tolerance); damaged or degenerate runs (no samples, NaN, m = 0, diverged) are skipped, not fatal; a
missing module gives one line naming it and tools/setup.sh; --animate's GIFs (frames, frame data, overlay, a view
that follows a mechanism travelling far, errors: check_animation). Prints "N passed, M failed"; exit 1 on failure.
"""
import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import tempfile

from script_support import ROOT, check, finish, run

PLOT = os.path.join(ROOT, "tools", "plot.py")


def make(binary, tmp, args, out):
    p = run([binary] + args + ["--out", os.path.join(tmp, out)], cwd=tmp)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
    check(p.returncode == 0, f"clmbench {' '.join(args)} -> {out}")
    return os.path.join(tmp, out)


def png_ok(path):
    """Exists, > 10 kB, and not blank (pixel values vary)."""
    import matplotlib.image as mpimg
    import numpy as np
    if not os.path.exists(path):
        return False, "missing"
    size = os.path.getsize(path)
    if size <= 10_000:
        return False, f"only {size} bytes"
    img = mpimg.imread(path)
    if float(np.std(img[..., :3])) < 0.02:
        return False, "blank"
    return True, ""


def check_labels_fit(fig, name):
    """Every y label at most as tall as its panel (taller, it runs over its neighbours' labels), every title and the
    suptitle at most as wide as the figure: sizes from the renderer, as the legend checks (no drawing)."""
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>" or ax.name == "3d":
            continue
        label = ax.yaxis.label.get_window_extent(renderer).height
        panel = ax.get_window_extent(renderer).height
        check(label <= panel + 1, f"{name}: y label '{ax.get_ylabel()}' {label:.0f} px tall in a {panel:.0f} px panel")
        title = ax.title.get_window_extent(renderer).width
        check(title <= fig.bbox.width, f"{name}: title '{ax.get_title()[:40]}...' {title:.0f} px wide in a "
              f"{fig.bbox.width:.0f} px figure")
    if fig._suptitle is not None:
        width = fig._suptitle.get_window_extent(renderer).width
        check(width <= fig.bbox.width, f"{name}: suptitle {width:.0f} px wide in a {fig.bbox.width:.0f} px figure")


def load_plot_module():
    spec = importlib.util.spec_from_file_location("clm_plot", PLOT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_animation(binary, tmp, synthetic):
    """tools/plot.py FILE --animate: the GIF (Pillow opens it, the frames asked for), the frame data (points from
    the file's first sample, runs on different sample grids resampled to common frame times, pins that stay
    on the ground), two runs overlaid in their own colours with a legend naming formulation/integrator, the
    frame cap, and the errors: an unknown run, a run without points, a bad option (one line, exit 1)."""
    import h5py
    import numpy as np
    from PIL import Image
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import animate
    mechanisms = os.path.join(ROOT, "tests", "data", "mechanisms")
    # The sleigh as a mechanism file ([points] blade, centre_of_mass): kkt sampled every 0.01 s, a penalty run
    # far from its limit (N = 10, drifting off the nonholonomic path) every 0.03 s.
    config = os.path.join(tmp, "anim.ini")
    with open(config, "w") as fh:
        fh.write(f"[run]\nproblem = {os.path.join(mechanisms, 'chaplygin_sleigh.toml')}\nt_end = 2\ntiming_budget = 0\n"
                 "[run.kkt]\nformulation = kkt\nintegrator = dopri5\n"
                 "[run.penalty]\nformulation = penalty\nintegrator = rk4\ndt = 0.001\noutput_every = 0.03\n"
                 "[formulation.penalty]\nN = 10\n")
    path = make(binary, tmp, ["run", config], "anim.h5")

    # The first run by default, said in the printed line; 10 fps x 1 s = 10 frames.
    p = run([PLOT, path, "--animate", "--fps", "10", "--duration", "1"], cwd=tmp)
    gif = os.path.join(tmp, "anim_animation_kkt.gif")
    check(p.returncode == 0 and f"plot.py: wrote {gif}" in p.stdout and "the file's first of 2 runs" in p.stdout,
          f"--animate without RUN: the first run, said: exit {p.returncode}: {p.stdout.strip()} {p.stderr.strip()}")
    check(os.path.exists(gif) and 10_000 < os.path.getsize(gif) < 2_000_000,
          f"{os.path.basename(gif)}: {os.path.getsize(gif) if os.path.exists(gif) else 'no'} bytes")
    if os.path.exists(gif):
        with Image.open(gif) as im:
            check(im.format == "GIF" and im.n_frames == 10 and im.info.get("duration") == 100,
                  f"{os.path.basename(gif)}: {im.format}, {im.n_frames} frames of {im.info.get('duration')} ms "
                  "(10 of 100 ms asked)")

    # Frame data, apart from the drawing: the blade (x - b cos theta, y - b sin theta), the reference point, and
    # the centre of mass (x, y) at the first sample; the penalty run interpolated on its coarser grid.
    tracks, total = animate.load_tracks(path, ["kkt", "penalty"])
    count, asked = animate.frame_count(tracks, fps=10, duration=1)
    times = animate.frame_times(tracks, count)
    data = animate.frame_data(tracks, times)
    check(total == 2 and (count, asked) == (10, 10) and times[0] == 0 and abs(times[-1] - 2) < 1e-12,
          f"frame times: {count} from {times[0]} to {times[-1]} (10 from 0 to 2)")
    with h5py.File(path, "r") as f:
        for run_id, d in zip(("kkt", "penalty"), data["runs"]):
            g = f["runs"][run_id]
            t, q, b = g["t"][()], g["q"][()], float(g.attrs["param.b"])
            blade = np.column_stack([q[:, 0] - b * np.cos(q[:, 2]), q[:, 1] - b * np.sin(q[:, 2])])
            check(d["names"] == ["blade", "centre_of_mass"] and d["xy"].shape == (10, 2, 2),
                  f"{run_id}: frame data of 2 points in 10 frames: {d['names']} {d['xy'].shape}")
            check(np.allclose(d["xy"][0], [blade[0], q[0, :2]], rtol=0, atol=1e-12),
                  f"{run_id}: first frame's blade and centre of mass {d['xy'][0].tolist()} at the first sample's "
                  f"{[blade[0].tolist(), q[0, :2].tolist()]}")
            want = np.column_stack([np.interp(times, t, blade[:, 0]), np.interp(times, t, blade[:, 1])])
            check(np.allclose(d["xy"][:, 0], want, rtol=0, atol=1e-12),
                  f"{run_id}: the blade at the frame times, linear between the run's samples (every "
                  f"{t[1] - t[0]:.2g} s)")
    legends = [h.get_label() for h in animate.legend_handles(tracks, data, ["C0", "C1"], 0.5)]
    # penalty at N = 10 is far from Kozlov's limit: its label says so (runs/validity_monitor.hpp).
    check(legends[:2] == ["kkt/dopri5", "penalty N=1e+01/rk4 [outside its conditions]"] and
          "blade (reference point)" in legends, f"legend: the runs by formulation/integrator, then the points: {legends}")
    # The penalty run slides sideways: by t = 2 its blade is off the kkt run's.
    gap = np.linalg.norm(data["runs"][0]["xy"][-1, 0] - data["runs"][1]["xy"][-1, 0])
    check(gap > 1e-3, f"the penalty run (N = 10) drifts off the nonholonomic path: {gap:.3g} m at t = 2")

    # Two runs overlaid: one GIF, each run's colour in the last frame, the legend and title drawn once.
    p = run([PLOT, path, "--animate", "kkt", "penalty", "--fps", "10", "--duration", "0.5"], cwd=tmp)
    both = os.path.join(tmp, "anim_animation.gif")
    check(p.returncode == 0 and f"wrote {both}" in p.stdout and "runs 'kkt', 'penalty'" in p.stdout,
          f"--animate kkt penalty: exit {p.returncode}: {p.stdout.strip()} {p.stderr.strip()}")
    if os.path.exists(both):
        with Image.open(both) as im:
            check(im.n_frames == 5, f"overlay: {im.n_frames} frames (5 asked)")
            im.seek(im.n_frames - 1)
            pixels = {tuple(c) for c in np.asarray(im.convert("RGB")).reshape(-1, 3)}
        check({(31, 119, 180), (255, 127, 14)} <= pixels, "overlay: the last frame shows both runs' colours (C0, C1)")

    # The frame cap: 10 fps x 2 s = 20 frames asked, 7 made, said in a note; --out names the file.
    capped = os.path.join(tmp, "capped.gif")
    p = run([PLOT, path, "--animate", "penalty", "--fps", "10", "--duration", "2", "--max-frames", "7", "--trail",
             "inf", "--out", capped], cwd=tmp)
    check(p.returncode == 0 and "20 frames asked, at most --max-frames 7" in p.stdout and os.path.exists(capped),
          f"--max-frames 7: exit {p.returncode}: {p.stdout.strip()} {p.stderr.strip()}")
    if os.path.exists(capped):
        with Image.open(capped) as im:
            check(im.n_frames == 7, f"--max-frames 7: {im.n_frames} frames")

    # A linkage: the four-bar file with its pins declared in chain order. The ground pins O and Q stay at (0, 0)
    # and (L0, 0) in every frame; the frames' chain O-P1-P2-Q has the bar lengths L1, L2, L3.
    pins = os.path.join(tmp, "four_bar_pins.toml")
    with open(os.path.join(mechanisms, "four_bar.toml")) as fh, open(pins, "w") as out:
        out.write(fh.read() + """
[points]
O = { position = ["x1 - 0.5*L1*cos(theta1)", "y1 - 0.5*L1*sin(theta1)"], unit = "m" }
P1 = { position = ["x1 + 0.5*L1*cos(theta1)", "y1 + 0.5*L1*sin(theta1)"], unit = "m" }
P2 = { position = ["x3 - 0.5*L3*cos(theta3)", "y3 - 0.5*L3*sin(theta3)"], unit = "m" }
Q = { position = ["x3 + 0.5*L3*cos(theta3)", "y3 + 0.5*L3*sin(theta3)"], unit = "m" }
""")
    linkage = make(binary, tmp, ["run", "--problem", pins, "--formulation", "kkt", "--integrator", "dopri5",
                                 "--t-end", "1", "--timing-budget", "0"], "linkage.h5")
    tracks, _ = animate.load_tracks(linkage, [])
    # 11 frames over 1 s: every 10th sample (between samples the points are interpolated linearly, the bars' chords
    # shorter by up to 0.7 mm here).
    xy = animate.frame_data(tracks, animate.frame_times(tracks, 11))["runs"][0]["xy"]
    bars = np.linalg.norm(np.diff(xy, axis=1), axis=2)
    check(np.abs(xy[:, 0]).max() < 1e-7 and np.abs(xy[:, 3] - [1.0, 0.0]).max() < 1e-7 and
          np.abs(bars - [0.4, 1.2, 0.8]).max() < 1e-7,
          f"four-bar pins: O at the origin, Q at (L0, 0), bars L1 L2 L3 in all 11 frames (max off "
          f"{np.abs(bars - [0.4, 1.2, 0.8]).max():.2g} m)")

    # A mechanism that travels far: the sleigh (blade 0.3 m behind its centre of mass) over 40 s, some 40 m. The view
    # follows it, a window 4 times its size (the points' largest extent at one frame) centred on its points in
    # every frame; --window 0 shows the whole path, --window W a W wide window. The 2 s run above stays whole.
    check(not animate.view(data)["follow"], "anim.h5 (2 s, a path a few times the sleigh's size): the whole path")
    far = make(binary, tmp, ["run", "--problem", os.path.join(mechanisms, "chaplygin_sleigh.toml"), "--formulation",
                             "kkt", "--integrator", "dopri5", "--t-end", "40", "--timing-budget", "0"], "far.h5")
    tracks, _ = animate.load_tracks(far, [])
    far_data = animate.frame_data(tracks, animate.frame_times(tracks, 60))
    size = animate.mechanism_size(far_data)
    sight = animate.view(far_data)
    limits, xy = sight["limits"], far_data["runs"][0]["xy"]
    widths = limits[:, 1] - limits[:, 0]
    xmin, xmax, ymin, ymax = far_data["limits"]
    extent = max(xmax - xmin, ymax - ymin)
    check(abs(size - 0.3) < 1e-9 and sight["follow"] and np.allclose(widths, 4 * size) and extent > 100 * size,
          f"far.h5: the view follows the sleigh, {widths.min():.3g} .. {widths.max():.3g} m wide (4 x its size "
          f"{size:.3g} m) on a {extent:.3g} m path")
    inside = ((limits[:, [0]] <= xy[:, :, 0]) & (xy[:, :, 0] <= limits[:, [1]]) &
              (limits[:, [2]] <= xy[:, :, 1]) & (xy[:, :, 1] <= limits[:, [3]]))
    centred = np.abs((limits[:, 0] + limits[:, 1]) / 2 - (xy[:, :, 0].min(1) + xy[:, :, 0].max(1)) / 2).max()
    check(inside.all() and centred < 1e-9, f"far.h5: every frame's points in its window, centred ({centred:.2g} m off)")
    whole = animate.view(far_data, 0)["limits"]
    check(not animate.view(far_data, 0)["follow"] and np.allclose(whole, far_data["limits"]),
          "far.h5 --window 0: the whole path in every frame")
    check(np.allclose(animate.view(far_data, 2.0)["limits"][:, 1] - animate.view(far_data, 2.0)["limits"][:, 0], 2.0),
          "far.h5 --window 2: a 2 m wide window")
    out = io.StringIO()  # in this process (matplotlib imported once)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = animate.main([far, "--animate", "--fps", "5", "--duration", "1", "--window", "2"])
    check(code == 0 and "the view follows the runs, 2 m wide" in out.getvalue(),
          f"--window 2: exit {code}: {out.getvalue().strip()}")

    # Errors: one line on stderr, exit 1 (through tools/plot.py once, the others in this process: seconds each
    # saved on importing matplotlib).
    p = run([PLOT, path, "--animate", "nope"], cwd=tmp)
    check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "no run 'nope'" in p.stderr and
          "kkt, penalty" in p.stderr, f"an unknown run: exit {p.returncode}, stderr {p.stderr!r}")
    for args, want in (([synthetic, "--animate", "m0"], ["run 'm0'", "[points]", "mechanism file"]),
                       ([synthetic, "--animate", "empty"], ["run 'empty'", "no samples"]),
                       ([path, "--animate", "--fps", "0"], ["--fps"]),
                       ([path, "--animate", "--window", "-1"], ["--window"]),
                       ([path, "--animate", "--frames", "3"], ["--frames", "usage"])):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = animate.main(args)
        lines = err.getvalue().strip().splitlines()
        check(code == 1 and len(lines) == 1 and all(w in err.getvalue() for w in want),
              f"{' '.join(args[1:])}: exit {code}, stderr {err.getvalue()!r} (one line with {want})")
    check(not os.path.exists(os.path.join(tmp, "anim_animation_nope.gif")), "no GIF for an unknown run")


def synthetic_file(path):
    """A file with the degenerate runs a plotter meets: no samples, NaN values, m = 0, diverged, and a
    problem without a unit table and without column attributes."""
    import h5py
    import numpy as np
    with h5py.File(path, "w") as f:
        runs = f.create_group("runs")

        def add(name, problem, k, n, m, status="ok", nan=False, attrs=True):
            g = runs.create_group(name)
            for key, value in (("problem", problem), ("formulation", "kkt"), ("integrator", "rk4"),
                               ("status", status)):
                g.attrs[key] = value
            t = np.linspace(0, 1, k)
            q = np.column_stack([np.sin(t * (i + 1)) for i in range(n)]) if k else np.zeros((0, n))
            if nan and k:
                q[k // 2:, 0] = np.nan
            g["t"] = t
            g["q"] = q
            g["qd"] = q.copy()
            if problem == "chaplygin_sleigh":  # the named points a run records (problems/point_spec.hpp)
                g["points"] = q[:, :2]
                g["points"].attrs["columns"] = ["centre_of_mass.x", "centre_of_mass.y"]
                g["points"].attrs["units"] = ["m", "m"]
                # ... and its body velocities (problems/body_velocity_spec.hpp), as recorded: no formula here.
                g["body_velocities"] = q[:, :2]
                g["body_velocities"].attrs["columns"] = ["u1", "omega"]
                g["body_velocities"].attrs["units"] = ["m/s", "rad/s"]
            g["lambda"] = np.ones((k, m))
            g["energy"] = 1 + 1e-9 * t
            g["drift_velocity"] = 1e-12 * t
            g.create_group("extras")
            g.attrs["q0"] = q[0] if k else np.zeros(n)
            g.attrs["qd0"] = q[0] if k else np.zeros(n)
            if attrs:
                g["t"].attrs["units"] = "s"
        add("empty", "chaplygin_sleigh", 0, 3, 1, status="failed")
        add("nan", "chaplygin_sleigh", 50, 3, 1, nan=True, attrs=False)
        add("diverged", "chaplygin_sleigh", 30, 3, 1, status="diverged")
        add("m0", "mystery_problem", 40, 2, 0)


def check_mixed(mod, path, figures, tmp):
    """mixed.h5: the multipliers' legends name their rows (/runs/<id>/lambda's columns), a mixed problem's titles
    say position or velocity row; the disc's centre, which moves in z, is drawn in 3D with its recorded z, the
    planar cart in the plane."""
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        rows = {r: [mod.text(x) for x in f["runs"][r]["lambda"].attrs["columns"]] for r in ("cart", "disc")}
        centre = f["runs"]["disc"]["points"][()]
    lam = figures[os.path.join(tmp, "mixed_lambda.png")]
    titles = [ax.get_title() for ax in lam.axes]
    legends = [t.get_text() for ax in lam.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    check(rows["cart"] == ["rod", "blade"] and len(rows["disc"]) >= 2 and
          legends == [f"{name}: kkt/dopri5" for name in rows["cart"] + rows["disc"]],
          f"mixed_lambda.png: each multiplier's legend names its row {rows}: {legends}")
    check(titles[:2] == ["cart_pendulum: rod (position row)", "cart_pendulum: blade (velocity row)"],
          f"mixed_lambda.png: the cart's rod a position row, its blade a velocity row: {titles[:2]}")
    trajectory = figures[os.path.join(tmp, "mixed_trajectory.png")]
    panels = {ax.get_title().split(":")[0]: ax for ax in trajectory.axes if ax.get_label() != "<colorbar>"}
    disc, cart = panels.get("rolling_disc"), panels.get("cart_pendulum")
    check(disc is not None and disc.name == "3d" and cart is not None and cart.name != "3d",
          f"mixed_trajectory.png: the disc in 3D, the cart in the plane ({ {k: a.name for k, a in panels.items()} })")
    if disc is not None and disc.name == "3d":
        line = next((ln for ln in disc.get_lines() if ln.get_label() == "centre"), None)
        z = np.asarray(line.get_data_3d()[2]) if line is not None else np.zeros(0)
        check(len(z) == len(centre) and np.array_equal(z, centre[:, 2]) and np.ptp(z) > 1e-3 and
              disc.get_zlabel().startswith("z ["),
              f"mixed_trajectory.png: the disc's centre drawn at its recorded z ({np.ptp(z) if len(z) else 0:.3g} m "
              f"of rise and fall), z axis '{disc.get_zlabel()}'")


def mixed_config(path):
    """Two mechanism files in one file: the cart towing a bob (a position row "rod", a velocity row "blade") and
    the leaning disc rolling on the plane (rigid body and rolling contact: its rows named by the compiler, its
    centre a point in space)."""
    with open(path, "w") as fh:
        fh.write("[run]\nformulation = kkt\nintegrator = dopri5\nt_end = 2\ntiming_budget = 0\n"
                 f"[run.cart]\nproblem = {os.path.join(ROOT, 'tests', 'data', 'mechanisms', 'cart_pendulum.toml')}\n"
                 f"[run.disc]\nproblem = {os.path.join(ROOT, 'mechanisms', 'rolling_disc.toml')}\n")
    return path


def work_precision_config(path):
    """A tolerance sweep written as a multi-run config (what `clmbench sweep` will make): two problems, one
    with a closed form (the sleigh) and one compared with a reference run (the pendulum), kkt and schur
    under dopri5 at three tolerances, rk4 with and without projection at three steps, and a run that fails (left out of the curves)."""
    lines = ["[run]", "t_end = 2", "[reference]", "rtol = 1e-12", ""]
    for problem in ("pendulum_polar", "chaplygin_sleigh"):
        for formulation in ("kkt", "schur"):
            for k, rtol in enumerate((1e-4, 1e-6, 1e-8)):
                lines += [f"[run.{problem}_{formulation}_{k}]", f"problem = {problem}", f"formulation = {formulation}",
                          "integrator = dopri5", f"rtol = {rtol:g}", f"atol = {rtol * 1e-2:g}", ""]
        for k, dt in enumerate((0.02, 0.01, 0.005)):
            lines += [f"[run.{problem}_rk4_{k}]", f"problem = {problem}", "formulation = kkt", "integrator = rk4",
                      f"dt = {dt:g}", ""]
            # The same method with coordinate projection: a curve of its own, not merged into kkt / rk4.
            lines += [f"[run.{problem}_rk4_projected_{k}]", f"problem = {problem}", "formulation = kkt",
                      "integrator = rk4", f"dt = {dt:g}", "", f"[formulation.{problem}_rk4_projected_{k}]",
                      "projection = both", ""]
    lines += ["[run.failing]", "problem = pendulum_polar", "formulation = kkt", "integrator = dopri5",
              "rtol = 1e-9", "max_steps = 5", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))
    return path


def check_work_precision(mod, path, tmp):
    """The work-precision diagrams: both files, log axes, units, legends outside the axes, one curve per
    formulation x integrator, points ordered by tolerance, failed runs out of the curves and marked at their
    cost on the worst edge of the panel, CPU times with the spread of their repeated timings as error bars."""
    import matplotlib.pyplot as plt
    import numpy as np
    entries = mod.load_work_precision(path)
    failing = next(e for e in entries if e["id"] == "failing")
    check(failing["status"] == "failed", f"the capped run failed ({failing['status']})")
    groups = mod.work_precision_groups(entries)
    check([title for title, _, _ in groups] == ["pendulum_polar", "chaplygin_sleigh"] or
          sorted(title for title, _, _ in groups) == ["chaplygin_sleigh", "pendulum_polar"],
          f"work-precision groups: {[t for t, _, _ in groups]}")
    for title, curves, lost in groups:
        want = {"kkt / dopri5": ["failing"]} if title == "pendulum_polar" else {}
        check({label: [e["id"] for e in runs] for label, runs in lost.items()} == want,
              f"{title}: the failed run kept apart, under its curve: {lost}")
        check(sorted(curves) == ["kkt + projection (both) / rk4", "kkt / dopri5", "kkt / rk4", "schur / dopri5"],
              f"{title}: one curve per formulation x integrator: {sorted(curves)}")
        for label, points in curves.items():
            knob = [p["dt"] if p["fixed"] else p["rtol"] for p in points]
            check(len(points) == 3 and knob == sorted(knob, reverse=True),
                  f"{title} {label}: 3 points ordered by tolerance, loosest first: {knob}")
            check(all(p["id"] != "failing" for p in points), f"{title} {label}: the failed run is left out")
            errors = [p["q_error_max"] for p in points]
            check(errors[-1] < errors[0], f"{title} {label}: the error falls with the tolerance: {errors}")
        sources = {p["reference_source"] for c in curves.values() for p in c}
        want = {"closed_form"} if title == "chaplygin_sleigh" else {"reference_run"}
        check(sources == want, f"{title}: errors against {sources}, expected {want}")
    figures = dict(mod.plot_work_precision(path, os.path.splitext(path)[0], "wp"))
    stem = os.path.splitext(path)[0]
    for suffix, xunit in (("cpu", "[s]"), ("rhs", "[count]")):
        out = f"{stem}_work_precision_{suffix}.png"
        check(out in figures, f"work-precision figure {os.path.basename(out)} made")
        ok, why = png_ok(out)
        check(ok, f"{os.path.basename(out)}: {why}")
        fig = figures.get(out)
        if fig is None:
            continue
        fig.canvas.draw()
        check(len(fig.axes) == 4, f"{os.path.basename(out)}: error and scd panels for 2 problems ({len(fig.axes)})")
        cost = failing["cpu_time_s" if suffix == "cpu" else "rhs_evals"]
        for ax in fig.axes:
            # The failed run: an 'x' at its cost on the top edge of the error panel, the bottom of the scd one
            # (axes fraction), in its curve's colour; a legend entry says what the crosses are.
            crosses = [line for line in ax.get_lines() if line.get_marker() == "x" and len(line.get_xdata())]
            edge = 0.0 if "scd" in ax.get_ylabel() else 1.0
            if ax.get_title().startswith("pendulum_polar"):
                curve = next((line for line in ax.get_lines() if line.get_label().startswith("kkt / dopri5:")), None)
                check(len(crosses) == 1 and list(crosses[0].get_xdata()) == [cost]
                      and list(crosses[0].get_ydata()) == [edge]
                      and crosses[0].get_transform() == ax.get_xaxis_transform()
                      and curve is not None and crosses[0].get_color() == curve.get_color(),
                      f"{os.path.basename(out)} {ax.get_ylabel()}: the failed run marked at ({cost}, edge {edge})")
                texts = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
                if "scd" not in ax.get_ylabel():  # (one legend for both panels of a problem)
                    check(any(t.startswith("failed / diverged") for t in texts) and
                          any(t.startswith("kkt / dopri5:") and t.endswith("failed / diverged at rtol 1e-09")
                              for t in texts), f"{os.path.basename(out)}: legend names the failure: {texts}")
            else:
                check(not crosses, f"{os.path.basename(out)} {ax.get_title()[:20]}: no failed run, no cross")
            # CPU times: error bars from the fastest timing (the point) to the slowest, cpu (1 + spread).
            segments = sorted((float(sg[0][0]), float(sg[1][0]), float(sg[0][1])) for c in ax.collections
                              for sg in c.get_segments())
            if suffix == "rhs" or "scd" in ax.get_ylabel():
                check(suffix == "rhs" and not segments or suffix == "cpu",
                      f"{os.path.basename(out)}: no timing bars on rhs evaluations")
                continue
            group = next(c for t, c, _ in groups if ax.get_title().startswith(t + ":"))
            want = sorted((e["cpu_time_s"], e["cpu_time_s"] * (1 + e["cpu_time_spread"]), max(e["q_error_max"], mod.FLOOR))
                          for runs in group.values() for e in runs if np.isfinite(e["cpu_time_spread"]))
            check(len(want) >= 10 and len(segments) == len(want) and np.allclose(segments, want, rtol=1e-12),
                  f"{os.path.basename(out)} {ax.get_title()[:20]}: a bar per run with a spread ({len(segments)}, {len(want)})")
        for ax in fig.axes:
            check(ax.get_xscale() == "log", f"{os.path.basename(out)}: log x axis")
            check(xunit in ax.get_xlabel(), f"{os.path.basename(out)}: x label '{ax.get_xlabel()}' has {xunit}")
            if "scd" not in ax.get_ylabel():
                check(ax.get_yscale() == "log", f"{os.path.basename(out)}: log error axis")
                check("[" in ax.get_ylabel() and "m" in ax.get_ylabel(), f"error label '{ax.get_ylabel()}' has units")
                curves = [line for line in ax.get_lines() if line.get_marker() != "x"]
                check(len(curves) == 4, f"{os.path.basename(out)}: 4 curves ({len(curves)})")
            leg = ax.get_legend()
            if leg is not None:
                box, frame = leg.get_window_extent(), ax.get_window_extent()
                check(box.x0 >= frame.x1 - 1, f"{os.path.basename(out)}: the legend is outside the axes")
        check_labels_fit(fig, os.path.basename(out))
        plt.close(fig)
    plt.close("all")
    # A file written before repeated timings (no cpu_time_spread): the same figure without bars.
    import h5py
    import shutil
    old = os.path.join(tmp, "wp_old.h5")
    shutil.copy(path, old)
    with h5py.File(old, "r+") as f:
        for g in f["runs"].values():
            for key in ("cpu_time_spread", "cpu_time_repeats"):
                if key in g.attrs:
                    del g.attrs[key]
    figures = dict(mod.plot_work_precision(old, os.path.splitext(old)[0], "wp_old"))
    fig = figures.get(os.path.splitext(old)[0] + "_work_precision_cpu.png")
    check(fig is not None and len(fig.axes) == 4 and not any(ax.collections for ax in fig.axes)
          and "bars" not in fig._suptitle.get_text(), "a file without timing spreads: no error bars")
    plt.close("all")


def sweep_group_titles(binary, tmp, mod):
    """A sweep over a parameter: its work-precision and error-against-reference panels are titled by the
    parameter's values ("chaplygin_sleigh (b = 0.1)"), not "set 1", "set 2"; groups that differ in a swept key
    other than a parameter (the runs' sweep_point) by that key, and runs without a sweep by their initial data's
    number."""
    import matplotlib.pyplot as plt
    config = os.path.join(tmp, "by_b.ini")
    with open(config, "w") as fh:
        fh.write("[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = dopri5\nt_end = 1\n"
                 "output_every = 0.05\ntiming_budget = 0\n[sweep]\nparam.b = 0.1 0.3\n"
                 "[sweep.zip]\nrtol = 1e-6 1e-8\natol = 1e-8 1e-10\n")
    out = os.path.join(tmp, "by_b.h5")
    p = run([binary, "sweep", config, "--out", out, "--progress", "never"], cwd=tmp)
    check(p.returncode == 0, f"clmbench sweep by_b.ini: {p.stderr.strip()[-300:]}")
    want = ["chaplygin_sleigh (b = 0.1)", "chaplygin_sleigh (b = 0.3)"]
    titles = [t for t, _, _ in mod.work_precision_groups(mod.load_work_precision(out))]
    check(sorted(titles) == want, f"by_b.h5: work-precision groups titled by b: {titles}")
    for kind, figures in (("work_precision_cpu", mod.plot_work_precision(out, os.path.join(tmp, "by_b"), "by_b")),
                          ("error_vs_reference", mod.plot_error_vs_reference(out, os.path.join(tmp, "by_b"), "by_b"))):
        fig = dict(figures).get(os.path.join(tmp, f"by_b_{kind}.png"))
        panel_titles = [ax.get_title() for ax in fig.axes] if fig else []
        check(panel_titles and all(any(t.startswith(w) for w in want) for t in panel_titles) and
              {w for w in want if any(t.startswith(w) for t in panel_titles)} == set(want) and
              not any("set " in t for t in panel_titles), f"by_b_{kind}.png: panels titled by b: {panel_titles}")
        if fig:
            check_labels_fit(fig, f"by_b_{kind}.png")
    plt.close("all")
    # Keyed (problem, parameters, initial data, t_end): a swept initial velocity names itself; without a sweep the
    # groups are told apart by the initial data's number.
    keys = [("p", (("b", 1.0),), (0.0, 0.0), 5.0), ("p", (("b", 1.0),), (0.0, 1.0), 5.0)]
    swept = {keys[0]: [{"sweep_point": f"qd0=0 rtol={r}"} for r in ("1e-6", "1e-8")],
             keys[1]: [{"sweep_point": f"qd0=1 rtol={r}"} for r in ("1e-6", "1e-8")]}
    got = mod.group_titles(keys, swept)
    check(list(got.values()) == ["p (qd0 = 0)", "p (qd0 = 1)"], f"groups titled by the swept qd0: {got}")
    got = mod.group_titles(keys, {k: [{}] for k in keys})
    check(list(got.values()) == ["p (T = 5 s, initial data 1)", "p (T = 5 s, initial data 2)"],
          f"groups without a sweep: by their initial data's number: {got}")


def own_mechanism_sweep(binary, tmp):
    """Issue 24's "Done means": a mechanism file (the sleigh with its [points]) swept over formulations and
    tolerances, a run failing (dopri5 capped at 20 steps at the tightest tolerance) and some outside their theorem
    (fernandez_bloch), gets without any change to tools/: the trajectory of its declared points, the error against
    the stored reference over time, failed runs marked, and timings with their spread."""
    import h5py
    import numpy as np
    mechanism = os.path.join(ROOT, "tests", "data", "mechanisms", "chaplygin_sleigh.toml")
    config = os.path.join(tmp, "own.ini")
    with open(config, "w") as fh:
        fh.write(f"[run]\nproblem = {mechanism}\nt_end = 4\noutput_every = 0.05\n"
                 "[sweep.zip]\nrtol = 1e-4 1e-6 1e-8\natol = 1e-6 1e-8 1e-10\ndt = 0.1 0.05 0.01\n"
                 "[run.kkt]\nformulation = kkt\nintegrator = dopri5\n"
                 "[run.rk4]\nformulation = kkt\nintegrator = rk4\n"
                 "[run.fb]\nformulation = fernandez_bloch\nintegrator = dopri5\n"
                 "[run.capped]\nformulation = kkt\nintegrator = dopri5\nmax_steps = 20\n")
    p = run([binary, "sweep", config, "--out", os.path.join(tmp, "own.h5"), "--progress", "never"], cwd=tmp)
    check(p.returncode == 0, f"clmbench sweep own.ini: {p.stderr.strip()[-300:]}")
    check("3 of 12 runs outside their formulation's validity conditions" in p.stderr,
          f"the sweep says once that the fernandez_bloch runs left their theorem: {p.stderr.strip()[-300:]}")
    path = os.path.join(tmp, "own.h5")
    with h5py.File(path) as f:
        status = [x.decode() for x in f["summary/status"][()]]
        repeats = f["summary/cpu_time_repeats"][()]
        spread = f["summary/cpu_time_spread"][()]
        validity = [x.decode() for x in f["summary/validity"][()]]
        ids = [x.decode() for x in f["summary/run_id"][()]]
    check(status.count("ok") == 11 and len(status) == 12, f"own.h5: 11 runs ok and one failed ({status})")
    check(all(r >= 2 for r, st in zip(repeats, status) if st == "ok") and
          all(np.isfinite(x) and x >= 0 for x, st in zip(spread, status) if st == "ok"),
          f"own.h5: every short run timed repeatedly with a finite spread ({list(repeats)}, {list(spread)})")
    check([bool(v) for v in validity] == ["_fb_" in i for i in ids], f"own.h5: validity flags the fernandez_bloch runs")
    p = run([PLOT, path], cwd=tmp)
    check(p.returncode == 0, f"tools/plot.py own.h5: {p.stderr.strip()[-300:]}")
    for kind in ("trajectory", "body_velocities", "error_vs_reference", "work_precision_cpu", "work_precision_rhs"):
        ok, why = png_ok(os.path.join(tmp, f"own_{kind}.png"))
        check(ok, f"own_{kind}.png: {why}")
    mod = load_plot_module()
    import matplotlib.pyplot as plt
    # The file's [body_velocities] (u1, omega), drawn from what the runs recorded: one panel each, titled with
    # the file's description, and u1 = xd cos(theta) + yd sin(theta) exactly as the file says.
    figures = dict(mod.plot_body_velocities(mod.load_runs(path), os.path.join(tmp, "own4"), "own4"))
    titles = [ax.get_title() for ax in next(iter(figures.values())).axes]
    check(len(titles) == 2 and "u1 (forward speed of the centre of mass)" in titles[0] and "omega" in titles[1],
          f"own.h5: one body-velocity panel per declared velocity ({titles})")
    with h5py.File(path) as f:
        g = f["runs"][ids[0]]
        q, qd, bv = g["q"][()], g["qd"][()], g["body_velocities"][()]
        cols = [x.decode() if isinstance(x, bytes) else x for x in g["body_velocities"].attrs["columns"]]
    u1 = qd[:, 0] * np.cos(q[:, 2]) + qd[:, 1] * np.sin(q[:, 2])
    check(cols == ["u1", "omega"] and np.max(np.abs(bv[:, 0] - u1)) < 1e-14 and np.array_equal(bv[:, 1], qd[:, 2]),
          f"own.h5: /body_velocities are the file's expressions of q and qd ({cols})")
    figures = dict(mod.plot_error_vs_reference(path, os.path.join(tmp, "own2"), "own2"))
    fig = next(iter(figures.values()))
    titles = [ax.get_title() for ax in fig.axes]
    check(any("fernandez_bloch" in t and "3 of 3 runs outside" in t for t in titles),
          f"the fernandez_bloch panel says its runs left the theorem ({titles})")
    crosses = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "x"]
    check(len(crosses) == 1, f"the failed (capped) run ends in a cross ({len(crosses)})")
    wp = dict(mod.plot_work_precision(path, os.path.join(tmp, "own3"), "own3"))[os.path.join(tmp, "own3_work_precision_cpu.png")]
    labels = [line.get_label() for line in wp.axes[0].get_lines() if not line.get_label().startswith("_")]
    check(any(x.startswith("fernandez_bloch / dopri5") and x.endswith("[outside its formulation's conditions]")
              for x in labels) and not any("kkt" in x and "outside" in x for x in labels),
          f"work precision: the fernandez_bloch curve, and only it, is flagged ({labels})")
    plt.close("all")


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory(prefix="clm_plot_test_") as tmp:
        files = {
            "quickstart": make(binary, tmp, ["run", os.path.join(ROOT, "experiments", "quickstart.ini"),
                                             "--t-end", "3"], "quickstart.h5"),
            "four_bar": make(binary, tmp, ["run", "--problem", "four_bar", "--formulation", "kkt", "--integrator",
                                           "dopri5", "--t-end", "3"], "four_bar.h5"),
            "kozlov": make(binary, tmp, ["kozlov", os.path.join(ROOT, "experiments", "kozlov_friction_sleigh.ini"),
                                         "--set", "run.t_end=1"], "kozlov.h5"),
            "long": make(binary, tmp, ["run", "--problem", "pendulum_cartesian", "--formulation", "kkt",
                                       "--integrator", "rk4", "--dt", "0.01", "--t-end", "100",
                                       "--output-every", "0.01"], "long.h5"),
            # `clmbench analyze --equilibrium --out`: the sleigh's phase portrait at the file's parameters.
            "equilibrium": make(binary, tmp, ["analyze", "--problem", "chaplygin_sleigh", "--param", "b=0.4",
                                              "--qd0", "1,0,0", "--equilibrium"], "equilibrium.h5"),
            "speeds": make(binary, tmp, ["analyze", "--problem", "bicycle", "--speed", "0:10:0.5"], "speeds.h5"),
            # A time-dependent problem: its energy figure is the energy balance.
            "driven": make(binary, tmp, ["run", "--problem", "driven_pendulum", "--formulation", "kkt", "--integrator",
                                         "dopri5", "--t-end", "3"], "driven.h5"),
            # Named constraint rows (the cart's rod and blade; the disc's rolling rows) and a point in space (the
            # disc's centre).
            "mixed": make(binary, tmp, ["run", mixed_config(os.path.join(tmp, "mixed.ini"))], "mixed.h5"),
        }
        # A tolerance sweep: plotted once (its 19 runs would slow the loops over every figure below).
        wp = make(binary, tmp, ["run", work_precision_config(os.path.join(tmp, "wp.ini"))], "wp.h5")
        synthetic = os.path.join(tmp, "degenerate.h5")
        synthetic_file(synthetic)
        own_mechanism_sweep(binary, tmp)

        # A python3 first on PATH that cannot plot: the shebang must not care.
        fakebin = os.path.join(tmp, "fakebin")
        os.makedirs(fakebin)
        with open(os.path.join(fakebin, "python3"), "w") as fh:
            fh.write("#!/bin/sh\necho 'fake python3 without matplotlib' >&2\nexit 1\n")
        os.chmod(os.path.join(fakebin, "python3"), 0o755)
        env = dict(os.environ, PATH=fakebin + os.pathsep + os.environ.get("PATH", ""))
        check(os.access(PLOT, os.X_OK), "tools/plot.py is executable")
        with open(PLOT) as fh:
            check(fh.readline().strip() == "#!/usr/bin/python3", "tools/plot.py's shebang is /usr/bin/python3")
        for key, path in list(files.items()) + [("degenerate", synthetic), ("wp", wp)]:
            p = run([PLOT, path], env=env, cwd=tmp)
            check(p.returncode == 0, f"tools/plot.py {key}.h5 with a broken python3 first on PATH: exit "
                  f"{p.returncode}: {p.stderr.strip()[-400:]}")

        expected = {
            # The sleigh's runs and the polar pendulum's have closed forms: their error against it over time, from
            # the stored series (/runs/<id>/error_vs_reference), replaces the difference to the first run.
            "quickstart": ["drift", "energy", "lambda", "q", "qd", "trajectory", "body_velocities", "error_vs_reference"],
            "four_bar": ["drift", "energy", "lambda", "q", "qd", "trajectory"],
            "kozlov": ["drift", "energy", "lambda", "q", "qd", "trajectory", "body_velocities", "error",
                       "kozlov_friction_sleigh", "error_vs_reference"],
            "long": ["drift", "energy", "lambda", "q", "qd", "trajectory", "growth"],
            "degenerate": ["drift", "energy", "q", "qd", "trajectory", "body_velocities"],
            "wp": ["work_precision_cpu", "work_precision_rhs", "error_vs_reference"],
            "equilibrium": ["phase_portrait"],
            "speeds": ["eigenvalues"],
            "driven": ["drift", "energy", "lambda", "q", "qd"],
            "mixed": ["drift", "energy", "lambda", "q", "qd", "trajectory"],
        }
        for key, kinds in expected.items():
            for kind in kinds:
                png = os.path.join(tmp, f"{key}_{kind}.png")
                ok, why = png_ok(png)
                check(ok, f"{os.path.basename(png)}: {why}")
        # No reference, no fake one: a single run gets no error plot.
        check(not os.path.exists(os.path.join(tmp, "four_bar_difference.png")), "four_bar (one run) has no difference plot")
        check(not os.path.exists(os.path.join(tmp, "four_bar_error_vs_reference.png")),
              "four_bar (no closed form, no reference run) has no error_vs_reference plot")
        check(not os.path.exists(os.path.join(tmp, "quickstart_difference.png")),
              "quickstart: runs with a stored error against the reference get no difference-to-a-run plot")
        # A difference between runs is not named an error (the quickstart has no reference run).
        check(not os.path.exists(os.path.join(tmp, "quickstart_error.png")), "quickstart has no *_error.png")
        # No tolerance sweep, no work-precision diagram (quickstart: one tolerance per run).
        # An analyze --speed file is its eigenvalue plot only (no runs).
        check(not os.path.exists(os.path.join(tmp, "speeds_drift.png")), "speeds.h5 has no run plots")
        for key in ("quickstart", "four_bar", "kozlov", "degenerate"):
            check(not os.path.exists(os.path.join(tmp, f"{key}_work_precision_cpu.png")),
                  f"{key} has no work-precision diagram")

        # The figures themselves: units on every axis, legends inside the figure height.
        mod = load_plot_module()

        import matplotlib.pyplot as plt
        import numpy as np
        # The error-against-time figure draws the stored series: its curves are the q column of
        # /runs/<id>/error_vs_reference (floored), whose maximum is the run's q_error_max.
        series = mod.load_error_series(files["quickstart"])
        # The three sleigh runs (closed-form motion); the polar pendulum has a closed-form multiplier only.
        check(len(series) == 3, f"quickstart: 3 runs with an error series (got {len(series)})")
        for e, t, err in series:
            check(err.shape == (len(t), 3) and np.nanmax(err[:, 0]) == e["q_error_max"],
                  f"{e['id']}: the series' max |q - q_ref| {np.nanmax(err[:, 0])} is q_error_max {e['q_error_max']}")
        fig = dict(mod.plot_error_vs_reference(files["quickstart"], os.path.join(tmp, "qs"), "qs"))[
            os.path.join(tmp, "qs_error_vs_reference.png")]
        drawn = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
        check(len(drawn) == 3 and all(np.array_equal(line.get_ydata(), mod.floored(err[:, 0]))
                                      for line, (_, _, err) in zip(drawn, series)),
              "quickstart_error_vs_reference.png: the q panel draws each run's stored |q - q_ref|")
        plt.close(fig)

        # Two runs of one curve (kkt / dopri5 on the sleigh) at one tolerance, differing only in a Baumgarte
        # gain, are not a tolerance sweep: no work-precision diagram (the Fernandez-Bloch file's *_off runs
        # once made one).
        same_tol = os.path.join(tmp, "same_tol.ini")
        with open(same_tol, "w") as fh:
            fh.write("[run]\nproblem = chaplygin_sleigh\nformulation = kkt\nintegrator = dopri5\nrtol = 1e-8\n"
                     "t_end = 1\noutput_every = 0.1\n[run.plain]\n[run.stabilized]\n"
                     "[formulation.stabilized]\nbaumgarte_alpha = 1\n")
        st = make(binary, tmp, ["run", same_tol], "same_tol.h5")
        check(mod.work_precision_groups(mod.load_work_precision(st)) == [],
              "two runs at one tolerance are not a work-precision curve")
        import matplotlib.pyplot as plt
        for key, path in list(files.items()) + [("degenerate", synthetic)]:
            figures = mod.build_figures(path)
            check(len(figures) > 0, f"{key}: build_figures returns figures")
            if key == "mixed":  # its figures, before the loop below closes them
                check_mixed(mod, path, dict(figures), tmp)
            for out, fig in figures:
                name = os.path.basename(out)
                for ax in fig.axes:
                    if ax.get_label() == "<colorbar>":
                        continue
                    check("[" in ax.get_ylabel() and "]" in ax.get_ylabel(),
                          f"{name}: y label '{ax.get_ylabel()}' has a unit")
                    if ax.get_xlabel():
                        check("[" in ax.get_xlabel(), f"{name}: x label '{ax.get_xlabel()}' has a unit")
                bottom = fig.axes[-1] if fig.axes else None
                check(bottom is not None and any("[" in a.get_xlabel() for a in fig.axes),
                      f"{name}: the x axis is labelled with a unit")
                check(len([a for a in fig.axes if a.get_label() != "<colorbar>"]) <= mod.MAX_PANELS,
                      f"{name}: at most {mod.MAX_PANELS} panels")
                for ax in fig.axes:
                    leg = ax.get_legend()
                    if leg is not None:
                        height, _ = mod.legend_fits(fig, leg)
                        check(height <= 1.0, f"{name}: legend is {height:.2f} of the figure height")
                check_labels_fit(fig, name)
                plt.close(fig)
        # four_bar: 8 multipliers in 4 pin panels of 2 curves; 9 coordinates in 3 panels (x, y, theta).
        fb = dict(mod.build_figures(files["four_bar"]))
        lam = fb[os.path.join(tmp, "four_bar_lambda.png")]
        check(len(lam.axes) == 4 and all(len(a.get_legend().get_texts()) == 2 for a in lam.axes),
              "four_bar lambda: 4 panels of 2 multipliers with their own legends")
        q = fb[os.path.join(tmp, "four_bar_q.png")]
        check(len(q.axes) == 3, "four_bar q: 3 panels (x, y, theta)")
        plt.close("all")
        # Phase portrait: the line of equilibria red, solid on the stable side (u1 > 0 for b > 0), dashed on
        # the unstable one; no phase portrait for files without an equilibrium analysis.
        pp = dict(mod.build_figures(files["equilibrium"])).get(os.path.join(tmp, "equilibrium_phase_portrait.png"))
        check(pp is not None, "equilibrium.h5: a phase portrait")
        if pp is not None:
            red = [ln for ln in pp.axes[0].get_lines() if ln.get_color() == "red"]
            styles = {ln.get_linestyle(): max(ln.get_xdata()) for ln in red}
            check(set(styles) == {"-", "--"} and styles["-"] > 0 and styles["--"] <= 0,
                  f"phase portrait: stable equilibria solid at u1 > 0, unstable dashed at u1 < 0 ({styles})")
        check(not os.path.exists(os.path.join(tmp, "quickstart_phase_portrait.png")),
              "quickstart (no /analysis) has no phase portrait")
        plt.close("all")
        # Grouping: a 1000-bar chain still gives a handful of readable panels.
        names = [f"theta_{i + 1}" for i in range(1000)]
        groups = mod.coordinate_groups(names, ["rad"] * 1000)
        check(len(groups) <= mod.MAX_PANELS and all(len(c) <= 8 for c, _ in groups),
              f"closed_chain n = 1000: {len(groups)} panels of at most 8 curves")
        groups = mod.coordinate_groups(["x", "y", "theta"], ["m", "m", "rad"])
        check(len(groups) == 3, "three coordinates: one panel each")
        check_work_precision(mod, wp, tmp)
        sweep_group_titles(binary, tmp, mod)
        # Time-series legends name the projection too: a projected run is not the unprojected one.
        labels = [r["label"] for r in mod.load_runs(wp)]
        check(any(l.startswith("pendulum_polar/kkt + projection (both)/rk4") for l in labels) and
              any(l.startswith("pendulum_polar/kkt/rk4") for l in labels),
              f"run labels with and without projection: {sorted(set(labels))[:6]}")
        # Long run: envelopes, said in the title.
        figs = mod.build_figures(files["long"])
        titles = " ".join(fig._suptitle.get_text() for _, fig in figs if fig._suptitle)
        check("envelope" in titles, "long run: the titles say the series are envelopes")
        # ... and the log-log growth plot, its legend carrying the run's recorded growth exponents.
        growth = dict(figs).get(os.path.join(tmp, "long_growth.png"))
        check(growth is not None and all(a.get_xscale() == "log" and a.get_yscale() == "log" for a in growth.axes),
              "long run: long_growth.png on log-log axes")
        if growth is not None:
            import h5py
            with h5py.File(files["long"], "r") as f:
                a = f["runs"][list(f["runs"])[0]].attrs
                want = [f"p = {0.0 if abs(float(a[k])) < 0.005 else float(a[k]):.2f}"
                        for k in ("energy_error_growth", "drift_growth")]
            got = [t.get_text() for ax in growth.axes for t in ax.get_legend().get_texts()]
            check(all(any(w in g for g in got) for w in want), f"growth legends {got} show {want}")
        check(not os.path.exists(os.path.join(tmp, "quickstart_growth.png")), "quickstart (short runs) has no growth plot")
        plt.close("all")

        # The energy balance of a time-dependent run: its datasets and summary figure, and an energy figure that
        # shows E - E0 against W and the residual |E - E0 - W| (log scale); a time-independent run has none of it.
        import h5py
        import numpy as np
        with h5py.File(files["driven"], "r") as f:
            g = f["runs"][list(f["runs"])[0]]
            names = ("work_moving_constraints", "work_explicit_time", "work_generalized_forces", "energy_balance_residual")
            check(all(x in g and g[x].shape == g["t"].shape for x in names), "driven.h5: the energy-balance datasets")
            res = float(f["summary"]["max_energy_balance_residual"][0])
            check(0 <= res < 1e-8, f"driven.h5: max_energy_balance_residual {res} at the integrator's error level")
            w = g["work_moving_constraints"][()]
            check(np.max(np.abs(w)) > 1e-3, "driven.h5: the pivot does work")
        with h5py.File(files["four_bar"], "r") as f:
            g = f["runs"][list(f["runs"])[0]]
            check(not any(x.startswith("work_") or x == "energy_balance_residual" for x in g),
                  "four_bar.h5 (no time dependence): no energy-balance datasets")
            check(np.isnan(f["summary"]["max_energy_balance_residual"][0]), "four_bar.h5: max_energy_balance_residual NaN")
        energy = dict(mod.build_figures(files["driven"])).get(os.path.join(tmp, "driven_energy.png"))
        check(energy is not None and len(energy.axes) == 2, "driven_energy.png: two panels (E - E0 and W; residual)")
        if energy is not None:
            top, bottom = energy.axes
            labels = [t.get_text() for t in top.get_legend().get_texts()] if top.get_legend() else []
            check(any(x.endswith("E - E0") for x in labels) and any(x.endswith(": W") for x in labels),
                  f"driven_energy.png: E - E0 and W drawn ({labels})")
            check(top.get_yscale() == "linear" and bottom.get_yscale() == "log" and "E - E0 - W" in bottom.get_ylabel(),
                  "driven_energy.png: the residual |E - E0 - W| on a log axis")
            # E - E0 and W lie on top of each other: the curves' data agree to the residual.
            lines = top.get_lines()
            check(len(lines) == 2 and np.max(np.abs(lines[0].get_ydata() - lines[1].get_ydata())) < 1e-8,
                  "driven_energy.png: E - E0 and W agree")
        four_bar_energy = dict(mod.build_figures(files["four_bar"])).get(os.path.join(tmp, "four_bar_energy.png"))
        check(four_bar_energy is not None and len(four_bar_energy.axes) == 1, "four_bar_energy.png: the energy error only")
        plt.close("all")

        # A missing module: one line naming it and tools/setup.sh, exit 1.
        stub = os.path.join(tmp, "stub")
        os.makedirs(stub)
        with open(os.path.join(stub, "h5py.py"), "w") as fh:
            fh.write("raise ModuleNotFoundError(\"No module named 'h5py'\", name='h5py')\n")
        p = run([PLOT, files["four_bar"]], env=dict(env, PYTHONPATH=stub), cwd=tmp)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and "h5py" in p.stderr and "tools/setup.sh" in p.stderr,
              f"missing h5py: exit {p.returncode}, stderr {p.stderr!r}")
        p = run([PLOT, os.path.join(tmp, "nonexistent.h5")], cwd=tmp)
        check(p.returncode == 1 and "no such file" in p.stderr, "a missing results file: exit 1 with one line")
        check_animation(binary, tmp, synthetic)
    return finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
