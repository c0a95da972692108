#!/bin/bash
# Build the library and test/gpu/probes/quiet_probe.cu on a GPU machine and
# run it with 1 and 2 PEs on GPU 0, from the repository root:
#   bash test/gpu/probes/run-quiet-probe.sh [OUTDIR]
# Prints each variant's medians over the probe's 3 rounds (us); the rows
# and the probe's SASS (where cuobjdump exists) go to OUTDIR.
set -u
. "$(dirname "$0")/../device-lib.sh"
dev_setup "${1:-${OUT:-$PWD/gpu-results}}" summary-qp.txt 30 300 -qp
B=$SRC/build-qp
dev_build "$B" "$OUTDIR/build-qp.log" src/libdmashmem.la src/launcher/shmem_launcher || exit 1
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -o "$B/quiet_probe" "$SRC/test/gpu/probes/quiet_probe.cu" \
    -L"$B/src/.libs" -ldmashmem -Xlinker -rpath="$B/src/.libs" >>"$OUTDIR/build-qp.log" 2>&1 || {
    tail -20 "$OUTDIR/build-qp.log"
    exit 1
}
OBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$OBJ" ]; then
    "$NVCC" -arch=sm_90 -O2 -I"$SRC/include" -cubin -o "$B/quiet_probe.cubin" \
        "$SRC/test/gpu/probes/quiet_probe.cu" && "$OBJ" -sass "$B/quiet_probe.cubin" >"$OUTDIR/quiet_probe.sass"
fi
for n in 1 2; do
    SHMEM_CUDA_DEVICE=0 SHMEM_DEVICE_HEAP_SIZE=256M timeout 90 \
        "$B/src/launcher/shmem_launcher" -n $n --timeout 80 "$B/quiet_probe"
done >"$OUTDIR/quiet_probe.csv" 2>&1
echo "PEs variant median-per-round (us)"
awk -F, '/^quiet_probe,/ { k = $2 " " $4; v[k] = v[k] " " $5 } END { for (k in v) print k, v[k] }' \
    "$OUTDIR/quiet_probe.csv" | sort
