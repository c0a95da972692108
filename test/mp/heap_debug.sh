#!/bin/bash
# Out of symmetric heap: the job succeeds (shmem_malloc returns NULL); with
# SHMEM_DEBUG=1 each PE says how large the heap is and to raise
# SHMEM_SYMMETRIC_SIZE, and without it nothing is printed.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/heap_exhaust

run env SHMEM_SYMMETRIC_SIZE=1M "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "heap exhaustion without SHMEM_DEBUG"
[ -z "$ERR" ] || fail "heap exhaustion without SHMEM_DEBUG printed: $ERR"

run env SHMEM_SYMMETRIC_SIZE=1M SHMEM_DEBUG=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "heap exhaustion with SHMEM_DEBUG=1"
expect_err "SHMEM_SYMMETRIC_SIZE" "SHMEM_DEBUG=1"
expect_err "shmem_malloc" "SHMEM_DEBUG=1"
expect_err "2097152" "SHMEM_DEBUG=1 (the request)"
expect_err "1048576" "SHMEM_DEBUG=1 (the heap size)"
for pe in 0 1; do
    expect_err "PE $pe: shmem_malloc" "SHMEM_DEBUG=1 on PE $pe"
done

# The deprecated SMA_ spellings work too.
run env SMA_SYMMETRIC_SIZE=1M SMA_DEBUG=1 "$LAUNCHER" -n 1 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "SMA_SYMMETRIC_SIZE/SMA_DEBUG"
expect_err "SHMEM_SYMMETRIC_SIZE" "SMA_DEBUG=1"
expect_clean "heap_debug"
echo "PASS: heap_debug"
