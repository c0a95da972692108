#!/bin/bash
# Build the library and the probes that link it (test/gpu/probes/
# quiet_probe.cu, idle_probe.cu) on a GPU machine and run them with 1 and
# 2 PEs on GPU 0, from the repository root:
#   [PROBES="quiet idle"] bash test/gpu/probes/run-quiet-probe.sh [OUTDIR]
# Prints quiet_probe's medians over its 3 rounds per variant and
# idle_probe's rows (us); the rows and each probe's SASS (where cuobjdump
# exists) go to OUTDIR.
set -u
. "$(dirname "$0")/../device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-qp.txt 30 300 -qp
B=$SRC/build-qp
dev_build "$B" "$OUTDIR/build-qp.log" src/libdmashmem.la src/launcher/shmem_launcher || exit 1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
OBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for p in ${PROBES:-quiet idle}; do
    f=$SRC/test/gpu/probes/${p}_probe.cu
    "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -o "$B/${p}_probe" "$f" \
        -L"$B/src/.libs" -ldmashmem -Xlinker -rpath="$B/src/.libs" >>"$OUTDIR/build-qp.log" 2>&1 || {
        tail -20 "$OUTDIR/build-qp.log"
        exit 1
    }
    if [ -x "$OBJ" ]; then
        "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -cubin -o "$B/${p}_probe.cubin" "$f" &&
            "$OBJ" -sass "$B/${p}_probe.cubin" >"$OUTDIR/${p}_probe.sass"
    fi
    for n in 1 2; do
        SHMEM_CUDA_DEVICE=0 SHMEM_DEVICE_HEAP_SIZE=256M timeout 110 \
            "$B/src/launcher/shmem_launcher" -n $n --timeout 100 "$B/${p}_probe"
    done >"$OUTDIR/${p}_probe.csv" 2>&1
    case $p in
    quiet)
        echo "PEs variant median-per-round (us)"
        awk -F, '/^quiet_probe,/ { k = $2 " " $4; v[k] = v[k] " " $5 } END { for (k in v) print k, v[k] }' \
            "$OUTDIR/quiet_probe.csv" | sort
        ;;
    *)
        echo "probe,PEs,op,touched,idle_ms,first,second (us)"
        grep "^${p}_probe," "$OUTDIR/${p}_probe.csv"
        grep -v "^${p}_probe," "$OUTDIR/${p}_probe.csv" | tail -5
        ;;
    esac
done
