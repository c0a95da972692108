#!/bin/bash
# Team and collective misuse fails the job with one line that names the
# routine and the bad value (test/mp/team_misuse.c, one mode per case).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/team_misuse
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }

# mode, routine, pattern the message must contain
check() {
    local n=$1 mode=$2 routine=$3 pat=$4 lines
    run "$LAUNCHER" -n "$n" --timeout 60 "$PROG" "$mode" "$MARK"
    expect_fail "$mode with $n PEs"
    lines=$(printf '%s\n' "$ERR" | grep -c "^dmashmem: PE [0-9]*: $routine: ")
    [ "$lines" -ge 1 ] || fail "$mode: no 'dmashmem: PE n: $routine:' line"
    printf '%s\n' "$ERR" | grep "^dmashmem: PE [0-9]*: $routine: " |
        grep -q -- "$pat" || fail "$mode: the line does not say '$pat'"
    expect_clean "$mode with $n PEs"
}

run "$LAUNCHER" -n 2 --timeout 60 "$PROG" ok "$MARK"
expect_rc 0 "ok mode"
for n in 1 2; do
    check $n sync_invalid shmem_team_sync "SHMEM_TEAM_INVALID"
    check $n destroy_world shmem_team_destroy "SHMEM_TEAM_WORLD"
    check $n bcast_root shmem_int_broadcast "PE_root $n out of range"
    check $n aset_size shmem_barrier "PE_size $((n + 1)) out of range"
    check $n reduce_invalid shmem_int_sum_reduce "SHMEM_TEAM_INVALID"
done
echo "PASS: team_misuse"
