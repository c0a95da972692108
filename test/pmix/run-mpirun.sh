#!/bin/bash
# A smaller multi-PE set run under `mpirun --oversubscribe -np 2` and `-np 4`
# through the PMIx bootstrap (on one node: shared memory, no network):
# RMA, static data, atomics, barriers, fcollect, alltoall, teams, signals,
# re-initialization after the last shmem_finalize.
# Each run must exit 0, print no FAIL line and, where the program prints a
# summary, say it ran on the expected number of PEs.
. "${top_srcdir:-$(dirname "$0")/../..}/test/pmix/common.sh"

# program:summary pattern ("" = exit status only); %N is the PE count.
progs=(
    "rma_types:^rma_types: %N PEs: every typed, sized and mem RMA form OK\$"
    "globals:^globals: %N PEs: .data, .bss, statics OK\$"
    "amo_types:^amo_types: %N PEs OK\$"
    "coll_sync:^coll_sync: %N PEs"
    "coll_fcollect:^coll_fcollect (auto): %N PEs OK\$"
    "coll_alltoall:^coll_alltoall (auto): %N PEs OK\$"
    "team_split:"
    "signal_ops:^signal_ops: %N PEs OK\$"
    "reinit:^reinit: 3 rounds passed\$"
)
for n in 2 4; do
    for entry in "${progs[@]}"; do
        prog=${entry%%:*}
        pat=${entry#*:}
        bin=$top_builddir/test/mp/$prog
        [ -x "$bin" ] || fail "$bin not built"
        run "${MPIRUN[@]}" -np $n "$bin" "$MARK"
        expect_rc 0 "$prog on $n PEs"
        printf '%s\n%s\n' "$OUT" "$ERR" | grep -q '^FAIL' && fail "$prog on $n PEs printed FAIL"
        [ -z "$pat" ] || expect_count 1 "${pat//%N/$n}" "$OUT" "$prog on $n PEs"
    done
done
expect_clean "the test/mp set under mpirun"
echo "PASS: test/mp set under mpirun -np 2 and -np 4"
