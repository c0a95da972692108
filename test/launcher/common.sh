# Sourced by the launcher tests. Finds the binaries from the build tree
# (top_builddir/top_srcdir are exported by the top Makefile; by hand, run
# from the build directory or set LAUNCHER/BOOT_CLIENT), gives every test a
# private TMPDIR and checks that nothing is left behind.

: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${LAUNCHER:=$top_builddir/src/launcher/shmem_launcher}"
: "${BOOT_CLIENT:=$top_builddir/test/launcher/boot_client}"

if [ ! -x "$LAUNCHER" ] || [ ! -x "$BOOT_CLIENT" ]; then
    echo "SKIP: $LAUNCHER or $BOOT_CLIENT not built"
    exit 77
fi

TEST_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/launcher-test.XXXXXX") || exit 1
# The launcher makes its directory here: we can see whether it is removed.
export TMPDIR="$TEST_TMP/tmp"
mkdir "$TMPDIR" || exit 1
# Unique per test run, in every PE's argv, for pgrep.
MARK="--marker=$TEST_NAME-$$-$(date +%s%N)"
unset SHMEM_BOOTSTRAP SHMEM_LAUNCHER_TIMEOUT DMASHMEM_BOOT_SOCK DMASHMEM_RANK DMASHMEM_SIZE

cleanup() {
    # Keep the test's status (a shell error must not turn into a pass).
    rc=$?
    pkill -KILL -f -- "$MARK" 2>/dev/null
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

# run CMD...: sets RC, OUT (stdout) and ERR (stderr) and ELAPSED (ms).
run() {
    local t0
    t0=$(now_ms)
    "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "$2: exit status $RC, expected $1 (stderr: $ERR)"
}

expect_err() {
    printf '%s\n' "$ERR" | grep -q -- "$1" || fail "$2: stderr lacks '$1': $ERR"
}

expect_faster() {
    [ "$ELAPSED" -lt "$1" ] || fail "$2: took $ELAPSED ms, limit $1 ms"
}

# How long a job that ends by a signal may take here: the launcher's
# SIGKILL comes 1-2 s after its first signal, and a loaded 2-core machine
# (four test jobs of 4 PEs each) has taken 6.8 s to run all of it. What
# ended the PEs is checked in the trace (expect_pes_killed), not timed.
END_BOUND_MS=20000

# expect_pes_killed N SIG WHAT: the run's trace (SHMEM_LAUNCHER_TRACE=1)
# has N PEs "killed by signal SIG". A PE's end by an uncaught fatal signal
# is decided when the signal is sent (the kernel marks the process
# exiting with that signal then), so a PE that the machine's load keeps
# from running until the launcher's SIGKILL still dies of the first one:
# this says which signal ended the PEs without timing it.
expect_pes_killed() {
    local n
    n=$(trace_events | grep -cE "^PE [0-9]+ \(pid [0-9]+\) was killed by signal $2\$")
    [ "$n" -eq "$1" ] || fail "$3: $n PE(s) killed by signal $2, expected $1: $ERR"
}

# trace_events: the run's trace lines (SHMEM_LAUNCHER_TRACE=1), each
# without its "shmem_launcher: trace <ms> +<s> s: " prefix.
TRACE_PREFIX='^shmem_launcher: trace [0-9]* +[0-9]*\.[0-9][0-9][0-9] s: '
trace_events() {
    printf '%s\n' "$ERR" | grep "$TRACE_PREFIX" | sed "s/$TRACE_PREFIX//"
}

# launcher_lines: the launcher's lines of the run's stderr but its trace.
launcher_lines() {
    printf '%s\n' "$ERR" | grep '^shmem_launcher:' | grep -v "$TRACE_PREFIX"
}

# pids of this test's PEs (boot_client processes; the launcher and its
# janitor carry the marker too).
pe_pids() {
    local p
    for p in $(pgrep -f -- "$MARK"); do
        [ "$(ps -o comm= -p "$p" 2>/dev/null)" = boot_client ] && echo "$p"
    done
}

# No PE of this test and no launcher directory may remain; give the janitor
# and the kernel up to 3 s.
expect_clean() {
    local i
    for i in $(seq 30); do
        if ! pgrep -f -- "$MARK" >/dev/null &&
            [ -z "$(ls -A "$TMPDIR")" ]; then
            return 0
        fi
        sleep 0.1
    done
    pgrep -a -f -- "$MARK" >&2
    ls -la "$TMPDIR" >&2
    fail "$1: processes or files left behind"
}
