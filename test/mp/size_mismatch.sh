#!/bin/bash
# Heap and static sizes must agree across the whole job, not only among PEs
# of one node: with every PE its own node (SHMEM_FORCE_NETWORK=1) and one PE
# started with another SHMEM_SYMMETRIC_SIZE, init fails with a line naming
# both PEs and both sizes. The launcher exports each PE's rank as
# DMASHMEM_RANK (src/boot/wire.h), so a wrapper gives PE 1 its own size.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

if ! ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 '; then
    echo "SKIP: libfabric.so.1 not installed"
    exit 77
fi
export SHMEM_FORCE_NETWORK=1
wrap='if [ "$DMASHMEM_RANK" = 1 ]; then export SHMEM_SYMMETRIC_SIZE=3M; fi
exec "$@"'

for n in 2 3; do
    run env SHMEM_SYMMETRIC_SIZE=2M "$LAUNCHER" -n $n --timeout 60 \
        /bin/sh -c "$wrap" sh "$EXIT_PROG" ok "$MARK"
    expect_fail "PE 1 with a 3 MiB heap, the others 2 MiB ($n PEs)"
    lines=$(printf '%s\n' "$ERR" | grep "symmetric heap")
    [ -n "$lines" ] || fail "no line about the heap sizes ($n PEs)"
    # Every such line names PE 1 and another PE, with both sizes.
    while read -r line; do
        printf '%s\n' "$line" | grep -Eq "PE 1( |')" ||
            fail "the line does not name PE 1: $line"
        printf '%s\n' "$line" | grep -Eq "PE [02]( |')" ||
            fail "the line does not name the other PE: $line"
        printf '%s\n' "$line" | grep -q "3145728" ||
            fail "the line lacks PE 1's size: $line"
        printf '%s\n' "$line" | grep -q "2097152" ||
            fail "the line lacks the other size: $line"
        printf '%s\n' "$line" | grep -q "SHMEM_SYMMETRIC_SIZE" ||
            fail "the line does not name the variable: $line"
    done <<<"$lines"
    expect_faster 20000 "heap size mismatch across nodes ($n PEs)"
    expect_clean "heap size mismatch across nodes ($n PEs)"
done
# The same sizes everywhere still start.
run env SHMEM_SYMMETRIC_SIZE=2M "$LAUNCHER" -n 2 --timeout 60 \
    "$EXIT_PROG" ok "$MARK"
expect_rc 0 "equal heap sizes across nodes"
echo "PASS: size_mismatch"
