#!/bin/bash
# CPU-side routines on device-heap words end the job with one line naming
# the routine (no SIGSEGV); a strided put/get on the device heap works
# through the engines (test/gpu/gpu_devword.c). Skipped (77) without a GPU.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

PROG=$top_builddir/test/gpu/gpu_devword
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }

"$LAUNCHER" -n 2 --timeout 60 "$PROG" iput >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
rc=$?
grep -q SKIP "$TEST_TMP/out" && { echo "SKIP: no GPU"; exit 77; }
[ $rc -eq 0 ] || { cat "$TEST_TMP/out" "$TEST_TMP/err"; fail "iput/iget on the device heap: exit status $rc"; }

for mode in amo wait test signal_add signal_fetch put_signal; do
    "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$mode" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    rc=$?
    [ $rc -eq 1 ] || { cat "$TEST_TMP/err"; fail "$mode: exit status $rc, expected 1"; }
    grep -q "shmem_.*on the device heap (GPU memory): the CPU cannot operate on it" "$TEST_TMP/err" ||
        { cat "$TEST_TMP/err"; fail "$mode: no one-line device-heap error"; }
    echo "$mode: $(grep -m1 'device heap' "$TEST_TMP/err")"
done
echo "PASS: gpu_devword"
