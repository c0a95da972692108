#!/bin/bash
# Run one test program the way `make check` does (LOG_COMPILER), or by hand:
#
#   test/mp/run-mp.sh [-n "1 2 4"] PROGRAM [ARGS...]
#
# A program under test/mp/ runs under the launcher once per PE count in
# DSM_TEST_NPES (default "1 2 4"; -n overrides both), each run with
# --timeout ${DSM_TEST_TIMEOUT:-120}. Exit status 77 from a run means
# "skipped for this N" (e.g. the program needs >= 2 PEs). A program anywhere
# else (test/unit/: Check executables) needs no launcher and runs once,
# directly. Exits 0 when every run passed or was skipped and at least one
# passed, 77 when every run was skipped, 1 otherwise.

npes=${DSM_TEST_NPES:-1 2 4}
if [ "$1" = -n ]; then
    npes=$2
    shift 2
fi
if [ $# -lt 1 ]; then
    echo "usage: $0 [-n \"1 2 4\"] PROGRAM [ARGS...]" >&2
    exit 2
fi
prog=$1
shift

case "$prog" in
*/test/unit/* | test/unit/* | */test/hsa/* | test/hsa/*)
    # One process that never loads libfabric: the full unwinding the
    # tests' LSAN_OPTIONS ask for (test/Makefile.inc) is only needed to
    # see past libfabric's frames, and costs a white-box test that
    # allocates a lot five times its time (test/unit/heap under the
    # sanitizers: 13 s with fast unwinding, 67 s without). Only the
    # first fast_unwind_on_malloc=0 is changed: under make check the
    # Makefile's, before any a caller set.
    LSAN_OPTIONS=${LSAN_OPTIONS/fast_unwind_on_malloc=0/fast_unwind_on_malloc=1}
    exec "$prog" "$@"
    ;;
esac

# top_builddir comes from the Makefile (AM_TESTS_ENVIRONMENT); by hand,
# the build directory is found from the program's path
# (BUILD/test/mp/PROG).
if [ -z "$top_builddir" ]; then
    top_builddir=$(cd "$(dirname "$prog")/../.." && pwd)
fi
launcher=${LAUNCHER:-$top_builddir/src/launcher/shmem_launcher}
if [ ! -x "$launcher" ]; then
    echo "SKIP: launcher $launcher not built" >&2
    exit 77
fi
timeout=${DSM_TEST_TIMEOUT:-120}
name=$(basename "$prog")
passed= failed= skipped=

for n in $npes; do
    echo "=== $name: $n PE(s)"
    t0=$(date +%s%N)
    "$launcher" -n "$n" --timeout "$timeout" "$prog" "$@"
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    case $rc in
    0)
        echo "=== $name: $n PE(s): PASS ($ms ms)"
        passed="$passed $n"
        ;;
    77)
        echo "=== $name: $n PE(s): SKIP"
        skipped="$skipped $n"
        ;;
    124)
        echo "=== $name: $n PE(s): FAIL (timed out after $timeout s)"
        failed="$failed $n"
        ;;
    *)
        echo "=== $name: $n PE(s): FAIL (exit status $rc)"
        failed="$failed $n"
        ;;
    esac
done

echo "=== $name: passed:${passed:- none} failed:${failed:- none} skipped:${skipped:- none}"
if [ -n "$failed" ]; then
    exit 1
fi
if [ -z "$passed" ]; then
    exit 77
fi
exit 0
