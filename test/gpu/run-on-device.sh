#!/bin/bash
# Build dmashmem on a bare GPU machine and run the GPU tests, the kernel
# count check and the benchmark (with the NCCL comparison), in one call.
#
#   test/gpu/run-on-device.sh [OUTDIR]        (from the repository root)
#   test/gpu/run-on-device.sh devapi [OUTDIR] (the device API only)
#   test/gpu/run-on-device.sh coll1 [OUTDIR]  (small collectives, one GPU)
#   test/gpu/run-on-device.sh nvcmp [OUTDIR]  (dmashmem vs NVSHMEM, one GPU)
#
# Needs the generated autotools files (configure, Makefile.in, aclocal.m4,
# config/) next to the sources, as a release tarball has them: run
# `autoreconf -fi` where autotools exist and bring them along. Without gcc
# or make there, a tree prebuilt elsewhere in .gpubuild/ (configure
# --without-hwloc --without-ofi --without-pmix) is used instead. Runs
#   gpu_graph, gpu_rma, gpu_coll  2 PEs, one per GPU, with
#       SHMEM_CUDA_COUNT_LAUNCHES=1: the library must launch no kernel
#       (RMA, fcollect, alltoall, on-stream collectives with
#       SHMEM_STREAM_STORE_MAX=0 SHMEM_STREAM_LL_MAX=0); gpu_graph
#       again with the kernels of the on-stream collectives (the
#       default: LL form, two-phase kernel), and with the LL form off
#   gpu_stream                    (its signal-add uses a kernel: counted)
#   gpu_progress                  a request starts without a later call
#                                 (put_signal_nbi + test loop; held put_nbi)
#   gpu_devword                   CPU-side AMO/wait/test/signal on device
#                                 words fail with one line; iput/iget work
#   the same with 2 PEs on one GPU
#   gpu_coll with SHMEM_PERSISTENT_SYNC=host
#   bench/gpu_bench --compare nccl, then each performance lever alone
#       (SHMEM_SDMA_PROXY=1, SHMEM_PERSISTENT_SYNC=dev), --coll-only pcpy
#   gpu_coll per variant, gpu_kill.sh, 4 PEs and 1 PE
# Logs go to OUTDIR (default $OUT, else ./gpu-results); the summary and the
# benchmark tables are printed last. NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0).
set -u
# `run-on-device.sh devapi [OUTDIR]`: the device API's tests and benchmark
# only (issue #12; test/gpu/run-devapi.sh).
if [ "${1:-}" = devapi ]; then
    shift
    exec bash "$(dirname "$0")/run-devapi.sh" "$@"
fi
# `run-on-device.sh race [OUTDIR]`: several PEs sharing one GPU through
# the device API, many warps (issue #26; test/gpu/run-race.sh).
if [ "${1:-}" = race ]; then
    shift
    exec bash "$(dirname "$0")/run-race.sh" "$@"
fi
# `run-on-device.sh nvcmp [OUTDIR]`: dmashmem and NVSHMEM side by side on
# one GPU, the same rows for both (issue #31; bench/run-nvcmp.sh); the
# logs and per-job CSV packed into OUTDIR/nvcmp-files.tar.gz (NVCMP_PACK=0:
# left loose), so that the reply brings the table back.
if [ "${1:-}" = nvcmp ]; then
    shift
    export NVCMP_PACK=${NVCMP_PACK:-1}
    exec bash "$(dirname "$0")/../../bench/run-nvcmp.sh" "$@"
fi
# `run-on-device.sh coll1 [OUTDIR]`: small collectives, 2 PEs on one GPU
# under MPS, the protocol levers side by side (issue #15;
# test/gpu/run-coll1.sh).
if [ "${1:-}" = coll1 ]; then
    shift
    exec bash "$(dirname "$0")/run-coll1.sh" "$@"
fi
. "$(dirname "$0")/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary.txt 48 370 ""
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# ---- what this machine has
{
    date -u
    uname -a
    nvidia-smi -L 2>&1
    nvidia-smi topo -m 2>&1 | head -5
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1
    for t in gcc cc make autoconf automake libtool pkg-config nvcc nsys; do
        printf '%-11s %s\n' "$t" "$(command -v $t || echo MISSING)"
    done
    ldconfig -p | grep -m2 libcuda.so
    ldconfig -p | grep -m2 libnccl.so
} >"$OUTDIR/probe.log" 2>&1
cat "$OUTDIR/probe.log"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

