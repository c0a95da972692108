#!/bin/bash
# The library's dynamic symbol table: every exported shmem_X routine has
# its profiling twin pshmem_X (and shmemx_X has pshmemx_X), and nothing
# else leaks: only the OpenSHMEM names, the predefined handles, the
# deprecated 1.2 names and the linker's version node may be exported.
# Prints every offender.
set -u
top_builddir=${top_builddir:-.}
lib=$top_builddir/src/.libs/libdmashmem.so
command -v nm > /dev/null || { echo "SKIP: nm not found"; exit 77; }
[ -f "$lib" ] || { echo "SKIP: $lib not built (static-only build?)"; exit 77; }

syms=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | LC_ALL=C sort -u)
[ -n "$syms" ] || { echo "FAIL: no symbols in $lib"; exit 1; }
fail=0

allowed='^(p?shmemx?_[A-Za-z0-9_]+|SHMEM_CTX_DEFAULT|SHMEM_TEAM_WORLD|SHMEM_TEAM_SHARED|SHMEMX_TEAM_NODE|start_pes|_my_pe|_num_pes|shmalloc|shfree|shrealloc|shmemalign)$'
leaks=$(grep -Ev "$allowed" <<< "$syms" | grep -Ev '^(DMASHMEM_[0-9A-Z_.]+|VERS_[0-9.]+|LIBDMASHMEM[0-9A-Z_.]*)$')
if [ -n "$leaks" ]; then
    echo "FAIL: internal symbols exported from $lib:"
    sed 's/^/  /' <<< "$leaks"
    fail=1
fi

# Each list holds the names one side needs, less those the library has.
missing=$(comm -23 <(grep -E '^shmemx?_' <<< "$syms" | sed 's/^/p/' | LC_ALL=C sort) \
    <(echo "$syms") | sed 's/^p//')
if [ -n "$missing" ]; then
    echo "FAIL: exported without a pshmem_ twin:"
    sed 's/^/  /' <<< "$missing"
    fail=1
fi
orphans=$(comm -23 <(grep -E '^pshmemx?_' <<< "$syms" | sed 's/^p//' | LC_ALL=C sort) \
    <(echo "$syms") | sed 's/^/p/')
if [ -n "$orphans" ]; then
    echo "FAIL: profiling names without their shmem_ routine:"
    sed 's/^/  /' <<< "$orphans"
    fail=1
fi
n=$(grep -cE '^shmemx?_' <<< "$syms")
[ $fail = 0 ] && echo "PASS: $n shmem_/shmemx_ routines, each with its pshmem_ twin; nothing internal exported"
exit $fail
