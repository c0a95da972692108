#!/bin/bash
# A put to a non-symmetric (stack) address fails the job with one line that
# names the routine, the PE and says the address is not symmetric.
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
echo "PASS: bad_addr"
