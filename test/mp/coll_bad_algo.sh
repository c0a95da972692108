#!/bin/bash
# An invalid SHMEM_FCOLLECT_ALGORITHM fails the job with one line naming
# the variable at the first collective; a variant that does not apply
# (swap for an AllGather) falls back and still gives the right answer.
top_builddir=${top_builddir:-.}
launcher=$top_builddir/src/launcher/shmem_launcher
prog=$top_builddir/test/mp/coll_fcollect
[ -x "$launcher" ] && [ -x "$prog" ] || { echo "SKIP: not built"; exit 77; }
out=$(SHMEM_FCOLLECT_ALGORITHM=bogus "$launcher" -n 2 --timeout 60 "$prog" 2>&1)
rc=$?
echo "$out" | tail -3
[ $rc -ne 0 ] || { echo "FAIL: bogus algorithm accepted"; exit 1; }
echo "$out" | grep -q 'SHMEM_FCOLLECT_ALGORITHM=bogus' ||
    { echo "FAIL: the error does not name the variable"; exit 1; }
# On one node: the engine variants (a team across nodes always runs the
# direct path, whatever the variable says).
out=$(SHMEM_FORCE_NETWORK=0 SHMEM_DEBUG=1 SHMEM_FCOLLECT_ALGORITHM=swap "$launcher" -n 2 --timeout 60 "$prog" 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out" | tail -5; echo "FAIL: swap fallback run failed"; exit 1; }
echo "$out" | grep -q 'does not apply' ||
    { echo "FAIL: no SHMEM_DEBUG note for the fallback"; exit 1; }
echo "PASS"
