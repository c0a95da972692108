#!/bin/bash
# Smoke test for the benchmark (make check): shmem_bench --quick on 2 PEs
# must exit 0 and print its table. It checks that the benchmark still runs
# against the library, not how fast; make bench measures.
set -u
top_builddir=${top_builddir:-.}
launcher=$top_builddir/src/launcher/shmem_launcher
bench=$top_builddir/bench/shmem_bench

for f in "$launcher" "$bench"; do
    if [ ! -x "$f" ]; then
        echo "bench-smoke: $f not built" >&2
        exit 99
    fi
done

out=$(mktemp "${TMPDIR:-/tmp}/bench-smoke.XXXXXX") || exit 99
csv=$out.csv
trap 'rm -f "$out" "$csv"' EXIT

# The launcher's timeout turns a hang into a failure rather than a stuck
# make check.
"$launcher" -n 2 --timeout 120 "$bench" --quick --csv "$csv" >"$out" 2>&1
rc=$?
cat "$out"
if [ $rc -ne 0 ]; then
    echo "bench-smoke: shmem_bench --quick exited $rc" >&2
    exit 1
fi
if ! grep -Eq '^ +size +put_us +get_us +pingpong_us +put_nbi_GB/s$' "$out"; then
    echo "bench-smoke: table header missing from the output" >&2
    exit 1
fi
if ! grep -q '^barrier_all ' "$out"; then
    echo "bench-smoke: barrier_all row missing from the output" >&2
    exit 1
fi
# One header plus 4 sizes x 4 tests plus rate and barrier.
rows=$(wc -l <"$csv")
if [ "$rows" -ne 19 ]; then
    echo "bench-smoke: $csv has $rows lines, expected 19" >&2
    exit 1
fi
# --iters-div (the network runs): every size of the sweep, iterations
# divided (the CSV's iters column: 20000 / 1000 = 20 at 8 B), and a bad
# value is refused before the job starts.
"$launcher" -n 2 --timeout 120 "$bench" --tests put --iters-div 1000 \
    --reps 1 --csv "$csv" >"$out" 2>&1 || { cat "$out"; echo "bench-smoke: --iters-div run failed" >&2; exit 1; }
rows=$(grep -c ',put,' "$csv")
[ "$rows" -ge 20 ] || { echo "bench-smoke: --iters-div: $rows put sizes, expected the full sweep" >&2; exit 1; }
grep -q ',put,8,20,' "$csv" || { grep ',put,8,' "$csv"; echo "bench-smoke: --iters-div 1000: 8 B put did not run 20 iterations" >&2; exit 1; }
if "$bench" --iters-div 0 >"$out" 2>&1 || ! grep -q "bad --iters-div" "$out"; then
    cat "$out"; echo "bench-smoke: --iters-div 0 was not refused" >&2; exit 1
fi
exit 0