# ---- build
B=$SRC/build-gpu
if command -v gcc >/dev/null && command -v make >/dev/null && [ -x "$SRC/configure" ]; then
    rm -rf "$B"
    if dev_build "$B" "$OUTDIR/build.log" src/libdmashmem.la \
            src/launcher/shmem_launcher test/gpu/gpu_rma test/gpu/gpu_stream \
            test/gpu/gpu_coll test/gpu/gpu_graph test/gpu/gpu_progress \
            test/gpu/gpu_devword bench/gpu_bench test/mp/exit_prog; then
        row "build (configure + make, here)" ok
    else
        row "build (configure + make, here)" FAILED
        B=
    fi
else
    B=
fi
if [ -z "$B" ]; then
    if [ -x "$SRC/.gpubuild/bench/gpu_bench" ]; then
        B=$SRC/.gpubuild
        export LD_LIBRARY_PATH=$B/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        row "build" "prebuilt tree .gpubuild"
    else
        row "build" "NONE (no gcc/make and no .gpubuild)"
        exit 1
    fi
fi
grep -E "^  (CUDA|sdma)" "$OUTDIR/build.log" 2>/dev/null
L=$B/src/launcher/shmem_launcher
export top_builddir=$B top_srcdir=$SRC

# The whole script stays inside DEADLINE seconds (a device lease is
# short): what would start after it is reported as not run (device-lib.sh:
# run, kcount, note_once).

export SHMEM_SYMMETRIC_SIZE=64M SHMEM_DEVICE_HEAP_SIZE=1G
# Not forced with SHMEM_SDMA_BACKEND: the probe must pick cuda by itself.
SHMEM_VERSION=1 SHMEM_DEBUG=1 timeout 40 "$L" -n 1 "$B/test/gpu/gpu_rma" \
    >"$OUTDIR/first.log" 2>&1
grep -m3 -E "sdma backend|cuda:|device heap" "$OUTDIR/first.log"

bench() { # LABEL TIMEOUT ARGS... -- ENV...
    local label=$1 t=$2
    shift 2
    local args=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    if late $((t / 3)); then echo "gpu_bench $label: NOT RUN (deadline)" | tee -a "$OUTDIR/bench.log"; return; fi
    echo "=== gpu_bench $label (${args[*]}; env $*)" >>"$OUTDIR/bench.log"
    env "$@" SHMEM_DEVICE_HEAP_SIZE=4G timeout "$t" "$L" -n "${NP:-2}" --timeout $((t - 5)) \
        "$B/bench/gpu_bench" --label "$label" "${args[@]}" \
        >>"$OUTDIR/bench.log" 2>&1 || echo "gpu_bench $label failed rc=$?" | tee -a "$OUTDIR/bench.log"
}

# Most telling first: a late step is skipped, not the whole report.
if [ "$NGPU" -ge 2 ]; then
    export SHMEM_CUDA_COUNT_LAUNCHES=1
    run "gpu_graph   2 PEs, 2 GPUs, engines only" 60 env SHMEM_STREAM_STORE_MAX=0 \
        SHMEM_STREAM_LL_MAX=0 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_graph"
    kcount "gpu_graph (on-stream coll + graph), 2 GPUs" zero
    run "gpu_graph   2 PEs, 2 GPUs" 60 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_graph"
    kcount "gpu_graph (small blocks: one kernel per call), 2 GPUs" any
    run "gpu_rma     2 PEs, 2 GPUs" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_rma"
    kcount "gpu_rma (RMA), 2 GPUs" zero
    run "gpu_coll    2 PEs, 2 GPUs, auto" 60 env SHMEM_STREAM_STORE_MAX=0 \
        SHMEM_STREAM_LL_MAX=0 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_coll"
    kcount "gpu_coll (fcollect, alltoall), 2 GPUs" zero
    note_once
    run "gpu_stream  2 PEs, 2 GPUs" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_stream"
    kcount "gpu_stream (has SIGNAL_ADD), 2 GPUs" any
    run "gpu_progress 2 PEs, 2 GPUs" 60 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_progress"
    unset SHMEM_CUDA_COUNT_LAUNCHES
    # The persistent sync protocols under test (host is the default).
    run "gpu_coll    2 PEs, 2 GPUs, persistent sync dev" 60 env SHMEM_PERSISTENT_SYNC=dev \
        "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_coll"
    run "gpu_rma     2 PEs, 2 GPUs, proxy thread" 50 env SHMEM_SDMA_PROXY=1 \
        "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_rma"
    bench auto 150 --compare nccl -- SHMEM_SDMA_STATS=0
    # The issue #5 levers, each changed alone (same run, same machine):
    bench proxy1 45 --max 1048576 -- SHMEM_SDMA_PROXY=1
    bench psync-dev 30 --coll-only --max 65536 -- SHMEM_PERSISTENT_SYNC=dev
else
    row "2 PEs on 2 GPUs" "SKIP (one GPU)"
