#!/bin/bash
# The device API (issue #12) on a GPU machine, in one call:
#
#   test/gpu/run-on-device.sh devapi [OUTDIR]   (from the repository root)
#
# Builds the library and launcher (configure + make, as run-on-device.sh),
# then test/gpu/dev_api.cu and bench/gpu_devbench.cu with nvcc (no -rdc),
# and runs:
#   dev_api 1 PE (all phases), stress with a 64-slot FIFO (wraps, full)
#   dev_api badpe, 2 PEs: a kernel's p to PE npes prints the misuse line
#       (routine, PE, value) and the job fails
#   under CUDA MPS: dev_api 2 PEs and 4 PEs on one GPU, stress again,
#       kernel count (SHMEM_CUDA_COUNT_LAUNCHES=1: the library launches none)
#   gate_kprobe: a first kernel launch beside a gated stream, LAZY / EAGER
#   gpu_devbench 1 PE (latency, bandwidth 64 KiB .. 1 GiB, overlap, kreq) and
#       2 PEs (latency between the PEs)
#   with two GPUs: dev_api 2 PEs one per GPU, kreq in trigger mode, and
#       gpu_devbench --peer (NVLink rows: latency, bandwidth against
#       cudaMemcpyAsync into the peer's mapping and store copies, overlap,
#       the world team's kernel-triggered fcollect)
#   gpu_kill.sh with dev_api hang: a PE killed while its kernel waits
# then stops MPS, checks that nothing is left in /dev/shm, and prints the
# summary and the benchmark rows last. Logs under OUTDIR.
set -u
. "$(dirname "$0")/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary.txt 52 420 ""
RUN_TAIL=12

nvidia-smi -L 2>&1 | head -2
ls /dev/shm >"$OUTDIR/shm-before.txt" 2>/dev/null
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
B=$SRC/build-dev
rm -rf "$B"
if dev_build "$B" "$OUTDIR/build.log" src/libdmashmem.la \
        src/launcher/shmem_launcher test/mp/exit_prog; then
    row "build (configure + make)" ok
else
    row "build (configure + make)" FAILED
    exit 1
fi
NVFLAGS="-arch=sm_90 -O2 -I$SRC/include -L$B/src/.libs -ldmashmem -Xlinker -rpath=$B/src/.libs"
( "$NVCC" $NVFLAGS -o "$B/dev_api" test/gpu/dev_api.cu &&
  "$NVCC" $NVFLAGS -o "$B/gpu_devbench" bench/gpu_devbench.cu ) \
    >"$OUTDIR/nvcc.log" 2>&1 && row "nvcc (no -rdc): dev_api, gpu_devbench" ok ||
    { cat "$OUTDIR/nvcc.log"; row "nvcc" FAILED; exit 1; }
L=$B/src/launcher/shmem_launcher
export SHMEM_SYMMETRIC_SIZE=256M SHMEM_DEVICE_HEAP_SIZE=1G SHMEM_CUDA_DEVICE=0
bench() { # LABEL NP TIMEOUT ARGS...
    local label=$1 np=$2 t=$3
    shift 3
    if late $((t / 3)); then row "gpu_devbench $label" "NOT RUN (deadline)"; return; fi
    SHMEM_SYMMETRIC_SIZE=1200M SHMEM_DEVICE_HEAP_SIZE=3G timeout "$t" \
        "$L" -n "$np" --timeout $((t - 5)) "$B/gpu_devbench" --label "$label" "$@" \
        >>"$OUTDIR/bench.log" 2>&1 && row "gpu_devbench $label" ok ||
        { row "gpu_devbench $label" "FAILED rc=$?"; tail -5 "$OUTDIR/bench.log"; }
}

