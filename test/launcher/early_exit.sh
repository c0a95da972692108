#!/bin/bash
# A PE that ends after shmem_init before finalize completes (here _exit(0),
# which skips even the implicit finalize at exit) leaves its peers waiting
# for it: the launcher fails the job, names the PE on one line, ends the
# other PEs and returns non-zero, leaving nothing in /dev/shm or TMPDIR.
# A PE that returns from main without shmem_finalize fails the job too
# (one line naming the PE and the status); one that never calls shmem_init
# is no failure, nor is one that calls _exit(0) after shmem_finalize.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

shm_list() {
    ls -A /dev/shm 2>/dev/null | sort
}
shm_before=$(shm_list)

for n in 2 4; do
    run "$LAUNCHER" -n $n --timeout 30 "$EXIT_PROG" early_exit "$MARK"
    expect_fail "_exit(0) after shmem_init with $n PEs"
    expect_rc 1 "_exit(0) after shmem_init with $n PEs"
    expect_err '^shmem_launcher: PE 1 (pid [0-9]*) exited with status 0 before shmem_finalize$' \
        "_exit(0) after shmem_init with $n PEs"
    [ "$(printf '%s\n' "$ERR" | grep -c 'shmem_launcher:')" -eq 1 ] ||
        fail "_exit(0) with $n PEs: not one launcher line"
    expect_clean "_exit(0) after shmem_init with $n PEs"

    # Returning from main without shmem_finalize is an error (1.4: every
    # shmem_init is matched by a shmem_finalize; issue #27): at most one
    # line per PE naming the exit status, status 1.
    run "$LAUNCHER" -n $n --timeout 30 "$EXIT_PROG" no_finalize "$MARK"
    expect_rc 1 "return from main without finalize with $n PEs"
    lines=$(printf '%s\n' "$ERR" | grep -c '^dmashmem: PE [0-9]*: exit: this PE exits with status 0 without calling shmem_finalize')
    [ "$lines" -ge 1 ] && [ "$lines" -le $n ] ||
        fail "return from main without finalize with $n PEs: $lines lines"
    expect_clean "return from main without finalize with $n PEs"

    run "$LAUNCHER" -n $n --timeout 30 "$EXIT_PROG" finalize_exit "$MARK"
    expect_rc 0 "_exit(0) after shmem_finalize with $n PEs"
    expect_clean "_exit(0) after shmem_finalize with $n PEs"

    run "$LAUNCHER" -n $n --timeout 30 /bin/true "$MARK"
    expect_rc 0 "/bin/true (no shmem_init) with $n PEs"
    expect_clean "/bin/true with $n PEs"
done
new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
[ -z "$new_shm" ] || fail "files left in /dev/shm: $new_shm"
echo "PASS: early_exit"
