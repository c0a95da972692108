#!/bin/sh
# Key-value exchange (put, fence, get of a key published later), barriers,
# the largest value, and the job layout, with 1, 2, 4 and 64 PEs.
. "$(dirname "$0")/common.sh"

for n in 1 2 4 64; do
    run "$LAUNCHER" -n "$n" "$BOOT_CLIENT" "$MARK" kv 3
    expect_rc 0 "kv with $n PEs"
    got=$(printf '%s\n' "$OUT" | grep -c '^kv ok rank [0-9]* size '"$n"'$')
    [ "$got" -eq "$n" ] || fail "kv with $n PEs: $got of $n PEs reported ok: $OUT"
    expect_clean "kv with $n PEs"
done

# 256 PEs: every one connects and learns its place.
run "$LAUNCHER" -n 256 "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "256 PEs"
[ "$(printf '%s\n' "$OUT" | grep -c 'backend launcher rank [0-9]* size 256 ')" -eq 256 ] ||
    fail "256 PEs: not every PE reported"
expect_clean "256 PEs"

run "$LAUNCHER" -np 3 "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "info"
for r in 0 1 2; do
    printf '%s\n' "$OUT" | grep -qx "backend launcher rank $r size 3 node_rank $r node_size 3 node_id 0 num_nodes 1 watch yes" ||
        fail "info: rank $r layout wrong: $OUT"
done

# A PE that leaves without fini fails the job (its peers' barrier fails
# too, but they are ended right after): no hang, the launcher names it.
run "$LAUNCHER" -n 3 --timeout 10 "$BOOT_CLIENT" "$MARK" lostpeer 1
expect_rc 1 "lost peer"
expect_err 'PE 1 (pid [0-9]*) exited with status 0 before shmem_finalize' \
    "lost peer"
expect_clean "lost peer"
exit 0
