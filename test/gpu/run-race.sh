#!/bin/bash
# Several PEs sharing one GPU through the device API (issue #26), in one
# call on a GPU machine:
#
#   test/gpu/run-on-device.sh race [OUTDIR]   (from the repository root)
#
# Builds the library and launcher (configure + make, as run-devapi.sh) and
# test/gpu/dev_race.cu with nvcc (no -rdc), then runs:
#   dev_race  RACE_RUNS times (default 20) at 2 PEs and at 4 PEs on one GPU,
#             time-sliced (no MPS), then RACE_MPS_RUNS times (default 5) at
#             2 and 4 PEs under the launcher's MPS daemon (--mps); each run
#             is a pass or a failure with the first lines it printed
#   dev_race overlap (every warp the same chunks, host puts meanwhile, PE 0
#             launches its wait kernel while the put kernel runs) RACE_MPS_RUNS
#             times at 2 PEs and 4 PEs (--mps), and once with lazy loading
#             (CUDA_MODULE_LOADING=LAZY), which must end with the stall line
#   dev_race stall  1 and 2 PEs with SHMEM_DEV_STALL_TIMEOUT=2: the job must
#             end non-zero within 20 s with the library's stall line
#   gpu_devbench --only idle  (RACE_BENCH=1, the default): put 8 B + quiet
#             on the engines warm and after 1, 10 and 100 ms of idle, and
#             one thread's putmem against cudaMemcpyAsync, 1 PE
# With RACE_OLD=DIR (a tree of an earlier commit, configure generated), the
# first block runs against that build too: the test must fail there.
# Prints a summary table last; logs under OUTDIR.
set -u
. "$(dirname "$0")/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary.txt 56 540 ""
RUN_TAIL=6
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
nvidia-smi -L 2>&1 | head -2
ls /dev/shm >"$OUTDIR/shm-before.txt" 2>/dev/null

build_tree() { # SRCDIR BUILDDIR LABEL
    local s=$1 b=$2
    rm -rf "$b"
    if (SRC=$s dev_build "$b" "$OUTDIR/build-$3.log" src/libdmashmem.la \
            src/launcher/shmem_launcher) &&
        "$NVCC" -arch=sm_90 -O2 -I"$s/include" -o "$b/dev_race" \
            $( [ "$3" = old ] && echo -DDEV_RACE_NO_STALL ) \
            "$SRC/test/gpu/dev_race.cu" -L"$b/src/.libs" -ldmashmem \
            -Xlinker -rpath="$b/src/.libs" >>"$OUTDIR/nvcc.log" 2>&1; then
        [ "$3" = old ] || "$NVCC" -arch=sm_90 -O2 -I"$s/include" -o "$b/dev_api" \
            "$SRC/test/gpu/dev_api.cu" -L"$b/src/.libs" -ldmashmem \
            -Xlinker -rpath="$b/src/.libs" >>"$OUTDIR/nvcc.log" 2>&1
        row "build ($3)" ok
        return 0
    fi
    row "build ($3)" FAILED
    tail -20 "$OUTDIR/nvcc.log"
    return 1
}

# races LABEL BUILDDIR NP RUNS [LAUNCHER ARGS...]: one row with the count.
# RACE_ARGS: dev_race's arguments (default: 4 rounds).
races() {
    local label=$1 b=$2 np=$3 runs=$4 pass=0 fail=0 i first=""
    shift 4
    for i in $(seq 1 "$runs"); do
        if late 30; then break; fi
        echo "=== $label run $i" >>"$TESTS_LOG"
        DEV_RACE_TIMEOUT=${DEV_RACE_TIMEOUT:-15} timeout 40 \
            "$b/src/launcher/shmem_launcher" -n "$np" --timeout 35 "$@" \
            "$b/dev_race" ${RACE_ARGS:-4} >"$LAST" 2>&1
        local rc=$?
        cat "$LAST" >>"$TESTS_LOG"
        if [ $rc = 0 ] && grep -q "^PASS: dev_race" "$LAST"; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            [ -n "$first" ] || first="rc=$rc: $(grep -m2 -E 'dmashmem:|FAIL' "$LAST" | cut -c1-300 | tr '\n' ' ')"
        fi
    done
    row "$label" "$pass of $((pass + fail)) passed${first:+; first failure: $first}"
}

export SHMEM_SYMMETRIC_SIZE=512M SHMEM_DEVICE_HEAP_SIZE=1G SHMEM_CUDA_DEVICE=0
RUNS=${RACE_RUNS:-20}
MRUNS=${RACE_MPS_RUNS:-5}
B=$SRC/build-dev
build_tree "$SRC" "$B" new || exit 1
if [ -n "${RACE_OLD:-}" ] && [ -d "$RACE_OLD" ]; then
    RACE_OLD=$(cd "$RACE_OLD" && pwd)
    if build_tree "$RACE_OLD" "$SRC/build-old" old; then
        races "OLD dev_race 2 PEs, 1 GPU" "$SRC/build-old" 2 "${RACE_OLD_RUNS:-4}"
        races "OLD dev_race 4 PEs, 1 GPU" "$SRC/build-old" 4 "${RACE_OLD_RUNS:-4}"
    fi
fi
if [ -n "${RACE_QUICK:-}" ]; then
    # After a fix: the case that failed, then the benchmark rows.
    RACE_ARGS="2 overlap" races "dev_race overlap 2 PEs, 1 GPU" "$B" 2 "$RACE_QUICK"
    RACE_ARGS="2 overlap" races "dev_race overlap 4 PEs, 1 GPU, --mps" "$B" 4 "$RACE_QUICK" --mps
    RUNS=0 MRUNS=0
