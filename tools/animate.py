"""An animated GIF of runs' declared points (tools/plot.py FILE.h5 --animate [RUN ...]; docs/design.md section 5b).

    tools/plot.py FILE.h5 --animate [RUN ...] [--fps F] [--duration S] [--max-frames N] [--trail S] [--window W]
                  [--out PATH]

Each frame shows, at one time t, every run's named points in the plane (x, y; a z column is not drawn):
    points    a run's /runs/<id>/points when it recorded them (a mechanism file's [points] table), else the
              positions tools/plot.py's trajectory plot computes for a zoo problem (trajectory_points)
    segments  consecutive points joined in their declared order, a chain: first to second, second to third, ...
              (a mechanism file's [points] order; declare the points along the linkage to see its bars)
    traces    each point's recent path, the last --trail seconds of simulated time, fading out
Several runs are overlaid, each in its own colour, the legend naming formulation/integrator; each point has its
own marker (the first the largest: a mechanism file's reference point). Frames are evenly spaced in simulated
time over all the runs' span; each run's points are interpolated linearly between its samples (so runs with
different sample grids share the frames) and held at their last sample after a run ended. Equal scaling; the
title shows t. The view:
    whole path   axis limits covering every sample of every run (--window 0; the default unless the path is
                 much larger than the mechanism)
    following    --window W: a window W wide (in the points' unit, e.g. m; 3/4 W high) centred in each frame
                 on the middle of the runs' points, never smaller than the points at one frame; an inset in a
                 corner shows the whole path and the window's place on it. The default when the path spans
                 more than 10 times the mechanism's size (the largest extent of its points at one frame: a 1 m
                 rig on a 58 m path, a sleigh run for long), with W 4 times that size. A single point (the
                 centre of mechanisms/rolling_disc.toml) has no size: follow it with --window W.

Defaults keep a GIF small (a few hundred KB to ~2 MB): --fps 25, --duration the span in real time up to
8 s, at most --max-frames 300 frames (more asked: the GIF plays shorter at the same fps), --trail a quarter
of the span (0: none, inf: the whole path so far), --window as above (a following view redraws its axes each
frame: about 2.5 times the time, and up to about 3 MB). Output FILE_STEM_animation_<run>.gif beside the file
(FILE_STEM_animation.gif for several runs), or --out PATH.
"""
import argparse
import math
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (the run reader, trajectory_points, colours; one line on a missing module)

try:
    from PIL import Image
    import matplotlib.animation as animation
    import matplotlib.colors
    import matplotlib.patches
    from matplotlib.collections import LineCollection
except ImportError as error:  # one line, not a traceback
    print(f"plot.py: error: Python module '{error.name}' is missing for {sys.executable}; run tools/setup.sh "
          "(installs python3-pil for the GIF writer)", file=sys.stderr)
    sys.exit(1)

np, plt, h5py = plot.np, plot.plt, plot.h5py

FPS = 25
MAX_DURATION = 8.0      # s of playback by default (shorter runs play in real time)
MAX_FRAMES = 300
TRAIL_FRACTION = 0.25   # default trace: this fraction of the animated span
FOLLOW_RATIO = 10.0     # a path this many times the mechanism's size: the view follows it by default
WINDOW_SIZES = 4.0      # the default following window: this many times the mechanism's size
WINDOW_ASPECT = 0.75    # a following window's height / width
TRAIL_SAMPLES = 500     # samples drawn per trace and frame (every k-th beyond)
FADE_FLOOR = 0.08       # opacity of a trace's oldest end
DPI = 80
WIDTH = 7.0             # inches
MARKERS = ["o", "s", "^", "D", "v", "P", "h", "*", "<", ">"]  # not "X": a stopped run's marker
RUNS_LISTED = 8         # run ids named in the error for an unknown one


USAGE = ("tools/plot.py FILE.h5 --animate [RUN ...] [--fps F] [--duration S] [--max-frames N] [--trail S] [--window W] "
         "[--out PATH]")


class AnimationError(Exception):
    """Bad input: main prints it as one line and exits 1."""


