#!/bin/bash
# A put to a non-symmetric (stack) address fails the job with one line that
# names the routine, the PE and says the address is not symmetric. So does
# RMA, an AMO or a user signal (signal_add, put_signal, put_signal_nbi) into
# the runtime's internal area right after the user heap (team words, control
# page), on this node and, with SHMEM_FORCE_NETWORK=1, through the network
# path, which registers that area for the runtime's own signals
# (test/mp/internal_addr computes the address from a heap of
# SHMEM_SYMMETRIC_SIZE bytes allocated whole).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

for n in 1 2; do
    run "$LAUNCHER" -n $n --timeout 60 "$EXIT_PROG" bad_addr "$MARK"
    expect_fail "put to a stack address with $n PEs"
    lines=$(printf '%s\n' "$ERR" | grep -c "^dmashmem: PE 0: shmem_putmem: ")
    [ "$lines" -eq 1 ] || fail "expected one 'dmashmem: PE 0: shmem_putmem:' line, got $lines"
    expect_err "not symmetric" "put to a stack address"
    expect_err "0x[0-9a-f]" "the bad address"
    expect_faster 10000 "put to a stack address with $n PEs"
    expect_clean "bad_addr with $n PEs"
done

size=1048576
net_modes=0
ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 ' && net_modes="0 1"
for net in $net_modes; do
    for op_routine in put:shmem_putmem get:shmem_getmem \
                      amo:shmem_long_atomic_add signal:shmem_signal_add \
                      put_signal:shmem_putmem_signal \
                      put_signal_nbi:shmem_putmem_signal_nbi; do
        op=${op_routine%:*} routine=${op_routine#*:}
        what="$op into the internal area with 2 PEs (SHMEM_FORCE_NETWORK=$net)"
        run env SHMEM_FORCE_NETWORK=$net SHMEM_SYMMETRIC_SIZE=$size \
            "$LAUNCHER" -n 2 --timeout 60 \
            "$top_builddir/test/mp/internal_addr" $size $op "$MARK"
        expect_fail "$what"
        lines=$(printf '%s\n' "$ERR" | grep -c "^dmashmem: PE 0: $routine: ")
        [ "$lines" -eq 1 ] ||
            fail "$what: expected one 'dmashmem: PE 0: $routine:' line, got $lines"
        expect_err "not symmetric" "$what"
        printf '%s\n' "$ERR" | grep -q "returned" &&
            fail "$what: the operation returned"
        expect_faster 20000 "$what"
        expect_clean "$what"
    done
done
echo "PASS: bad_addr"
