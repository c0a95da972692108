#!/bin/bash
# The device API is header-only (issue #12): a kernel that calls every
# shmemx_dev_* routine compiles and links with plain nvcc, without
# relocatable device code (-rdc) or any device library. Compiles
# test/gpu/dev_api.cu (all routines) and links it against the built
# library; runs in CI wherever nvcc exists (no GPU needed), exits 77
# without nvcc.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "SKIP: nvcc not found"; exit 77; }
lib=$top_builddir/src/.libs
[ -f "$lib/libdmashmem.so" ] || { echo "SKIP: $lib/libdmashmem.so not built"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsm-devc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp # the compilers' temporaries too
# -Werror on the host side too: the header must compile cleanly.
if ! "$NVCC" -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra,-Werror \
        -I"$top_srcdir/include" -o "$tmp/dev_api" \
        "$top_srcdir/test/gpu/dev_api.cu" -L"$lib" -ldmashmem >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "FAIL: dev_api.cu does not compile and link without -rdc"
    exit 1
fi
# Device code stays inside the program: no unresolved device symbols, no
# relocatable device code section.
if "${CUOBJDUMP:-$(dirname "$NVCC")/cuobjdump}" -lelf "$tmp/dev_api" 2>/dev/null |
        grep -qi relocatable; then
    echo "FAIL: relocatable device code in the program"
    exit 1
fi
# And a C file includes the header (host part: the handle, shmemx_dev_get).
printf '#include <shmemx_cuda.h>\nint main(void) { shmemx_dev_t d; shmemx_dev_req_t *h = shmemx_req_device(0); (void)h; return shmemx_dev_get(&d); }\n' >"$tmp/c.c"
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$top_srcdir/include" -c "$tmp/c.c" -o "$tmp/c.o" 2>"$tmp/log"; then
    cat "$tmp/log"
    echo "FAIL: shmemx_cuda.h does not compile as C"
    exit 1
fi
# The benchmark and the gate probe (run on the GPU machine) compile too.
if ! "$NVCC" -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra,-Werror \
        -I"$top_srcdir/include" -c -o "$tmp/gdb.o" \
        "$top_srcdir/bench/gpu_devbench.cu" >"$tmp/log" 2>&1 ||
   ! "$NVCC" -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra,-Werror \
        -I"$top_srcdir/include" -c -o "$tmp/dr.o" \
        "$top_srcdir/test/gpu/dev_race.cu" >>"$tmp/log" 2>&1 ||
   ! "$NVCC" -arch=sm_90 -Xcompiler -Wall,-Wextra,-Werror -c -o "$tmp/gk.o" \
        "$top_srcdir/test/gpu/probes/gate_kprobe.cu" >>"$tmp/log" 2>&1 ||
   ! "$NVCC" -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra,-Werror \
        -I"$top_srcdir/include" -c -o "$tmp/qp.o" \
        "$top_srcdir/test/gpu/probes/quiet_probe.cu" >>"$tmp/log" 2>&1 ||
   ! "$NVCC" -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra,-Werror \
        -I"$top_srcdir/include" -c -o "$tmp/ip.o" \
        "$top_srcdir/test/gpu/probes/idle_probe.cu" >>"$tmp/log" 2>&1 ||
   ! "$NVCC" -Xcompiler -Wall,-Wextra,-Werror -c -o "$tmp/gp.o" \
        "$top_srcdir/test/gpu/probes/gate_probe.c" >>"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "FAIL: gpu_devbench.cu, dev_race.cu or a probe (test/gpu/probes) does not compile"
    exit 1
fi
echo "PASS: dev_api.cu compiles and links with nvcc without -rdc; the header compiles as C; gpu_devbench.cu, dev_race.cu and the probes compile"
