#!/bin/bash
# The PMIx bootstrap itself, through test/launcher/boot_client under
# mpirun: layout, key-value exchange (fence, get of a key published later,
# largest value, overflow), descriptor passing between the PEs of the node,
# abort with a status and a message, and SHMEM_BOOTSTRAP=pmix.
. "${top_srcdir:-$(dirname "$0")/../..}/test/pmix/common.sh"
[ -x "$BOOT_CLIENT" ] || { echo "SKIP: $BOOT_CLIENT not built"; exit 77; }

run "${MPIRUN[@]}" -np 3 "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "info on 3 PEs"
for r in 0 1 2; do
    expect_count 1 "^backend pmix rank $r size 3 node_rank $r node_size 3 node_id 0 num_nodes 1 watch no\$" "$OUT" "layout of rank $r"
done
expect_clean "info"

SHMEM_BOOTSTRAP=pmix run "${MPIRUN[@]}" -np 2 "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "SHMEM_BOOTSTRAP=pmix"
expect_count 2 "^backend pmix rank [01] size 2 " "$OUT" "SHMEM_BOOTSTRAP=pmix"

run "${MPIRUN[@]}" -np 4 "$BOOT_CLIENT" "$MARK" kv 3
expect_rc 0 "kv on 4 PEs"
expect_count 4 "^kv ok rank [0-3] size 4\$" "$OUT" "kv on 4 PEs"

for n in 1 4; do
    run "${MPIRUN[@]}" -np $n "$BOOT_CLIENT" "$MARK" fd
    expect_rc 0 "fd on $n PEs"
    expect_count $n "^fd ok rank [0-9]* size $n\$" "$OUT" "fd on $n PEs"
done
expect_clean "fd"

run "${MPIRUN[@]}" -np 3 "$BOOT_CLIENT" "$MARK" abort 1 5 "boot_client ends the job"
expect_rc 5 "abort(5) on rank 1 of 3"
expect_count 1 "^boot_client ends the job\$" "$ERR" "abort message"
expect_faster 15000 "abort(5) on rank 1 of 3"
expect_clean "abort"
echo "PASS: pmix boot"