# What bench/plots.sh names in the devapi plots' titles (the CSV does not
# record the GPU or the date).
{
    echo "machine: $(nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//')"
    echo "date: $(date -u '+%F %H:%M UTC')"
    echo "command: test/gpu/run-on-device.sh devapi"
} >"$OUTDIR/gpu_devbench-run.txt"
# Trigger mode (opt-in; the handle in GPU memory) with the trigger word in
# WORD's memory: dev_api's kreq phase (its teams of one post ahead: the
# job's note about that, exactly once) and the benchmark's kreq rows.
ktrig() { # WORD LABEL
    run "dev_api 1 PE kreq, trigger mode, $1 word" 40 env SHMEM_DEV_REQ_TRIGGER=1 \
        SHMEM_DEV_REQ_TRIGGER_WORD="$1" CUDA_MODULE_LOADING=EAGER \
        DEVAPI_STREAM=nonblocking "$L" -n 1 --timeout 35 "$B/dev_api" kreq
    note_once
    SHMEM_DEV_REQ_TRIGGER=1 SHMEM_DEV_REQ_TRIGGER_WORD="$1" \
        CUDA_MODULE_LOADING=EAGER bench "$2" 1 40 --only kreq
}
# DEVAPI_ONLY=kreq: the kernel-triggered requests alone (trigger word in
# GPU and in host memory) and the gate probe's synchronous copies beside
# a gated stream, then stop.
if [ "${DEVAPI_ONLY:-}" = kreq ]; then
    if [ "${GATE_PROBE:-1}" = 1 ] && gcc -O2 -I"${CUDA_HOME:-/usr/local/cuda}/include" \
            -o "$B/gate_probe" test/gpu/probes/gate_probe.c -lcuda >>"$OUTDIR/nvcc.log" 2>&1; then
        for a in "" dtoh; do for w in "" devword; do for o in "" ownstream; do
            timeout 30 "$B/gate_probe" quick $a $w $o 2>&1 | tee -a "$SUMMARY"
        done; done; done
    fi
    for tw in ${KTRIG_WORDS:-dev host}; do
        ktrig "$tw" "ktrig-$tw"
    done
    # Four instances posted ahead instead of two (GPU-FACTS: 6.7 us with 4
    # ahead, 8.7 with 1), and the store threshold's sweep.
    SHMEM_PRELAUNCH_DEPTH=4 SHMEM_DEV_REQ_TRIGGER=1 CUDA_MODULE_LOADING=EAGER \
        bench ktrig-depth4 1 30 --only kreq
    bench sweep 1 40 --only sweep
    echo "================ benchmark"
    cat "$OUTDIR"/gpu_devbench-*.csv 2>/dev/null | grep -v '^label'
    echo "================ summary"
    cat "$SUMMARY"
    exit 0
fi
run "dev_api 1 PE (all phases)" 60 "$L" -n 1 --timeout 55 "$B/dev_api"
# A misuse in a kernel: one line naming the routine, the PE and the value,
# and the job fails.
timeout 60 "$L" -n 2 --timeout 55 "$B/dev_api" badpe >"$OUTDIR/badpe.log" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "dmashmem: PE 1: shmemx_dev_uint64_p: invalid PE 2 (npes 2)" "$OUTDIR/badpe.log"; then
    row "dev_api badpe 2 PEs: the misuse line, job fails" "PASS (rc=$rc)"
else
    row "dev_api badpe 2 PEs: the misuse line, job fails" "FAIL rc=$rc: $(head -3 "$OUTDIR/badpe.log" | tr '\n' ' ')"
fi
bench 1pe 1 60
run "dev_api 1 PE stress, 64-slot FIFO" 40 env SHMEM_DEV_FIFO_SLOTS=64 \
    "$L" -n 1 --timeout 35 "$B/dev_api" stress
run "dev_api 1 PE, store threshold 0 (engines only)" 40 env SHMEM_DEV_STORE_MAX=0 \
    "$L" -n 1 --timeout 35 "$B/dev_api" rma signal
ktrig dev ktrig
run "dev_api 1 PE kreq, SHMEM_PRELAUNCH_DEPTH=0 (proxy mode)" 40 \
    env SHMEM_PRELAUNCH_DEPTH=0 "$L" -n 1 --timeout 35 "$B/dev_api" kreq
# A kernel's first launch beside a stream gated on a word (why trigger
# mode is off by default): one line per case, in the summary.
if "$NVCC" -arch=sm_90 -o "$B/gate_kprobe" test/gpu/probes/gate_kprobe.cu -lcuda \
        >>"$OUTDIR/nvcc.log" 2>&1; then
    for l in LAZY EAGER; do for w in host dev; do
        r=$(CUDA_MODULE_LOADING=$l timeout 10 "$B/gate_kprobe" $w kstore batch 2>&1 | tail -1)
        row "gate_kprobe $l $w kstore batch" "${r#*: }"
    done; done
fi

# Two GPUs (#16): 2 PEs, one per GPU; the API across NVLink and its rows.
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$NGPU" -ge 2 ]; then
    run "dev_api 2 PEs, 2 GPUs (count launches)" 60 env -u SHMEM_CUDA_DEVICE \
        SHMEM_CUDA_COUNT_LAUNCHES=1 "$L" -n 2 --timeout 55 "$B/dev_api"
    kcount "dev_api, 2 PEs on 2 GPUs" zero
    run "dev_api 2 PEs, 2 GPUs, kreq trigger mode (sync dev)" 40 env -u SHMEM_CUDA_DEVICE \
        SHMEM_DEV_REQ_TRIGGER=1 SHMEM_PERSISTENT_SYNC=dev CUDA_MODULE_LOADING=EAGER \
        DEVAPI_STREAM=nonblocking "$L" -n 2 --timeout 35 "$B/dev_api" kreq
    ( unset SHMEM_CUDA_DEVICE; bench x2 2 120 --peer --max 1073741824 )
    ( unset SHMEM_CUDA_DEVICE; SHMEM_DEV_REQ_TRIGGER=1 SHMEM_PERSISTENT_SYNC=dev \
        CUDA_MODULE_LOADING=EAGER bench x2-ktrig 2 40 --peer --only kreq )