fi
races "dev_race 1 PE" "$B" 1 $([ "$RUNS" = 0 ] && echo 0 || echo 2)
races "dev_race 2 PEs, 1 GPU (time-sliced)" "$B" 2 "$RUNS"
races "dev_race 4 PEs, 1 GPU (time-sliced)" "$B" 4 "$RUNS"
races "dev_race 2 PEs, 1 GPU, --mps" "$B" 2 "$MRUNS" --mps
races "dev_race 4 PEs, 1 GPU, --mps" "$B" 4 "$MRUNS" --mps
RACE_ARGS="2 overlap" races "dev_race overlap 2 PEs, 1 GPU" "$B" 2 "$MRUNS"
RACE_ARGS="2 overlap" races "dev_race overlap 4 PEs, 1 GPU, --mps" "$B" 4 "$MRUNS" --mps
# With lazy loading (what mpirun gives unless set): the program's first
# launch of its wait kernel stops the job; the stall line must end it.
t0=$SECONDS
CUDA_MODULE_LOADING=LAZY timeout 60 "$B/src/launcher/shmem_launcher" -n 2 --timeout 55 \
    "$B/dev_race" 2 overlap >"$LAST" 2>&1
rc=$?
cat "$LAST" >>"$TESTS_LOG"
if grep -q "^PASS: dev_race" "$LAST"; then
    row "dev_race overlap, CUDA_MODULE_LOADING=LAZY" "passed (rc=$rc, $((SECONDS - t0)) s)"
elif grep -q "no progress for" "$LAST" && grep -q "lazy loading is on" "$LAST"; then
    row "dev_race overlap, CUDA_MODULE_LOADING=LAZY" "stopped, ended by the stall line in $((SECONDS - t0)) s (note printed)"
else
    row "dev_race overlap, CUDA_MODULE_LOADING=LAZY" "FAIL rc=$rc: $(grep -m2 -E 'dmashmem|FAIL' "$LAST" | tr '\n' ' ' | cut -c1-200)"
fi

# The device API's own test, to see that nothing else moved.
run "dev_api 1 PE (all phases)" 60 "$B/src/launcher/shmem_launcher" -n 1 --timeout 55 \
    "$B/dev_api"
run "dev_api 2 PEs, --mps (rma signal stress barrier req)" 60 \
    "$B/src/launcher/shmem_launcher" -n 2 --mps --timeout 55 "$B/dev_api" rma signal stress barrier req

# The watch: a ticket reserved and never written ends the job with a line.
for np in 1 2; do
    t0=$SECONDS
    SHMEM_DEV_STALL_TIMEOUT=2 DEV_RACE_TIMEOUT=30 timeout 40 \
        "$B/src/launcher/shmem_launcher" -n $np --timeout 35 "$B/dev_race" stall \
        >"$LAST" 2>&1
    rc=$?
    cat "$LAST" >>"$TESTS_LOG"
    line=$(grep -m1 -E "dmashmem: PE [0-9]+: .*(no progress|not written)" "$LAST")
    if [ $rc != 0 ] && [ -n "$line" ] && [ $((SECONDS - t0)) -le 20 ]; then
        row "stall watch, $np PE(s)" "PASS rc=$rc in $((SECONDS - t0)) s: ${line:0:160}"
    else
        row "stall watch, $np PE(s)" "FAIL rc=$rc in $((SECONDS - t0)) s: $(head -3 "$LAST" | tr '\n' ' ' | cut -c1-200)"
    fi
done

if [ "${RACE_BENCH:-1}" = 1 ] && "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" \
        -o "$B/gpu_devbench" bench/gpu_devbench.cu -L"$B/src/.libs" -ldmashmem \
        -Xlinker -rpath="$B/src/.libs" >>"$OUTDIR/nvcc.log" 2>&1; then
    devbench() { # LABEL ONLY [LAUNCHER ARGS]
        local label=$1 only=$2
        shift 2
        late 30 && return
        SHMEM_SYMMETRIC_SIZE=1200M SHMEM_DEVICE_HEAP_SIZE=3G timeout 120 \
            "$B/src/launcher/shmem_launcher" -n 1 --timeout 115 "$@" "$B/gpu_devbench" \
            --label "$label" --only "$only" --max 268435456 >>"$OUTDIR/bench.log" 2>&1 ||
            row "gpu_devbench $label --only $only" "FAILED rc=$?"
    }
    devbench race idle
    devbench race bw
    devbench race-mps idle --mps
    # RACE_WAKE_EXP=1: the idle rows again with the proxy spinning for
    # 200 ms after a request (no sleep to wake from), beside the default.
    if [ -n "${RACE_WAKE_EXP:-}" ]; then
        SHMEM_DEV_PROXY_SPIN_US=200000 devbench wake-spin200ms idle
    fi
fi
ls /dev/shm >"$OUTDIR/shm-after.txt" 2>/dev/null
cmp -s "$OUTDIR/shm-before.txt" "$OUTDIR/shm-after.txt" && row "/dev/shm after the jobs" unchanged ||
    row "/dev/shm after the jobs" "CHANGED"
echo "================ failures (first lines)"
grep -E "dmashmem:|FAIL" "$TESTS_LOG" | sort | uniq -c | sort -rn | head -25
echo "================ benchmark (label,npes,test,variant,bytes,value,unit)"
grep -E "^(race|wake)" "$OUTDIR/bench.log" 2>/dev/null
echo "================ summary ($(date -u '+%F %H:%M UTC'))"
cat "$SUMMARY"
