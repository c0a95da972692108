# Shared by the device scripts (run-on-device.sh, run-devapi.sh,
# run-coll1.sh); sourced, not run.
#
#   dev_setup OUTDIR SUMMARY ROW_WIDTH DEADLINE LOG_SUFFIX
#
# makes OUTDIR (exported as OUT, where the benchmarks write their CSV),
# sets SRC (the repository root: the current directory), SUMMARY (a fresh
# OUTDIR/SUMMARY), the job logs tests$LOG_SUFFIX.log and the last job's
# output last$LOG_SUFFIX.log, and DEADLINE (seconds since the script began
# after which nothing new starts; the environment's value wins), and keeps
# NVLink multicast off for NCCL.

dev_setup() {
    OUTDIR=$1
    mkdir -p "$OUTDIR"
    export OUT=$OUTDIR
    SRC=$PWD
    export NCCL_NVLS_ENABLE=0
    SUMMARY=$OUTDIR/$2
    : >"$SUMMARY"
    ROW_WIDTH=$3
    DEADLINE=${DEADLINE:-$4}
    TESTS_LOG=$OUTDIR/tests$5.log
    LAST=$OUTDIR/last$5.log
}

# dev_pack OUTDIR ARCHIVE BEFORE KEEP...: every entry of OUTDIR that is
# neither in BEFORE (a listing of OUTDIR taken when the script began, one
# name per line) nor one of KEEP goes into OUTDIR/ARCHIVE (tar.gz) and
# leaves OUTDIR. The reply of a lent device machine brings back only the
# first few files under $OUT ("left out (count)" for the rest: the nvcmp
# table of 2026-12-07 19:11 and 2026-12-08 00:59 was lost so), so a
# script leaves there its table, its CSV, its summary and one archive.
# An ARCHIVE already there (an earlier run into the same OUTDIR) is kept:
# this run's goes into NAME.2.tar.gz, NAME.3.tar.gz, ...
dev_pack() {
    local dir=$1 arc=$2 before=$3 f i=2
    shift 3
    local files=()
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        grep -qxF -- "$f" <<<"$before" && continue
        case " $arc $* " in *" $f "*) continue ;; esac
        case $f in "${arc%.tar.gz}".[0-9]*.tar.gz) continue ;; esac
        files+=("$f")
    done < <(ls -A "$dir")
    [ ${#files[@]} -gt 0 ] || return 0
    f=$arc
    while [ -e "$dir/$f" ]; do
        f=${arc%.tar.gz}.$i.tar.gz
        i=$((i + 1))
    done
    tar czf "$dir/$f" -C "$dir" --remove-files -- "${files[@]}"
}

# One summary row, also on stdout.
row() { printf "%-${ROW_WIDTH}s %s\n" "$1" "$2" | tee -a "$SUMMARY"; }

# True when a step of about $1 more seconds would pass the deadline.
late() { [ $((SECONDS + ${1:-0})) -ge "$DEADLINE" ]; }

# run NAME TIMEOUT CMD...: the job under a timeout, its output into LAST and
# TESTS_LOG, one row: PASS (with RUN_PASS_NOTE's output when that names a
# function), SKIP (77), or FAIL with RUN_FAIL_NOTE's output and the last
# RUN_TAIL (default 15) lines of the job. NOT RUN when a third of the
# timeout would pass the deadline. Returns the job's status (1: not run).
run() {
    local name=$1 t=$2
    shift 2
    if late $((t / 3)); then row "$name" "NOT RUN (deadline)"; return 1; fi
    echo "=== $name: $*" >>"$TESTS_LOG"
    local t0=$(date +%s%N)
    timeout "$t" "$@" >"$LAST" 2>&1
    local rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    cat "$LAST" >>"$TESTS_LOG"
    case $rc in
    0) row "$name" "PASS (${ms} ms)${RUN_PASS_NOTE:+ $($RUN_PASS_NOTE)}" ;;
    77) row "$name" "SKIP" ;;
    *) row "$name" "FAIL rc=$rc (${ms} ms)${RUN_FAIL_NOTE:+: $($RUN_FAIL_NOTE)}"
       tail -"${RUN_TAIL:-15}" "$LAST" ;;
    esac
    return $rc
}

# kcount NAME zero|any: the kernel count of the last job (run with
# SHMEM_CUDA_COUNT_LAUNCHES=1: every PE prints "cuda launches by the
# library: kernels K, host functions H"); zero: any kernel fails the row.
kcount() {
    local k n h
    n=$(grep -c "cuda launches by the library" "$LAST")
    k=$(sed -n 's/.*cuda launches by the library: kernels \([0-9]*\),.*/\1/p' "$LAST" |
        awk '{ s += $1 } END { print s + 0 }')
    h=$(sed -n 's/.*host functions \([0-9]*\).*/\1/p' "$LAST" |
        awk '{ s += $1 } END { print s + 0 }')
    if [ "$n" -eq 0 ]; then
        row "kernels: $1" "NO COUNT LINE (FAIL)"
    elif [ "$2" = zero ] && [ "$k" -ne 0 ]; then
        row "kernels: $1" "FAIL: $k kernel launches ($n PEs; host fns $h)"
    else
        row "kernels: $1" "$k kernel launches, $h host functions ($n PEs)$([ "$2" = zero ] && echo ' PASS')"
    fi
}

