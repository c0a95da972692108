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
exit 0
