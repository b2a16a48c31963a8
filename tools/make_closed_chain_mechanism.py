#!/usr/bin/python3
"""Writes the zoo's closed_chain (problems/closed_chain.hpp) with n bars as a mechanism file
(docs/mechanism-files.md), equal to the zoo problem at that n: the same coordinates theta_1 .. theta_n, the
same parameters and defaults, and T, V and h written in the operation order of the header's templated
mass_matrix, potential and constraint, so that the derived terms agree with the zoo's to the bit (the zoo's
hand-written analytic_terms / analytic_constraint_terms are the same terms in another order: equal to
round-off).

    tools/make_closed_chain_mechanism.py [--n 16] [--out PATH]        (stdout without --out)

tests/data/mechanisms/closed_chain_16.toml is its output at the default n = 16. Standard library only.

The default initial state of the zoo (default_initial: a bisection for the arc, then Gauss-Newton
projection onto the anchor) has loops the file format cannot state, so it is computed here, in the header's
operation order (libm's sin, cos, atan2 and hypot, as the C++ calls them), and written as numbers: it is the
zoo's default state for the file's L, gx and gy (m and g do not enter it). So the file pins L, gx and gy
(min = max) as it pins n: an initial state that holds for the parameters it is given is a model contract
(`clmbench check`, "initial state, params +-10 %"), and numbers hold for one set only; regenerate the file
for other values (--L, --gx, --gy; the zoo recomputes its state for any).
"""

import argparse
import ctypes
import ctypes.util
import math
import sys

# Defaults of problems/closed_chain.hpp (n is the script's argument).
DEFAULTS = {"m": 1.0, "L": 0.25, "g": 9.81, "gx": 1.4, "gy": 0.0}
MAX_BARS = 1000


