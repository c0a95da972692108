#!/bin/bash
# make bench-coll: bench/coll_bench on dmashmem (auto and every forced
# variant) and on Open MPI's OSHMEM (when configure found it), 2 and 4 PEs,
# then one table: rows op/bytes, a column per run. Results land in
# $BENCH_OUT (default bench/results under the build tree) as coll-*.csv.
#
# Environment: top_builddir, top_srcdir, OSHMEM_RUN (empty: dmashmem only),
# BENCH_ARGS (e.g. --quick), BENCH_OUT, BENCH_NPES (default "2 4"),
# BENCH_TIMEOUT (seconds per run).
set -u
top_builddir=${top_builddir:-.}
OSHMEM_RUN=${OSHMEM_RUN:-}
BENCH_ARGS=${BENCH_ARGS:-}
out=${BENCH_OUT:-$top_builddir/bench/results}
npes_list=${BENCH_NPES:-2 4}
limit=${BENCH_TIMEOUT:-600}
launcher=$top_builddir/src/launcher/shmem_launcher
dsm=$top_builddir/bench/coll_bench
osh=$top_builddir/bench/coll_bench-oshmem
mkdir -p "$out" || exit 1
status=0

run_dsm() { # npes label [VAR=value ...]
    local n=$1 label=$2
    shift 2
    env "$@" "$launcher" -n "$n" --timeout "$limit" "$dsm" --label "$label" \
        $BENCH_ARGS --csv "$out/coll-$label-$n.csv" ||
        { echo "run-coll: $label ($n PEs) failed" >&2; status=1; }
}

for n in $npes_list; do
    run_dsm "$n" auto
    for a in pcpy b2b direct; do
        run_dsm "$n" "$a" SHMEM_FCOLLECT_ALGORITHM=$a SHMEM_ALLTOALL_ALGORITHM=$a
    done
    run_dsm "$n" bcast+swap SHMEM_FCOLLECT_ALGORITHM=bcast SHMEM_ALLTOALL_ALGORITHM=swap
    if [ -n "$OSHMEM_RUN" ] && [ -x "$osh" ]; then
        root=()
        [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
        timeout "$limit" "$OSHMEM_RUN" "${root[@]}" --oversubscribe -np "$n" \
            --mca spml ucx --mca osc ^rdma "$osh" --label oshmem $BENCH_ARGS \
            --csv "$out/coll-oshmem-$n.csv" ||
            { echo "run-coll: OSHMEM ($n PEs) failed" >&2; status=1; }
    fi
done

# One table per PE count: op, bytes, then us per run.
for n in $npes_list; do
    echo
    echo "==== collectives, $n PEs (us per call) ===="
    cat "$out"/coll-*-"$n".csv 2>/dev/null | awk -F, '
        $1 == "label" { next }
        { key = $3 "," $4; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
          if (!($1 in lab)) { lab[$1] = 1; labs[++nl] = $1 }
          v[key, $1] = $5 }
        END {
          printf "%-18s %9s", "op", "bytes"
          for (j = 1; j <= nl; j++) printf " %10s", labs[j]
          printf "\n"
          for (i = 1; i <= nk; i++) {
            split(keys[i], kb, ",")
            printf "%-18s %9s", kb[1], kb[2]
            for (j = 1; j <= nl; j++)
              printf " %10s", ((keys[i], labs[j]) in v) ? v[keys[i], labs[j]] : "-"
            printf "\n"
          } }' | tee "$out/coll-table-$n.txt"
done
exit $status
