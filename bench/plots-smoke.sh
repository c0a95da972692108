#!/bin/bash
# Smoke test for bench/plots.sh (make check): the device API plots and the
# one-GPU collectives plot (gpu1-coll.png) and the NVSHMEM comparison
# (nvcmp.png) drawn from the CSV committed in
# docs/plots/data must come out as PNG files of
# the expected size with every curve and row found, a CSV left where
# `test/gpu/run-on-device.sh devapi` writes it ($OUT) must be found too,
# and a directory without one must be skipped with a note, not plotted.
# Whether the plots read well is checked by eye (docs/PERFORMANCE.md).
set -u
top_srcdir=${top_srcdir:-.}
plots=$top_srcdir/bench/plots.sh
data=$top_srcdir/docs/plots/data

command -v gnuplot >/dev/null || { echo "plots-smoke: no gnuplot, skipped"; exit 77; }
gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo ||
    { echo "plots-smoke: gnuplot has no pngcairo terminal, skipped"; exit 77; }
[ -s "$data/gpu_devbench-1pe.csv" ] || { echo "plots-smoke: $data/gpu_devbench-1pe.csv missing" >&2; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plots-smoke.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty" "$tmp/gpu" "$tmp/t"
fail=0
bad() { echo "plots-smoke: FAIL: $*" >&2; fail=1; }

# png FILE WIDTH HEIGHT: the PNG signature, then the IHDR size.
png() {
    local sig wh
    [ -s "$1" ] || { bad "$1 not produced or empty"; return; }
    sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || { bad "$1 is not a PNG (starts $sig)"; return; }
    wh=$(od -An -tu1 -j16 -N8 "$1" |
        awk '{ printf "%dx%d", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }')
    [ "$wh" = "$2x$3" ] || bad "$1 is $wh, expected $2x$3"
}
# run NAME EXPECTED_RC ARGS...: plots.sh with its output in $tmp/NAME.log;
# its own temporary directory must be gone afterwards.
run() {
    local name=$1 want=$2 rc
    shift 2
    env -u OUT -u DEVAPI_OUT -u DEVAPI_MACHINE -u DEVAPI_DATE -u COLL1_OUT -u NVCMP_CSV -u NVCMP_TITLE TMPDIR="$tmp/t" \
        "$@" >"$tmp/$name.log" 2>&1
    rc=$?
    sed "s/^/  $name: /" "$tmp/$name.log"
    [ $rc -eq "$want" ] || bad "$name: plots.sh exited $rc, expected $want"
    [ -z "$(ls -A "$tmp/t")" ] || bad "$name: plots.sh left $(ls "$tmp/t")"
}

# 1. The committed CSV: 4 bandwidth curves of 8 sizes each, 5 latency rows
# from 2 runs (variants with a comma in them included); gpu1-coll.png.
run committed 0 bash "$plots" "$data" "$tmp/committed"
grep -q 'devapi-bw.png (4 curves, 32 points)$' "$tmp/committed.log" ||
    bad "committed: not 4 bandwidth curves of 32 points in all"
grep -q 'devapi-lat.png (5 rows, 2 run(s))$' "$tmp/committed.log" ||
    bad "committed: not 5 latency rows of 2 runs"
grep -q 'H200' "$data/gpu_devbench-run.txt" || bad "gpu_devbench-run.txt names no machine"
png "$tmp/committed/devapi-bw.png" 1100 650
png "$tmp/committed/devapi-lat.png" 1100 600
# The one-GPU collectives (docs/plots/data/coll1, found by default).
grep -q 'gpu1-coll.png$' "$tmp/committed.log" || bad "committed: gpu1-coll.png not drawn"
png "$tmp/committed/gpu1-coll.png" 1800 520
# NVSHMEM side by side (the newest full docs/plots/data/nvcmp CSV): 6
# bandwidth and 10 host-collective curves, the 10 kernel-side rows.
grep -q 'nvcmp.png (16 curves, 10 ratio rows; from .*/nvcmp-h[0-9]*-[-0-9]*.csv)$' "$tmp/committed.log" ||
    bad "committed: nvcmp.png not 16 curves and 10 ratio rows of a full nvcmp CSV"
png "$tmp/committed/nvcmp.png" 1800 1000
# A CSV of some groups only (NVCMP_JOBS): the panels without rows say "no
# data", the PNG is still drawn.
grep -E '^lib|,putmem_' "$data/nvcmp/nvcmp-h100-2026-12-07-0948.csv" >"$tmp/gpu/nvcmp-part.csv"
run part 0 env NVCMP_CSV="$tmp/gpu/nvcmp-part.csv" bash "$plots" "$tmp/empty" "$tmp/part"
grep -q 'nvcmp.png (6 curves, 0 ratio rows; ' "$tmp/part.log" || bad "part: nvcmp.png not drawn from 6 bandwidth curves alone"
png "$tmp/part/nvcmp.png" 1800 1000

# 2. Only a 1-PE CSV, in $OUT as run-devapi.sh leaves it; no bench results.
cp "$data/gpu_devbench-1pe.csv" "$tmp/gpu/"
run out 0 env OUT="$tmp/gpu" bash "$plots" "$tmp/empty" "$tmp/out"
grep -q 'devapi-lat.png (5 rows, 1 run(s))$' "$tmp/out.log" ||
    bad "out: the CSV in \$OUT not found or not 5 rows of 1 run"
png "$tmp/out/devapi-bw.png" 1100 650
png "$tmp/out/devapi-lat.png" 1100 600

# 3. No CSV anywhere: skipped with a note, nothing drawn, exit 1.
run none 1 env DEVAPI_OUT="$tmp/empty" COLL1_OUT="$tmp/empty" NVCMP_CSV="$tmp/empty/nvcmp.csv" bash "$plots" "$tmp/empty" "$tmp/none"
grep -q 'devapi-bw.png and devapi-lat.png skipped' "$tmp/none.log" || bad "none: no skip note"
grep -q 'gpu1-coll.png skipped' "$tmp/none.log" || bad "none: no gpu1 skip note"
grep -q 'nvcmp.png skipped' "$tmp/none.log" || bad "none: no nvcmp skip note"
[ -z "$(ls -A "$tmp/none" 2>/dev/null)" ] || bad "none: drew $(ls "$tmp/none")"

[ $fail -eq 0 ] && echo "plots-smoke: PASS"
exit $fail
