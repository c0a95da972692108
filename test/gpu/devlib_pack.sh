#!/bin/bash
# dev_pack of test/gpu/device-lib.sh (bench/run-nvcmp.sh with NVCMP_PACK=1,
# the default of run-on-device.sh nvcmp): what the run wrote besides the
# files it keeps goes into one archive, whole; what was in OUTDIR before
# stays; the kept files stay. A lent device machine's reply brings back
# only the first few files of $OUT, and twice the table was among those
# left out. Needs no GPU.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=test/gpu/device-lib.sh
. "$top_srcdir/test/gpu/device-lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devlib-pack.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

d=$tmp/out
mkdir -p "$d/gpu"
echo old >"$d/earlier.txt"
echo sub >"$d/gpu/summary.txt"
before=$(ls -A "$d")
for i in $(seq 1 40); do echo "row $i" >"$d/dmashmem-np$i-coll.csv"; done
echo log >"$d/build-nvcmp.log"
mkdir "$d/mps"; echo m >"$d/mps/control.log"
echo "lib,npes" >"$d/nvcmp.csv"
echo table >"$d/nvcmp-table.txt"
echo summary >"$d/summary-nvcmp.txt"

dev_pack "$d" nvcmp-files.tar.gz "$before" nvcmp.csv nvcmp-table.txt summary-nvcmp.txt ||
    bad "dev_pack returned $?"
left=$(ls -A "$d" | sort | paste -sd' ')
[ "$left" = "earlier.txt gpu nvcmp-files.tar.gz nvcmp-table.txt nvcmp.csv summary-nvcmp.txt" ] ||
    bad "left in OUTDIR: $left"
n=$(tar tzf "$d/nvcmp-files.tar.gz" | grep -c .)
[ "$n" = 43 ] || bad "the archive holds $n entries, not 43 (40 CSV, a log, mps/ and its log)"
tar xzf "$d/nvcmp-files.tar.gz" -C "$tmp" dmashmem-np17-coll.csv mps/control.log ||
    bad "entries missing from the archive"
[ "$(cat "$tmp/dmashmem-np17-coll.csv" 2>/dev/null)" = "row 17" ] || bad "a CSV's content was not kept"
tar tzf "$d/nvcmp-files.tar.gz" | grep -qE '^(earlier\.txt|gpu/|nvcmp\.csv|nvcmp-table\.txt)' &&
    bad "a file that was there before, or one kept, went into the archive"

# Run again into the same OUTDIR (the archive now among what was there
# before): the first archive is kept whole, the new files go into a second.
before=$(ls -A "$d")
echo again >"$d/dmashmem-np1-rma.log"
dev_pack "$d" nvcmp-files.tar.gz "$before" nvcmp.csv || bad "second dev_pack returned $?"
[ ! -e "$d/dmashmem-np1-rma.log" ] || bad "the second run's log was not packed"
[ "$(tar tzf "$d/nvcmp-files.tar.gz" | grep -c .)" = 43 ] || bad "the first archive was overwritten"
[ "$(tar tzf "$d/nvcmp-files.2.tar.gz" 2>/dev/null)" = dmashmem-np1-rma.log ] ||
    bad "the second run's archive is not nvcmp-files.2.tar.gz with its one log"
# An archive left by a run whose listing was not taken is not packed into
# the new one.
echo x >"$d/late.log"
dev_pack "$d" nvcmp-files.tar.gz "" nvcmp.csv nvcmp-table.txt summary-nvcmp.txt ||
    bad "third dev_pack returned $?"
tar tzf "$d/nvcmp-files.3.tar.gz" 2>/dev/null | grep -q 'nvcmp-files' && bad "an archive packed an archive of its name"

# Nothing new: no archive is made.
e=$tmp/empty
mkdir "$e"
echo x >"$e/nvcmp.csv"
dev_pack "$e" nvcmp-files.tar.gz "" nvcmp.csv || bad "dev_pack of nothing returned $?"
[ ! -e "$e/nvcmp-files.tar.gz" ] || bad "an archive of nothing was made"

[ $fails -eq 0 ] && echo "devlib_pack: PASS"
exit $((fails > 0))
