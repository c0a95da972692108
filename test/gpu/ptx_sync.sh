#!/bin/bash
# src/sdma/cuda/kernels_ptx.h (committed, so the library builds without
# nvcc) is what src/sdma/cuda/gen-ptx.sh makes of kernels.cu: a kernel
# changed without regenerating the PTX fails here. Exits 77 without nvcc.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP: nvcc not found"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsm-ptxs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! NVCC=$NVCC bash "$top_srcdir/src/sdma/cuda/gen-ptx.sh" "$tmp/k.h" >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "FAIL: gen-ptx.sh could not compile kernels.cu"
    exit 1
fi
if ! diff -q "$tmp/k.h" "$top_srcdir/src/sdma/cuda/kernels_ptx.h" >/dev/null; then
    diff "$tmp/k.h" "$top_srcdir/src/sdma/cuda/kernels_ptx.h" | head -20
    echo "FAIL: kernels_ptx.h is not gen-ptx.sh's output for kernels.cu (run src/sdma/cuda/gen-ptx.sh)"
    exit 1
fi
echo "PASS: kernels_ptx.h matches kernels.cu"
