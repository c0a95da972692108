#!/bin/bash
# What the library prints at init (SHMEM_VERSION, SHMEM_INFO: the version,
# every environment variable, bootstrap, sdma, network, placement) reaches
# stdout one line per write(2), never a line cut in two by stdio's 4 KiB
# buffer: a launcher that forwards its PEs' output as it reads it puts
# another PE's line inside a line cut so (test/cluster/cluster.sh,
# 2026-12-05: "host PE 3 n1" inside PE 0's SHMEM_INFO line). This keeps
# lines whole where the PEs' stdout is a pipe; Open MPI's mpirun reads its
# local PEs' stdout from a pty, which can hand it one write in pieces, so
# the cluster test has one PE write to stdout (2026-12-06). Each
# write(1, ...) of a singleton PE with stdout on a pipe, as strace shows
# them, must end with a newline, and hold at most a few lines (a short
# line per write keeps it atomic on a pipe: PIPE_BUF is 4096). Needs
# strace (77 without, or where ptrace is not allowed).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
command -v strace >/dev/null || { echo "SKIP: no strace"; exit 77; }
if ! strace -qq -e trace=none true 2>/dev/null; then
    echo "SKIP: strace cannot trace here (ptrace not allowed)"
    exit 77
fi
ST=$TEST_TMP/strace
# LeakSanitizer cannot run under ptrace (the ASan build of the tests).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
SHMEM_BOOTSTRAP=single SHMEM_VERSION=1 SHMEM_INFO=1 \
    timeout 60 strace -f -qq -e trace=write -e signal=none -s 1000000 -xx \
    -o "$ST" "$EXIT_PROG" ok "$MARK" | cat >"$TEST_TMP/out"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "singleton with SHMEM_INFO=1 under strace: status $rc"
lines=$(grep -c . "$TEST_TMP/out")
# The report: a line per variable and its help, and more.
[ "$lines" -ge 100 ] || fail "only $lines lines of output (want the SHMEM_INFO report)"
grep -q '^dmashmem environment variables' "$TEST_TMP/out" ||
    fail "no SHMEM_INFO report on stdout"
# write(1, "\x..\x0a", N) = N: the string's last byte, and its newlines.
writes=$(grep -E '^[0-9]+ +write\(1, "' "$ST")
nw=$(printf '%s\n' "$writes" | grep -c .)
[ "$nw" -ge 1 ] || fail "strace saw no write to stdout"
cut=$(printf '%s\n' "$writes" | grep -vE '\\x0a", [0-9]+\) += [0-9]+$' | head -3)
[ -z "$cut" ] || fail "a write to stdout does not end a line: $(printf '%s' "$cut" | cut -c1-200)"
big=$(printf '%s\n' "$writes" | awk '{ n = gsub(/\\x0a/, "&"); if (n > 4) print n }' | head -3)
[ -z "$big" ] || fail "a write to stdout holds more than 4 lines: $big"
echo "PASS: info lines: $lines lines of output in $nw writes, each ending a line"
exit 0
