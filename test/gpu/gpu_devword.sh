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
# A PE waiting outside the library (cuCtxSynchronize) behind a
# persistent request's instances posted ahead: the --timeout ends it, and
# each PE says what holds it (runtime/stall.h), the launcher the timeout.
SHMEM_DEV_REQ_TRIGGER=1 CUDA_MODULE_LOADING=EAGER \
    "$LAUNCHER" -n 2 --timeout 8 "$PROG" ahead_sync >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
rc=$?
[ $rc -eq 124 ] || { cat "$TEST_TMP/out" "$TEST_TMP/err"; fail "ahead_sync: exit status $rc, expected 124 (the timeout)"; }
n=$(grep -c "^dmashmem: PE [01]: signal 15 (Terminated) ended this PE outside the library's waits while 1 persistent request keeps instances posted ahead on CUDA streams: until shmemx_req_free, cudaDeviceSynchronize does not return" "$TEST_TMP/err")
[ "$n" -eq 2 ] || { cat "$TEST_TMP/err"; fail "ahead_sync: $n of 2 PEs said what held them"; }
echo "ahead_sync: $(grep -m1 'ended this PE outside' "$TEST_TMP/err" | cut -c1-120)..."
# An on-stream collective that a PE never calls: the library's kernel on
# the others gives up after SHMEM_DEV_STALL_TIMEOUT with one line (the LL
# form, then the two-phase kernel), and the job fails.
for ll in 16384 0; do
    SHMEM_DEV_STALL_TIMEOUT=2 SHMEM_STREAM_LL_MAX=$ll \
        "$LAUNCHER" -n 2 --timeout 50 "$PROG" stream_stall >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] ||
        { cat "$TEST_TMP/out" "$TEST_TMP/err"; fail "stream_stall (LL max $ll): exit status $rc"; }
    if [ "$ll" = 0 ]; then
        re="^dmashmem: PE 0: shmemx_fcollectmem_on_stream: PE 1 did not reach phase 0 of the call within 2 s"
    else
        re="^dmashmem: PE 0: shmemx_fcollectmem_on_stream: the block of PE 1 did not arrive within 2 s"
    fi
    grep -q "$re" "$TEST_TMP/out" "$TEST_TMP/err" ||
        { cat "$TEST_TMP/out" "$TEST_TMP/err"; fail "stream_stall (LL max $ll): no stall line"; }
    echo "stream_stall (LL max $ll): rc $rc: $(grep -h -m1 'did not' "$TEST_TMP/out" "$TEST_TMP/err" | cut -c1-110)..."
done
echo "PASS: gpu_devword"
