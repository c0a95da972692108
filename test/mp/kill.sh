#!/bin/bash
# A killed job leaves nothing behind.
#  1. kill -9 one PE of a 4-PE job: the launcher returns 137, every other PE
#     ends, no file is left in /dev/shm or in TMPDIR.
#  2. kill -9 the launcher itself: the PEs end and the launcher's directory
#     (dmashmem-*) in TMPDIR is removed.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

shm_list() {
    ls -A /dev/shm 2>/dev/null | sort
}

# --- 1: one PE killed
shm_before=$(shm_list)
"$LAUNCHER" -n 4 --timeout 60 "$EXIT_PROG" sleep "$MARK" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
lpid=$!
wait_pes 4
victim=$(pe_pids | sed -n 2p)
t0=$(now_ms)
kill -KILL "$victim"
wait "$lpid"
RC=$?
ELAPSED=$(( $(now_ms) - t0 ))
echo "--- launcher returned $RC $ELAPSED ms after kill -9 of PE pid $victim"
cat "$TEST_TMP/err"
[ "$RC" -eq 137 ] || fail "kill -9 of a PE: launcher returned $RC, expected 137"
[ "$ELAPSED" -lt 10000 ] || fail "kill -9 of a PE: the job took $ELAPSED ms to end"
expect_clean "kill -9 of a PE"
new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
[ -z "$new_shm" ] || fail "kill -9 of a PE left files in /dev/shm: $new_shm"

# --- 2: the launcher killed
: >"$TEST_TMP/out"
"$LAUNCHER" -n 4 --timeout 60 "$EXIT_PROG" sleep "$MARK" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
lpid=$!
wait_pes 4
pes=$(pe_pids)
kill -KILL "$lpid"
wait "$lpid" 2>/dev/null
for i in $(seq 100); do
    left_pes=
    for p in $pes; do
        kill -0 "$p" 2>/dev/null && left_pes="$left_pes $p"
    done
    [ -z "$left_pes" ] && break
    sleep 0.1
done
[ -z "$left_pes" ] || fail "kill -9 of the launcher: PEs$left_pes still run after 10 s"
expect_clean "kill -9 of the launcher"
ls -A "$TMPDIR" | grep -q '^dmashmem' && fail "a dmashmem* entry remains in TMPDIR"
new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
[ -z "$new_shm" ] || fail "kill -9 of the launcher left files in /dev/shm: $new_shm"
echo "PASS: kill"
