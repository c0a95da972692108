#!/bin/bash
# Small collectives with 2 PEs on one GPU under MPS (issue #15): where a
# blocking fcollect/alltoall of 1 KiB spends its time, and the protocol
# levers side by side in one call:
#
#   test/gpu/run-on-device.sh coll1 [OUTDIR]   (from the repository root)
#
# builds as run-on-device.sh (or reuses its build tree), then runs
# bench/gpu_bench --coll-only with 2 PEs on GPU 0 under the launcher's
# private MPS daemon (--mps): first 1 KiB only with SHMEM_SDMA_STATS=1 per
# lever (the "chain stats" lines: posts per call, time to the last post,
# to the queues' completion, to the last arrival), then 1 KiB .. 64 KiB
# for the table (COLL1_TABLE=0: not; COLL1_CHECK=1: gpu_coll under each
# lever first). Levers: COLL1_VARIANTS (default
# below), each "label:ENV=V,ENV=V". The "cuda posting" lines time the
# driver calls of posting by kind.
set -u
. "$(dirname "$0")/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-coll1.txt 44 540 -coll1

dev_build_reuse "$OUTDIR/build-coll1.log" src/libdmashmem.la \
    src/launcher/shmem_launcher test/gpu/gpu_coll test/gpu/gpu_graph \
    bench/gpu_bench
export top_builddir=$B top_srcdir=$SRC SHMEM_CUDA_DEVICE=0
export SHMEM_SYMMETRIC_SIZE=64M SHMEM_DEVICE_HEAP_SIZE=1G
VARIANTS=${COLL1_VARIANTS:-"issued:SHMEM_CUDA_GRAPH_COPIES=0,SHMEM_COLL_LOCAL_MERGE_MAX=0 graphs: graphs-entry:SHMEM_COLL_LOCAL_MERGE_MAX=0"}

# bench LABEL MAX STATS ENV...: one gpu_bench job, its CSV row labelled.
bench() {
    local label=$1 max=$2 stats=$3
    shift 3
    if late 40; then row "gpu_bench $label $max" "NOT RUN (deadline)"; return; fi
    echo "=== gpu_bench $label max $max (env $*)" >>"$TESTS_LOG"
    env SHMEM_SDMA_STATS=$stats "$@" timeout 100 "$L" -n 2 --mps --timeout 95 \
        "$B/bench/gpu_bench" --coll-only --max "$max" --label "$label" \
        >"$LAST" 2>&1
    local rc=$?
    cat "$LAST" >>"$TESTS_LOG"
    if [ $rc = 0 ]; then
        row "gpu_bench $label $max" ok
    else
        row "gpu_bench $label $max" "FAILED rc=$rc"
        tail -5 "$LAST"
    fi
    [ "$stats" = 1 ] && grep -E "chain stats|cuda posting" "$LAST" | sed "s/^/$label: /" |
        tee -a "$OUTDIR/stats-coll1.txt"
}
envs() { echo "${1#*:}" | tr ',' ' '; }
# COLL1_CHECK=1: gpu_coll (every variant, data checked) under each lever
# first, 2 PEs on GPU 0 under MPS.
# Each passing row says how many copy runs PE 0 replayed from graphs
# (SHMEM_SDMA_STATS's "cuda posting" line).
graphs_note() {
    sed -n 's/.*cuda posting PE 0: copies \([0-9]*\) x[^,]*, graph launches \([0-9]*\) x.*/(PE 0: \2 graph launches, \1 copy runs issued)/p' "$LAST" | head -1
}
if [ "${COLL1_CHECK:-0}" = 1 ]; then
    RUN_PASS_NOTE=graphs_note
    for v in $VARIANTS; do
        # shellcheck disable=SC2046
        run "gpu_coll ${v%%:*}" 60 env SHMEM_SDMA_STATS=1 $(envs "$v") "$L" \
            -n 2 --mps --timeout 55 "$B/test/gpu/gpu_coll"
    done
    run "gpu_coll 4 PEs, defaults" 90 env SHMEM_SDMA_STATS=1 "$L" -n 4 \
        --mps --timeout 85 "$B/test/gpu/gpu_coll"
    run "gpu_graph 2 PEs, defaults" 60 env SHMEM_SDMA_STATS=1 "$L" -n 2 \
        --mps --timeout 55 "$B/test/gpu/gpu_graph"
    run "gpu_graph 4 PEs, defaults" 90 env SHMEM_SDMA_STATS=1 "$L" -n 4 \
        --mps --timeout 85 "$B/test/gpu/gpu_graph"
    RUN_PASS_NOTE=
fi
for v in $VARIANTS; do
    # shellcheck disable=SC2046
    bench "${v%%:*}" 1024 1 $(envs "$v")
done
mkdir -p "$OUTDIR/tab"
export OUT=$OUTDIR/tab
[ "${COLL1_TABLE:-1}" = 0 ] ||
for v in $VARIANTS; do
    # shellcheck disable=SC2046
    bench "${v%%:*}" 65536 0 $(envs "$v")
done
# pivot CSV...: one line per test and size, one column per lever (us).
pivot() {
    cat "$@" 2>/dev/null | grep -v '^label' | awk -F, '
        { k = $3 " " $5; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
          if (!($1 in lab)) { lab[$1] = 1; labs[++nl] = $1 }
          v[k, $1] = $6 }
        END { printf "%-26s", "test bytes"
              for (j = 1; j <= nl; j++) printf " %13s", labs[j]; print ""
              for (i = 1; i <= nk; i++) { printf "%-26s", keys[i]
                  for (j = 1; j <= nl; j++) printf " %13s", v[keys[i], labs[j]]
                  print "" } }'
}
echo "================ 1 KiB, the stats runs (us)"
pivot "$OUTDIR"/gpu_bench-*.csv
echo "================ 1 KiB .. 64 KiB (us)"
pivot "$OUTDIR"/tab/gpu_bench-*.csv
echo "================ chain stats"
cat "$OUTDIR/stats-coll1.txt" 2>/dev/null
echo "================ summary (coll1)"
cat "$SUMMARY"
