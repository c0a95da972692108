#!/bin/bash
# The HIP device API is header-only (issue #13): hipcc compiles a kernel
# file that calls every shmemx_dev_* routine of include/shmemx_hip.h
# (test/hsa/dev_api.hip) for gfx90a (MI200) and gfx940 (MI300 family)
# without -fgpu-rdc and links it against the built library; the header
# also compiles as C (host part) and, with SHMEMX_HIP_HOST_PRODUCER, as C
# and C++ on the host (what test/hsa/dev_host runs over the engine model).
# No AMD GPU is needed (none is reachable here: nothing is run). Exits 77
# without hipcc. Debian 12's hipcc (ROCm 5.2.3) cannot target gfx942 or
# gfx950 (MI300X, MI355X); set HIP_ARCHS to try others.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
HIPCC=${HIPCC:-$(command -v hipcc || echo /opt/rocm/bin/hipcc)}
[ -x "$HIPCC" ] || { echo "SKIP: hipcc not found"; exit 77; }
lib=$top_builddir/src/.libs
[ -f "$lib/libdmashmem.so" ] || { echo "SKIP: $lib/libdmashmem.so not built"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsm-hipc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# hipcc (Debian's ROCm 5.2.3) leaves four empty folders per compile in
# its TMPDIR, named after the output with six random characters
# (dev_api-3b0b01): here that TMPDIR is ours, removed with it, and the
# test fails if one still shows up outside.
orig_tmp=${TMPDIR:-/tmp}
left_before=$(ls -d "$orig_tmp"/dev_api-* 2>/dev/null | sort)
export TMPDIR=$tmp
archs=${HIP_ARCHS:-gfx90a gfx940}
flags=()
for a in $archs; do flags+=("--offload-arch=$a"); done
# -Werror on both sides: the header must compile cleanly.
if ! "$HIPCC" "${flags[@]}" -fno-gpu-rdc -O2 -Wall -Wextra -Werror \
        -I"$top_srcdir/include" -o "$tmp/dev_api" \
        "$top_srcdir/test/hsa/dev_api.hip" -L"$lib" -ldmashmem >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "FAIL: dev_api.hip does not compile and link for $archs without -fgpu-rdc"
    exit 1
fi
left=$(comm -13 <(printf '%s\n' "$left_before") \
    <(ls -d "$orig_tmp"/dev_api-* 2>/dev/null | sort) | grep .)
if [ -n "$left" ]; then
    echo "FAIL: hipcc left in $orig_tmp: $(printf '%s ' $left)"
    exit 1
fi
# One code object per target inside the program, and no device symbol
# left for a device link (nothing relocatable).
for a in $archs; do
    grep -aq "amdgcn-amd-amdhsa--$a" "$tmp/dev_api" ||
        { echo "FAIL: no $a code object in the program"; exit 1; }
done
printf '#include <shmemx_hip.h>\nint main(void) { shmemx_dev_t d; return shmemx_dev_get(&d); }\n' >"$tmp/c.c"
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$top_srcdir/include" -c "$tmp/c.c" -o "$tmp/c.o" 2>"$tmp/log"; then
    cat "$tmp/log"
    echo "FAIL: shmemx_hip.h does not compile as C"
    exit 1
fi
printf '#define SHMEMX_HIP_HOST_PRODUCER 1\n#include <shmemx_hip.h>\nint main(void) { shmemx_dev_t d; shmemx_dev_get(&d); shmemx_dev_quiet(d); return 0; }\n' >"$tmp/p.c"
cp "$tmp/p.c" "$tmp/p.cc"
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$top_srcdir/include" -c "$tmp/p.c" -o "$tmp/p.o" 2>"$tmp/log" ||
   ! ${CXX:-c++} -Wall -Wextra -Werror -I"$top_srcdir/include" -c "$tmp/p.cc" -o "$tmp/pp.o" 2>>"$tmp/log"; then
    cat "$tmp/log"
    echo "FAIL: shmemx_hip.h's producer does not compile for the host as C and C++"
    exit 1
fi
echo "PASS: dev_api.hip compiles and links with hipcc for $archs without -fgpu-rdc; the header compiles as C, its producer as host C and C++"
