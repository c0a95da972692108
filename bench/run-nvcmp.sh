#!/bin/bash
# dmashmem and NVSHMEM side by side on one GPU (issue #31), in one call on
# a GPU machine, from the repository root:
#
#   bench/run-nvcmp.sh [OUTDIR]              (or: test/gpu/run-on-device.sh nvcmp)
#   make bench-nvcmp                         (from a configured build tree)
#
# NVSHMEM is found through NVSHMEM_HOME (configure --with-nvshmem=DIR
# passes it to `make bench-nvcmp`), else the Python wheel's folder
# (python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])',
# wheel nvidia-nvshmem-cu13); without it the NVSHMEM column is skipped
# with one line. Needs the generated autotools files next to the sources
# (configure, Makefile.in, aclocal.m4, config/: `autoreconf -fi`).
#
# Builds the library and launcher (configure + make in NVCMP_BUILD,
# default build-nvcmp), bench/gpu_devbench.cu and test/gpu/dev_api.cu
# with nvcc (no -rdc: the device API is header-only; dev_api's coll phase
# checks the data of the kernel-started collectives before their rows),
# and bench/nvshmem_bench.cu with nvcc -rdc
# against NVSHMEM (in parallel). Then, each group a job of its own (a
# failure or a hang costs that row group only, under a timeout), both
# libraries with the same rows (bench/gpu_cmp.cuh; gpu_devbench --nvcmp,
# nvshmem_bench --only):
#   rma      put 8 B + quiet, p 8 B + quiet, the put after 1/10/100 ms idle
#   kcoll    fcollect/alltoall started by a kernel, 1 KiB and 64 KiB
#   coll     fcollect/alltoall called by the host on a stream + sync,
#            1 KiB .. 16 MiB (dmashmem also blocking)
#   queued   the same queued on the stream, us per call (coll and queued
#            again as rows NAME_ce: dmashmem with SHMEM_STREAM_STORE_MAX=0
#            and SHMEM_STREAM_LL_MAX=0,
#            the copy engines at every size, no kernel)
#   overlap  compute slowdown while a transfer repeats over the whole
#            compute kernel, and the bandwidth reached meanwhile
#   bw       putmem from one thread / warp / CTA, 1 MiB .. 256 MiB
# at 1 PE and at 2 PEs on GPU 0 (PE 0 -> PE 1), and where the machine has
# two GPUs, 2 PEs on GPUs 0 and 1 ("2g" in the table: rma, kcoll, coll,
# queued, bw over NVLink; last, so give NVCMP_DEADLINE=570 there). The
# 2-PE collectives on one GPU run
# under a CUDA MPS daemon of this script's own (private pipe and log
# directories, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 per PE: NVSHMEM's
# collectives need MPS with the shares adding up to <= 100), for both
# libraries; everything else without MPS.
#
# NVCMP_JOBS="2:coll 2:queued" runs those jobs only (NP:GROUP, NP one of
# 1, 2, 2g), e.g. to look at a few rows again; default every job.
#
# Stays inside NVCMP_DEADLINE seconds (default 450; a step that would
# pass it is reported NOT RUN). With NVCMP_PACK=1 (the default of
# run-on-device.sh nvcmp) everything but the table, nvcmp.csv and the
# summary ends in OUTDIR/nvcmp-files.tar.gz. Writes OUTDIR/LIB-npN-GROUP.{log,csv},
# nvcmp.csv (lib,npes,row,bytes,value,unit), nvcmp-table.txt and the
# build logs; prints the job summary, then the side-by-side table last:
# row, bytes, NVSHMEM, dmashmem, and ours against theirs (ahead/behind
# xN: time, bandwidth; percentage points: slowdown); a row that is behind
# and has a floor measured in the same run (bench/nvcmp-table.awk) also
# gets the floor and ours against it.
set -u
# shellcheck source=test/gpu/device-lib.sh
. "$(dirname "$0")/../test/gpu/device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-nvcmp.txt 40 \
    "${NVCMP_DEADLINE:-450}" -nvcmp
NVCMP_BEFORE=$(ls -A "$OUTDIR")
PACK="" # the archive of the run's other files (NVCMP_PACK=1), or none
[ "${NVCMP_PACK:-0}" = 0 ] || PACK=nvcmp-files.tar.gz
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
B=${NVCMP_BUILD:-$SRC/build-nvcmp}
mkdir -p "$B"
B=$(cd "$B" && pwd)
echo "=== nvcmp $(date -u '+%F %T UTC'), deadline ${DEADLINE} s"
nvidia-smi -L 2>&1 | head -4 | tee "$OUTDIR/gpus-nvcmp.txt"

# ---- NVSHMEM
nv_find
NVB=$B/nvshmem_bench
rm -f "$NVB"
NVPID=""
if [ -z "$NV" ]; then
    row "NVSHMEM" "NOT FOUND (set NVSHMEM_HOME, or pip install nvidia-nvshmem-cu13): the NVSHMEM column is skipped"