# note_once: the row saying whether the last job printed the library's
# note on instances posted ahead exactly once.
note_once() {
    local c
    c=$(grep -c "keeps instances posted ahead" "$LAST")
    row "note on instances posted ahead (once per job)" \
        "$([ "$c" = 1 ] && echo "PASS" || echo "FAIL: $c lines")"
}

# dev_build_reuse LOG TARGET...: the targets in run-on-device.sh's build
# tree (build-gpu), else in run-devapi.sh's (build-dev) where only that one
# exists, else in a new build-gpu; sets B (the tree) and L (its launcher),
# adds the "build" row and ends the script when the build fails.
dev_build_reuse() {
    local log=$1
    shift
    B=$SRC/build-gpu
    [ -f "$B/Makefile" ] || [ ! -f "$SRC/build-dev/Makefile" ] || B=$SRC/build-dev
    if dev_build "$B" "$log" "$@"; then
        row "build" ok
    else
        row "build" FAILED
        exit 1
    fi
    L=$B/src/launcher/shmem_launcher
}

# dev_build DIR LOG TARGET...: configure DIR as the device machines need
# (no hwloc, libfabric or PMIx there) unless it has a Makefile, then make
# the targets; all output into LOG, its last 30 lines on failure.
dev_build() {
    local dir=$1 log=$2
    shift 2
    mkdir -p "$dir" &&
        (cd "$dir" && { [ -f Makefile ] || "$SRC/configure" --without-hwloc \
            --without-ofi --without-pmix --disable-werror; } &&
         make -j"$(nproc)" "$@") >"$log" 2>&1 ||
        { tail -30 "$log"; return 1; }
}

# nv_find: NVSHMEM's folder into NV (NVSHMEM_HOME, else the Python wheel
# nvidia-nvshmem-cu13's; "" where neither has the headers and the device
# library).
nv_find() {
    local d
    NV=""
    for d in "${NVSHMEM_HOME:-}" \
        "$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; do
        if [ -n "$d" ] && [ -f "$d/include/nvshmem.h" ] && [ -f "$d/lib/libnvshmem_device.a" ]; then
            NV=$(cd "$d" && pwd)
            return 0
        fi
    done
    return 1
}

# nv_build_bench OUT: bench/nvshmem_bench.cu against NV with nvcc -rdc
# (NVCC), into OUT; the wheel has only the versioned host library.
nv_build_bench() {
    local host=-lnvshmem_host f
    if [ ! -e "$NV/lib/libnvshmem_host.so" ]; then
        host=-l:libnvshmem_host.so.3
        for f in "$NV"/lib/libnvshmem_host.so.*; do
            [ -e "$f" ] && host=-l:${f##*/} && break
        done
    fi
    "$NVCC" -rdc=true -arch=sm_90 -O2 -I"$NV/include" -I"$SRC/bench" \
        -o "$1" "$SRC/bench/nvshmem_bench.cu" -L"$NV/lib" "$host" \
        "$NV/lib/libnvshmem_device.a" -Xlinker -rpath="$NV/lib"
}

# A CUDA MPS daemon of the calling script's own (private pipe and log
# directories in MPSD; "" without one): mps_start starts it (one summary
# row), mps_stop ends it and keeps its logs in OUTDIR (callers trap it on
# EXIT), mps_env sets MPS_ENV for a job. NVSHMEM's collectives need MPS
# with the shares adding up to <= 100 for PEs sharing a GPU.
MPSD=""
mps_ctl() { # ARGS: nvidia-cuda-mps-control with this script's daemon
    CUDA_MPS_PIPE_DIRECTORY=$MPSD/pipe CUDA_MPS_LOG_DIRECTORY=$MPSD/log \
        timeout 20 nvidia-cuda-mps-control "$@"
}
mps_start() {
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        row "MPS daemon" "NOT FOUND (nvidia-cuda-mps-control): jobs sharing the GPU are time-sliced"
        return 1
    fi
    if ! MPSD=$(mktemp -d "${TMPDIR:-/tmp}/dsm-mps-XXXXXX"); then
        row "MPS daemon" "FAILED (no directory for its pipe and log): jobs sharing the GPU are time-sliced"
        MPSD=""
        return 1
    fi
    mkdir -p "$MPSD/pipe" "$MPSD/log"
    if mps_ctl -d; then
        row "MPS daemon" "started ($MPSD)"
        return 0
    fi
    row "MPS daemon" "FAILED to start: jobs sharing the GPU are time-sliced"
    rm -rf "$MPSD"
    MPSD=""
    return 1
}
mps_stop() {
    [ -n "$MPSD" ] || return 0
    echo quit | mps_ctl >/dev/null 2>&1
    sleep 1
    for f in "$MPSD"/log/*.log; do
        [ -f "$f" ] && cp "$f" "$OUTDIR/mps-${f##*/}"
    done
    rm -rf "$MPSD"
    MPSD=""
}
# mps_env NP: MPS_ENV, the environment of an NP-PE job under the
# daemon (an equal share of the SMs each); empty without a daemon.
mps_env() {
    MPS_ENV=()
    [ -n "$MPSD" ] || return 0
    MPS_ENV=("CUDA_MPS_PIPE_DIRECTORY=$MPSD/pipe" "CUDA_MPS_LOG_DIRECTORY=$MPSD/log"
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / $1))")
}
