#!/bin/sh
# abort(status, msg): message printed once, every PE ended, status returned
# (0 included, as for shmem_global_exit(0)).
. "$(dirname "$0")/common.sh"

# The others are ended by the SIGTERM (the trace says so: no waiting for
# the SIGKILL), within a bound.
run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" abort 2 5 "fatal: something broke"
expect_rc 5 "abort 5"
[ "$(printf '%s\n' "$ERR" | grep -c '^fatal: something broke$')" -eq 1 ] ||
    fail "abort 5: message not printed exactly once: $ERR"
expect_pes_killed 3 15 "abort 5"
expect_faster "$END_BOUND_MS" "abort 5"
expect_clean "abort 5"

run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" abort 0 0
expect_rc 0 "abort 0"
expect_pes_killed 3 15 "abort 0"
expect_faster "$END_BOUND_MS" "abort 0"
expect_clean "abort 0"

# SHMEM_LAUNCHER_TRACE=1: the job's events, in order, with their times
# (the abort before the end it causes, the end before the others' exits).
run env SHMEM_LAUNCHER_TRACE=1 "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" abort 2 5 "fatal: trace"
expect_rc 5 "abort with trace"
tr=$(trace_events)
for want in 'starting 4 PE\(s\) of ' '4 PE\(s\) started' 'PE [0-3] connected \(shmem_init\)' \
    'PE 2 aborts the job \(status 5\)' \
    'ending the job \(status 5\): signal 15 to the PEs still running but PE 2, SIGKILL 1\.0 s later' \
    'PE 2 \(pid [0-9]*\) exited with status 5' 'every PE has exited' 'done: exit status 5'; do
    printf '%s\n' "$tr" | grep -qE "^$want" || fail "trace lacks '$want': $tr"
done
[ "$(printf '%s\n' "$tr" | grep -c 'connected (shmem_init)')" -eq 4 ] ||
    fail "trace: not 4 connections: $tr"
seq=$(printf '%s\n' "$tr" | grep -oE '^(PE 2 aborts|ending the job|every PE has exited|done:)' | tr '\n' '|')
[ "$seq" = "PE 2 aborts|ending the job|every PE has exited|done:|" ] ||
    fail "trace events out of order: $tr"
expect_clean "abort with trace"
# Without the trace: no such line; a bad value is refused.
run "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" abort 0 0
printf '%s\n' "$ERR" | grep -q 'trace' && fail "trace lines without SHMEM_LAUNCHER_TRACE: $ERR"
run env SHMEM_LAUNCHER_TRACE=yes "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" abort 0 0
expect_rc 2 "SHMEM_LAUNCHER_TRACE=yes"
expect_err "invalid SHMEM_LAUNCHER_TRACE 'yes' (0 or 1)" "SHMEM_LAUNCHER_TRACE=yes"

# Without the launcher (single backend) abort exits with the status too.
run "$BOOT_CLIENT" "$MARK" abort 0 6 "alone"
expect_rc 6 "single abort"
expect_err '^alone$' "single abort"
exit 0