def _libm_hypot():
    """std::hypot is libm's hypot; Python's math.hypot is its own algorithm (it can differ in the last bit)."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        f = libm.hypot
        f.restype = ctypes.c_double
        f.argtypes = [ctypes.c_double, ctypes.c_double]
        return f
    except (OSError, AttributeError):
        return math.hypot


hypot = _libm_hypot()


def project_angles(q, n, L, gx, gy):
    """ClosedChain::project_angles: minimal-norm Gauss-Newton onto h = 0."""
    previous = math.inf
    for _ in range(100):
        hx, hy, a11, a12, a22 = -gx, -gy, 0.0, 0.0, 0.0
        for k in range(len(q)):
            s, c = math.sin(q[k]), math.cos(q[k])
            hx += L * c
            hy += L * s
            a11 += L * L * s * s
            a12 += -L * L * s * c
            a22 += L * L * c * c
        residual, scale = hypot(hx, hy), max(1.0, n * L)
        if residual <= 1e-15 * scale or (residual <= 1e-11 * scale and residual > 0.5 * previous):
            return
        previous = residual
        det = a11 * a22 - a12 * a12
        if not abs(det) > 0:
            sys.exit("closed_chain: default configuration is singular (straight chain)")
        zx, zy = (a22 * hx - a12 * hy) / det, (a11 * hy - a12 * hx) / det
        for k in range(len(q)):
            q[k] -= L * (-math.sin(q[k]) * zx + math.cos(q[k]) * zy)
    sys.exit("closed_chain: default configuration did not converge onto the anchor (gx, gy)")


def remove_constraint_component(q, qd, L):
    """ClosedChain::remove_constraint_component: qd minus its component along the rows of A (two passes)."""
    for _ in range(2):
        r1 = r2 = a11 = a12 = a22 = 0.0
        for k in range(len(q)):
            s, c = math.sin(q[k]), math.cos(q[k])
            r1 += -L * s * qd[k]
            r2 += L * c * qd[k]
            a11 += L * L * s * s
            a12 += -L * L * s * c
            a22 += L * L * c * c
        det = a11 * a22 - a12 * a12
        zx, zy = (a22 * r1 - a12 * r2) / det, (a11 * r2 - a12 * r1) / det
        for k in range(len(q)):
            qd[k] -= L * (-math.sin(q[k]) * zx + math.cos(q[k]) * zy)


def default_initial(N, L, gx, gy):
    """ClosedChain::default_initial, operation for operation."""
    d = hypot(gx, gy)
    psi = math.atan2(gy, gx) if d > 0 else 0.0
    lo, hi = 0.0, 2 * math.pi / N

    def reach(delta):
        return N * L if delta == 0 else L * math.sin(N * delta / 2) / math.sin(delta / 2)

    it = 0
    while it < 200 and hi - lo > 1e-16:
        mid = 0.5 * (lo + hi)
        if reach(mid) > d:
            lo = mid
        else:
            hi = mid
        it += 1
    delta = 0.5 * (lo + hi)
    side = 1.0 if math.cos(psi) >= 0 else -1.0
    q = []
    for k in range(N):
        arc = psi - side * ((N - 1) / 2.0 - k) * delta
        q.append(arc + 0.05 * math.sin(2 * math.pi * (k + 0.5) / N) * min(1.0, delta * N))
    project_angles(q, float(N), L, gx, gy)
    qd = [math.sin(math.pi * (k + 1) / (N + 1)) + 0.3 * math.cos(0.7 * k) for k in range(N)]
    remove_constraint_component(q, qd, L)
    return q, qd


def mechanism(N, separable=False, geometry=None):
    p = dict(DEFAULTS, **(geometry or {}))
    if not (2 <= N <= MAX_BARS):
        sys.exit(f"--n must be an integer in [2, {MAX_BARS}]")
    if not hypot(p["gx"], p["gy"]) < (1 - 1e-9) * N * p["L"]:
        sys.exit(f"the anchor (gx, gy) = ({p['gx']}, {p['gy']}) is out of reach of {N} bars of {p['L']} m")
    th = [f"theta_{k + 1}" for k in range(N)]
    q0, qd0 = default_initial(N, p["L"], p["gx"], p["gy"])

    def terms(key, items, indent):
        """A TOML multi-line string: one term a line (the backslashes join them into one expression)."""
        return f'{key}"""{items[0]}' + "".join(f" \\\n{indent}+ {t}" for t in items[1:]) + '"""'

    # Integers in the expressions are the zoo's 0-based indices k, l (bar k is theta_{k+1}).
    kinetic = []
    for k in range(N):
        kinetic.append(f"mL2*(n - {k} - 2.0/3.0)/2*der({th[k]})^2")
        for l in range(k + 1, N):
            cos_kl = (f"(c_{k + 1}*c_{l + 1} + s_{k + 1}*s_{l + 1})" if separable else f"cos({th[k]} - {th[l]})")
            kinetic.append(f"mL2*(n - {l} - 0.5)*{cos_kl}*der({th[k]})*der({th[l]})")
    potential = [f"m*g*L*(n - {k} - 0.5)*sin({th[k]})" for k in range(N)]
    hx = ["-gx"] + [f"L*cos({t})" for t in th]
    hy = ["-gy"] + [f"L*sin({t})" for t in th]

    def numbers(values):
        rows = [", ".join(repr(v) for v in values[i:i + 4]) for i in range(0, len(values), 4)]
        return "[" + ",\n     ".join(rows) + "]"

    out = [
        f"# The zoo's closed_chain (problems/closed_chain.hpp) at n = {N} as a mechanism file. Generated by",
        f"#   tools/make_closed_chain_mechanism.py --n {N}" + (" --separable" if separable else "")
        + "".join(f" --{k} {p[k]!r}" for k in ("L", "gx", "gy") if p[k] != DEFAULTS[k]),
        "# (do not edit: regenerate). T, V and h in the operation order of the header's templated mass_matrix,",
        "# potential and constraint; the integers in them are the header's 0-based bar indices k, l."
        + ("\n# --separable: cos(theta_k - theta_l) written as c_k c_l + s_k s_l (2n trigonometric calls instead of"
           "\n# n(n-1)/2; the same M to round-off, not to the bit)." if separable else ""),
        'name = "closed_chain_file"',
        'description = "n uniform bars in absolute angles, root pinned at the origin, tip pinned at (gx, gy); '
        'size-scaling problem"',
        "coordinates = [" + ", ".join(f'"{t}"' for t in th) + "]",
        "units = [" + ", ".join('"rad"' for _ in th) + "]",
        "",
        "[parameters]",
        f'n = {{ value = {N}, unit = "-", description = "number of bars (integer, 2 .. {MAX_BARS}); fixed in this file '
        f'(min = max): regenerate for another", min = {N}, max = {N} }}',
        f'm = {{ value = {p["m"]!r}, unit = "kg", description = "mass of one bar", min = 0 }}',
        f'L = {{ value = {p["L"]!r}, unit = "m", description = "length of one bar; fixed with the initial state '
        f'(min = max)", min = {p["L"]!r}, max = {p["L"]!r} }}',
        f'g = {{ value = {p["g"]!r}, unit = "m/s^2", description = "gravity, along -y" }}',
        f'gx = {{ value = {p["gx"]!r}, unit = "m", description = "x of the ground point the tip is pinned to; fixed '
        f'with the initial state (min = max)", min = {p["gx"]!r}, max = {p["gx"]!r} }}',
        f'gy = {{ value = {p["gy"]!r}, unit = "m", description = "y of the ground point the tip is pinned to; fixed '
        f'with the initial state (min = max)", min = {p["gy"]!r}, max = {p["gy"]!r} }}',
        "",
        "[let]",
        'mL2 = "m*L*L"',
    ] + ([f'c_{k + 1} = "cos({th[k]})"\ns_{k + 1} = "sin({th[k]})"' for k in range(N)] if separable else []) + [
        "",
        "[energy]",
        "# 1/2 qd^T M qd: M_kk = m L^2 (n - k - 2/3), M_kl = m L^2 (n - l - 1/2) cos(theta_k - theta_l) for k < l",
        terms("T = ", kinetic, "    "),
        "# m g sum_k y(c_k) = m g L sum_k (n - k - 1/2) sin(theta_k), summed from k = 0",
        terms("V = ", potential, "    "),
        "",
        "[constraints]",
        "# the tip L sum_k e(theta_k) at (gx, gy)",
        "position = [" + terms("", hx, "             ") + ",",
        "            " + terms("", hy, "             ") + "]",
        "",
        "[initial]",
        "# default_initial for these L, gx, gy (computed by the generator: an arc through the anchor, perturbed,",
        "# projected onto h = 0; a smooth velocity profile with its component along the rows of A removed)",
        "q = " + numbers(q0),
        "qd = " + numbers(qd0),
    ]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=16, help="number of bars (default 16)")
    parser.add_argument("--out", help="output path (default: stdout)")
    parser.add_argument("--separable", action="store_true",
                        help="write cos(theta_k - theta_l) as cos theta_k cos theta_l + sin theta_k sin theta_l "
                             "(O(n) trigonometric calls: faster, equal to the zoo to round-off instead of the bit)")
    for key in ("L", "gx", "gy"):
        parser.add_argument(f"--{key}", type=float, default=DEFAULTS[key],
                            help=f"{key} (default {DEFAULTS[key]}, the zoo's); the initial state is computed for it")
    args = parser.parse_args()
    text = mechanism(args.n, args.separable, {"L": args.L, "gx": args.gx, "gy": args.gy})
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