else
    row "2 PEs on 2 GPUs" "SKIP (one GPU)"
fi

# Two or more PEs on one GPU: under MPS, else they time-slice.
export CUDA_MPS_PIPE_DIRECTORY=/tmp/dsm-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/dsm-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if nvidia-cuda-mps-control -d >/dev/null 2>&1; then
    row "MPS" started
    MPS=1
else
    row "MPS" "not started (PEs time-slice)"
    MPS=0
fi
run "dev_api 2 PEs, 1 GPU (count launches)" 60 env SHMEM_CUDA_COUNT_LAUNCHES=1 \
    "$L" -n 2 --timeout 55 "$B/dev_api"
kcount "dev_api, 2 PEs" zero
run "dev_api 2 PEs stress, 64-slot FIFO" 40 env SHMEM_DEV_FIFO_SLOTS=64 \
    "$L" -n 2 --timeout 35 "$B/dev_api" stress
run "dev_api 4 PEs, 1 GPU" 60 "$L" -n 4 --timeout 55 "$B/dev_api" signal pg amo stress barrier group graph req kreq
# The handle's copy of the table's rows (SHMEM_DEV_NEAR_PES): 1 row, a
# peer's base from device memory; 2 of 4, some peers each way.
run "dev_api 2 PEs, SHMEM_DEV_NEAR_PES=1 (peers' rows from device memory)" 40 \
    env SHMEM_DEV_NEAR_PES=1 "$L" -n 2 --timeout 35 "$B/dev_api" rma pg signal amo
run "dev_api 4 PEs, SHMEM_DEV_NEAR_PES=2" 60 env SHMEM_DEV_NEAR_PES=2 \
    "$L" -n 4 --timeout 55 "$B/dev_api" rma pg signal amo barrier group
timeout 40 env SHMEM_DEV_NEAR_PES=9 "$L" -n 2 --timeout 35 "$B/dev_api" rma >"$OUTDIR/near9.log" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "shmemx_dev_get: SHMEM_DEV_NEAR_PES=9: must be 0 to 8" "$OUTDIR/near9.log"; then
    row "dev_api SHMEM_DEV_NEAR_PES=9: one line, job fails" "PASS (rc=$rc)"
else
    row "dev_api SHMEM_DEV_NEAR_PES=9: one line, job fails" "FAIL rc=$rc: $(head -3 "$OUTDIR/near9.log" | tr '\n' ' ')"
fi

bench 2pe 2 60 --max 1048576

if [ "$MPS" = 1 ]; then
    echo quit | nvidia-cuda-mps-control
    sleep 1
fi
# The launcher's own daemon (--mps, #15): once the manual one is gone,
# 2 PEs with a private daemon; afterwards no MPS process may be left.
if [ "$MPS" = 1 ]; then
    run "dev_api 2 PEs under shmem_launcher --mps" 60 env -u CUDA_MPS_PIPE_DIRECTORY \
        -u CUDA_MPS_LOG_DIRECTORY "$L" -n 2 --mps --timeout 55 "$B/dev_api" rma barrier req
    if pgrep -x nvidia-cuda-mps-control >/dev/null || pgrep -x nvidia-cuda-mps-server >/dev/null; then
        row "--mps: daemon after the job" "LEFT RUNNING (FAIL)"
        echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/dsm-none nvidia-cuda-mps-control 2>/dev/null
    else
        row "--mps: daemon after the job" "gone"
    fi
fi
# A PE killed while its kernel waits on a device signal (no MPS: the
# daemon is gone): the job ends, no process left on the GPU, nothing left.
run "dev_api: kill -9 of a PE while its kernel waits" 60 env GPU_PROG="$B/dev_api" \
    top_builddir="$B" top_srcdir="$SRC" bash "$SRC/test/gpu/gpu_kill.sh"
ls /dev/shm >"$OUTDIR/shm-after.txt" 2>/dev/null
if cmp -s "$OUTDIR/shm-before.txt" "$OUTDIR/shm-after.txt"; then
    row "/dev/shm after the jobs" "unchanged"
else
    row "/dev/shm after the jobs" "CHANGED: $(diff "$OUTDIR/shm-before.txt" "$OUTDIR/shm-after.txt" | tr '\n' ' ')"
fi
echo "nvidia-smi apps after: $(nvidia-smi --query-compute-apps=pid,name --format=csv,noheader | tr '\n' ';')"
echo
echo "================ dev_api lines"
grep -E "^dev_api |^(PASS|FAIL)|FAIL:|dmashmem:" "$OUTDIR/tests.log" | head -40
echo "================ benchmark (label,npes,test,variant,bytes,value,unit)"
cat "$OUTDIR"/gpu_devbench-*.csv 2>/dev/null | grep -v '^label'
echo "================ summary ($(date -u +%F))"
cat "$SUMMARY"
