# Sourced by the test/mp scripts. Finds the launcher and the helper program
# in the build tree (top_builddir comes from the Makefile; by hand, run from
# the build directory or set top_builddir), gives the test a private TMPDIR
# and a unique marker for its processes, and cleans up on exit.

: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
LAUNCHER=${LAUNCHER:-$top_builddir/src/launcher/shmem_launcher}
EXIT_PROG=${EXIT_PROG:-$top_builddir/test/mp/exit_prog}

if [ ! -x "$LAUNCHER" ] || [ ! -x "$EXIT_PROG" ]; then
    echo "SKIP: $LAUNCHER or $EXIT_PROG not built"
    exit 77
fi

TEST_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mp-test.XXXXXX") || exit 1
export TMPDIR="$TEST_TMP/tmp"
mkdir "$TMPDIR" || exit 1
MARK="--marker=mp-$TEST_NAME-$$-$(date +%s%N)"
unset SHMEM_BOOTSTRAP SHMEM_LAUNCHER_TIMEOUT DMASHMEM_BOOT_SOCK DMASHMEM_RANK \
    DMASHMEM_SIZE SHMEM_DEBUG SMA_DEBUG SHMEM_SYMMETRIC_SIZE SMA_SYMMETRIC_SIZE

cleanup() {
    local rc=$?
    local p
    # Only our own processes: the marker is unique to this run.
    for p in $(pgrep -f -- "$MARK"); do
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$TEST_TMP"
    exit $rc
}
trap cleanup EXIT

fail() {
    echo "FAIL: $TEST_NAME: $*" >&2
    exit 1
}

now_ms() {
    echo $(( $(date +%s%N) / 1000000 ))
}

# run CMD...: sets RC, OUT, ERR and ELAPSED (ms).
run() {
    local t0
    t0=$(now_ms)
    "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
    echo "--- $* -> status $RC in $ELAPSED ms"
    echo "--- stdout:"; printf '%s\n' "$OUT"
    echo "--- stderr:"; printf '%s\n' "$ERR"
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "$2: exit status $RC, expected $1"
}

expect_fail() {
    [ "$RC" -ne 0 ] || fail "$1: the job succeeded"
    [ "$RC" -ne 124 ] || fail "$1: the job hung (launcher timeout)"
}

expect_err() {
    printf '%s\n' "$ERR" | grep -q -- "$1" || fail "$2: stderr lacks '$1'"
}

# expect_count N PATTERN TEXT WHAT: TEXT has exactly N lines matching.
expect_count() {
    local got
    got=$(printf '%s\n' "$3" | grep -c -- "$2")
    [ "$got" -eq "$1" ] || fail "$4: $got lines match '$2', expected $1"
}

expect_faster() {
    [ "$ELAPSED" -lt "$1" ] || fail "$2: took $ELAPSED ms, limit $1 ms"
}

# PIDs of this test's PE processes (the launcher and its helpers carry the
# marker too, but are another program).
pe_pids() {
    local p
    for p in $(pgrep -f -- "$MARK"); do
        case "$(ps -o comm= -p "$p" 2>/dev/null)" in
        exit_prog | lt-exit_prog) echo "$p" ;;
        esac
    done
}

# wait_pes N: wait up to 20 s until N PEs of this test run and PE 0 said
# "ready" in $TEST_TMP/out (everyone is past shmem_init).
wait_pes() {
    local i
    for i in $(seq 200); do
        if [ "$(pe_pids | wc -l)" -eq "$1" ] && grep -q ready "$TEST_TMP/out"; then
            return 0
        fi
        sleep 0.1
    done
    fail "the $1 PEs did not start"
}

# Nothing of this test may remain: no process with the marker, nothing in
# TMPDIR. Allow 3 s for the kernel and the launcher's janitor.
expect_clean() {
    local i
    for i in $(seq 30); do
        if ! pgrep -f -- "$MARK" >/dev/null && [ -z "$(ls -A "$TMPDIR")" ]; then
            return 0
        fi
        sleep 0.1
    done
    pgrep -a -f -- "$MARK" >&2
    ls -la "$TMPDIR" >&2
    fail "$1: processes or files left behind"
}
