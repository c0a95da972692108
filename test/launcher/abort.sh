#!/bin/sh
# abort(status, msg): message printed once, every PE ended, status returned
# (0 included, as for shmem_global_exit(0)).
. "$(dirname "$0")/common.sh"

run "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" abort 2 5 "fatal: something broke"
expect_rc 5 "abort 5"
[ "$(printf '%s\n' "$ERR" | grep -c '^fatal: something broke$')" -eq 1 ] ||
    fail "abort 5: message not printed exactly once: $ERR"
expect_faster 2000 "abort 5"
expect_clean "abort 5"

run "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" abort 0 0
expect_rc 0 "abort 0"
expect_faster 2000 "abort 0"
expect_clean "abort 0"

# Without the launcher (single backend) abort exits with the status too.
run "$BOOT_CLIENT" "$MARK" abort 0 6 "alone"
expect_rc 6 "single abort"
expect_err '^alone$' "single abort"
exit 0
