#!/bin/sh
# --timeout and SHMEM_LAUNCHER_TIMEOUT end a hanging job with status 124.
. "$(dirname "$0")/common.sh"

run "$LAUNCHER" -n 4 --timeout 1 "$BOOT_CLIENT" "$MARK" sleep
expect_rc 124 "--timeout"
expect_err 'timed out' "--timeout"
[ "$ELAPSED" -ge 900 ] || fail "--timeout: ended after $ELAPSED ms, before 1 s"
expect_faster 8000 "--timeout" # bound, with room for a loaded machine
expect_clean "--timeout"

# Survives SIGTERM: needs the SIGKILL.
SHMEM_LAUNCHER_TIMEOUT=0.5 run "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" --ignore-term sleep
expect_rc 124 "SHMEM_LAUNCHER_TIMEOUT"
expect_faster 8000 "SHMEM_LAUNCHER_TIMEOUT"
expect_clean "SHMEM_LAUNCHER_TIMEOUT"

# The trace of the same: the timeout, the SIGTERM to both, the SIGKILL
# they needed, each PE killed by signal 9, in that order.
run env SHMEM_LAUNCHER_TIMEOUT=0.5 SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" --ignore-term sleep
expect_rc 124 "SHMEM_LAUNCHER_TIMEOUT with trace"
seq=$(printf '%s\n' "$ERR" | sed -n 's/^shmem_launcher: trace [0-9]* +[0-9.]* s: //p' |
    sed -n -e 's/^--timeout 0.5 s reached$/T/p' \
        -e 's/^ending the job (status 124): signal 15 to the 2 PE(s) still running, SIGKILL 1.0 s later$/E/p' \
        -e 's/^SIGKILL to the 2 PE(s) still running$/K/p' \
        -e 's/^PE [01] (pid [0-9]*) was killed by signal 9$/X/p' \
        -e 's/^done: exit status 124$/D/p' | tr -d '\n')
[ "$seq" = TEKXXD ] || fail "timeout trace: events '$seq', want TEKXXD: $ERR"
expect_clean "SHMEM_LAUNCHER_TIMEOUT with trace"

# A job that ends in time is not affected.
run "$LAUNCHER" -n 2 --timeout=5 "$BOOT_CLIENT" "$MARK" kv 1
expect_rc 0 "timeout not reached"
exit 0
