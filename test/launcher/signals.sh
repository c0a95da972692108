#!/bin/sh
# Signals: SIGTERM/SIGINT/SIGHUP to the launcher are forwarded (128+sig),
# but SIGHUP under nohup, which ends nothing; a SIGKILLed launcher or PE
# leaves no process and no file behind.
. "$(dirname "$0")/common.sh"

# wait_pes N: until N PEs of this test run (and have connected: the socket
# directory is gone once all have).
wait_pes() {
    for i in $(seq 100); do
        [ "$(pe_pids | wc -l)" -ge "$1" ] &&
            [ -z "$(ls -A "$TMPDIR")" ] && return 0
        sleep 0.05
    done
    fail "PEs did not start"
}

# The launcher passes the signal on to the 4 PEs, and they die of it (not
# of the SIGKILL 2 s later: expect_pes_killed), in a bounded time. Started
# with SIGHUP at its default action whatever this test inherited (a run
# under nohup ignores it, and the launcher then leaves it alone: below).
for sig in TERM:15 INT:2 HUP:1; do
    num=${sig#*:}
    sig=${sig%:*}
    SHMEM_LAUNCHER_TRACE=1 env --default-signal=HUP "$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" sleep >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
    pid=$!
    wait_pes 4
    t0=$(now_ms)
    kill -$sig $pid
    wait $pid
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    ERR=$(cat "$TEST_TMP/err")
    expect_rc $(( 128 + num )) "SIG$sig to the launcher"
    expect_err "received signal $num " "SIG$sig to the launcher"
    expect_err "trace .*: ending the job (status $(( 128 + num ))): signal $num to the 4 PE(s) still running" \
        "SIG$sig to the launcher"
    expect_pes_killed 4 "$num" "SIG$sig to the launcher"
    expect_faster "$END_BOUND_MS" "SIG$sig to the launcher"
    expect_clean "SIG$sig to the launcher"
done

# Started under nohup (SIGHUP ignored): a hangup ends nothing, launcher
# or PEs; the SIGTERM after it ends the job. Both signals may be pending
# together on a loaded machine: the launcher reads SIGHUP (the lower
# number) first, so "received signal 1" would be there had it caught it.
SHMEM_LAUNCHER_TRACE=1 nohup "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" sleep >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
pid=$!
wait_pes 2
kill -HUP $pid
for p in $(pe_pids); do kill -HUP "$p"; done
sleep 0.5
kill -0 $pid 2>/dev/null || fail "nohup: the launcher ended on SIGHUP"
[ "$(pe_pids | wc -l)" -eq 2 ] || fail "nohup: a PE ended on SIGHUP"
kill -TERM $pid
wait $pid
RC=$?
ERR=$(cat "$TEST_TMP/err")
expect_rc 143 "SIGHUP then SIGTERM under nohup"
printf '%s\n' "$ERR" | grep -q 'received signal 1 ' &&
    fail "nohup: the launcher caught SIGHUP: $ERR"
expect_pes_killed 2 15 "SIGHUP then SIGTERM under nohup"
expect_clean "SIGHUP then SIGTERM under nohup"

# SIGKILL to the launcher: the janitor removes its directory (still there
# while a PE has not connected) and the PEs die with it.
"$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" sleep >/dev/null 2>&1 &
pid=$!
wait_pes 4
kill -KILL $pid
wait $pid 2>/dev/null
expect_clean "SIGKILL to the launcher"

"$LAUNCHER" -n 3 "$BOOT_CLIENT" "$MARK" hang >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do
    [ "$(pe_pids | wc -l)" -ge 3 ] && break
    sleep 0.05
done
[ -n "$(ls -A "$TMPDIR")" ] || fail "no launcher directory while PEs have not connected"
kill -KILL $pid
wait $pid 2>/dev/null
expect_clean "SIGKILL to the launcher before PEs connect"

# SIGKILL to one PE: the job fails with 137 and nothing is left.
"$LAUNCHER" -n 4 "$BOOT_CLIENT" "$MARK" sleep >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
pid=$!
wait_pes 4
victim=$(pe_pids | head -1)
[ -n "$victim" ] || fail "no PE found"
kill -KILL "$victim"
wait $pid
RC=$?
ERR=$(cat "$TEST_TMP/err")
expect_rc 137 "SIGKILL to a PE"
expect_err "(pid $victim) was killed by signal 9" "SIGKILL to a PE"
expect_clean "SIGKILL to a PE"
exit 0
