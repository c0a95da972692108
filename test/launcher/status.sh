#!/bin/sh
# Exit status propagation: a failing PE decides the status, is named on
# one line, and the other (sleeping) PEs are ended: by the SIGTERM, or by
# the SIGKILL a second later where they ignore it (the trace says which).
. "$(dirname "$0")/common.sh"

run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" exit 2 3
expect_rc 3 "exit 3"
expect_err 'shmem_launcher: PE 2 (pid [0-9]*) exited with status 3$' "exit 3"
[ "$(launcher_lines | grep -c .)" -eq 1 ] ||
    fail "exit 3: more than one launcher line: $ERR"
# The SIGTERM ends the other three; the SIGKILL a second later is not needed.
expect_pes_killed 3 15 "exit 3"
expect_faster "$END_BOUND_MS" "exit 3"
expect_clean "exit 3"

run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" signal 1 11
expect_rc 139 "SIGSEGV"
expect_err 'PE 1 (pid [0-9]*) was killed by signal 11 (Segmentation fault)' "SIGSEGV"
expect_pes_killed 3 15 "SIGSEGV"
expect_faster "$END_BOUND_MS" "SIGSEGV"
expect_clean "SIGSEGV"

run "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" signal 0 9
expect_rc 137 "SIGKILL"
expect_err 'PE 0 (pid [0-9]*) was killed by signal 9' "SIGKILL"
expect_clean "SIGKILL"

# The others ignore SIGTERM: only the SIGKILL a second later ends them.
run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" --ignore-term exit 3 4
expect_rc 4 "SIGTERM ignored"
expect_err 'trace .*: SIGKILL to the 3 PE(s) still running$' "SIGTERM ignored"
expect_pes_killed 3 9 "SIGTERM ignored"
expect_faster "$END_BOUND_MS" "SIGTERM ignored"
expect_clean "SIGTERM ignored"

# Exit 0 after fini is normal: the job goes on until every PE has ended.
run "$LAUNCHER" -n 3 --timeout 1 "$BOOT_CLIENT" "$MARK" done 0
expect_rc 124 "exit 0 after fini is not a failure"
expect_clean "exit 0 after fini"

# So is exit 0 of a process that never joined the bootstrap.
run "$LAUNCHER" -n 3 "$BOOT_CLIENT" "$MARK" noboot 0
expect_rc 0 "exit 0 without bootstrap"
expect_clean "exit 0 without bootstrap"

# Exit 0 after joining, without fini, fails the job: the others may wait
# for that PE for ever.
run "$LAUNCHER" -n 3 "$BOOT_CLIENT" "$MARK" exit 1 0
expect_rc 1 "exit 0 without fini"
expect_err '^shmem_launcher: PE 1 (pid [0-9]*) exited with status 0 before shmem_finalize$' \
    "exit 0 without fini"
[ "$(printf '%s\n' "$ERR" | grep -c 'shmem_launcher:')" -eq 1 ] ||
    fail "exit 0 without fini: more than one launcher line: $ERR"
expect_clean "exit 0 without fini"
exit 0