else
    ver=$(grep -rhE "define NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION " "$NV/include" 2>/dev/null |
        awk '{ print $3 }' | head -3 | paste -sd.)
    row "NVSHMEM" "found: $NV (version ${ver:-unknown})"
    # In the background, while the library builds.
    (
        t0=$SECONDS
        nv_build_bench "$NVB" && echo "nvshmem_bench built in $((SECONDS - t0)) s"
    ) >"$OUTDIR/build-nvshmem.log" 2>&1 &
    NVPID=$!
fi

# ---- dmashmem
OURS=$B/gpu_devbench
DEVAPI=$B/dev_api
rm -f "$OURS" "$DEVAPI"
if dev_build "$B" "$OUTDIR/build-nvcmp.log" src/libdmashmem.la src/launcher/shmem_launcher &&
    "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -o "$OURS" "$SRC/bench/gpu_devbench.cu" \
        -L"$B/src/.libs" -ldmashmem -Xlinker -rpath="$B/src/.libs" \
        >"$OUTDIR/build-gpu_devbench.log" 2>&1 &&
    "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -o "$DEVAPI" "$SRC/test/gpu/dev_api.cu" \
        -L"$B/src/.libs" -ldmashmem -Xlinker -rpath="$B/src/.libs" \
        >>"$OUTDIR/build-gpu_devbench.log" 2>&1; then
    row "build dmashmem + gpu_devbench + dev_api" "ok ($SECONDS s)"
else
    row "build dmashmem + gpu_devbench" "FAILED: the dmashmem column is skipped"
    tail -20 "$OUTDIR/build-gpu_devbench.log" 2>/dev/null
fi
L=$B/src/launcher/shmem_launcher
if [ -n "$NVPID" ]; then
    if wait "$NVPID" && [ -x "$NVB" ]; then
        row "build nvshmem_bench (nvcc -rdc)" "ok ($SECONDS s)"
    else
        row "build nvshmem_bench (nvcc -rdc)" "FAILED: the NVSHMEM column is skipped"
        tail -20 "$OUTDIR/build-nvshmem.log"
    fi
fi

# ---- runs
export SHMEM_CUDA_DEVICE=0
MAX=$((256 << 20))

# NVCMP_PACK=1 (run-on-device.sh nvcmp's default): at the end, the logs
# and the per-job CSV go into OUTDIR/nvcmp-files.tar.gz, beside
# nvcmp.csv, nvcmp-table.txt and summary-nvcmp.txt.
nvcmp_exit() {
    mps_stop
    [ -z "$PACK" ] ||
        dev_pack "$OUTDIR" "$PACK" "$NVCMP_BEFORE" nvcmp.csv nvcmp-table.txt "${SUMMARY##*/}"
}
trap nvcmp_exit EXIT

# job LIB NP GROUP TIMEOUT [mps]: one group of rows of one library, its
# output into OUTDIR/LIB-npNP-GROUP.log, its rows into .csv; one summary
# row. NP "2g": 2 PEs on GPUs 0 and 1 (their rows say "2g" for the PEs).
job() {
    local lib=$1 np=$2 group=$3 t=$4 mps=${5:-}
    local name="$lib $np PE $group${mps:+ (MPS)}" base="$OUTDIR/$lib-np$np-$group"
    local t0=$SECONDS rc left n=${np%g} gpus=1
    local -a pre=()
    [ "$n" = "$np" ] || { gpus=$n; name="$lib $n PEs on $n GPUs $group"; }
    case " ${NVCMP_JOBS:-$np:$group} " in *" $np:$group "*) ;; *) return ;; esac
    if late $((t / 3)); then row "$name" "NOT RUN (deadline)"; return; fi
    left=$((DEADLINE - SECONDS))
    [ "$t" -le "$left" ] || t=$left
    [ "$t" -ge 20 ] || t=20
    if [ -n "$mps" ]; then
        mps_env "$n"
        pre=(${MPS_ENV[@]+"${MPS_ENV[@]}"})
    fi
    echo "--- $(date -u +%T) $name (timeout $t s)"
    case $lib in
    nvshmem)
        [ -x "$NVB" ] || { row "$name" "SKIP (no NVSHMEM build)"; return; }
        env ${pre[@]+"${pre[@]}"} LD_LIBRARY_PATH="$NV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            NVSHMEM_REMOTE_TRANSPORT=none NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo \
            NVSHMEM_DISABLE_NVLS=1 NVSHMEM_SYMMETRIC_SIZE=$((1536 << 20)) \
            timeout -k 5 "$t" "$NVB" -n "$n" --gpus "$gpus" --only "$group" \
            --max "$MAX" --timeout $((t - 3)) >"$base.log" 2>&1
        rc=$? ;;
    *)
        # dmashmem-ce: ours with SHMEM_STREAM_STORE_MAX=0 and _LL_MAX=0 (on-stream
        # collectives on the copy engines at every size, no kernel); its
        # rows are dmashmem's with "_ce" after the name.
        [ "$lib" = dmashmem-ce ] &&
            pre=(SHMEM_STREAM_STORE_MAX=0 SHMEM_STREAM_LL_MAX=0 ${pre[@]+"${pre[@]}"})
        if [ ! -x "$OURS" ] || [ ! -x "$L" ]; then
            row "$name" "SKIP (no dmashmem build)"
            return
        fi
        # SHMEM_CUDA_DEVICE unset: the PEs spread over the GPUs.
        [ "$gpus" = 1 ] || pre=(-u SHMEM_CUDA_DEVICE ${pre[@]+"${pre[@]}"})
        env ${pre[@]+"${pre[@]}"} SHMEM_DEVICE_HEAP_SIZE=2G SHMEM_SYMMETRIC_SIZE=256M \
            timeout -k 5 "$t" "$L" -n "$n" --timeout $((t - 3)) "$OURS" \
            --nvcmp "$group" --max "$MAX" >"$base.log" 2>&1
        rc=$? ;;
    esac
    grep "^${lib%-ce}," "$base.log" |
        awk -F, -v OFS=, -v np="$np" -v sfx="${lib#dmashmem}" \
            '{ $2 = np; if (sfx == "-ce") $3 = $3 "_ce"; print }' >"$base.csv"
    local nrows
    nrows=$(wc -l <"$base.csv")
    if [ "$rc" = 0 ]; then
        row "$name" "ok ($nrows rows, $((SECONDS - t0)) s)"
    else
        case $rc in 124 | 137) rc="$rc (timeout)" ;; esac
        row "$name" "FAILED rc=$rc ($nrows rows, $((SECONDS - t0)) s): $(grep -m1 -iE 'error|fail|abort|assert|dmashmem: PE|nvshmem_bench:' "$base.log" | cut -c1-150)"
        tail -4 "$base.log"
    fi
}
both() { job nvshmem "$@"; job dmashmem "$@"; }

