#!/bin/bash
# SHMEM_WAIT_MODE on one node: every mode (spin; sleep, which never spins
# and sleeps at a waiter's first failed check; auto, which sleeps where PEs
# outnumber cores after a short spin and a few yields) runs the waiting
# programs to completion on 1, 2 and 4 PEs: waits end by notifies or by
# their bounded sleeps, and test loops, which yield where PEs outnumber
# cores, still see the words they test (test/mp/wait tests every form).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

B=$top_builddir/test/mp
for mode in spin sleep auto; do
    for n in 1 2 4; do
        for prog in wait signal_ops lock_counter coll_fcollect; do
            run env SHMEM_WAIT_MODE=$mode "$LAUNCHER" -n "$n" --timeout 120 \
                "$B/$prog" "$MARK"
            expect_rc 0 "$prog on $n PEs, SHMEM_WAIT_MODE=$mode"
        done
    done
done
echo "PASS: wait_modes"
