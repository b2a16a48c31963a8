#!/usr/bin/env bash
# Issue 25's measurement, rerunnable on any machine: the wall time of `clmbench sweep` on the two grids of
# bench/ (scale_long.ini: 48 closed-chain runs with 16 reference runs; scale_short.ini: 480 sleigh runs) for
# each job count, and under mpirun, with the speed-up against one job; every file compared with the one-job
# file (tests/support/h5_tool.py compare: every dataset and non-timing attribute).
#
#   bench/scale_speedup.sh [JOBS ...]            default: 1 2 (this VM has 2 cores); e.g. 1 2 4 8 16
#   CLMBENCH_BINARY=build/clmbench GRIDS="scale_long" MPI=1 bench/scale_speedup.sh 1 16
#
# MPI=1 also runs `mpirun -n K` (one job per rank) for each K > 1. Output files go to $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${CLMBENCH_BINARY:-build/clmbench}")"
grids="${GRIDS:-scale_long scale_short}"
jobs=("$@")
[ ${#jobs[@]} -eq 0 ] && jobs=(1 2)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/clmbench_scale.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
seconds() { local s e; s=$(date +%s.%N); "$@" > "$tmp/out.txt" 2> "$tmp/err.txt" || { echo "scale_speedup: failed: $*" >&2; tail -3 "$tmp/err.txt" >&2; exit 1; }; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'; }
for g in $grids; do
  base=""
  for k in "${jobs[@]}"; do
    runs=("$bin" sweep "bench/$g.ini" --jobs "$k" --out "$tmp/$g.j$k.h5" --progress never)
    t=$(seconds "${runs[@]}")
    [ -z "$base" ] && base=$t && ref="$tmp/$g.j$k.h5"
    same=$([ "$ref" = "$tmp/$g.j$k.h5" ] && echo "-" || { /usr/bin/python3 tests/support/h5_tool.py compare "$ref" "$tmp/$g.j$k.h5" > /dev/null && echo same || echo DIFFERENT; })
    printf "%-12s --jobs %-3s %8s s  speed-up %5s  data %s\n" "$g" "$k" "$t" "$(awk -v a="$base" -v b="$t" 'BEGIN { printf "%.2f", a / b }')" "$same"
    if [ "${MPI:-0}" = 1 ] && [ "$k" -gt 1 ]; then
      t=$(seconds mpirun --allow-run-as-root --oversubscribe -n "$k" "$bin" sweep "bench/$g.ini" --out "$tmp/$g.mpi$k.h5" --progress never)
      same=$(/usr/bin/python3 tests/support/h5_tool.py compare "$ref" "$tmp/$g.mpi$k.h5" > /dev/null && echo same || echo DIFFERENT)
      printf "%-12s mpirun -n %-3s %5s s  speed-up %5s  data %s\n" "$g" "$k" "$t" "$(awk -v a="$base" -v b="$t" 'BEGIN { printf "%.2f", a / b }')" "$same"
    fi
  done
done