def run_order(f):
    """The file's run ids in execution order (/summary/run_id; h5py lists groups alphabetically)."""
    order = [plot.text(x) for x in f["summary/run_id"][()]] if "summary/run_id" in f else []
    return [r for r in order if r in f["runs"]] + sorted(r for r in f["runs"] if r not in order)


def load_tracks(path, run_ids):
    """(tracks, total): the runs to animate, [(run, [(name, x, y)])] in the order asked (no ids: the file's
    first run), and the file's number of runs. Raises AnimationError for an unknown id, a run that cannot be
    read and a run without points."""
    with h5py.File(path, "r") as f:
        order = run_order(f) if "runs" in f else []
        if not order:
            raise AnimationError(f"{path} has no runs to animate")
        for run_id in run_ids:
            if run_id not in order:
                listed = ", ".join(order[:RUNS_LISTED]) + (", ..." if len(order) > RUNS_LISTED else "")
                raise AnimationError(f"no run '{run_id}' in {path}; its runs ({len(order)}): {listed}")
        tracks = []
        for run_id in run_ids or order[:1]:
            try:
                run = plot.load_run(f["runs"][run_id], run_id)
                # A mechanism file's first point is its reference point (a zoo problem declares its own apart).
                run["file_points"] = "@sha256:" in plot.text(f["runs"][run_id].attrs.get("problem", ""))
            except Exception as e:  # a damaged or foreign group
                raise AnimationError(f"run '{run_id}' in {path} cannot be read ({type(e).__name__}: {e})")
            points = plot.trajectory_points(run) if run["k"] else None
            if not points:
                why = ("no samples" if not run["k"] else
                       "no points to animate (no /points recorded, none known to plot.py)")
                raise AnimationError(f"run '{run_id}' (problem {run['problem']}) has {why}: declare its named points "
                                     "in a [points] table of a mechanism file (docs/mechanism-files.md)")
            # "blade (x - b cos theta, ...)" -> "blade": the formulas are the trajectory plot's business.
            tracks.append((run, [(name.split(" (")[0], np.asarray(x, float), np.asarray(y, float))
                                 for name, x, y in points]))
    labels = [r["short"] if len({r["problem"] for r, _ in tracks}) == 1 else r["label"] for r, _ in tracks]
    for (r, _), label in zip(tracks, labels):
        r["legend"] = label if labels.count(label) == 1 else f"{label} ({r['id']})"
    return tracks, len(order)


def span(tracks):
    """(first, last) sample time over all runs."""
    return min(r["t"][0] for r, _ in tracks), max(r["t"][-1] for r, _ in tracks)


def frame_count(tracks, fps=FPS, duration=None, max_frames=MAX_FRAMES):
    """(frames, asked): asked = round(fps * duration), duration by default the runs' span, at most MAX_DURATION
    s (a shorter run plays in real time); frames = asked, at most max_frames; one frame for a single instant."""
    t0, t1 = span(tracks)
    if not t1 > t0:
        return 1, 1
    if duration is None:
        duration = min(t1 - t0, MAX_DURATION)
    asked = max(1, int(round(fps * duration)))
    return min(asked, max_frames), asked


def frame_times(tracks, count):
    """The frames' simulated times: count of them, evenly spaced from the runs' first sample to their last."""
    t0, t1 = span(tracks)
    return np.linspace(t0, t1, count) if count > 1 else np.array([t0])


def frame_positions(track, times):
    """A run's points at the frame times: array (frames, points, 2) of x, y, linear between samples, held
    at the first / last sample outside the run's time range."""
    run, points = track
    t = run["t"]
    return np.stack([np.column_stack([np.interp(times, t, x), np.interp(times, t, y)]) for _, x, y in points],
                    axis=1)


