#!/bin/bash
# Strided RMA (iput/iget/ibput/ibget) whose element range overflows the
# address arithmetic, or whose first and last elements do not lie in one
# symmetric segment, fails the job with one line naming the routine, the
# calling PE and the bad value; a valid strided round trip still passes.
# Run on the shared-memory path, and on the network path where libfabric is.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

PROG=$top_builddir/test/mp/strided_prog
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }
export SHMEM_SYMMETRIC_SIZE=1M

modes="iput_overflow:shmem_long_iput:overflow
ibget_overflow:shmem_long_ibget:overflow
iput_cross:shmem_long_iput:outside the static segment
iget_cross:shmem_long_iget:outside the static segment
ibput_cross:shmem_long_ibput:outside the static segment
iput_past_end:shmem_long_iput:outside the heap segment"

nets=0
if ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 '; then
    nets="0 1"
fi
for net in $nets; do
    for n in 1 2; do
        while IFS=: read -r mode routine what; do
            run env SHMEM_FORCE_NETWORK=$net "$LAUNCHER" -n $n --timeout 60 \
                "$PROG" "$mode" "$MARK"
            expect_fail "$mode with $n PEs (network $net)"
            lines=$(printf '%s\n' "$ERR" | grep -c "^dmashmem: PE 0: $routine: ")
            [ "$lines" -eq 1 ] ||
                fail "$mode: expected one 'dmashmem: PE 0: $routine:' line, got $lines"
            line=$(printf '%s\n' "$ERR" | grep "^dmashmem: PE 0: $routine: ")
            printf '%s\n' "$line" | grep -q -- "$what" ||
                fail "$mode: the line does not say '$what': $line"
            printf '%s\n' "$line" | grep -q "target PE $((n > 1 ? 1 : 0))\b" ||
                fail "$mode: the line does not name the target PE: $line"
            printf '%s\n' "$line" | grep -q "stride -\?[0-9]" ||
                fail "$mode: the line does not name the stride: $line"
            expect_faster 20000 "$mode with $n PEs"
            expect_clean "$mode with $n PEs"
        done <<<"$modes"
        run env SHMEM_FORCE_NETWORK=$net "$LAUNCHER" -n $n --timeout 60 \
            "$PROG" ok "$MARK"
        expect_rc 0 "valid strided transfers with $n PEs (network $net)"
    done
done
echo "PASS: strided_bounds"
