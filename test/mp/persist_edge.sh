#!/bin/bash
# Persistent requests at the edges (issue #14; test/mp/persist_edge.c):
#  - a queue too small for one instance (SHMEM_SDMA_QUEUE_DEPTH=16, a b2b
#    alltoall over 5 PEs is 18 commands on one queue): init fails at once
#    with one line naming the depth needed, instead of waiting forever
#    behind its own unfired trigger; with that depth the same job passes;
#  - finalize with requests never started, or started and not waited for,
#    none freed: the job ends cleanly (under ASan: nothing leaked);
#  - SHMEM_PRELAUNCH_DEPTH=0 (each instance posted at its start): the
#    persistent collective tests and the modes above pass;
#  - a PE that starts 14 s late: under SHMEM_DEBUG=1 the others say after
#    10 s what they still wait for, and the data still arrives;
#  - rounds of ~60 live pcpy requests created and freed: freed queues come
#    back, so later rounds do not run out of engine queues (4 PEs: 3 queues
#    a request; the free list used to keep 64 and lose the rest);
#  - shmemx_req_device (a request's kernel handle) without a GPU backend:
#    one line naming the routine and the PE, the job fails.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
# Engine queues of PEs on one node are what this checks: the suite's
# SHMEM_FORCE_NETWORK=1 pass would take every collective off the engines
# (network puts), so it runs on-node there too.
unset SHMEM_FORCE_NETWORK
PROG=$top_builddir/test/mp/persist_edge
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }

run env SHMEM_SDMA_QUEUE_DEPTH=16 SHMEM_ALLTOALL_ALGORITHM=b2b \
    "$LAUNCHER" -n 5 --timeout 60 "$PROG" run "$MARK"
expect_fail "queue depth 16, 5 PEs"
expect_err "shmemx_alltoallmem_init" "the error names the routine"
expect_err "SHMEM_SDMA_QUEUE_DEPTH to 32" "the error names the depth needed"
[ "$(printf '%s\n' "$ERR" | grep -c 'SHMEM_SDMA_QUEUE_DEPTH to')" -ge 1 ] ||
    fail "no depth line"

run env SHMEM_SDMA_QUEUE_DEPTH=32 SHMEM_ALLTOALL_ALGORITHM=b2b \
    "$LAUNCHER" -n 5 --timeout 60 "$PROG" run "$MARK"
expect_rc 0 "queue depth 32, 5 PEs"

# SHMEM_DEBUG=1: a collective still waiting after 10 s says for what (its
# queue's and each arrival word's value against the one wanted); the job
# then completes (the late PE starts at 14 s) with the data checked.
# shmemx_req_device without a GPU backend: one line, the job fails.
for n in 1 2; do
    run env SHMEM_SDMA_BACKEND=cpu "$LAUNCHER" -n $n --timeout 60 "$PROG" device "$MARK"
    expect_fail "shmemx_req_device on the cpu backend, $n PE(s)"
    expect_err "PE [0-9]*: shmemx_req_device: needs a GPU sdma backend" \
        "the error names the routine, the PE and what is missing"
done

run env SHMEM_DEBUG=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" late "$MARK"
expect_rc 0 "late start, 2 PEs"
expect_err "shmemx_fcollectmem_init: stalled 10 s" "the waiting PE names its collective"
expect_err "want" "the stall line says what is wanted"

# SHMEM_PRELAUNCH_DEPTH=0: nothing posted ahead, each instance posted by
# its start (the path PEs sharing a GPU take): data checked, and the
# unstarted/started requests are released at finalize.
for n in 1 2 4; do
    for prog in coll_persist_b2b coll_persist_pcpy; do
        run env SHMEM_PRELAUNCH_DEPTH=0 SHMEM_DEBUG=1 "$LAUNCHER" -n $n \
            --timeout 120 "$top_builddir/test/mp/$prog" "$MARK"
        expect_rc 0 "$prog with SHMEM_PRELAUNCH_DEPTH=0 on $n PE(s)"
        # A team of one posts no chain and says nothing.
        [ $n -eq 1 ] || expect_err "0 instance(s) posted ahead" \
            "$prog with SHMEM_PRELAUNCH_DEPTH=0 on $n PEs: nothing posted ahead"
        if printf '%s\n' "$ERR" | grep -q "[1-9] instance(s) posted ahead"; then
            fail "$prog with SHMEM_PRELAUNCH_DEPTH=0 on $n PE(s): an instance was posted ahead"
        fi
    done
    for mode in run unstarted started; do
        run env SHMEM_PRELAUNCH_DEPTH=0 "$LAUNCHER" -n $n --timeout 60 \
            "$PROG" $mode "$MARK"
        expect_rc 0 "$mode with SHMEM_PRELAUNCH_DEPTH=0 on $n PE(s)"
    done
done

for n in 1 2 4; do
    for mode in run unstarted started; do
        run "$LAUNCHER" -n $n --timeout 60 "$PROG" $mode "$MARK"
        expect_rc 0 "$mode on $n PE(s)"
    done
    run env SHMEM_ALLTOALL_ALGORITHM=pcpy "$LAUNCHER" -n $n \
        --timeout 120 "$PROG" churn "$MARK"
    expect_rc 0 "churn on $n PE(s)"
done
echo "PASS"
