#!/bin/bash
# Misuse a new user makes (issue #27; test/mp/misuse.c, one mode per
# case): each ends the job with a non-zero status within 5 s of the
# mistake, on shared memory and with SHMEM_FORCE_NETWORK=1, with one line
# "dmashmem: PE n: routine: what" that names the values, and leaves
# nothing behind. MISUSE_ONLY="mode ..." runs only those modes.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/misuse
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }
# The put_past_end mode addresses the end of a 1 MiB heap.
export SHMEM_SYMMETRIC_SIZE=1M

NETS="0 1"
if [ ! -e "$top_builddir/config/dsm_config.h" ] ||
    ! grep -q '^#define DSM_HAVE_OFI 1' "$top_builddir/config/dsm_config.h"; then
    echo "no libfabric in this build: shared memory only"
    NETS=0
fi

wanted() {
    [ -z "${MISUSE_ONLY:-}" ] && return 0
    case " $MISUSE_ONLY " in *" $1 "*) return 0 ;; esac
    return 1
}

# run_mode N NET MODE [ENV...]: runs the job; MISUSE_MS is the time from
# the misuse (PE 0's "misuse <ms>" line) to the job's end. The launcher's
# trace (SHMEM_LAUNCHER_TRACE) puts in the log when each PE aborted,
# was signalled and exited: where a slow end's time went.
run_mode() {
    local n=$1 net=$2 mode=$3 t_end t_mis
    shift 3
    run env SHMEM_FORCE_NETWORK=$net SHMEM_LAUNCHER_TRACE=1 "$@" \
        "$LAUNCHER" -n "$n" --timeout 60 \
        "$PROG" "$mode" "$MARK"
    t_end=$(now_ms)
    t_mis=$(printf '%s\n' "$OUT" | sed -n 's/^misuse \([0-9]*\)$/\1/p' | head -1)
    MISUSE_MS=$((t_end - ${t_mis:-$((t_end - ELAPSED))}))
}

# check MODE ROUTINE PATTERN [ENV...]: on 2 and 4 PEs, both paths, the
# job fails within 5 s of the misuse with a line naming ROUTINE whose
# text matches PATTERN (grep -E), and at most one such line per PE.
check() {
    local mode=$1 routine=$2 pat=$3 n net lines
    shift 3
    wanted "$mode" || return 0
    for net in $NETS; do
        for n in 2 4; do
            run_mode $n $net "$mode" "$@"
            local what="$mode, $n PEs, SHMEM_FORCE_NETWORK=$net"
            expect_fail "$what"
            lines=$(printf '%s\n' "$ERR" |
                grep -cE "^dmashmem: PE [0-9]+: $routine: ")
            [ "$lines" -ge 1 ] ||
                fail "$what: no 'dmashmem: PE n: $routine:' line"
            [ "$lines" -le "$n" ] || fail "$what: $lines lines for $n PEs"
            printf '%s\n' "$ERR" | grep -E "^dmashmem: PE [0-9]+: $routine: " |
                grep -qE -- "$pat" ||
                fail "$what: the line does not say '$pat'"
            echo "$what: ended $MISUSE_MS ms after the misuse"
            [ "$MISUSE_MS" -lt 5000 ] ||
                fail "$what: the job ended $MISUSE_MS ms after the misuse"
            expect_clean "$what"
        done
    done
}

wanted ok && for net in $NETS; do
    run_mode 2 $net ok
    expect_rc 0 "ok, SHMEM_FORCE_NETWORK=$net"
done

# 1: a count whose byte size wraps.
check count_wrap shmem_long_put \
    "nelems 2305843009213693953 x 8-byte elements does not fit a size_t"
check count_wrap_get shmem_int64_get "nelems 2305843009213693952 x 8-byte"
# 5: after shmem_finalize.
check put_after_finalize shmem_long_p "called after shmem_finalize"
check amo_after_finalize shmem_long_atomic_fetch_add \
    "called after shmem_finalize"
check barrier_after_finalize shmem_barrier_all "called after shmem_finalize"
# 6: contexts destroyed or made up.
check ctx_destroyed shmem_ctx_long_p "context 0x[0-9a-f]+ was destroyed"
check ctx_destroyed_quiet shmem_ctx_quiet "context 0x[0-9a-f]+ was destroyed"
check ctx_madeup shmem_ctx_long_atomic_add "0x12345678 is not a context"
check ctx_madeup_fence shmem_ctx_fence "0x[0-9a-f]+ is not a context"
# 10: a team handle that is not one.
check team_garbage shmem_team_my_pe "0x12345678 is not a team"
check team_garbage_sync shmem_team_sync "0x[0-9a-f]+ is not a team"

# 2, 3: collective calls that differ between PEs: the first signal (or,
# where none is exchanged, the stall check after a second) finds it, the
# line names the other PE's call and this PE's, values included.
DIFFER="collective calls differ: PE [0-9]+ called"
check malloc_diff shmem_malloc \
    "$DIFFER shmem_malloc\((2048|1024) bytes\), PE [0-9]+ shmem_malloc\((1024|2048) bytes\)"
