#!/bin/sh
# --mps (issue #15): the launcher runs a CUDA MPS control daemon of the
# job's own. No GPU here: SHMEM_MPS_CONTROL points at a fake control
# program that records what it is asked (start with -d, "quit" on stdin)
# and the directories it was given. Checked:
#  - the daemon starts before the PEs, which see CUDA_MPS_PIPE_DIRECTORY and
#    CUDA_MPS_LOG_DIRECTORY inside the job's private directory;
#  - it is told to quit after the job, also when a PE fails, and the
#    directory is removed;
#  - a SIGKILLed launcher: the janitor quits the daemon and removes it;
#  - a control program that cannot be run, or whose start fails: one line,
#    the job does not start, exit status non-zero, nothing left;
#  - --mps with --launcher mpirun is refused (one line).
. "$(dirname "$0")/common.sh"

LOG=$TEST_TMP/mps.log
FAKE=$TEST_TMP/fake-mps-control
cat >"$FAKE" <<FAKE_EOF
#!/bin/sh
if [ "\$1" = -d ]; then
    echo "start \$CUDA_MPS_PIPE_DIRECTORY \$CUDA_MPS_LOG_DIRECTORY" >>"$LOG"
    [ -n "\$FAKE_MPS_FAIL" ] && exit 3
    : >"\$CUDA_MPS_PIPE_DIRECTORY/control"
    echo log >"\$CUDA_MPS_LOG_DIRECTORY/control.log"
    exit 0
fi
read cmd
echo "\$cmd \$CUDA_MPS_PIPE_DIRECTORY" >>"$LOG"
rm -f "\$CUDA_MPS_PIPE_DIRECTORY/control"
exit 0
FAKE_EOF
chmod +x "$FAKE"
export SHMEM_MPS_CONTROL=$FAKE

# 1. A job on 2 and 4 PEs: started first, exported, quit after, removed.
for n in 2 4; do
    : >"$LOG"
    run "$LAUNCHER" -n $n --mps "$BOOT_CLIENT" "$MARK" env CUDA_MPS_PIPE_DIRECTORY
    expect_rc 0 "--mps, $n PEs"
    dir=$(sed -n 's/^start \([^ ]*\)\/pipe .*/\1/p' "$LOG")
    case $dir in "$TMPDIR"/dmashmem-mps-*) ;; *) fail "--mps, $n PEs: daemon not started in the job's directory: $(cat "$LOG")" ;; esac
    grep -q "^start $dir/pipe $dir/log\$" "$LOG" || fail "--mps: log directory: $(cat "$LOG")"
    [ "$(printf '%s\n' "$OUT" | grep -c "CUDA_MPS_PIPE_DIRECTORY=$dir/pipe\$")" -eq $n ] ||
        fail "--mps, $n PEs: the PEs did not all see the pipe directory: $OUT"
    [ "$(sed -n 2p "$LOG")" = "quit $dir/pipe" ] || fail "--mps, $n PEs: no quit after the job: $(cat "$LOG")"
    expect_clean "--mps, $n PEs"
done

# Without --mps nothing is started and nothing exported.
: >"$LOG"
run env -u CUDA_MPS_PIPE_DIRECTORY "$LAUNCHER" -n 2 "$BOOT_CLIENT" "$MARK" env CUDA_MPS_PIPE_DIRECTORY
expect_rc 0 "no --mps"
[ ! -s "$LOG" ] || fail "no --mps: the control program ran: $(cat "$LOG")"
printf '%s\n' "$OUT" | grep -q "CUDA_MPS_PIPE_DIRECTORY unset" || fail "no --mps: exported: $OUT"

# 2. A PE fails: the job's status stands, the daemon still quits.
: >"$LOG"
run "$LAUNCHER" -n 2 --mps "$BOOT_CLIENT" "$MARK" exit 1 5
expect_rc 5 "--mps, PE 1 exits 5"
grep -q "^quit " "$LOG" || fail "--mps, failed job: no quit: $(cat "$LOG")"
expect_clean "--mps, failed job"

# 3. The launcher SIGKILLed: the janitor quits the daemon and removes it.
: >"$LOG"
"$LAUNCHER" -n 2 --mps "$BOOT_CLIENT" "$MARK" sleep >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do
    [ "$(pe_pids | wc -l)" -ge 2 ] && break
    sleep 0.05
done
kill -KILL $pid
wait $pid 2>/dev/null
for i in $(seq 50); do
    grep -q "^quit " "$LOG" && break
    sleep 0.1
done
grep -q "^quit " "$LOG" || fail "SIGKILLed launcher: the janitor did not quit the daemon: $(cat "$LOG")"
expect_clean "--mps, SIGKILLed launcher"

# 4. No control program, or its start fails: one line, no job.
SHMEM_MPS_CONTROL=$TEST_TMP/no-such-control run "$LAUNCHER" -n 2 --mps "$BOOT_CLIENT" "$MARK" env X
[ "$RC" -ne 0 ] || fail "--mps without a control program: exit status 0"
expect_err "shmem_launcher: --mps: cannot run $TEST_TMP/no-such-control" "--mps, no control program"
[ -z "$OUT" ] || fail "--mps, no control program: the PEs ran: $OUT"
expect_clean "--mps, no control program"
: >"$LOG"
FAKE_MPS_FAIL=1 run "$LAUNCHER" -n 2 --mps "$BOOT_CLIENT" "$MARK" env X
[ "$RC" -ne 0 ] || fail "--mps, start fails: exit status 0"
expect_err "shmem_launcher: --mps: '$FAKE -d' failed with status 3" "--mps, start fails"
[ -z "$OUT" ] || fail "--mps, start fails: the PEs ran: $OUT"
expect_clean "--mps, start fails"

# 5. Not with a PMIx launcher.
run "$LAUNCHER" -n 2 --mps --launcher mpirun "$BOOT_CLIENT" "$MARK" env X
[ "$RC" -ne 0 ] || fail "--mps --launcher mpirun: accepted"
expect_err "shmem_launcher: --mps starts a daemon on this node only" "--mps with mpirun"
echo "PASS: mps"
exit 0
