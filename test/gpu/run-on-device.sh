#!/bin/bash
# Build dmashmem on a bare GPU machine and run the GPU tests and benchmark.
#
#   test/gpu/run-on-device.sh [OUTDIR]        (from the repository root)
#
# Needs the generated autotools files (configure, Makefile.in, aclocal.m4,
# config/) next to the sources, as a release tarball has them: run
# `autoreconf -fi` where autotools exist and bring them along. Without gcc
# or make there, a tree prebuilt elsewhere in .gpubuild/ (configure
# --without-hwloc --without-ofi --without-pmix) is used instead. Runs
#   gpu_rma, gpu_stream      2 PEs on one GPU, then 2 PEs on two GPUs
#   gpu_kill.sh              a PE killed mid-job; no GPU process left
#   bench/gpu_bench          2 PEs, one per GPU (or both on GPU 0)
# Logs go to OUTDIR (default $OUT, else ./gpu-results); a summary table is
# printed last. NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
set -u
OUTDIR=${1:-${OUT:-$PWD/gpu-results}}
mkdir -p "$OUTDIR"
SRC=$PWD
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$SUMMARY"; }

# ---- what this machine has
{
    date -u
    uname -a
    nvidia-smi -L 2>&1
    nvidia-smi topo -m 2>&1 | head -5
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1
    for t in gcc cc make autoconf automake libtool pkg-config nvcc; do
        printf '%-11s %s\n' "$t" "$(command -v $t || echo MISSING)"
    done
    ldconfig -p | grep -m2 libcuda.so
} >"$OUTDIR/probe.log" 2>&1
cat "$OUTDIR/probe.log"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

# ---- build
B=$SRC/build-gpu
if command -v gcc >/dev/null && command -v make >/dev/null && [ -x "$SRC/configure" ]; then
    rm -rf "$B" && mkdir -p "$B" && cd "$B" || exit 1
    if { "$SRC/configure" --without-hwloc --without-ofi --without-pmix \
            --disable-werror && \
         make -j"$(nproc)" src/libdmashmem.la src/launcher/shmem_launcher \
            test/gpu/gpu_rma test/gpu/gpu_stream test/gpu/gpu_coll bench/gpu_bench \
            test/mp/exit_prog; } \
        >"$OUTDIR/build.log" 2>&1; then
        row "build (configure + make, here)" ok
    else
        tail -30 "$OUTDIR/build.log"
        row "build (configure + make, here)" FAILED
        B=
    fi
    cd "$SRC" || exit 1
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
# short): what would start after it is reported as not run.
DEADLINE=${DEADLINE:-370}
late() { [ "$SECONDS" -ge "$DEADLINE" ]; }
run() { # NAME TIMEOUT CMD...: run, log, one summary row
    local name=$1 t=$2
    shift 2
    if late; then row "$name" "NOT RUN (deadline)"; return; fi
    echo "=== $name: $*" >>"$OUTDIR/tests.log"
    local t0=$(date +%s%N)
    timeout "$t" "$@" >>"$OUTDIR/tests.log" 2>&1
    local rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    case $rc in
    0) row "$name" "PASS (${ms} ms)" ;;
    77) row "$name" "SKIP" ;;
    *) row "$name" "FAIL rc=$rc (${ms} ms)"; tail -15 "$OUTDIR/tests.log" ;;
    esac
}

export SHMEM_SYMMETRIC_SIZE=64M SHMEM_DEVICE_HEAP_SIZE=1G
# Not forced with SHMEM_SDMA_BACKEND: the probe must pick cuda by itself.
SHMEM_VERSION=1 SHMEM_DEBUG=1 timeout 40 "$L" -n 1 "$B/test/gpu/gpu_rma" \
    >"$OUTDIR/first.log" 2>&1
grep -m3 -E "sdma backend|cuda:|device heap" "$OUTDIR/first.log"

bench() { # LABEL ENV...
    local label=$1
    shift
    if late; then echo "gpu_bench $label: NOT RUN (deadline)" | tee -a "$OUTDIR/bench.log"; return; fi
    echo "=== gpu_bench $label ($*)" >>"$OUTDIR/bench.log"
    env "$@" timeout 60 "$L" -n 2 --timeout 55 "$B/bench/gpu_bench" \
        >>"$OUTDIR/bench.log" 2>&1 || echo "gpu_bench $label failed rc=$?" | tee -a "$OUTDIR/bench.log"
}
# Most telling first: a late step is skipped, not the whole report.
for layout in 2gpu 1gpu; do
    if [ $layout = 1gpu ]; then
        export SHMEM_CUDA_DEVICE=0
    else
        [ "$NGPU" -ge 2 ] || { row "2 PEs on 2 GPUs" "SKIP (one GPU)"; continue; }
        unset SHMEM_CUDA_DEVICE
    fi
    run "gpu_rma     2 PEs, $layout" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_rma"
    run "gpu_stream  2 PEs, $layout" 50 "$L" -n 2 --timeout 45 "$B/test/gpu/gpu_stream"
done
unset SHMEM_CUDA_DEVICE
# Collectives on device buffers, each chain variant in turn (2 PEs, one per
# GPU when there are two); the test prints its 1 KiB times into tests.log.
for algo in auto pcpy b2b; do
    run "gpu_coll    2 PEs, $algo" 60 env SHMEM_FCOLLECT_ALGORITHM=$algo \
        SHMEM_ALLTOALL_ALGORITHM=$algo "$L" -n 2 --timeout 55 "$B/test/gpu/gpu_coll"
done
[ "$NGPU" -ge 2 ] && bench "2 GPUs" SHMEM_SDMA_STATS=1
run "gpu_kill.sh (kill -9 of a PE)" 60 bash "$SRC/test/gpu/gpu_kill.sh"
echo "nvidia-smi apps after tests: $(nvidia-smi --query-compute-apps=pid,name --format=csv,noheader | tr '\n' ';')" \
    | tee -a "$SUMMARY"
[ "$NGPU" -ge 2 ] && bench "2 GPUs, no proxy thread" SHMEM_SDMA_PROXY=0
[ "$NGPU" -ge 2 ] && bench "2 GPUs, no proxy, batch from 2 copies" SHMEM_SDMA_PROXY=0 SHMEM_CUDA_BATCH_MIN=2
bench "1 GPU (both PEs on GPU 0)" SHMEM_CUDA_DEVICE=0
bench "1 GPU, no proxy" SHMEM_CUDA_DEVICE=0 SHMEM_SDMA_PROXY=0
bench "1 GPU, no proxy, SM copies allowed" SHMEM_CUDA_DEVICE=0 SHMEM_SDMA_PROXY=0 SHMEM_CUDA_PREFER_CE=0
run "gpu_rma     4 PEs, 2 per GPU" 50 "$L" -n 4 --timeout 45 "$B/test/gpu/gpu_rma"
run "gpu_rma     1 PE" 40 "$L" -n 1 --timeout 35 "$B/test/gpu/gpu_rma"
cat "$OUTDIR/bench.log"

echo
echo "================ summary ($(date -u +%F), $NGPU GPU(s))"
cat "$SUMMARY"
grep -E "^(put_nbi_bw|putmem_lat|g_lat|nbi64)|^=== gpu_bench" "$OUTDIR/bench.log"
grep -E "^gpu_coll " "$OUTDIR/tests.log"
