#!/bin/bash
# Out of symmetric heap: the job succeeds (shmem_malloc returns NULL). Each
# PE's first failed allocation prints one line (routine, PE, request, heap
# size, the variable to raise) unless SHMEM_MALLOC_WARN=0; SHMEM_DEBUG=1
# prints every failure. The line names the variable the user set: with
# SMA_SYMMETRIC_SIZE it says SMA_SYMMETRIC_SIZE (it said SHMEM_ before),
# and so do the init errors about the heap size. (#14: a real code's 1 GiB
# request got NULL and segfaulted with the reason under SHMEM_DEBUG only.)
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/heap_exhaust

for n in 1 2 4; do
    run env SHMEM_SYMMETRIC_SIZE=1M "$LAUNCHER" -n $n --timeout 60 "$PROG" "$MARK"
    expect_rc 0 "heap exhaustion without SHMEM_DEBUG ($n PEs)"
    for pe in $(seq 0 $((n - 1))); do
        lines=$(printf '%s\n' "$ERR" | grep -c "PE $pe: ")
        [ "$lines" -eq 1 ] ||
            fail "$n PEs: PE $pe printed $lines lines, expected its first failure only"
        line=$(printf '%s\n' "$ERR" | grep "PE $pe: ")
        for word in "shmem_malloc: cannot allocate 2097152 bytes" 1048576 \
            "raise SHMEM_SYMMETRIC_SIZE" SHMEM_MALLOC_WARN=0; do
            printf '%s\n' "$line" | grep -qF -- "$word" ||
                fail "$n PEs: PE $pe's line lacks '$word': $line"
        done
    done
    expect_clean "heap exhaustion ($n PEs)"
done

# A negative size converted to size_t: said so, no size to raise to (it
# said "raise SHMEM_SYMMETRIC_SIZE (at least 17592186044416M)").
run env HEAP_EXHAUST_NEGATIVE=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "shmem_malloc(-5)"
expect_count 2 "^dmashmem: PE [01]: shmem_malloc: cannot allocate 18446744073709551611 bytes (-5 as a signed number: a negative size converted to size_t?) (SHMEM_MALLOC_WARN=0: no message)\$" \
    "$ERR" "shmem_malloc(-5)"
printf '%s\n' "$ERR" | grep -q raise && fail "shmem_malloc(-5): the line says to raise the heap"

run env SHMEM_SYMMETRIC_SIZE=1M SHMEM_MALLOC_WARN=0 "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "heap exhaustion with SHMEM_MALLOC_WARN=0"
[ -z "$ERR" ] || fail "SHMEM_MALLOC_WARN=0 printed: $ERR"

run env SHMEM_SYMMETRIC_SIZE=1M SHMEM_DEBUG=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "heap exhaustion with SHMEM_DEBUG=1"
expect_err "SHMEM_SYMMETRIC_SIZE" "SHMEM_DEBUG=1"
expect_err "2097152" "SHMEM_DEBUG=1 (the request)"
expect_err "1048576" "SHMEM_DEBUG=1 (the heap size)"
for pe in 0 1; do
    expect_err "PE $pe: shmem_malloc" "SHMEM_DEBUG=1 on PE $pe"
    # Every failure: malloc, calloc, align, the second malloc, realloc.
    for r in shmem_calloc shmem_align shmem_realloc; do
        expect_err "PE $pe: $r" "SHMEM_DEBUG=1 on PE $pe ($r)"
    done
done

# The deprecated SMA_ spellings work too, and the messages name them.
run env SMA_SYMMETRIC_SIZE=1M SMA_DEBUG=1 "$LAUNCHER" -n 1 --timeout 60 "$PROG" "$MARK"
expect_rc 0 "SMA_SYMMETRIC_SIZE/SMA_DEBUG"
expect_err "raise SMA_SYMMETRIC_SIZE" "SMA_SYMMETRIC_SIZE"
if printf '%s\n' "$ERR" | grep -q SHMEM_SYMMETRIC_SIZE; then
    fail "SMA_SYMMETRIC_SIZE set, the message names SHMEM_SYMMETRIC_SIZE"
fi
run env SMA_SYMMETRIC_SIZE=9223372036854775807 "$LAUNCHER" -n 1 --timeout 60 \
    "$EXIT_PROG" ok "$MARK"
expect_fail "SMA_SYMMETRIC_SIZE too large"
expect_err "SMA_SYMMETRIC_SIZE=9223372036854775807 is too large" \
    "SMA_SYMMETRIC_SIZE too large"
expect_clean "heap_debug"
echo "PASS: heap_debug"