check malloc_barrier "shmem_malloc|shmem_barrier_all" \
    "$DIFFER (shmem_malloc\(64 bytes\)|shmem_barrier_all), PE [0-9]+ (shmem_barrier_all|shmem_malloc)"
check fcollect_nelems shmem_long_fcollect \
    "$DIFFER shmem_long_fcollect with nelems [48], PE [0-9]+ shmem_long_fcollect with nelems [48]"
check fcollect_zero shmem_long_fcollect "$DIFFER shmem_long_fcollect with nelems [04], PE"
check team_fcollect_nelems shmem_long_fcollect "$DIFFER shmem_long_fcollect with nelems [48]"
check alltoall_nelems shmem_long_alltoall "$DIFFER shmem_long_alltoall with nelems [24]"
check bcast_nelems shmem_long_broadcast \
    "$DIFFER shmem_long_broadcast with nelems (4|16), PE_root 0, PE"
check bcast_root shmem_long_broadcast \
    "$DIFFER shmem_long_broadcast with nelems 4, PE_root [01], PE [0-9]+ shmem_long_broadcast with nelems 4, PE_root [01]"
check reduce_nreduce shmem_long_sum_reduce "$DIFFER shmem_long_sum_reduce with nelems (4|32)"
check reduce_op "shmem_long_(sum|max)_reduce" \
    "$DIFFER shmem_long_(sum|max)_reduce with nelems 4, PE [0-9]+ shmem_long_(max|sum)_reduce"
check aset_reduce_nreduce shmem_long_sum_to_all "$DIFFER shmem_long_sum_to_all with nelems (4|32)"
check coll_kind "shmem_long_broadcast|shmem_barrier_all" \
    "$DIFFER (shmem_barrier_all|shmem_long_broadcast)"
# SHMEM_CHECK=2: an RMA past the end of its allocation (still inside the
# heap) fails; at the default level it is not looked at.
check alloc_overrun shmem_putmem \
    "the symmetric address needs 1024 bytes, its allocation has 512" \
    SHMEM_CHECK=2
if wanted alloc_overrun; then
    run_mode 2 0 alloc_overrun
    expect_rc 0 "alloc_overrun at SHMEM_CHECK=1"
fi
# The checks off: the same program runs as before (SHMEM_CHECK=0), and
# with every check on (2).
if wanted ok; then
    for c in 0 2; do
        run_mode 4 0 ok SHMEM_CHECK=$c
        expect_rc 0 "ok, SHMEM_CHECK=$c"
    done
fi

# 4: a PE exits without shmem_finalize while the others go on to a
# barrier, to shmem_finalize, or wait for a flag it never sets: the job
# ends with its status (1 for exit(0)), one line naming PE and status.
check exit_barrier exit "PE [0-9]+: exit: this PE exits with status 0 without calling shmem_finalize"
check exit_finalize exit "this PE exits with status 0 without calling shmem_finalize"
check exit_wait exit "this PE exits with status 3 without calling shmem_finalize"
if wanted exit_wait; then
    run_mode 2 0 exit_wait
    expect_rc 3 "exit(3) without finalize"
fi

# 7 and smaller: wait words not symmetric, or misaligned.
check wait_nonsym shmem_long_wait_until \
    "address 0x[0-9a-f]+ is not symmetric .*the wait would never end"
check signal_wait_nonsym shmem_signal_wait_until \
    "address 0x[0-9a-f]+ is not symmetric"
check wait_misaligned shmem_long_wait_until \
    "address 0x[0-9a-f]+4 is not aligned to its 8-byte type"
# 8: a lock taken twice by the PE (thread) that holds it.
check lock_twice shmem_set_lock "lock 0x[0-9a-f]+ is already held by this PE"
# 11: past the end of the heap, on the network path too.
check put_past_end shmem_putmem \
    "range 0x[0-9a-f]+ \+ 64 bytes \(target PE [0-9]+\) runs past the end of the heap segment \(1048576 bytes\)"

# check_ok MODE PATTERN: a spec-allowed failure return; the job goes on
# (status 0) and says why in exactly one line matching PATTERN.
check_ok() {
    local mode=$1 pat=$2 net
    wanted "$mode" || return 0
    for net in $NETS; do
        run_mode 2 $net "$mode"
        expect_rc 0 "$mode, SHMEM_FORCE_NETWORK=$net"
        [ "$(printf '%s\n' "$ERR" | grep -c -- "$pat")" -eq 1 ] ||
            fail "$mode: not one line saying why"
    done
}
# Smaller: shmem_align(0, n) returns NULL on every PE (an invalid
# alignment) and PE 0 says why; team creation that runs out of slots
# returns non-zero and says why.
check_ok align_zero \
    '^dmashmem: PE 0: shmem_align: returns NULL: alignment 0 is not a power of two'
check_ok team_many \
    'shmem_team_split_strided: returns -1: no team slot is free.*at most 61'
echo "PASS: misuse"
