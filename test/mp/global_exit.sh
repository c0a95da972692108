#!/bin/bash
# PE 1 calls shmem_global_exit(7) while the others wait in a barrier: the
# launcher returns 7 quickly and nothing is left behind.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

for n in 2 4; do
    run "$LAUNCHER" -n $n --timeout 60 "$EXIT_PROG" global_exit "$MARK"
    expect_rc 7 "global_exit(7) with $n PEs"
    expect_faster 10000 "global_exit(7) with $n PEs"
    expect_clean "global_exit with $n PEs"
done
echo "PASS: global_exit"
