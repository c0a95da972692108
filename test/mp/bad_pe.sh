#!/bin/bash
# A put to an invalid PE fails the job with one line that names the
# routine, the calling PE and the bad value.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

for n in 1 2 4; do
    bad=$((n + 3))
    run "$LAUNCHER" -n $n --timeout 60 "$EXIT_PROG" bad_pe "$MARK"
    expect_fail "put to PE $bad of $n"
    lines=$(printf '%s\n' "$ERR" | grep -c "^dmashmem: PE 0: shmem_putmem: ")
    [ "$lines" -eq 1 ] || fail "expected one 'dmashmem: PE 0: shmem_putmem:' line, got $lines"
    line=$(printf '%s\n' "$ERR" | grep "^dmashmem: PE 0: shmem_putmem: ")
    printf '%s\n' "$line" | grep -q "invalid PE $bad\b" ||
        fail "the line does not name the bad PE $bad: $line"
    expect_faster 10000 "put to an invalid PE with $n PEs"
    expect_clean "bad_pe with $n PEs"
done
echo "PASS: bad_pe"
