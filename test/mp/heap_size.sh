#!/bin/bash
# SHMEM_SYMMETRIC_SIZE that is no size (auto, which reached the heap as
# UINT64_MAX and rounded up to pages to a 0-byte heap), or one so large that
# its rounding or the heap's internal area would wrap, fails the job at
# init with one line per PE naming the variable and the value; a plain size
# still works.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

for n in 1 2; do
    for v in auto 18446744073709551000 9223372036854775807; do
        run env SHMEM_SYMMETRIC_SIZE=$v "$LAUNCHER" -n $n --timeout 60 \
            "$EXIT_PROG" ok "$MARK"
        expect_fail "SHMEM_SYMMETRIC_SIZE=$v with $n PEs"
        lines=$(printf '%s\n' "$ERR" | grep "SHMEM_SYMMETRIC_SIZE" | grep -c -- "$v")
        [ "$lines" -ge 1 ] && [ "$lines" -le "$n" ] ||
            fail "SHMEM_SYMMETRIC_SIZE=$v: expected 1..$n lines naming the variable and the value, got $lines"
        expect_faster 20000 "SHMEM_SYMMETRIC_SIZE=$v with $n PEs"
        expect_clean "SHMEM_SYMMETRIC_SIZE=$v with $n PEs"
    done
    run env SHMEM_SYMMETRIC_SIZE=2M "$LAUNCHER" -n $n --timeout 60 \
        "$EXIT_PROG" ok "$MARK"
    expect_rc 0 "SHMEM_SYMMETRIC_SIZE=2M with $n PEs"
done
echo "PASS: heap_size"
