#!/bin/bash
# A PE that calls abort() fails the job with 128+SIGABRT = 134, and the PEs
# waiting for it in a barrier do not hang.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

for n in 2 4; do
    run "$LAUNCHER" -n $n --timeout 60 "$EXIT_PROG" abort "$MARK"
    expect_rc 134 "abort() on PE 1 of $n"
    expect_faster 10000 "abort() on PE 1 of $n"
    expect_clean "abort with $n PEs"
done
echo "PASS: abort"
