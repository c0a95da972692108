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

# A job that ends in time is not affected.
run "$LAUNCHER" -n 2 --timeout=5 "$BOOT_CLIENT" "$MARK" kv 1
expect_rc 0 "timeout not reached"
exit 0