def frame_data(tracks, times):
    """Everything a frame shows but the traces: {"t": times, "runs": [{"id", "legend", "names", "xy"}],
    "limits": (xmin, xmax, ymin, ymax)}, the limits over every sample of every run (padded 5 %)."""
    xs = np.concatenate([x for _, points in tracks for _, x, _ in points])
    ys = np.concatenate([y for _, points in tracks for _, _, y in points])
    finite = np.isfinite(xs) & np.isfinite(ys)
    if not finite.any():
        raise AnimationError("the runs' points are not finite anywhere: nothing to draw")
    lo, hi = np.array([xs[finite].min(), ys[finite].min()]), np.array([xs[finite].max(), ys[finite].max()])
    pad = 0.05 * max(hi - lo) if max(hi - lo) > 0 else max(1.0, 0.1 * max(abs(lo)))
    return {"t": times,
            "runs": [{"id": r["id"], "legend": r["legend"], "names": [n for n, _, _ in points],
                      "xy": frame_positions((r, points), times)} for r, points in tracks],
            "limits": (lo[0] - pad, hi[0] + pad, lo[1] - pad, hi[1] + pad)}


def mechanism_size(data):
    """The mechanism's size: the largest extent (in x or y) of all the runs' points at one frame, over the frames;
    0 for a single point."""
    xy = np.concatenate([d["xy"] for d in data["runs"]], axis=1)  # (frames, every run's points, 2)
    with np.errstate(invalid="ignore"):
        extent = np.nanmax(xy, axis=1) - np.nanmin(xy, axis=1)
    extent = extent[np.all(np.isfinite(extent), axis=1)]
    return float(extent.max()) if len(extent) else 0.0


def view(data, window=None):
    """Where the axes look, frame by frame: {"follow": bool, "width", "height", "limits": array (frames, 4) of
    xmin, xmax, ymin, ymax}. window None: follow the mechanism when its path is more than FOLLOW_RATIO times
    its size (a 1 m rig on a 58 m path is a blob in a view of the whole path), in a window WINDOW_SIZES times
    its size; window 0: the whole path (frame_data's limits) in every frame; window W > 0: a W wide window
    (height WINDOW_ASPECT W) centred in each frame on the middle of every run's points, at least as large as
    the points at any one frame."""
    frames = len(data["t"])
    xmin, xmax, ymin, ymax = data["limits"]
    size = mechanism_size(data)
    if window is None:
        window = WINDOW_SIZES * size if size > 0 and max(xmax - xmin, ymax - ymin) > FOLLOW_RATIO * size else 0.0
    if window <= 0:
        return {"follow": False, "width": xmax - xmin, "height": ymax - ymin,
                "limits": np.tile([xmin, xmax, ymin, ymax], (frames, 1))}
    width = max(window, 1.1 * size)
    height = max(WINDOW_ASPECT * width, 1.1 * size)
    xy = np.concatenate([d["xy"] for d in data["runs"]], axis=1)
    with np.errstate(invalid="ignore"):
        centre = (np.nanmin(xy, axis=1) + np.nanmax(xy, axis=1)) / 2  # (frames, 2)
    # A frame where no point is finite (a run that failed at its start) keeps the previous frame's centre.
    for i in range(frames):
        if not np.all(np.isfinite(centre[i])):
            centre[i] = centre[i - 1] if i else [(xmin + xmax) / 2, (ymin + ymax) / 2]
    limits = np.column_stack([centre[:, 0] - width / 2, centre[:, 0] + width / 2,
                              centre[:, 1] - height / 2, centre[:, 1] + height / 2])
    return {"follow": True, "width": width, "height": height, "limits": limits}


def trace(track, t, length):
    """Each point's samples in [t - length, t] (every k-th beyond TRAIL_SAMPLES, the newest kept), with the
    interpolated position at t appended: [(x, y)] per point."""
    run, points = track
    times = run["t"]
    start, end = np.searchsorted(times, t - length, side="left"), np.searchsorted(times, t, side="right")
    stride = max(1, math.ceil((end - start) / TRAIL_SAMPLES))
    idx = np.arange(end - 1, start - 1, -stride)[::-1]
    out = []
    for _, x, y in points:
        px, py = x[idx], y[idx]
        if times[-1] > t >= times[0]:
            px, py = np.append(px, np.interp(t, times, x)), np.append(py, np.interp(t, times, y))
        out.append((px, py))
    return out


