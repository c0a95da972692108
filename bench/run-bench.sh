#!/bin/bash
# make bench: run bench/shmem_bench on dmashmem and, where configure found
# it, the same source built with Open MPI's oshcc on OSHMEM; then the
# SHMEM_SDMA_INLINE_MAX sweep and one SHMEM_SDMA_STATS=1 run of dmashmem; then
# print the two libraries side by side. Everything also lands in
# $BENCH_OUT (default bench/results under the build tree).
#
# Environment (the bench target sets the first ones):
#   top_builddir, top_srcdir   build and source trees
#   OSHMEM_RUN                 Open MPI's oshrun; empty: dmashmem only
#   BENCH_ARGS                 extra shmem_bench options, e.g. --quick
#   BENCH_OUT                  results folder
#   BENCH_INLINE_VALUES        SHMEM_SDMA_INLINE_MAX values to sweep
#   BENCH_TIMEOUT              seconds before one run counts as hung
set -u

top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
OSHMEM_RUN=${OSHMEM_RUN:-}
BENCH_ARGS=${BENCH_ARGS:-}
out=${BENCH_OUT:-$top_builddir/bench/results}
inline_values=${BENCH_INLINE_VALUES:-0 4096 65536}
limit=${BENCH_TIMEOUT:-300}

launcher=$top_builddir/src/launcher/shmem_launcher
dsm=$top_builddir/bench/shmem_bench
osh=$top_builddir/bench/shmem_bench-oshmem

mkdir -p "$out" || exit 1
status=0

# dmashmem: the in-tree launcher. $1: label, then shmem_bench options;
# SHMEM_* settings come from the caller's environment.
run_dsm() {
    local label=$1
    shift
    "$launcher" -n 2 --timeout "$limit" "$dsm" --label "$label" \
        $BENCH_ARGS "$@"
}

# OSHMEM (Open MPI 4.1, UCX): spml ucx is the only working shared-memory
# path; osc ^rdma keeps the MPI one-sided rdma component from being opened
# (it needs a network and only warns here). --oversubscribe because the
# machine has as many cores as PEs and Open MPI counts slots strictly. As
# root, Open MPI refuses to start without --allow-run-as-root.
run_osh() {
    local root=()
    [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
    timeout "$limit" "$OSHMEM_RUN" "${root[@]}" --oversubscribe -np 2 \
        --mca spml ucx --mca osc ^rdma "$osh" $BENCH_ARGS "$@"
}

banner() {
    printf '\n==== %s ====\n' "$*"
}

banner "dmashmem (defaults)"
run_dsm default --csv "$out/dmashmem.csv" | tee "$out/dmashmem.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "run-bench: dmashmem run failed" >&2; status=1; }

have_osh=0
if [ -n "$OSHMEM_RUN" ] && [ -x "$osh" ]; then
    banner "Open MPI OSHMEM ($OSHMEM_RUN)"
    run_osh --csv "$out/oshmem.csv" | tee "$out/oshmem.txt"
    if [ "${PIPESTATUS[0]}" = 0 ]; then
        have_osh=1
    else
        echo "run-bench: OSHMEM run failed" >&2
        status=1
    fi
else
    banner "Open MPI OSHMEM: not found by configure, skipped"
fi

for v in $inline_values; do
    banner "dmashmem, SHMEM_SDMA_INLINE_MAX=$v (put, get)"
    SHMEM_SDMA_INLINE_MAX=$v run_dsm "inline=$v" --tests put,get \
        --csv "$out/inline-$v.csv" | tee "$out/inline-$v.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "run-bench: inline=$v run failed" >&2; status=1; }
done

# The phase breakdown (control, schedule, copy, sync) is printed per PE at
# finalize. A quick run keeps it short; inline 0 sends the blocking put and
# get through the engines too, so every test shows up in the counters.
banner "dmashmem, SHMEM_SDMA_STATS=1 SHMEM_SDMA_INLINE_MAX=0 (--quick)"
SHMEM_SDMA_STATS=1 SHMEM_SDMA_INLINE_MAX=0 \
    "$launcher" -n 2 --timeout "$limit" "$dsm" --quick --label stats 2>&1 |
    tee "$out/stats.txt"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "run-bench: stats run failed" >&2; status=1; }

# SHMEM_SDMA_INLINE_MAX sweep: put and get latency per setting.
banner "SHMEM_SDMA_INLINE_MAX sweep, latency in us (default: unset, the backend's auto value)"
awk -F, -v values="default $inline_values" '
    FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["test"] == "put" || $col["test"] == "get" {
        t = $col["test"]; size = $col["size"]
        label = $col["label"]; sub(/^inline=/, "", label)
        v[t, size, label] = $col["value"]
        if (!(size in seen)) { seen[size] = 1; sizes[++ns] = size }
    }
    END {
        nv = split(values, vals, " ")
        printf "%10s", "size"
        for (i = 1; i <= nv; i++) printf " %11s", "put@" vals[i]
        for (i = 1; i <= nv; i++) printf " %11s", "get@" vals[i]
        printf "\n"
        for (s = 1; s <= ns; s++) {
            printf "%10d", sizes[s]
            for (t = 0; t < 2; t++)
                for (i = 1; i <= nv; i++) {
                    k = (t ? "get" : "put") SUBSEP sizes[s] SUBSEP vals[i]
                    if (k in v) printf " %11.3f", v[k]; else printf " %11s", "-"
                }
            printf "\n"
        }
    }' "$out/dmashmem.csv" "$out"/inline-*.csv | tee "$out/inline-sweep.txt"

# Side by side. "x" is how many times better dmashmem is (OSHMEM time over
# dmashmem time for us, dmashmem over OSHMEM for GB/s and Mmsg/s): below 1
# dmashmem is behind, and the row is marked.
if [ "$have_osh" = 1 ]; then
    banner "dmashmem vs OSHMEM (x > 1: dmashmem better; '<' marks rows where dmashmem is behind)"
    awk -F, '
        FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { k = $col["test"] SUBSEP $col["size"] }
        FILENAME == ARGV[1] { d[k] = $col["value"]; unit[k] = $col["unit"]; order[++n] = k; next }
        { o[k] = $col["value"] }
        END {
            printf "%-9s %10s %-7s %12s %12s %8s\n", "test", "size", "unit", "dmashmem", "OSHMEM", "x"
            for (i = 1; i <= n; i++) {
                k = order[i]; split(k, p, SUBSEP)
                if (!(k in o)) continue
                if (unit[k] == "us") x = d[k] > 0 ? o[k] / d[k] : 0
                else x = o[k] > 0 ? d[k] / o[k] : 0
                printf "%-9s %10s %-7s %12.3f %12.3f %8.2f %s\n", p[1], p[2], unit[k], d[k], o[k], x, (x < 1 ? "<" : "")
            }
        }' "$out/dmashmem.csv" "$out/oshmem.csv" | tee "$out/compare.txt"
fi

exit $status