fi
export SHMEM_CUDA_DEVICE=0 SHMEM_CUDA_COUNT_LAUNCHES=1
run "gpu_progress 2 PEs, 1 GPU" 60 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_progress"
kcount "gpu_progress, 2 PEs on 1 GPU" zero
run "gpu_graph   2 PEs, 1 GPU" 60 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_graph"
kcount "gpu_graph, 2 PEs on 1 GPU" any
run "gpu_graph   2 PEs, 1 GPU, LL form off" 60 env SHMEM_STREAM_LL_MAX=0 "$L" -n 2 \
    --timeout 55 "$B/test/gpu/gpu_graph"
run "gpu_rma     2 PEs, 1 GPU" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_rma"
kcount "gpu_rma, 2 PEs on 1 GPU" any
run "gpu_stream  2 PEs, 1 GPU" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_stream"
# Persistent requests with a peer on the same GPU post at start (they hung
# at the first start when posted ahead; src/coll/persistent.c).
run "gpu_coll    2 PEs, 1 GPU" 60 "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_coll"
kcount "gpu_coll, 2 PEs on 1 GPU" any
run "gpu_devword 2 PEs, 1 GPU (CPU on device words)" 90 bash "$SRC/test/gpu/gpu_devword.sh"
unset SHMEM_CUDA_DEVICE SHMEM_CUDA_COUNT_LAUNCHES
if [ "$NGPU" -ge 2 ]; then
    for algo in pcpy b2b; do
        run "gpu_coll    2 PEs, 2 GPUs, $algo" 60 env SHMEM_FCOLLECT_ALGORITHM=$algo \
            SHMEM_ALLTOALL_ALGORITHM=$algo "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_coll"
    done
fi
run "gpu_kill.sh (kill -9 of a PE)" 60 bash "$SRC/test/gpu/gpu_kill.sh"
echo "nvidia-smi apps after tests: $(nvidia-smi --query-compute-apps=pid,name --format=csv,noheader | tr '\n' ';')" \
    | tee -a "$SUMMARY"
run "gpu_graph   4 PEs, 2 per GPU" 60 "$L" -n 4 --timeout 55 "$B/test/gpu/gpu_graph"
run "gpu_rma     4 PEs, 2 per GPU" 50 "$L" -n 4 --timeout 45 "$B/test/gpu/gpu_rma"
run "gpu_rma     1 PE" 40 "$L" -n 1 --timeout 35 "$B/test/gpu/gpu_rma"
if [ "$NGPU" -ge 2 ]; then
    run "gpu_coll    4 PEs, 2 per GPU" 60 "$L" -n 4 --timeout 55 "$B/test/gpu/gpu_coll"
else
    run "gpu_coll    4 PEs, 1 GPU" 60 "$L" -n 4 --timeout 55 "$B/test/gpu/gpu_coll"
fi
# Gated streams alone do not hold up a synchronous copy (the probe behind
# the post-at-start rule for PEs sharing a GPU).
if gcc -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$B/gate_probe" \
        "$SRC/test/gpu/probes/gate_probe.c" -lcuda >>"$OUTDIR/build.log" 2>&1; then
    run "gate_probe (gated stream vs synchronous HtoD)" 60 sh -c \
        "'$B/gate_probe' >'$OUTDIR/gate_probe.txt' 2>&1; ! grep -q -e HANG -e error '$OUTDIR/gate_probe.txt'"
fi
[ "$NGPU" -ge 2 ] && bench pcpy 60 --coll-only -- SHMEM_FCOLLECT_ALGORITHM=pcpy SHMEM_ALLTOALL_ALGORITHM=pcpy

echo
echo "================ logs: bench.log (benchmark), tests.log (tests)"
grep -E "^(graph|direct|gpu_coll) " "$OUTDIR/tests.log"
# One GPU runs no benchmark here (run-on-device.sh coll1 does, under MPS).
[ -f "$OUTDIR/bench.log" ] && grep -E "^# (gpu_bench|nccl)" "$OUTDIR/bench.log"
for f in "$OUTDIR"/gpu_bench-*.csv; do
    [ -f "$f" ] || continue
    echo "---- ${f##*/}"
    column -t -s, "$f" 2>/dev/null || cat "$f"
done
echo
echo "================ summary ($(date -u +%F), $NGPU GPU(s))"
cat "$SUMMARY"
# The issue #5 rows of every benchmark run, last (survives a cut output).
echo "================ key rows (label,npes,test,variant,bytes,value,unit)"
cat "$OUTDIR"/gpu_bench-*.csv 2>/dev/null | grep -E \
    'putmem_lat|nbi64x1k|(fcollect|fcollect_os|fcollect_persistent|nccl_allgather|alltoall|alltoall_os|nccl_alltoall),[^,]*,(1024|268435456),'