def fading(rgba, count):
    """Per-segment colours of a trace of count segments, oldest first: opacity FADE_FLOOR .. 1."""
    colors = np.tile(np.asarray(rgba, float), (count, 1))
    colors[:, 3] = np.linspace(FADE_FLOOR, 1.0, count) if count > 1 else 1.0
    return colors


def time_format(times):
    """Enough decimals that consecutive frames' times differ (identical frames would merge in the GIF)."""
    step = np.min(np.diff(times)) if len(times) > 1 else 1.0
    decimals = min(max(0, math.ceil(-math.log10(step))) if step > 0 else 3, 9)
    return f"{{:.{decimals}f}}"


def palette(colors, greys=48):
    """The GIF's one palette: greys (text, axes, grid), and each run colour blended with white (its fading
    trace, antialiasing) and with black (marker edges). One palette for every frame: colours do not flicker,
    a frame maps to it in ~2 ms, and the GIF needs no local palettes."""
    # No grey just below white: Pillow maps a colour to the palette entry nearest its 8-level bin's centre,
    # which would turn the white background into that grey.
    entries = [(v, v, v) for v in np.linspace(0, 236, greys - 1).round().astype(int)] + [(255, 255, 255)]
    per = max(2, (256 - greys) // max(len(colors), 1))
    white, black = per * 3 // 4, per - per * 3 // 4
    for c in colors:
        c = np.asarray(matplotlib.colors.to_rgb(c))
        entries += [tuple((255 * (a * c + (1 - a))).round().astype(int)) for a in np.linspace(1, 0.1, white)]
        entries += [tuple((255 * a * c).round().astype(int)) for a in np.linspace(0.8, 0.1, black)]
    entries = entries[:256]
    image = Image.new("P", (1, 1))
    image.putpalette([v for e in entries for v in e] + [0] * 3 * (256 - len(entries)))
    return image


class BufferPillowWriter(animation.PillowWriter):
    """matplotlib's Pillow writer, taking each frame from the canvas as last drawn (render draws only what
    moves, onto the static figure drawn once) instead of redrawing the whole figure with savefig, and keeping
    it as a palette image, deflated until the GIF is written: Pillow's GIF writer holds every frame itself,
    so the writer's own copies would double the memory (200 frames of 560 x 730 pixels: 250 MB peak as
    palette images, 170 MB so; as matplotlib's RGBA frames, 330 MB more)."""

    def __init__(self, palette_image, **kwargs):
        super().__init__(**kwargs)
        self.palette_image = palette_image

    def grab_frame(self, **savefig_kwargs):
        rgba = np.asarray(self.fig.canvas.buffer_rgba())
        frame = Image.fromarray(rgba[..., :3].copy(), "RGB").quantize(palette=self.palette_image,
                                                                      dither=Image.Dither.NONE)
        self._size = frame.size
        self._frames.append(zlib.compress(frame.tobytes(), 1))

    def _frame(self, data):
        frame = Image.frombytes("P", self._size, zlib.decompress(data))
        frame.putpalette(self.palette_image.getpalette())
        return frame

    def finish(self):
        # Complete or absent: written beside the output and renamed over it only when Pillow has written it all
        # (a full disk or Ctrl-C during the write leaves no half GIF, and an older GIF untouched).
        frames = (self._frame(data) for data in self._frames)
        tmp = f"{self.outfile}.tmp-{os.getpid()}"
        try:
            next(frames).save(tmp, format="GIF", save_all=True, append_images=frames, duration=int(1000 / self.fps),
                              loop=0)
            os.replace(tmp, self.outfile)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise


def equal_limits(limits, box_width, box_height):
    """The limits widened about their centre so one unit is as long on x as on y in a box of that size."""
    xmin, xmax, ymin, ymax = limits
    scale = max((xmax - xmin) / box_width, (ymax - ymin) / box_height)
    cx, cy = (xmin + xmax) / 2, (ymin + ymax) / 2
    return (cx - scale * box_width / 2, cx + scale * box_width / 2, cy - scale * box_height / 2,
            cy + scale * box_height / 2)


def legend_handles(tracks, data, colors, trail, sight=None):
    """The runs (colour), the points (marker), the chain, the trace and a following view's window."""
    longest = max(range(len(tracks)), key=lambda i: len(data["runs"][i]["names"]))
    names, reference = data["runs"][longest]["names"], tracks[longest][0].get("file_points", False)
    handles = [plt.Line2D([], [], color=c, linewidth=2.4, label=d["legend"]) for d, c in zip(data["runs"], colors)]
    handles += [plt.Line2D([], [], linestyle="none", marker=MARKERS[j], color="0.6", markeredgecolor="black",
                           markersize=9 if j == 0 else 7,
                           label=name + (" (reference point)" if j == 0 and reference and len(names) > 1 else ""))
                for j, name in enumerate(names[:len(MARKERS)])]
    if len(names) > 1:
        handles.append(plt.Line2D([], [], color="0.3", linewidth=2.4, label="chain: the points in declared order"))
    if trail > 0:
        handles.append(plt.Line2D([], [], color="0.5", linewidth=1.4, label="trace: the path " + (
            "so far" if math.isinf(trail) else f"of the last {trail:.3g} {tracks[0][0]['t_unit']}")))
    if sight and sight["follow"]:
        unit = points_unit(tracks)
        handles.append(plt.Line2D([], [], linestyle="none", label=(
            f"view: {sight['width']:.3g}{' ' + unit if unit else ''} wide, following the runs\n"
            "(inset: the whole path and the view)")))
    return handles


def points_unit(tracks):
    """The points' one unit ("" when they differ or do not say)."""
    units = {u for r, _ in tracks for _, u, _, _, _ in (r.get("points") or [])}
    return units.pop() if len(units) == 1 else ("m" if not any(r.get("points") for r, _ in tracks) else "")


def figure(tracks, data, colors, trail, sight):
    """The figure and its axes, laid out once (a layout engine would move the axes between frames): the
    legend below the axes, the axes' box shaped like the view (height / width clamped to 0.5 .. 1.25); a view
    that follows the runs gets an inset of the whole path (and returns it, else None)."""
    unit = points_unit(tracks)
    aspect = min(max(sight["height"] / sight["width"], 0.5), 1.25) if sight["width"] > 0 else 1.0
    fig = plt.figure(figsize=(WIDTH, WIDTH * aspect), dpi=DPI)
    handles = legend_handles(tracks, data, colors, trail, sight)
    legend = fig.legend(handles=handles, loc="lower center", ncol=1 if len(handles) <= 3 else 2, frameon=False,
                        fontsize=9)
    fig.canvas.draw()
    legend_height = legend.get_window_extent().height / fig.dpi
    left, right, top, bottom = 0.75, 0.2, 0.4, legend_height + 0.55  # inches
    width = WIDTH - left - right
    height = width * aspect + top + bottom
    fig.set_figheight(height)
    ax = fig.add_axes([left / WIDTH, bottom / height, width / WIDTH, 1 - (top + bottom) / height])
    ax.box_inches = (width, width * aspect)  # equal_limits' box, for the frames of a following view
    xmin, xmax, ymin, ymax = equal_limits(sight["limits"][0], *ax.box_inches)
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(f"x [{unit or '-'}]")  # points without a unit: "[-]", as tools/plot.py's axes
    ax.set_ylabel(f"y [{unit or '-'}]")
    ax.grid(True, color="0.9", linewidth=0.6)
    inset = None
    if sight["follow"]:
        # Where the window is on the whole path: each run's first point's path, the window a black box (moved by
        # render; the GIF's palette holds greys and the runs' colours); in the upper left, the mechanism being in
        # the middle.
        inset = ax.inset_axes([0.02, 0.66, 0.3, 0.32])
        for (run, points), c in zip(tracks, colors):
            stride = max(1, math.ceil(run["k"] / 4000))
            inset.plot(points[0][1][::stride], points[0][2][::stride], color=c, linewidth=0.8)
        xmin, xmax, ymin, ymax = data["limits"]
        inset.set_xlim(*equal_limits(data["limits"], 0.3 * width, 0.32 * width * aspect)[:2])
        inset.set_ylim(*equal_limits(data["limits"], 0.3 * width, 0.32 * width * aspect)[2:])
        inset.set_xticks([])
        inset.set_yticks([])
        inset.set_facecolor((1, 1, 1, 0.85))
        inset.window = matplotlib.patches.Rectangle((0, 0), 0, 0, fill=False, edgecolor="black", linewidth=1.2)
        inset.add_patch(inset.window)
    return fig, ax, inset


def render(tracks, times, out, fps=FPS, trail=None, title="", window=None):
    """Writes the GIF: one frame per time, fps frames per second of playback. The axes, ticks and legend are
    drawn once; each frame restores them and draws what moves (the title's time, chains, markers, traces). A
    view that follows the runs (view(): window) moves the axes' limits, so its frames redraw the figure.
    Returns the view."""
    data = frame_data(tracks, times)
    sight = view(data, window)
    if trail is None:
        trail = TRAIL_FRACTION * (times[-1] - times[0])
    colors = [plot.color(i, len(tracks)) for i in range(len(tracks))]
    fig, ax, inset = figure(tracks, data, colors, trail, sight)
    moving = []  # (run, points, frame data, rgba, traces, chain, markers)
    for i, ((run, points), d, c) in enumerate(zip(tracks, data["runs"], colors)):
        # Runs that agree lie on top of each other: later runs are drawn thinner and smaller, on top, so the
        # earlier ones show around them (as plot.py's curves).
        width, size = max(3.0 - 0.7 * i, 1.2), max(11.0 - 3.5 * i, 4.0)
        traces = [LineCollection([], linewidths=0.6 * width, zorder=1, animated=True)
                  for _ in points] if trail > 0 else []
        for lc in traces:
            ax.add_collection(lc, autolim=False)
        chain, = ax.plot([], [], color=c, linewidth=width, solid_capstyle="round", zorder=2 + 0.01 * i,
                         animated=True)
        marks = [ax.plot([], [], linestyle="none", marker=MARKERS[j % len(MARKERS)], color=c, animated=True,
                         markersize=size if j == 0 else 0.8 * size, markeredgecolor="black", markeredgewidth=0.6,
                         zorder=3 + 0.01 * i)[0] for j in range(len(points))]
        moving.append((run, points, d, matplotlib.colors.to_rgba(c), traces, chain, marks))
    heading = ax.set_title(" ", fontsize=11, animated=True)
    fmt = time_format(times)
    t_unit = tracks[0][0]["t_unit"]
    if sight["follow"]:
        ax.set_visible(False)  # its background is the figure without the axes, which move
    fig.canvas.draw()
    background = fig.canvas.copy_from_bbox(fig.bbox)

    def update(i):
        t = times[i]
        if sight["follow"]:
            xmin, xmax, ymin, ymax = equal_limits(sight["limits"][i], *ax.box_inches)
            ax.set_xlim(xmin, xmax)
            ax.set_ylim(ymin, ymax)
            inset.window.set_bounds(xmin, ymin, xmax - xmin, ymax - ymin)
            # The axes again at the new limits (ticks, grid, the inset; not the animated artists) over the figure
            # drawn without them: a whole redraw (legend, text layout) cost twice as much.
            fig.canvas.restore_region(background)
            ax.set_visible(True)
            fig.draw_artist(ax)
        else:
            fig.canvas.restore_region(background)
        heading.set_text(f"{title}   t = {fmt.format(t)} {t_unit}")
        artists = []
        for run, points, d, rgba, traces, chain, marks in moving:
            xy = d["xy"][i]
            for lc, (px, py) in zip(traces, trace((run, points), t, trail)):
                segments = np.stack([np.column_stack([px[:-1], py[:-1]]), np.column_stack([px[1:], py[1:]])], axis=1)
                lc.set_segments(segments)
                lc.set_color(fading(rgba, len(segments)))
                artists.append(lc)
            chain.set_data(xy[:, 0], xy[:, 1])
            artists.append(chain)
            for j, m in enumerate(marks):
                m.set_data([xy[j, 0]], [xy[j, 1]])
                # A run that stopped early (diverged, failed) is crossed out where it stopped.
                m.set_marker("X" if t > run["t"][-1] and run["status"] != "ok" else MARKERS[j % len(MARKERS)])
                artists.append(m)
        # Every run's traces under every run's chains, those under every run's markers; later runs on top.
        for a in sorted(artists, key=lambda a: a.get_zorder()):
            ax.draw_artist(a)
        ax.draw_artist(heading)

    writer = BufferPillowWriter(palette(colors), fps=fps)
    with writer.saving(fig, out, DPI):
        for i in range(len(times)):
            update(i)
            writer.grab_frame()
    plt.close(fig)
    return sight


def default_out(path, tracks):
    stem = os.path.splitext(path)[0]
    if len(tracks) > 1:
        return f"{stem}_animation.gif"
    return f"{stem}_animation_{re.sub(r'[^A-Za-z0-9._-]+', '_', tracks[0][0]['id'])}.gif"


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 1 (argparse's default: usage and exit 2)
        raise AnimationError(f"{message} (usage: {USAGE})")


def parser():
    p = Parser(prog="tools/plot.py", add_help=False,
               description="An animated GIF of runs' named points (tools/animate.py).")
    p.add_argument("file")
    p.add_argument("--animate", nargs="*", metavar="RUN", default=[])
    p.add_argument("--fps", type=float, default=FPS)
    p.add_argument("--duration", type=float, default=None)
    p.add_argument("--max-frames", type=int, default=MAX_FRAMES)
    p.add_argument("--trail", type=float, default=None)
    p.add_argument("--window", type=float, default=None)
    p.add_argument("--out", default=None)
    return p


def main(args):
    """tools/plot.py FILE.h5 --animate [RUN ...] [options]: args without the program name. Exit code."""
    if "-h" in args or "--help" in args:
        print(__doc__)
        return 0
    try:
        a = parser().parse_args(args)
        # GIF delays are whole centiseconds, and browsers slow delays under 2 cs down to 10 cs.
        if not 0 < a.fps <= 50:
            raise AnimationError(f"--fps {a.fps:g}: give 0 < fps <= 50")
        if a.duration is not None and not (a.duration > 0 and math.isfinite(a.duration)):
            raise AnimationError(f"--duration {a.duration:g}: give a positive number of seconds")
        if a.max_frames < 1:
            raise AnimationError(f"--max-frames {a.max_frames}: give at least 1")
        if a.trail is not None and not a.trail >= 0:
            raise AnimationError(f"--trail {a.trail:g}: give seconds >= 0 (inf: the whole path)")
        if a.window is not None and not (a.window >= 0 and math.isfinite(a.window)):
            raise AnimationError(f"--window {a.window:g}: give a width >= 0 in the points' unit (0: the whole path)")
        if not os.path.exists(a.file):
            raise AnimationError(f"no such file '{a.file}'")
        run_ids = list(dict.fromkeys(a.animate))
        tracks, total = load_tracks(a.file, run_ids)
        count, asked = frame_count(tracks, a.fps, a.duration, a.max_frames)
        if asked > count:
            plot.note(f"{asked} frames asked, at most --max-frames {a.max_frames}: the GIF plays {count / a.fps:g} s")
        times = frame_times(tracks, count)
        out = a.out or default_out(a.file, tracks)
        sight = render(tracks, times, out, a.fps, a.trail, title=", ".join(dict.fromkeys(r["problem"] for r, _ in tracks)),
                       window=a.window)
    except AnimationError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # unreadable file, unwritable output
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    if run_ids:
        which = "runs " + ", ".join(f"'{r['id']}'" for r, _ in tracks)
    else:
        which = f"run '{tracks[0][0]['id']}', " + (f"the file's first of {total} runs" if total > 1
                                                   else "the file's only run")
    print(f"plot.py: wrote {out} ({which}; {len(times)} frames at {a.fps:g} fps, t = {times[0]:g} to "
          f"{times[-1]:g} {tracks[0][0]['t_unit']}, {os.path.getsize(out) / 1e3:.0f} kB" +
          (f"; the view follows the runs, {sight['width']:.3g}{' ' + points_unit(tracks) if points_unit(tracks) else ''} "
           "wide" if sight["follow"] else "") + ")")
    return 0
