#!/bin/bash
# bench/nvcmp-table.awk, the side-by-side table of bench/run-nvcmp.sh, on
# a fixed CSV (test/gpu/nvcmp-fixture.csv, rows of the H200 run of
# 2026-12-05 14:15): ratios for time, bandwidth and slowdown rows, and a
# row that is behind carries the floor measured in the same run and ours
# against it. Needs no GPU.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# table [CSV LINE...]: the table of the fixture with these lines added.
table() {
    { cat "$top_srcdir/test/gpu/nvcmp-fixture.csv"
      [ $# -eq 0 ] || printf '%s\n' "$@"; } |
        awk -F, -f "$top_srcdir/bench/nvcmp-table.awk"
}
out=$(table) || { echo "FAIL: awk"; exit 1; }
fails=0
# want NAME REGEX [TABLE]: a line of TABLE (default: out) matches; TABLE
# is printed with a failure other than out's (printed last).
want() {
    local t=${3-$out}
    if ! grep -qE "$2" <<<"$t"; then
        echo "FAIL: $1: no line matching: $2"
        [ $# -lt 3 ] || echo "$t"
        fails=$((fails + 1))
    fi
}
want "time, ahead" '^2 +fcollect_queued +1 KiB +6\.825 us +5\.625 us +ahead x1\.21$'
want "time, ahead (kernel)" '^2 +alltoall_kernel +1 KiB .* ahead x1\.10$'
want "bandwidth" '^2 +putmem_block +256 MiB .* ahead x49\.25$'
want "slowdown" '^2 +overlap_slowdown +16 MiB .* ahead by 37\.2 pt$'
want "behind, store floor" '^2 +p_quiet +8 B .* behind x1\.43; floor store_fence_floor 0\.576 us: x1\.83$'
want "behind, engine floor, 2 PEs" '^2 +fcollect_kernel +64 KiB .* behind x1\.80; floor kernel_engine_put_floor_all 11\.104 us: x1\.51$'
want "behind, engine floor, 1 PE" '^1 +fcollect_kernel +64 KiB .* behind x1\.42; floor kernel_engine_put_floor 9\.056 us: x1\.12$'
want "ours only" '^2 +store_fence_floor +8 B +- +0\.576 us +-$'
# With the floor of the collectives' whole engine work in the run (every
# PE's put to every PE), the 2-PE rows take it instead.
out2=$(table "dmashmem,2,kernel_engine_put_every_floor_all,65536,15.5,us") ||
    { echo "FAIL: awk"; exit 1; }
want "behind, engine floor of every block, 2 PEs" \
    '^2 +fcollect_kernel +64 KiB .* behind x1\.80; floor kernel_engine_put_every_floor_all 15\.500 us: x1\.08$' "$out2"
# With the engine path's floors of p and put + quiet in the run, those
# rows take them instead of the bare store's.
out3=$(table "dmashmem,2,store_table_quiet_floor,8,0.96,us" \
    "dmashmem,2,copy_table_quiet_floor,8,1.2,us" \
    "nvshmem,2,put_quiet,8,0.9,us" "dmashmem,2,put_quiet,8,1.3,us") ||
    { echo "FAIL: awk"; exit 1; }
want "behind, engine-path floor of p + quiet" \
    '^2 +p_quiet +8 B .* behind x1\.43; floor store_table_quiet_floor 0\.960 us: x1\.10$' "$out3"
want "behind, engine-path floor of put + quiet" \
    '^2 +put_quiet +8 B .* behind x1\.44; floor copy_table_quiet_floor 1\.200 us: x1\.08$' "$out3"
# An idle row takes the floor run the same way (once per kernel after
# the same idle) where the run has it, else the warm one.
out4=$(table "dmashmem,2,copy_table_quiet_floor,8,1.0,us" \
    "dmashmem,2,copy_table_quiet_floor_idle_10ms,8,1.12,us" \
    "nvshmem,2,put_quiet_idle_10ms,8,1.09,us" "dmashmem,2,put_quiet_idle_10ms,8,1.23,us" \
    "nvshmem,2,put_quiet_idle_1ms,8,1.09,us" "dmashmem,2,put_quiet_idle_1ms,8,1.23,us") ||
    { echo "FAIL: awk"; exit 1; }
want "behind, idle floor" \
    '^2 +put_quiet_idle_10ms +8 B .* behind x1\.13; floor copy_table_quiet_floor_idle_10ms 1\.120 us: x1\.10$' "$out4"
want "behind, no idle floor for 1 ms: the warm one" \
    '^2 +put_quiet_idle_1ms +8 B .* behind x1\.13; floor copy_table_quiet_floor 1\.000 us: x1\.23$' "$out4"
# With the translation floor in the run, a put row behind also gets it
# (after the copy floor); a p row does not.
out5=$(table "dmashmem,2,copy_table_quiet_floor_idle_1ms,8,1.0,us" \
    "dmashmem,2,copy_xlate_quiet_floor_idle_1ms,8,1.2,us" \
    "nvshmem,2,put_quiet_idle_1ms,8,1.1,us" "dmashmem,2,put_quiet_idle_1ms,8,1.14,us" \
    "dmashmem,2,copy_xlate_quiet_floor,8,1.0,us") ||
    { echo "FAIL: awk"; exit 1; }
want "behind, idle floor and translation floor" \
    '^2 +put_quiet_idle_1ms +8 B .* behind x1\.04; floor copy_table_quiet_floor_idle_1ms 1\.000 us: x1\.14; with translation copy_xlate_quiet_floor_idle_1ms 1\.200 us: x0\.95$' "$out5"
want "p + quiet: no translation floor" \
    '^2 +p_quiet +8 B .* floor store_fence_floor 0\.576 us: x1\.83$' "$out5"
# On-stream collectives of 2+ PEs that are behind take the exchange
# floor of their form (one word with every peer per call, + sync or
# queued) at any size; one PE's rows have none.
out6=$(table "nvshmem,2,fcollect_stream,1024,16.7,us" "dmashmem,2,fcollect_stream,1024,16.9,us" \
    "dmashmem,2,stream_exchange_floor,0,15.9,us" \
    "nvshmem,2,alltoall_queued,65536,9.7,us" "dmashmem,2,alltoall_queued,65536,9.8,us" \
    "dmashmem,2,queued_exchange_floor,0,6.5,us" \
    "nvshmem,1,alltoall_stream,1024,8.0,us" "dmashmem,1,alltoall_stream,1024,8.1,us" \
    "dmashmem,1,stream_exchange_floor,0,5.0,us") ||
    { echo "FAIL: awk"; exit 1; }
want "behind, exchange floor, on stream + sync" \
    '^2 +fcollect_stream +1 KiB .* behind x1\.01; floor stream_exchange_floor 15\.900 us: x1\.06$' "$out6"
want "behind, exchange floor, queued" \
    '^2 +alltoall_queued +64 KiB .* behind x1\.01; floor queued_exchange_floor 6\.500 us: x1\.51$' "$out6"
want "one PE: no exchange floor" '^1 +alltoall_stream +1 KiB .* behind x1\.01$' "$out6"
n=$(grep -c . <<<"$out")
[ "$n" = 11 ] || { echo "FAIL: $n lines, want 11 (header + 10 keys)"; fails=$((fails + 1)); }
if [ "$fails" -ne 0 ]; then
    echo "$out"
    exit 1
fi
echo "PASS: nvcmp table: ratios and floors"
