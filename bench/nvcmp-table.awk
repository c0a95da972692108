# The side-by-side table of bench/run-nvcmp.sh from its nvcmp.csv
# (lib,npes,row,bytes,value,unit; awk -F, -f bench/nvcmp-table.awk):
# one line per (npes, row, bytes): NVSHMEM's value, ours, and ours
# against theirs: time (us) lower is better, bandwidth (GB/s) higher;
# slowdown (%) in percentage points; the rest (ms, cover %) not compared.
# A row of ours that is behind and has a floor measured in the same run
# (issue #31: "ahead, or within 10 % of a floor measured in the same
# run") gets the floor and ours against it:
#   p_quiet                       store_table_quiet_floor (a store
#                                 through the segment table, the engines'
#                                 two counters and the fence: the quiet of
#                                 a device API with an engine path, no
#                                 library checks) where the run has it,
#                                 else store_fence_floor (a bare store +
#                                 fence, no library), 8 B
#   put_quiet, put_quiet_idle_*   copy_table_quiet_floor (the same storing
#                                 a word loaded from the source) where the
#                                 run has it, else store_fence_floor;
#                                 put_quiet_idle_N first takes
#                                 copy_table_quiet_floor_idle_N (that
#                                 floor once per kernel after the same
#                                 idle: a kernel's first execution)
#                                 and put_quiet(_idle_N) then also gets
#                                 copy_xlate_quiet_floor(_idle_N) where
#                                 the run has it: the copy floor with the
#                                 library's translation of the address
#                                 (three symmetric segments, PE and range
#                                 checks), which NVSHMEM's API leaves out
#   fcollect_kernel, alltoall_kernel, 64 KiB
#                                 kernel_engine_put_every_floor_all (every
#                                 PE's put of its block to every PE, itself
#                                 included, + quiet on the engines at once:
#                                 the collective's engine work without its
#                                 arrival round; where the run has it, else
#                                 kernel_engine_put_floor_all: one put per
#                                 PE), kernel_engine_put_floor with one PE
#   fcollect_stream, alltoall_stream, 2+ PEs
#                                 stream_exchange_floor (a one-thread
#                                 kernel that exchanges one word with every
#                                 peer, + stream sync: what any on-stream
#                                 collective pays per call, no data)
#   fcollect_queued, alltoall_queued, 2+ PEs
#                                 queued_exchange_floor (the same kernels
#                                 queued, one sync)
NR > 1 {
    k = $2 SUBSEP $3 SUBSEP $4
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k; unit[k] = $6 }
    v[k, $1] = $5
}
function human(b) {
    if (b == 0) return "-"
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
    return b " B"
}
# The key of floor row `base` for put row `row` (put_quiet_idle_N takes
# base_idle_N) at np PEs, 8 B; "" where the run has no such row.
function put_floor(np, base, row,   f) {
    f = row ~ /^put_quiet_idle_/ ? base "_idle_" substr(row, 16) : base
    return ((np SUBSEP f SUBSEP 8, "dmashmem") in v) ? np SUBSEP f SUBSEP 8 : ""
}
# The floor row of (npes, row, bytes), "" where it has none.
function floor_of(np, row, bytes,   f) {
    if (row ~ /^put_quiet_idle_/ && bytes == 8 &&
        (f = put_floor(np, "copy_table_quiet_floor", row)) != "")
        return f
    if ((row == "put_quiet" || row == "p_quiet" || row ~ /^put_quiet_idle_/) && bytes == 8) {
        f = (row == "p_quiet" ? "store" : "copy") "_table_quiet_floor"
        if ((np SUBSEP f SUBSEP 8, "dmashmem") in v)
            return np SUBSEP f SUBSEP 8
        return np SUBSEP "store_fence_floor" SUBSEP 8
    }
    if ((row == "fcollect_kernel" || row == "alltoall_kernel") && bytes == 65536) {
        if (np == "1")
            return np SUBSEP "kernel_engine_put_floor" SUBSEP 65536
        if ((np SUBSEP "kernel_engine_put_every_floor_all" SUBSEP 65536, "dmashmem") in v)
            return np SUBSEP "kernel_engine_put_every_floor_all" SUBSEP 65536
        return np SUBSEP "kernel_engine_put_floor_all" SUBSEP 65536
    }
    if (np != "1" && row ~ /^(fcollect|alltoall)_(stream|queued)$/) {
        f = (row ~ /_stream$/ ? "stream" : "queued") "_exchange_floor"
        return np SUBSEP f SUBSEP 0
    }
    return ""
}
# The translation floor of put_quiet(_idle_N), "" where the run has none.
function xlate_of(np, row, bytes) {
    if (bytes != 8 || (row != "put_quiet" && row !~ /^put_quiet_idle_/))
        return ""
    return put_floor(np, "copy_xlate_quiet_floor", row)
}
END {
    printf "%-4s %-34s %8s %12s %12s  %s\n", "PEs", "row", "bytes", "NVSHMEM", "dmashmem", "dmashmem vs NVSHMEM"
    for (i = 1; i <= nk; i++) {
        k = keys[i]; split(k, p, SUBSEP); u = unit[k]
        hn = ((k, "nvshmem") in v); hd = ((k, "dmashmem") in v)
        n = v[k, "nvshmem"] + 0; d = v[k, "dmashmem"] + 0
        c = "-"
        if (hn && hd) {
            if (u == "us" && n > 0 && d > 0)
                c = d <= n ? sprintf("ahead x%.2f", n / d) : sprintf("behind x%.2f", d / n)
            else if (u == "GB/s" && n > 0 && d > 0)
                c = d >= n ? sprintf("ahead x%.2f", d / n) : sprintf("behind x%.2f", n / d)
            else if (u == "%" && p[2] ~ /slowdown/)
                c = d <= n ? sprintf("ahead by %.1f pt", n - d) : sprintf("behind by %.1f pt", d - n)
        }
        f = floor_of(p[1], p[2], p[3] + 0)
        if (c ~ /^behind x/ && f != "" && ((f, "dmashmem") in v) && v[f, "dmashmem"] + 0 > 0) {
            split(f, q, SUBSEP)
            c = c sprintf("; floor %s %.3f us: x%.2f", q[2], v[f, "dmashmem"], d / v[f, "dmashmem"])
            f = xlate_of(p[1], p[2], p[3] + 0)
            if (f != "" && v[f, "dmashmem"] + 0 > 0) {
                split(f, q, SUBSEP)
                c = c sprintf("; with translation %s %.3f us: x%.2f", q[2], v[f, "dmashmem"], d / v[f, "dmashmem"])
            }
        }
        printf "%-4s %-34s %8s %12s %12s  %s\n", p[1], p[2], human(p[3] + 0),
            hn ? v[k, "nvshmem"] " " u : "-", hd ? v[k, "dmashmem"] " " u : "-", c
    }
}
