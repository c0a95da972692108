#!/bin/bash
# A/B of library variants on one GPU, in one device call, rounds
# interleaved so that drift of the machine hits every variant alike:
#
#   test/gpu/probes/ab-run.sh [OUTDIR]            (from the repository root)
#
# Variants: A, this tree as it is; one more for every folder V under
# AB_DIR (default test/gpu/probes/ab): this tree with V's files laid over
# it (V/src/sdma/cuda/kernels.cu replaces src/sdma/cuda/kernels.cu, ...);
# N, NVSHMEM (as in bench/run-nvcmp.sh: NVSHMEM_HOME or the wheel) where
# found. Each variant is built (configure + libdmashmem + launcher +
# bench/gpu_devbench.cu, in parallel), then AB_ROUNDS rounds (default 3)
# of every variant running the nvcmp groups AB_GROUPS (default "queued
# coll") with AB_NP PEs on GPU 0 (default 2; under an MPS daemon of its
# own, 50 % each, as run-nvcmp.sh) up to AB_MAX bytes (default 16 MiB;
# nvshmem_bench takes no less than 1 MiB). Prints, last, each row's median
# over the rounds per variant (ab-medians.txt; every row in ab.csv, the
# runs' output in runs-V.log).
# An experiment tool, run by no test: the overlay folders are working
# files that git ignores, so a device call names AB_DIR in its carry.
set -u
. "$(dirname "$0")/../device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-ab.txt 40 "${AB_DEADLINE:-540}" -ab
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
AB_DIR=${AB_DIR:-$SRC/test/gpu/probes/ab}
ROUNDS=${AB_ROUNDS:-3}
GROUPS_=${AB_GROUPS:-queued coll}
NP=${AB_NP:-2}
MAX=${AB_MAX:-$((16 << 20))}
W=/tmp/dsm-ab
rm -rf "$W"
mkdir -p "$W"
echo "=== A/B $(date -u '+%F %T UTC'): rounds $ROUNDS, groups '$GROUPS_', $NP PEs, up to $MAX bytes"
nvidia-smi -L 2>&1 | head -2

# ---- variant trees and builds (in parallel)
VARS=(A)
for d in "$AB_DIR"/*/; do
    [ -d "$d" ] && VARS+=("$(basename "$d")")
done
build_var() { # V: tree W/V/src, build W/V/build
    local v=$1 t=$W/$1/src
    mkdir -p "$t"
    tar -C "$SRC" --exclude=./build-\* --exclude=./.gpubuild --exclude=./test/gpu/probes/ab \
        --exclude=./.git -cf - . | tar -C "$t" -xf -
    [ "$v" = A ] || cp -a "$AB_DIR/$v/." "$t/"
    (SRC=$t dev_build "$W/$v/build" "$OUTDIR/build-$v.log" src/libdmashmem.la \
        src/launcher/shmem_launcher) &&
        "$NVCC" -arch=sm_90 -O2 -I"$t/include" -o "$W/$v/gpu_devbench" "$t/bench/gpu_devbench.cu" \
            -L"$W/$v/build/src/.libs" -ldmashmem -Xlinker -rpath="$W/$v/build/src/.libs" \
            >>"$OUTDIR/build-$v.log" 2>&1
}
pids=()
for v in "${VARS[@]}"; do
    build_var "$v" &
    pids+=($!)
done
NVB=$W/nvshmem_bench
if nv_find && nv_build_bench "$NVB" >"$OUTDIR/build-N.log" 2>&1; then
    VARS+=(N)
fi
i=0
OKV=()
for v in "${VARS[@]}"; do
    if [ "$v" = N ]; then
        OKV+=(N)
        continue
    fi
    if wait "${pids[$i]}" && [ -x "$W/$v/gpu_devbench" ]; then
        OKV+=("$v")
        row "build $v" "ok ($SECONDS s)"
    else
        row "build $v" "FAILED"
        tail -5 "$OUTDIR/build-$v.log"
    fi
    i=$((i + 1))
done

# ---- MPS for 2 PEs on one GPU
trap mps_stop EXIT
[ "$NP" -gt 1 ] && mps_start
mps_env "$NP"
pre=(${MPS_ENV[@]+"${MPS_ENV[@]}"})

# ---- rounds
export SHMEM_CUDA_DEVICE=0
for r in $(seq "$ROUNDS"); do
    for v in "${OKV[@]}"; do
        for g in $GROUPS_; do
            if late 25; then row "round $r $v $g" "NOT RUN (deadline)"; continue; fi
            log=$W/$v-r$r-$g.log
            if [ "$v" = N ]; then
                env ${pre[@]+"${pre[@]}"} LD_LIBRARY_PATH="$NV/lib" NVSHMEM_REMOTE_TRANSPORT=none \
                    NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_DISABLE_NVLS=1 \
                    NVSHMEM_SYMMETRIC_SIZE=$((1536 << 20)) \
                    timeout -k 5 60 "$NVB" -n "$NP" --gpus 1 --only "$g" --max "$MAX" \
                    --timeout 57 >"$log" 2>&1
            else
                env ${pre[@]+"${pre[@]}"} SHMEM_DEVICE_HEAP_SIZE=2G SHMEM_SYMMETRIC_SIZE=256M \
                    timeout -k 5 60 "$W/$v/build/src/launcher/shmem_launcher" -n "$NP" \
                    --timeout 57 "$W/$v/gpu_devbench" --nvcmp "$g" --max "$MAX" >"$log" 2>&1
            fi
            rc=$?
            cat "$log" >>"$OUTDIR/runs-$v.log"
            grep -E "^(dmashmem|nvshmem)," "$log" | sed "s/^[a-z]*,/$v,/" >>"$OUTDIR/ab.csv"
            [ "$rc" = 0 ] || row "round $r $v $g" "FAILED rc=$rc: $(grep -m1 -iE 'error|fail|bad|unknown|dmashmem: PE' "$log" | cut -c1-120)"
        done
    done
done
mps_stop

# ---- medians: row bytes, one column per variant
echo
echo "================ medians over $ROUNDS rounds (us or GB/s), $NP PEs"
awk -F, -v vars="${OKV[*]}" '
    { k = $3 " " $4; key[k] = 1; n[k, $1]++; v[k, $1, n[k, $1]] = $5; u[k] = $6 }
    function med(k, x,   m, i, j, t, a) {
        m = n[k, x]; if (!m) return "-"
        for (i = 1; i <= m; i++) a[i] = v[k, x, i] + 0
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
        nv = split(vars, V, " ")
        printf "%-32s %8s", "row", "bytes"; for (i = 1; i <= nv; i++) printf " %9s", V[i]; printf "  unit\n"
        for (k in key) {
            split(k, p, " ")
            printf "%-32s %8s", p[1], p[2]; for (i = 1; i <= nv; i++) printf " %9s", med(k, V[i]); printf "  %s\n", u[k]
        }
    }' "$OUTDIR/ab.csv" | { IFS= read -r h; echo "$h"; sort -k1,1 -k2,2n; } |
    tee "$OUTDIR/ab-medians.txt"
echo
cat "$SUMMARY"
