#!/bin/bash
# Failing PEs end the job under mpirun, and nothing is left behind.
#  1. shmem_global_exit(7) on PE 1 of 4: status 7, its message once.
#  2. abort() on PE 1: status 134 (mpirun's 128+SIGABRT), the PEs waiting
#     in a barrier do not hang.
#  3. an invalid PE: status 1 and the one-line error.
#  4. kill -9 of one PE of 4: mpirun ends the job with 137 within 10 s, no
#     PE remains, nothing new in /dev/shm, TMPDIR empty (Open MPI's session
#     directory included).
#  5. kill -9 of mpirun itself: the PEs notice the lost PMIx server and end
#     within 10 s (only Open MPI's own session directory may remain).
. "${top_srcdir:-$(dirname "$0")/../..}/test/pmix/common.sh"

shm_before=$(shm_list)

run "${MPIRUN[@]}" -np 4 "$EXIT_PROG" global_exit "$MARK"
expect_rc 7 "shmem_global_exit(7) on PE 1"
expect_count 1 "^PE 1 called shmem_global_exit(7)\$" "$ERR" "global_exit message"
expect_faster 15000 "shmem_global_exit(7) on PE 1"
expect_clean "global_exit"

run "${MPIRUN[@]}" -np 4 "$EXIT_PROG" abort "$MARK"
expect_rc 134 "abort() on PE 1"
expect_faster 15000 "abort() on PE 1"
expect_clean "abort"

run "${MPIRUN[@]}" -np 2 "$EXIT_PROG" bad_pe "$MARK"
expect_rc 1 "put to an invalid PE"
expect_err "dmashmem: PE 0: shmem_putmem: invalid PE 5 (the job has 2 PEs: 0..1)" "put to an invalid PE"
expect_clean "bad_pe"

# --- 4: one PE killed
"${MPIRUN[@]}" -np 4 "$EXIT_PROG" sleep "$MARK" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
jpid=$!
wait_pes 4
victim=$(pe_pids | sed -n 2p)
t0=$(now_ms)
kill -KILL "$victim"
wait "$jpid"
RC=$?
ELAPSED=$(( $(now_ms) - t0 ))
echo "--- mpirun returned $RC $ELAPSED ms after kill -9 of PE pid $victim"
cat "$TEST_TMP/err"
[ "$RC" -eq 137 ] || fail "kill -9 of a PE: mpirun returned $RC, expected 137"
[ "$ELAPSED" -lt 10000 ] || fail "kill -9 of a PE: the job took $ELAPSED ms to end"
expect_clean "kill -9 of a PE"
new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
[ -z "$new_shm" ] || fail "kill -9 of a PE left files in /dev/shm: $new_shm"

# --- 5: mpirun killed
: >"$TEST_TMP/out"
"$MPIRUN_BIN" --oversubscribe $ROOT_FLAG -np 4 "$EXIT_PROG" sleep "$MARK" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
jpid=$!
wait_pes 4
pes=$(pe_pids)
kill -KILL "$jpid"
wait "$jpid" 2>/dev/null
for i in $(seq 100); do
    left=
    for p in $pes; do
        # A zombie (state Z) has ended; only its parent is gone.
        st=$(ps -o stat= -p "$p" 2>/dev/null)
        [ -n "$st" ] && [ "${st#Z}" = "$st" ] && left="$left $p"
    done
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || fail "kill -9 of mpirun: PEs$left still run after 10 s"
# Open MPI's session directory is mpirun's to remove, and mpirun was killed.
rm -rf "$TMPDIR"/ompi.*
expect_clean "kill -9 of mpirun"
new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
[ -z "$new_shm" ] || fail "kill -9 of mpirun left files in /dev/shm: $new_shm"
echo "PASS: pmix exit paths"
