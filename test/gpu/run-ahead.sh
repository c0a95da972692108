#!/bin/bash
# Persistent collectives posted ahead with PEs sharing one GPU (issue #15):
# with instances posted ahead such jobs hung at their first start on the
# H200 (src/coll/persistent.c, r->lazy), and CUDA's lazy module loading
# is a candidate cause (test/gpu/gate_kprobe.cu). In one call:
#
#   test/gpu/run-on-device.sh ahead [OUTDIR]   (from the repository root)
#
# builds as run-on-device.sh (or reuses its build-gpu), then with 2 PEs on
# GPU 0: gpu_coll with SHMEM_PERSISTENT_SHARED_AHEAD=1 under LAZY and
# EAGER module loading, without and with MPS, and gpu_bench's collectives
# under MPS posted at start (today's rule) against posted ahead. A hang is
# a row, not the end of the run (each job has its own timeout).
set -u
OUTDIR=${1:-${OUT:-$PWD/gpu-results}}
mkdir -p "$OUTDIR"
export OUT=$OUTDIR
SRC=$PWD
export NCCL_NVLS_ENABLE=0
SUMMARY=$OUTDIR/summary-ahead.txt
: >"$SUMMARY"
row() { printf '%-56s %s\n' "$1" "$2" | tee -a "$SUMMARY"; }
DEADLINE=${DEADLINE:-400}
late() { [ $((SECONDS + ${1:-0})) -ge "$DEADLINE" ]; }

# A build tree of run-on-device.sh (devapi) is reused where one exists.
B=
for d in "$SRC/build-gpu" "$SRC/build-dev"; do
    [ -f "$d/Makefile" ] && B=$d && break
done
if [ -n "$B" ]; then
    make -C "$B" -j"$(nproc)" src/libdmashmem.la src/launcher/shmem_launcher \
        test/gpu/gpu_coll bench/gpu_bench >"$OUTDIR/build-ahead.log" 2>&1 ||
        { tail -20 "$OUTDIR/build-ahead.log"; row "build" FAILED; exit 1; }
else
    B=$SRC/build-gpu
    mkdir -p "$B" && cd "$B" || exit 1
    if { "$SRC/configure" --without-hwloc --without-ofi --without-pmix \
            --disable-werror &&
         make -j"$(nproc)" src/libdmashmem.la src/launcher/shmem_launcher \
            test/gpu/gpu_coll bench/gpu_bench; } >"$OUTDIR/build-ahead.log" 2>&1; then
        row "build" ok
    else
        tail -20 "$OUTDIR/build-ahead.log"
        row "build" FAILED
        exit 1
    fi
    cd "$SRC" || exit 1
fi
L=$B/src/launcher/shmem_launcher
export top_builddir=$B top_srcdir=$SRC SHMEM_CUDA_DEVICE=0
export SHMEM_SYMMETRIC_SIZE=64M SHMEM_DEVICE_HEAP_SIZE=1G
LAST=$OUTDIR/last-ahead.log
run() { # NAME TIMEOUT CMD...
    local name=$1 t=$2
    shift 2
    if late $((t / 3)); then row "$name" "NOT RUN (deadline)"; return 1; fi
    echo "=== $name: $*" >>"$OUTDIR/tests-ahead.log"
    local t0=$(date +%s%N)
    timeout "$t" "$@" >"$LAST" 2>&1
    local rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    cat "$LAST" >>"$OUTDIR/tests-ahead.log"
    case $rc in
    0) row "$name" "PASS (${ms} ms) $(grep -m1 '^gpu_coll ' "$LAST" | cut -c1-60)" ;;
    *) row "$name" "FAIL rc=$rc (${ms} ms): $(grep -m1 -E 'FAIL|phase|error' "$LAST" | cut -c1-70)" ;;
    esac
    return $rc
}
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