# The data of the kernel-started collectives whose rows follow (dev_api
# coll: one-thread, warp and block forms, stores and engines, every byte
# checked), 2 PEs, under MPS where it runs.
check_coll() {
    if [ ! -x "$DEVAPI" ] || [ ! -x "$L" ]; then
        row "dev_api coll 2 PEs" "SKIP (no build)"
        return
    fi
    if late 30; then row "dev_api coll 2 PEs" "NOT RUN (deadline)"; return; fi
    mps_env 2
    if env ${MPS_ENV[@]+"${MPS_ENV[@]}"} timeout -k 5 60 "$L" -n 2 --timeout 55 "$DEVAPI" coll \
        >"$OUTDIR/dev_api-coll.log" 2>&1; then
        row "dev_api coll 2 PEs${MPSD:+ (MPS)}" "ok"
    else
        row "dev_api coll 2 PEs${MPSD:+ (MPS)}" "FAILED: $(grep -m1 -E 'FAIL|dmashmem: PE' "$OUTDIR/dev_api-coll.log" | cut -c1-150)"
    fi
}

# Most telling first: a late step is skipped, not the whole report.
both 2 rma 60
both 1 rma 60
if mps_start; then MPS=mps; else MPS=""; fi
MPS_NOTE=${MPS:+"2-PE collectives under MPS, 50 % each"}
check_coll
both 2 kcoll 60 $MPS
both 2 coll 90 $MPS
both 2 queued 90 $MPS
job dmashmem-ce 2 coll 90 $MPS
job dmashmem-ce 2 queued 90 $MPS
mps_stop
both 1 overlap 60
both 2 overlap 60
both 1 kcoll 60
both 1 coll 90
both 1 queued 90
both 1 bw 120
both 2 bw 120
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "${NGPU:-0}" -ge 2 ]; then
    both 2g rma 60
    both 2g kcoll 60
    both 2g coll 90
    both 2g queued 90
    both 2g bw 120
else
    row "2 PEs on 2 GPUs" "NOT RUN (${NGPU:-0} GPU here)"
fi

# ---- the table
files=()
for np in 1 2 2g; do
    for g in rma bw overlap coll queued kcoll; do
        for lib in nvshmem dmashmem dmashmem-ce; do
            [ -s "$OUTDIR/$lib-np$np-$g.csv" ] && files+=("$OUTDIR/$lib-np$np-$g.csv")
        done
    done
done
{
    echo "lib,npes,row,bytes,value,unit"
    [ ${#files[@]} -gt 0 ] && cat "${files[@]}"
} >"$OUTDIR/nvcmp.csv"
# The side-by-side table (bench/nvcmp-table.awk: ratios, and the floor of
# a row that is behind where the run measured one).
awk -F, -f "$SRC/bench/nvcmp-table.awk" "$OUTDIR/nvcmp.csv" >"$OUTDIR/nvcmp-table.txt"

echo
echo "================ notes (logs: OUTDIR/LIB-npN-GROUP.log${PACK:+, packed into $PACK at the end})"
grep -h "^# " "$OUTDIR"/*-np*-*.log 2>/dev/null | sort | uniq -c | sort -rn | head -20
echo "================ summary nvcmp ($(date -u '+%F %H:%M UTC'), ${SECONDS} s)"
cat "$SUMMARY"
echo "================ dmashmem vs NVSHMEM, PE 0 -> PE 1 on one GPU (PEs 1, 2; ${MPS_NOTE:-no MPS}) and on two (2g)"
cat "$OUTDIR/nvcmp-table.txt"
