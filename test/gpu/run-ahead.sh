#!/bin/bash
# Persistent collectives posted ahead with PEs sharing one GPU (issue #15;
# SHMEM_PERSISTENT_SHARED_AHEAD=1). In one call:
#
#   test/gpu/run-on-device.sh ahead [OUTDIR]   (from the repository root)
#
# builds as run-on-device.sh (or reuses its build tree), starts MPS, then
# with 2 PEs on GPU 0: gpu_coll posted ahead with the test's copies on the
# legacy stream (hung on the H200) and on a non-blocking stream of its own
# (passed), again on 4 PEs, and gpu_bench's collectives posted at start
# (the default) against posted ahead. AHEAD_ONLY=4: traces of the 3- and
# 4-PE hang alone. A hang is a row, not the end of the run (each job has
# its own timeout).
set -u
. "$(dirname "$0")/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-ahead.txt 56 400 -ahead

dev_build_reuse "$OUTDIR/build-ahead.log" src/libdmashmem.la \
    src/launcher/shmem_launcher test/gpu/gpu_coll bench/gpu_bench
export top_builddir=$B top_srcdir=$SRC SHMEM_CUDA_DEVICE=0
export SHMEM_SYMMETRIC_SIZE=64M SHMEM_DEVICE_HEAP_SIZE=1G
# A passing gpu_coll's timing line on its row, a failing one's first error.
pass_note() { grep -m1 '^gpu_coll ' "$LAST" | cut -c1-60; }
fail_note() { grep -m1 -E 'FAIL|phase|error' "$LAST" | cut -c1-70; }
RUN_PASS_NOTE=pass_note RUN_FAIL_NOTE=fail_note RUN_TAIL=0
# Measured on 2026-12-02: posted ahead, gpu_coll hung at its first
# copy-in (cuMemcpyHtoD on the legacy stream) with LAZY and EAGER module
# loading, with and without MPS, 2 and 4 PEs, 32 connections, copies on
# the copy engines, depth 1, every PERSISTENT_SYNC. gate_probe then showed
# a synchronous legacy-stream copy waiting behind a gated copy of the same
# direction; the tests now copy on a non-blocking stream of their own
# (test/gpu/gpu_util.h), GPU_TEST_LEGACY_COPY=1 as before.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/dsm-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/dsm-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if nvidia-cuda-mps-control -d >/dev/null 2>&1; then
    row "MPS" started
else
    row "MPS" "not started"
fi
probe() { # NAME ENV...: gpu_coll posted ahead, NP PEs, the trace's last lines
    local name=$1
    shift
    run "gpu_coll ahead: $name, ${NP:-2} PEs" 20 env "$@" SHMEM_PERSISTENT_SHARED_AHEAD=1 \
        GPU_COLL_TRACE=1 "$L" -n "${NP:-2}" --timeout 15 "$B/test/gpu/gpu_coll" ||
        grep -E "gpu_coll: PE|dmashmem" "$LAST" | tail -8 | tee -a "$SUMMARY"
}
# AHEAD_ONLY=4: why 4 PEs posted ahead hang (2 pass), then stop.
if [ "${AHEAD_ONLY:-}" = 4 ]; then
    NP=4 probe "trace" SHMEM_DEBUG=1
    NP=4 probe "32 connections" CUDA_DEVICE_MAX_CONNECTIONS=32
    NP=4 probe "depth 1" SHMEM_PRELAUNCH_DEPTH=1
    NP=3 probe "trace" SHMEM_DEBUG=1
    echo quit | nvidia-cuda-mps-control
    cat "$SUMMARY"
    exit 0
fi
probe "legacy-stream copies" GPU_TEST_LEGACY_COPY=1
probe "copies on a stream of the test's own" CUDA_MODULE_LOADING=LAZY
ok=
for ml in LAZY; do
    run "gpu_coll 2 PEs 1 GPU, ahead, $ml, MPS" 40 env CUDA_MODULE_LOADING=$ml \
        SHMEM_PERSISTENT_SHARED_AHEAD=1 "$L" -n 2 --timeout 35 \
        "$B/test/gpu/gpu_coll" && ok="$ok $ml"
done
[ -n "$ok" ] && run "gpu_coll 4 PEs 1 GPU, ahead, MPS" 40 env \
    SHMEM_PERSISTENT_SHARED_AHEAD=1 "$L" -n 4 --timeout 35 "$B/test/gpu/gpu_coll"
bench() { # LABEL ENV...
    local label=$1
    shift
    if late 30; then row "gpu_bench $label" "NOT RUN (deadline)"; return; fi
    echo "=== gpu_bench $label (env $*)" >>"$OUTDIR/bench-ahead.log"
    env "$@" timeout 80 "$L" -n 2 --timeout 75 "$B/bench/gpu_bench" --coll-only \
        --max 65536 --label "$label" >>"$OUTDIR/bench-ahead.log" 2>&1 &&
        row "gpu_bench $label" ok || row "gpu_bench $label" "FAILED rc=$?"
}
[ -n "$ok" ] && bench at-start
for ml in $ok; do
    bench "ahead-$ml" CUDA_MODULE_LOADING=$ml SHMEM_PERSISTENT_SHARED_AHEAD=1
done
echo quit | nvidia-cuda-mps-control
echo "================ collectives, 1 KiB and 64 KiB (label,npes,test,variant,bytes,value,unit)"
cat "$OUTDIR"/gpu_bench-*.csv 2>/dev/null | grep -E ',(1024|65536),'
echo "================ summary (ahead)"
cat "$SUMMARY"
