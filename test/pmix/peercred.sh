#!/bin/bash
# The PMIx descriptor client checks who serves before it sends its token:
# PE 1 publishes, as its descriptor server, a socket that another process
# (its child) listens on. PE 0 must refuse it with one line (SO_PEERCRED
# names the child, not the pid PE 1 published) instead of sending the token
# and taking the descriptor offered.
. "${top_srcdir:-$(dirname "$0")/../..}/test/pmix/common.sh"
[ -x "$BOOT_CLIENT" ] || { echo "SKIP: $BOOT_CLIENT not built"; exit 77; }

run "${MPIRUN[@]}" -np 2 "$BOOT_CLIENT" "$MARK" fakefd
expect_rc 0 "descriptor server of another process"
expect_count 1 "^fakefd: get_fd from rank 1: refused\$" "$OUT" \
    "descriptor server of another process"
expect_err "get_fd('mem'): refusing the descriptor server at @[0-9a-f]*: it is not PE 1's" \
    "descriptor server of another process"
expect_count 1 "refusing the descriptor server" "$ERR" \
    "descriptor server of another process"
expect_clean "descriptor server of another process"
echo "PASS: peercred"
