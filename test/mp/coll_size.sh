#!/bin/bash
# Collectives whose dest (or source) allocation is smaller than what they
# write (read) fail with one line naming the routine, the PE and both sizes
# ("dest needs N bytes, its allocation has M"), before any data moves, and
# a non-zero exit (expect_fail: not the launcher's timeout either; no time
# limit of its own, which failed under load on the network path: 24.7 s
# for what takes 1 s); before, fcollect/collect/alltoall said "source overlaps
# dest" (source being the next allocation) and the others overwrote the
# next allocation silently. coll_size_prog runs one collective per mode.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/coll_size_prog

# check MODE NPES ROUTINE TEXT
check() {
    local mode=$1 n=$2 routine=$3 text=$4 lines
    run "$LAUNCHER" -n "$n" --timeout 60 "$PROG" "$mode" "$MARK"
    expect_fail "$mode on $n PEs"
    lines=$(printf '%s\n' "$ERR" | grep -F -- "$text")
    [ -n "$lines" ] || fail "$mode on $n PEs: no line with '$text'"
    [ "$(printf '%s\n' "$lines" | wc -l)" -le "$n" ] ||
        fail "$mode on $n PEs: more than one line per PE"
    while read -r line; do
        printf '%s\n' "$line" | grep -Eq "^dmashmem: PE [0-9]+: $routine: " ||
            fail "$mode on $n PEs: the line does not name PE and $routine: $line"
    done <<<"$lines"
    if printf '%s\n' "$ERR" | grep -q overlap; then
        fail "$mode on $n PEs: reported as an overlap"
    fi
    expect_clean "$mode on $n PEs"
}

for n in 1 2 4; do
    run "$LAUNCHER" -n $n --timeout 60 "$PROG" ok "$MARK"
    expect_rc 0 "every collective with exact sizes on $n PEs"
    check broadcast $n shmem_int_broadcast "dest needs 64 bytes, its allocation has 32"
    check reduce $n shmem_int_sum_reduce "dest needs 64 bytes, its allocation has 32"
    check scan $n shmem_int_sum_inscan "dest needs 64 bytes, its allocation has 32"
    check to_all $n shmem_int_sum_to_all "dest needs 64 bytes, its allocation has 32"
    check source $n shmem_fcollect "source needs 64 bytes, its allocation has 32"
    check freed $n shmem_fcollect "is in the symmetric heap but in no allocation"
    check reused_freed $n shmem_int_broadcast "is in the symmetric heap but in no allocation"
    check reused_shrunk $n shmem_int_broadcast "dest needs 64 bytes, its allocation has 32"
    [ $n -gt 1 ] || continue
    # One PE's worth of dest: enough on 1 PE.
    check fcollect $n shmem_fcollect "dest needs $((64 * n)) bytes, its allocation has 64"
    check collect $n shmem_collect "dest needs $((64 * n)) bytes, its allocation has 64"
    check alltoall $n shmem_alltoall "dest needs $((64 * n)) bytes, its allocation has 64"
    check alltoalls $n shmem_alltoalls "dest needs $((64 * n - 4)) bytes, its allocation has $((32 * n))"
    check persist_fcollect $n shmemx_fcollectmem_init "dest needs $((64 * n)) bytes, its allocation has 64"
    check persist_a2a $n shmemx_alltoallmem_init "dest needs $((64 * n)) bytes, its allocation has 64"
    check offset $n shmem_fcollect "dest needs $((64 * n)) bytes, its allocation has 64 from dest (128 from its start)"
done
echo "PASS: coll_size"
