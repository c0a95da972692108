#!/bin/bash
# The leak suppressions of the sanitizer build's tests (test/lsan.supp)
# cover libfabric's own allocations only: an fi_info the program asked for
# and dropped is still reported, under the LSAN_OPTIONS the tests run with
# (test/Makefile.inc). Run only in the sanitizer build with libfabric
# (test/unit/Makefile.lsan.inc); skipped (77) if its program is missing.
set -u
P=$top_builddir/test/unit/lsan_scope
if [ ! -x "$P" ]; then
    echo "SKIP: lsan_scope not built (needs --enable-sanitizers and libfabric)"
    exit 77
fi
case "${LSAN_OPTIONS:-}" in
*lsan.supp*) ;;
*) echo "FAIL: LSAN_OPTIONS does not name test/lsan.supp: '${LSAN_OPTIONS:-}'"
   exit 1 ;;
esac
fail=0
out=$("$P" free 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: lsan_scope free: exit status $rc, expected 0"
    printf '%s\n' "$out"
    fail=1
fi
out=$("$P" leak 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "FAIL: lsan_scope leak: exit status 0: the dropped fi_info was not reported"
    fail=1
elif ! printf '%s\n' "$out" | grep -A4 "^Direct leak" |
       grep -q "in main .*lsan_scope\.c"; then
    echo "FAIL: lsan_scope leak: exit status $rc without a direct leak allocated from lsan_scope.c"
    fail=1
fi
[ "$fail" -eq 0 ] || { printf '%s\n' "$out" | head -40; exit 1; }
echo "PASS: a dropped fi_info is reported under test/lsan.supp; a freed one is not"
