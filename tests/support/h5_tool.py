#!/usr/bin/python3
"""Test helper for tests/sweep_test.cpp (and the bit-identity checks of a refactoring), independent of
clmbench's own HDF5 code (h5py).

  h5_tool.py compare A.h5 B.h5     every group, dataset and attribute equal (NaN == NaN), timings and
                                   provenance aside: exit 0, else the differences on stdout and exit 1
  h5_tool.py runs F.h5 ATTR ...    one line per /runs group, in listing order: name then the attributes
"""
import sys

import h5py
import numpy as np

# Allowed to differ between two computations of the same inputs: clocks (every *_time_s attribute, and every
# dataset so named: /summary/cpu_time_s, /kozlov/<study>/wall_time_s; the statistics of repeated timings,
# cpu_time_repeats and cpu_time_spread), how it was invoked, and which build of
# the same code computed it (git_commit: comparing the results of two commits is how a refactoring is checked
# to be bit-identical).
PROVENANCE_ATTRS = {"created_utc", "command_line", "git_commit"}


def is_timing(name):
    return name.endswith("_time_s") or name.startswith("cpu_time_")


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def compare(fa, fb):
    diffs = []

    def walk(ga, gb, path):
        attrs_a = {k for k in ga.attrs if k not in PROVENANCE_ATTRS and not is_timing(k)}
        attrs_b = {k for k in gb.attrs if k not in PROVENANCE_ATTRS and not is_timing(k)}
        if attrs_a != attrs_b:
            diffs.append(f"{path}: attributes {sorted(attrs_a ^ attrs_b)}")
        for k in sorted(attrs_a & attrs_b):
            if not same(ga.attrs[k], gb.attrs[k]):
                diffs.append(f"{path} attribute {k}: {ga.attrs[k]!r} != {gb.attrs[k]!r}")
        if isinstance(ga, h5py.Dataset):
            if not is_timing(path.rsplit("/", 1)[1]) and not same(ga[()], gb[()]):
                diffs.append(f"{path}: data differ")
            return
        if set(ga) != set(gb):
            diffs.append(f"{path}: members {sorted(set(ga) ^ set(gb))}")
        for k in sorted(set(ga) & set(gb)):
            if isinstance(ga[k], h5py.Group) != isinstance(gb[k], h5py.Group):
                diffs.append(f"{path}/{k}: kinds differ")
                continue
            walk(ga[k], gb[k], f"{path}/{k}".replace("//", "/"))

    walk(fa, fb, "/")
    return diffs


def main():
    if sys.argv[1] == "compare":
        with h5py.File(sys.argv[2], "r") as fa, h5py.File(sys.argv[3], "r") as fb:
            diffs = compare(fa, fb)
        for d in diffs[:20]:
            print(d)
        sys.exit(1 if diffs else 0)
    if sys.argv[1] == "runs":
        with h5py.File(sys.argv[2], "r") as f:
            for name in f["runs"]:
                values = []
                for a in sys.argv[3:]:
                    v = f["runs"][name].attrs.get(a, "?")
                    if isinstance(v, bytes):
                        v = v.decode()
                    if isinstance(v, (np.floating, float)):
                        v = repr(float(v))
                    values.append(str(v))
                print(" ".join([name] + values))
        sys.exit(0)
    sys.exit(2)


if __name__ == "__main__":
    main()
