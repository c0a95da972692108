#!/bin/bash
# A job ended from outside says where each PE waited (src/runtime/stall.h,
# intro_shmem(3) "A job that hangs"): test/mp/hang_report.c's modes put
# the PEs in waits that never end (wait_until, a set wait, a signal wait,
# a lock, a team's sync, a collective, a barrier against a wait_until, and
# over the network a quiet and a get that a sleeping PE never completes) or
# in their own code; once every PE said it waits and 2 s more passed, the
# launcher gets SIGTERM (or its --timeout expires). Each waiting PE must
# print exactly its line, a PE in its own code none, a wait that ended
# before none (withdrawn), a program's own SIGTERM handler must be kept;
# the job fails and leaves nothing behind. 1, 2 and 4 PEs.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/hang_report
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }

W='ended a wait of [0-9]*\.[0-9] s in'

# hang MODE N: starts the job, waits for its N "PE i waits|computes"
# lines, 2 s more, then SIGTERM to the launcher; sets RC, OUT, ERR.
hang() {
    local mode=$1 n=$2 t0 pid
    : >"$TEST_TMP/out"
    : >"$TEST_TMP/err"
    "$LAUNCHER" -n "$n" --timeout 120 "$PROG" "$mode" "$MARK" \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
    pid=$!
    t0=$(now_ms)
    while [ "$(grep -c '^PE [0-9]* \(waits\|computes\)$' "$TEST_TMP/out")" -lt "$n" ]; do
        if ! kill -0 "$pid" 2>/dev/null || [ $(( $(now_ms) - t0 )) -gt 60000 ]; then
            kill -KILL "$pid" 2>/dev/null
            wait "$pid"
            echo "--- stdout:"; cat "$TEST_TMP/out"
            echo "--- stderr:"; cat "$TEST_TMP/err"
            fail "$mode on $n PEs: the PEs did not all reach their wait"
        fi
        sleep 0.1
    done
    sleep 2
    kill -TERM "$pid"
    wait "$pid"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
    echo "--- $mode on $n PEs -> status $RC"
    echo "--- stdout:"; printf '%s\n' "$OUT"
    echo "--- stderr:"; printf '%s\n' "$ERR"
    [ "$RC" -ne 0 ] || fail "$mode on $n PEs: the job ended with status 0"
    expect_clean "$mode on $n PEs"
}

# expect_line WHAT PE REST: PE's one line, signal 15, ending in REST.
expect_line() {
    expect_count 1 "^dmashmem: PE $2: signal 15 (Terminated) $W $3\$" \
        "$ERR" "$1: PE $2's line"
}

# expect_lines WHAT COUNT: the job's lines of ended waits, all of them.
expect_lines() {
    expect_count "$2" "$W" "$ERR" "$1: lines of ended waits"
}

# waiters MODE N REST: PE 0 computes, PEs 1..N-1 each print their line
# ending in REST, no other line.
waiters() {
    local pe
    hang "$1" "$2"
    for pe in $(seq 1 $(($2 - 1))); do
        expect_line "$1 on $2 PEs" "$pe" "$3"
    done
    expect_lines "$1 on $2 PEs" $(($2 - 1))
}

for n in 1 2 4; do
    hang set $n
    for pe in $(seq 0 $((n - 1))); do
        expect_line "set on $n PEs" $pe \
            "shmem_int_wait_until_all: 3 words from 0x[0-9a-f]*: SHMEM_CMP_LT -2 (the first holds 0)"
    done
    expect_lines "set on $n PEs" $n

    hang signal $n
    for pe in $(seq 0 $((n - 1))); do
        expect_line "signal on $n PEs" $pe \
            "shmem_signal_wait_until: the signal word at 0x[0-9a-f]* SHMEM_CMP_GE 3 (it holds 0)"
    done
    expect_lines "signal on $n PEs" $n

    hang sleep $n
    expect_lines "sleep on $n PEs" 0

    hang handler $n
    expect_lines "handler on $n PEs" 0
    expect_count "$n" "^PE [0-9]*: own handler\$" "$ERR" "handler on $n PEs: the program's handler"

    [ $n -ge 2 ] || continue

    hang mixed $n
    for pe in $(seq 0 $((n - 1))); do
        if [ $((pe % 2)) -eq 0 ]; then
            expect_line "mixed on $n PEs" $pe \
                "shmem_barrier_all: the other PEs of SHMEM_TEAM_WORLD ($n PEs)"
        else
            expect_line "mixed on $n PEs" $pe \
                "shmem_long_wait_until: the word at 0x[0-9a-f]* SHMEM_CMP_EQ 5 (it holds 0)"
        fi
    done
    expect_lines "mixed on $n PEs" $n

    # PE 0 computes, PEs 1.. wait.
    waiters lock $n "shmem_set_lock: the lock at 0x[0-9a-f]* (another PE or thread holds it, or waits for it before this one)"
    waiters team $n "shmem_team_sync: the other PEs of its team ($n PEs: $(seq -s ', ' 0 $((n - 1))))"
    waiters coll $n "shmem_long_fcollect: the other PEs of SHMEM_TEAM_WORLD ($n PEs)"

    hang waited $n
    expect_lines "waited on $n PEs" 0
done

# Waits below the API name the routine the program called and what they
# wait for: over the network with no progress thread, a write or read of
# 1 MiB to a PE that sleeps in its own code never completes (both
# providers; 2 and 4 PEs). The quiet's routine is found from the stack.
if ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 '; then
    for prov in "tcp;ofi_rxm" sockets; do
        for n in 2 4; do
            for mode in quiet get; do
                routine=shmem_quiet
                [ $mode = get ] && routine=shmem_getmem
                SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov \
                    SHMEM_OFI_PROGRESS_US=0 SHMEM_PEER_TIMEOUT=0 hang $mode $n
                expect_line "$mode on $n PEs over $prov" 0 \
                    "$routine: 1 network operation to PE 1 on node [^ ]* not complete"
                expect_lines "$mode on $n PEs over $prov" 1
            done
        done
    done
else
    echo "SKIP (part): libfabric.so.1 not installed, no network waits"
fi

# The launcher's --timeout: the same lines, status 124.
run "$LAUNCHER" -n 2 --timeout 6 "$PROG" mixed "$MARK"
expect_rc 124 "mixed under --timeout"
expect_err "job timed out after 6 s, ending it (a PE waiting in the library says what for)" \
    "mixed under --timeout"
expect_line "mixed under --timeout" 0 \
    "shmem_barrier_all: the other PEs of SHMEM_TEAM_WORLD (2 PEs)"
expect_line "mixed under --timeout" 1 \
    "shmem_long_wait_until: the word at 0x[0-9a-f]* SHMEM_CMP_EQ 5 (it holds 0)"
expect_clean "mixed under --timeout"
echo "PASS: hang_report"
