#!/bin/bash
# make bench-plots: PNG plots (gnuplot; Debian package gnuplot-nox) of the
# CSV files that `make bench` leaves in bench/results, one plot per table
# of docs/PERFORMANCE.md, dmashmem against the peer measured in the same
# run:
#
#   p2p.png          shmem_bench, 2 PEs on one node: latency (put, get,
#                    pingpong) and put_nbi bandwidth against message size;
#                    dmashmem.csv against oshmem.csv (Open MPI's OSHMEM)
#   coll-N.png       coll_bench, N PEs (coll-auto-N.csv, coll-oshmem-N.csv):
#                    time per call of each collective against its size
#   network.png      shmem_bench with SHMEM_FORCE_NETWORK=1 for each
#                    libfabric provider (net-p2p-*.csv); against SOS where a
#                    sos-p2p.csv is present, else the on-node dmashmem run
#   network-coll-N.png  coll_bench over the network (net-coll-*-N.csv)
#   devapi-bw.png    bench/gpu_devbench.cu, 1 PE (gpu_devbench-1pe.csv):
#                    device heap -> host heap bandwidth of one GPU thread's
#                    shmemx_dev_putmem (copy engines through the proxy)
#                    against cudaMemcpyAsync (the engines' own speed) and
#                    store-copy kernels on 1 CTA and on every SM
#   gpu1-coll.png    bench/gpu_bench --coll-only (fcollect, alltoall,
#                    persistent fcollect, fcollect on a stream), 2 PEs on
#                    one GPU under MPS, one curve per lever (run-on-device.sh coll1's
#                    gpu_bench-LABEL.csv; $COLL1_OUT, else
#                    docs/plots/data/coll1)
#   devapi-lat.png   the same run's 8-byte put/p + quiet latencies, engines
#                    against stores, 1 PE and (gpu_devbench-2pe.csv) 2 PEs
#   nvcmp.png        bench/run-nvcmp.sh, dmashmem against NVSHMEM on one
#                    GPU, 2 PEs: putmem bandwidth, host-called fcollect and
#                    alltoall against size, kernel-side latency ratios
#                    ($NVCMP_CSV, else the newest docs/plots/data/nvcmp)
#
# A plot whose input is missing is skipped with a note. Sizes span
# decades: the size axes are logarithmic.
#
#   bench/plots.sh [RESULTS_DIR [PLOTS_DIR]]
#
# RESULTS_DIR defaults to $BENCH_OUT, else bench/results under
# $top_builddir; PLOTS_DIR to $PLOTS_OUT, else RESULTS_DIR/plots. The
# device API's CSV is taken from $DEVAPI_OUT, else the first of
# RESULTS_DIR, $OUT and gpu-results in the source tree (where
# `test/gpu/run-on-device.sh devapi` writes it) that holds one. The GPU
# and the date for its titles come from $DEVAPI_MACHINE and $DEVAPI_DATE,
# else from the "machine:" and "date:" lines of gpu_devbench-run.txt next
# to the CSV, else "GPU not recorded" and the CSV's mtime.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
in=${1:-${BENCH_OUT:-$top_builddir/bench/results}}
out=${2:-${PLOTS_OUT:-$in/plots}}

command -v gnuplot >/dev/null ||
    { echo "plots: gnuplot not found (Debian/Ubuntu: apt-get install gnuplot-nox)" >&2; exit 1; }
# No bench results is not fatal: the device API's CSV may be elsewhere.
[ -d "$in" ] || echo "plots: no results in $in (run make bench first)"
mkdir -p "$out" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dsm-plots.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
made=0

# The machine the numbers come from, for the titles.
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
machine="$(nproc 2>/dev/null) cores${cpu:+, $cpu}"
stamp() { # the CSV's date
    date -u -r "$1" '+%Y-%m-%d' 2>/dev/null
}

# Series extraction: "size value" lines, sorted by size.
# sb FILE TEST: shmem_bench CSV (library,label,test,size,iters,reps,value,
# median,unit), the best repetition (value).
sb() {
    awk -F, -v t="$2" 'NR > 1 && $3 == t { print $4, $7 }' "$1" | sort -n
}
# cb FILE OP: coll_bench CSV (label,npes,op,bytes,us).
cb() {
    awk -F, -v t="$2" 'NR > 1 && $3 == t && $4 > 0 { print $4, $5 }' "$1" | sort -n
}
# The library name a shmem_bench CSV recorded (shmem_info_get_name).
lib_of() {
    awk -F, 'NR == 2 { print $1; exit }' "$1"
}

# Repetitions per measurement (1: a --quick run).
reps_of() {
    awk -F, 'NR == 2 { print $6; exit }' "$1"
}

# Common settings: log-log, sizes in bytes with binary prefixes.
gp_head() { # PNG WIDTH HEIGHT
    cat <<EOF
set terminal pngcairo size $2,$3 font "DejaVu Sans,10" linewidth 1.5 noenhanced
set output "$1"
set logscale x 2
set logscale y 10
set autoscale xfix
set offsets graph 0.02, graph 0.02, 0, 0
set xtics ("1 B" 1, "8 B" 8, "64 B" 64, "512 B" 512, "4 KiB" 4096, \\
    "32 KiB" 32768, "256 KiB" 262144, "2 MiB" 2097152, "16 MiB" 16777216, \\
    "128 MiB" 134217728, "1 GiB" 1073741824)
set format y "%g"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left box opaque samplen 3 font ",9"
set xlabel "message size (bytes per PE)"
set style line 1 lc rgb "#1f77b4" pt 7 ps 0.7
set style line 2 lc rgb "#d62728" pt 5 ps 0.7
set style line 3 lc rgb "#2ca02c" pt 9 ps 0.8
set style line 4 lc rgb "#9467bd" pt 11 ps 0.8
set style line 5 lc rgb "#ff7f0e" pt 13 ps 0.8
EOF
}

# plot_clause FILE TITLE LINESTYLE DASHTYPE: one curve, or nothing when the
# series is empty (gnuplot stops on an empty file).
clause() {
    [ -s "$1" ] || return 0
    printf '"%s" using 1:2 with linespoints ls %s dt %s title "%s", ' "$1" "$3" "$4" "$5"
}
plot_line() { # the clauses, without the trailing comma
    local c
    c=$(cat)
    # An empty panel: its own ranges, else gnuplot stops on "all points
    # undefined" (autoscaled or log axes) and the whole PNG is lost.
    [ -n "$c" ] || { echo 'set label 1 "no data" at graph 0.4, graph 0.5'; echo 'plot [1:2] [1:10] 1/0 notitle'; return; }
    echo "plot ${c%, }"
}

# ------------------------------------------------------------------ p2p
p2p() {
    local d=$in/dmashmem.csv o=$in/oshmem.csv dl ol peer
    [ -s "$d" ] || { echo "plots: $d missing, p2p.png skipped"; return; }
    dl="$(lib_of "$d") (cpu engines, shared memory)"
    peer="no peer measured"
    if [ -s "$o" ]; then
        ol="OSHMEM (Open MPI, spml ucx)"
        peer="vs $ol"
    fi
    for t in put get pingpong bw; do
        sb "$d" $t >"$tmp/d-$t"
        [ -s "$o" ] && sb "$o" $t >"$tmp/o-$t"
    done
    {
        gp_head "$out/p2p.png" 1400 560
        echo "set multiplot layout 1,2 title \"Point to point, 2 PEs on one node: dmashmem $peer ($machine; $(stamp "$d"); make bench, $(reps_of "$d") repetition(s))\" font \",11\""
        echo 'set title "latency (best of the repetitions)"'
        echo 'set ylabel "time per operation (us)"'
        {
            i=1
            for t in put get pingpong; do
                clause "$tmp/d-$t" "" $i 1 "$dl: $t"
                [ -s "$o" ] && clause "$tmp/o-$t" "" $i 2 "$ol: $t"
                i=$((i + 1))
            done
        } | plot_line
        echo 'set title "put_nbi bandwidth (windows of puts, one quiet)"'
        echo 'set ylabel "bandwidth (GB/s)"'
        echo 'set key bottom right'
        {
            clause "$tmp/d-bw" "" 1 1 "$dl"
            [ -s "$o" ] && clause "$tmp/o-bw" "" 2 2 "$ol"
        } | plot_line
        echo 'unset multiplot'
    } >"$tmp/p2p.gp"
    gnuplot "$tmp/p2p.gp" && made=$((made + 1)) && echo "plots: $out/p2p.png"
}

# ------------------------------------------------------------------ collectives
# coll_plot PNG TITLE "FILE|LEGEND|DASH ..." : a panel per collective (the
# same curves in each, one legend in the last panel; "~" in LEGEND is a
# space).
coll_plot() {
    local png=$1 title=$2 specs=$3 ops="fcollect collect alltoall broadcast sum_to_all fcollect_persist alltoall_persist"
    local spec f lg dt i
    {
        gp_head "$png" 1500 820
        echo "set multiplot layout 2,4 title \"$title\" font \",11\""
        echo 'set ylabel "time per call (us)"'
        echo 'set xlabel "bytes per PE"'
        echo 'set xtics ("8 B" 8, "512 B" 512, "32 KiB" 32768, "2 MiB" 2097152, "128 MiB" 134217728)'
        echo 'unset key'
        for op in $ops; do
            echo "set title \"$op\""
            {
                i=1
                for spec in $specs; do
                    IFS='|' read -r f lg dt <<<"$spec"
                    # One file per panel and curve: gnuplot reads them
                    # all at the end.
                    cb "$f" "$op" >"$tmp/c-$op-$i"
                    clause "$tmp/c-$op-$i" "" $i "$dt" ""
                    i=$((i + 1))
                done
            } | plot_line
            echo 'unset label 1'
        done
        # The legend: the same styles, drawn outside an empty frame.
        echo 'set title ""; unset border; unset tics; unset xlabel; unset ylabel; unset grid'
        echo 'unset logscale; set xrange [0:1]; set yrange [0:1]'
        echo 'set key center center box font ",9" spacing 1.4 samplen 2'
        i=1
        {
            for spec in $specs; do
                IFS='|' read -r f lg dt <<<"$spec"
                printf '2 with linespoints ls %s dt %s title "%s", ' "$i" "$dt" "${lg//\~/ }"
                i=$((i + 1))
            done
        } | plot_line
        echo 'unset multiplot'
    } >"$tmp/coll.gp"
    gnuplot "$tmp/coll.gp" && made=$((made + 1)) && echo "plots: $png"
}

coll() {
    local n f specs
    for f in "$in"/coll-auto-*.csv; do
        [ -s "$f" ] || continue
        n=${f##*-}; n=${n%.csv}
        specs="$f|dmashmem~(auto~variant)|1"
        [ -s "$in/coll-oshmem-$n.csv" ] &&
            specs="$specs $in/coll-oshmem-$n.csv|OSHMEM~(Open~MPI,~ucx)|2"
        coll_plot "$out/coll-$n.png" \
            "Collectives, $n PEs on one node: dmashmem vs OSHMEM ($machine; $(stamp "$f"); make bench-coll)" "$specs"
    done
}

# ------------------------------------------------------------------ network
network() {
    local f tag specs="" i=1 ref=$in/dmashmem.csv peer
    ls "$in"/net-p2p-*.csv >/dev/null 2>&1 || { echo "plots: no net-p2p-*.csv, network.png skipped"; return; }
    if [ -s "$in/sos-p2p.csv" ]; then
        ref=$in/sos-p2p.csv; peer="SOS"
    else
        peer="on-node dmashmem (SOS not measured)"
    fi
    {
        gp_head "$out/network.png" 1400 560
        echo "set multiplot layout 1,2 title \"dmashmem over libfabric on one node (SHMEM_FORCE_NETWORK=1, 2 PEs) vs $peer\\n$machine; $(stamp "$(ls "$in"/net-p2p-*.csv | head -1)"); make bench-network\" font \",11\""
        echo 'set title "latency: put (solid), pingpong (dashed)"'
        echo 'set ylabel "time per operation (us)"'
        {
            for f in "$in"/net-p2p-*.csv; do
                tag=${f##*/net-p2p-}; tag=${tag%.csv}; tag=${tag//+/;}
                sb "$f" put >"$tmp/n-$i-put"; sb "$f" pingpong >"$tmp/n-$i-pp"
                clause "$tmp/n-$i-put" "" $i 1 "dmashmem network ($tag): put"
                clause "$tmp/n-$i-pp" "" $i 2 "dmashmem network ($tag): pingpong"
                i=$((i + 1))
            done
            if [ -s "$ref" ]; then
                sb "$ref" put >"$tmp/r-put"; sb "$ref" pingpong >"$tmp/r-pp"
                clause "$tmp/r-put" "" 5 1 "$peer: put"
                clause "$tmp/r-pp" "" 5 2 "$peer: pingpong"
            fi
        } | plot_line
        echo 'set title "put_nbi bandwidth"'
        echo 'set ylabel "bandwidth (GB/s)"'
        echo 'set key bottom right'
        i=1
        {
            for f in "$in"/net-p2p-*.csv; do
                tag=${f##*/net-p2p-}; tag=${tag%.csv}; tag=${tag//+/;}
                sb "$f" bw >"$tmp/n-$i-bw"
                clause "$tmp/n-$i-bw" "" $i 1 "dmashmem network ($tag)"
                i=$((i + 1))
            done
            [ -s "$ref" ] && { sb "$ref" bw >"$tmp/r-bw"; clause "$tmp/r-bw" "" 5 2 "$peer"; }
        } | plot_line
        echo 'unset multiplot'
    } >"$tmp/net.gp"
    gnuplot "$tmp/net.gp" && made=$((made + 1)) && echo "plots: $out/network.png"

    local n g
    for n in $(ls "$in"/net-coll-*.csv 2>/dev/null | sed 's/.*-\([0-9]*\)\.csv$/\1/' | sort -u); do
        specs=""
        for g in "$in"/net-coll-*-"$n".csv; do
            tag=${g##*/net-coll-}; tag=${tag%-"$n".csv}; tag=${tag//+/;}
            specs="$specs $g|dmashmem~network~(${tag})|1"
        done
        local vs=""
        [ -s "$in/coll-auto-$n.csv" ] && { specs="$specs $in/coll-auto-$n.csv|dmashmem~on-node~(auto)|2"; vs=", vs on-node dmashmem"; }
        coll_plot "$out/network-coll-$n.png" \
            "Collectives over the network path (SHMEM_FORCE_NETWORK=1), $n PEs$vs ($machine; make bench-network)" "${specs# }"
    done
}

# ------------------------------------------------------------------ devapi
# dv FILE TEST VARIANT: gpu_devbench CSV (label,npes,test,variant,bytes,
# value,unit), "bytes value" lines sorted by bytes. Some variants hold a
# comma themselves ("engines,dev->host", "slowdown, dev_putmem 1 thread")
# and the header does not say so: the fields are counted from both ends.
dv() {
    awk -F, -v t="$2" -v v="$3" 'NR > 1 && $3 == t {
        var = $4
        for (i = 5; i <= NF - 3; i++)
            var = var "," $i
        if (var == v)
            print $(NF - 2), $(NF - 1)
    }' "$1" | sort -n
}
# meta DIR KEY: the "KEY: value" line of DIR/gpu_devbench-run.txt.
meta() {
    sed -n "s/^$2: *//p" "$1/gpu_devbench-run.txt" 2>/dev/null | head -1
}
# Where the device API's CSV is: see the header.
devapi_dir() {
    local d
    if [ -n "${DEVAPI_OUT:-}" ]; then
        [ -s "$DEVAPI_OUT/gpu_devbench-1pe.csv" ] && echo "$DEVAPI_OUT"
        return
    fi
    for d in "$in" "${OUT:-}" "$top_srcdir/gpu-results"; do
        [ -n "$d" ] && [ -s "$d/gpu_devbench-1pe.csv" ] && { echo "$d"; return; }
    done
    return 1
}

devapi() {
    local dir f1 f2 gpu when cmd spec v lg i n curves=0 pts=0 note
    dir=$(devapi_dir) || {
        echo "plots: no gpu_devbench-1pe.csv in ${DEVAPI_OUT:-$in${OUT:+, $OUT} or $top_srcdir/gpu-results}, devapi-bw.png and devapi-lat.png skipped"
        return
    }
    f1=$dir/gpu_devbench-1pe.csv f2=$dir/gpu_devbench-2pe.csv
    gpu=${DEVAPI_MACHINE:-$(meta "$dir" machine)}
    when=${DEVAPI_DATE:-$(meta "$dir" date)}
    cmd=$(meta "$dir" command)
    gpu=${gpu:-GPU not recorded} when=${when:-$(stamp "$f1")}
    cmd=${cmd:-test/gpu/run-on-device.sh devapi}

    # Bandwidth: the engines driven from a kernel (one thread, through the
    # proxy) against the same engines driven from the host, and against
    # the SMs copying by stores.
    i=1
    for spec in "dev_putmem 1 thread|dmashmem shmemx_dev_putmem (1 thread, copy engines)" \
        "cudaMemcpyAsync|cudaMemcpyAsync (the engines' own speed)" \
        "store copy 1 CTA|store copy kernel, 1 CTA" \
        "store copy all SMs|store copy kernel, all SMs"; do
        IFS='|' read -r v lg <<<"$spec"
        dv "$f1" bw_dev_to_host "$v" >"$tmp/dv-$i"
        n=$(wc -l <"$tmp/dv-$i")
        [ "$n" -gt 0 ] && curves=$((curves + 1)) pts=$((pts + n))
        i=$((i + 1))
    done
    # The overlap rows: what each way of moving costs a concurrent kernel.
    note=$(awk -F, 'NR > 1 && $3 == "overlap" && $4 == "slowdown" {
            v = $5; sub(/^ +/, "", v)
            b = $(NF - 2)
            s = b >= 1073741824 ? b / 1073741824 " GiB" : b >= 1048576 ? b / 1048576 " MiB" : b " B"
            out = out (out ? ", " : "") sprintf("%+.1f %% with %s", $(NF - 1), v)
        } END { if (out) printf "time of a compute kernel on every SM while %s moves: %s", s, out }' "$f1")
    {
        gp_head "$out/devapi-bw.png" 1100 650
        cat <<EOF
set title "Device API: bandwidth device heap -> host heap, 1 PE\n$gpu; $when; $cmd" font ",11"
unset logscale y
set yrange [0:*]
set xtics ("64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, "4 MiB" 4194304, \\
    "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456, "1 GiB" 1073741824)
set xlabel "message size (bytes per transfer)"
set ylabel "bandwidth (GB/s, median)"
set key top left Left reverse box opaque samplen 3 font ",10"
EOF
        [ -n "$note" ] && echo "set label 2 \"$note\" at graph 0.98, graph 0.04 right font \",9\""
        {
            clause "$tmp/dv-1" "" 1 1 "dmashmem shmemx_dev_putmem (1 thread, copy engines)"
            clause "$tmp/dv-2" "" 2 2 "cudaMemcpyAsync (the engines' own speed)"
            clause "$tmp/dv-3" "" 3 1 "store copy kernel, 1 CTA"
            clause "$tmp/dv-4" "" 4 1 "store copy kernel, all SMs"
        } | plot_line
    } >"$tmp/devapi-bw.gp"
    gnuplot "$tmp/devapi-bw.gp" && made=$((made + 1)) &&
        echo "plots: $out/devapi-bw.png ($curves curves, $pts points)"

    # Latency of one 8-byte operation and its quiet, engines against
    # stores: a bar per run (1 PE; 2 PEs on the one GPU, to the peer).
    local rows=0 runs=1 a b xt="" t tests
    tests=("dev_put_quiet|engines,dev->host|put 8 B + quiet\\nengines, dev -> host"
        "dev_put_quiet|stores,dev->host|put 8 B + quiet\\nstores, dev -> host"
        "dev_p_quiet|stores,host word|p 8 B + quiet\\nstores, host word"
        "dev_put_quiet|engines,dev->dev|put 8 B + quiet\\nengines, dev -> dev"
        "dev_put_quiet|engines,after 10 ms idle|put 8 B + quiet, engines,\\nafter 10 ms idle (median of 15)")
    [ -s "$f2" ] && runs=2
    : >"$tmp/lat"
    for spec in "${tests[@]}"; do
        IFS='|' read -r t v lg <<<"$spec"
        a=$(dv "$f1" "$t" "$v" | awk '{ print $2; exit }')
        [ -n "$a" ] || continue
        b=NaN
        [ -s "$f2" ] && b=$(dv "$f2" "$t" "$v" | awk '{ print $2; exit }')
        echo "$rows ${a} ${b:-NaN}" >>"$tmp/lat"
        xt="$xt${xt:+, }\"$lg\" $rows"
        rows=$((rows + 1))
    done
    [ "$rows" -gt 0 ] || { echo "plots: no latency rows in $f1, devapi-lat.png skipped"; return; }
    {
        cat <<EOF
set terminal pngcairo size 1100,600 font "DejaVu Sans,10" linewidth 1.5 noenhanced
set output "$out/devapi-lat.png"
set title "Device API: one 8-byte operation + shmemx_dev_quiet from one GPU thread\n$gpu; $when; $cmd" font ",11"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border rgb "#333333"
set boxwidth 0.9
set logscale y 10
set yrange [0.5:400]
set format y "%g"
set ylabel "time (us; median of 1,800 after 200 of warm-up)"
set grid ytics mytics lc rgb "#dddddd"
set xtics ($xt) nomirror
set xtics font ",9.5"
set xrange [-0.6:$rows - 0.4]
set bmargin 4
set key top left Left reverse box opaque font ",10"
EOF
        printf 'plot "%s" using 2 title "1 PE" lc rgb "#1f77b4", ' "$tmp/lat"
        printf '"" using ($1 - %s):2:(sprintf("%%.1f", $2)) with labels offset 0,0.8 notitle' \
            "$([ $runs = 2 ] && echo 0.1667 || echo 0)"
        if [ $runs = 2 ]; then
            printf ', "" using 3 title "2 PEs on the one GPU (CUDA MPS), each to the other, both at once" lc rgb "#ff7f0e"'
            printf ', "" using ($1 + 0.1667):3:(sprintf("%%.1f", $3)) with labels offset 0,0.8 notitle'
        fi
        echo
    } >"$tmp/devapi-lat.gp"
    gnuplot "$tmp/devapi-lat.gp" && made=$((made + 1)) &&
        echo "plots: $out/devapi-lat.png ($rows rows, $runs run(s))"
}

# ------------------------------------------------------------------ one GPU
# gpu1-coll.png: bench/gpu_bench --coll-only with 2 PEs on one GPU under
# MPS, one CSV per lever (test/gpu/run-on-device.sh coll1 writes
# gpu_bench-LABEL.csv: label,npes,test,variant,bytes,value,unit), from
# $COLL1_OUT, else docs/plots/data/coll1 (the run PERFORMANCE.md shows).
gpu1() {
    local dir=${COLL1_OUT:-$top_srcdir/docs/plots/data/coll1} f lab i op t
    ls "$dir"/gpu_bench-*.csv >/dev/null 2>&1 ||
        { echo "plots: no gpu_bench-*.csv in $dir, gpu1-coll.png skipped"; return; }
    {
        gp_head "$out/gpu1-coll.png" 1800 520
        echo "set multiplot layout 1,4 title \"Small collectives, 2 PEs on one H200 under MPS (bench/gpu_bench --coll-only; run-on-device.sh coll1; ${COLL1_DATE:-2026-12-02})\" font \",11\""
        echo 'set ylabel "time per call (us)"'
        echo 'set xlabel "bytes per PE"'
        echo 'set xtics ("1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536)'
        echo 'set logscale y 2'
        echo 'set yrange [6:32]'
        echo 'set ytics (6, 8, 12, 16, 24, 32)'
        echo 'set key top right box opaque font ",8" title "dmashmem"'
        for op in fcollect alltoall fcollect_persistent fcollect_os; do
            echo "set title \"$op\""
            {
                i=1
                for f in "$dir"/gpu_bench-*.csv; do
                    lab=${f##*/gpu_bench-}; lab=${lab%.csv}
                    case $lab in # the levers of PERFORMANCE.md's table
                    graphs) lab="defaults (copy graphs, one post)" ;;
                    issued) lab="before (copies issued)" ;;
                    graphs-ahead) lab="PERSISTENT_SHARED_AHEAD=1" ;;
                    *) lab="dmashmem $lab" ;;
                    esac
                    awk -F, -v t="$op" 'NR > 1 && $3 == t { print $5, $6 }' "$f" |
                        sort -n >"$tmp/g1-$op-$i"
                    clause "$tmp/g1-$op-$i" "" $i 1 "$lab"
                    i=$((i + 1))
                done
                # The issue's target for the row (#15; none on a stream).
                case $op in
                fcollect_persistent) t=8 ;;
                *_os) t= ;;
                *) t=12 ;;
                esac
                [ -z "$t" ] || printf '%s with lines lc rgb "#777777" dt 2 title "target (#15)", ' "$t"
            } | plot_line
            echo 'unset label 1'
        done
        echo 'unset multiplot'
    } >"$tmp/gpu1.gp"
    gnuplot "$tmp/gpu1.gp" && made=$((made + 1)) && echo "plots: $out/gpu1-coll.png"
}

# ------------------------------------------------------------------ NVSHMEM
# nvcmp.png: bench/run-nvcmp.sh (run-on-device.sh nvcmp), dmashmem against
# NVSHMEM on one GPU, 2 PEs: putmem bandwidth of one thread / warp / CTA,
# fcollect and alltoall called from the host (on a stream + sync, queued
# per call; ours also blocking) against size, and the kernel-side latency
# rows as NVSHMEM's time over ours (above 1: dmashmem ahead). From the CSV
# $NVCMP_CSV (lib,npes,row,bytes,value,unit), else the newest full
# docs/plots/data/nvcmp/nvcmp-*.csv; its GPU and date from the file name
# (nvcmp-GPU-DATE-HHMM.csv) unless NVCMP_TITLE says.
nv_series() { # CSV LIB ROW: "bytes value" lines of 2 PEs
    awk -F, -v l="$2" -v r="$3" 'NR > 1 && $1 == l && $2 == 2 && $3 == r { print $4, $5 }' "$1" | sort -n
}
# nv_curves CSV ROW MODE:LABEL...: the clauses of rows ROW_MODE, both
# libraries (dmashmem line style 1, NVSHMEM 2), one dash type per mode.
nv_curves() {
    local f=$1 row=$2 lib ls dt m
    shift 2
    for lib in dmashmem nvshmem; do
        ls=1; [ $lib = nvshmem ] && ls=2
        dt=1
        for m in "$@"; do
            nv_series "$f" $lib "${row}_${m%%:*}" >"$tmp/nv-$lib-$row-${m%%:*}"
            clause "$tmp/nv-$lib-$row-${m%%:*}" "" $ls $dt "$lib, ${m#*:}"
            dt=$((dt + 1))
        done
    done
}
nvcmp() {
    local f=${NVCMP_CSV:-} t op
    if [ -z "$f" ]; then
        f=$(for c in "$top_srcdir"/docs/plots/data/nvcmp/nvcmp-*-[0-9][0-9][0-9][0-9].csv; do
            [ -s "$c" ] && echo "$(basename "$c" .csv | sed 's/^nvcmp-[^-]*-//') $c"
        done | sort | tail -1 | cut -d' ' -f2-)
    fi
    [ -n "$f" ] && [ -s "$f" ] ||
        { echo "plots: no nvcmp CSV (${NVCMP_CSV:-docs/plots/data/nvcmp}), nvcmp.png skipped"; return; }
    t=${NVCMP_TITLE:-$(basename "$f" .csv | sed 's/^nvcmp-//; s/^h/H/; s/-\([0-9]*-[0-9]*-[0-9]*\)-\([0-9][0-9]\)\([0-9][0-9]\)$/, \1 \2:\3 UTC/')}
    # The latency rows: NVSHMEM's time over ours, one bar each.
    awk -F, 'NR > 1 && $2 == 2 && $6 == "us" {
            k = $3 ($4 >= 1024 ? " " $4 / 1024 " KiB" : "")
            if ($3 !~ /^(put_quiet|p_quiet|put_quiet_idle_[0-9]+ms|barrier_kernel|fcollect_kernel|alltoall_kernel)$/) next
            if ($1 == "nvshmem") nv[k] = $5; else if ($1 == "dmashmem") ds[k] = $5
            if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        }
        END { for (i = 1; i <= n; i++) { k = order[i]
                if ((k in nv) && (k in ds) && ds[k] > 0) printf "\"%s\" %.3f\n", k, nv[k] / ds[k] } }' \
        "$f" >"$tmp/nv-ratio"
    {
        gp_head "$out/nvcmp.png" 1800 1000
        echo "set multiplot layout 2,2 title \"dmashmem and NVSHMEM, 2 PEs on one GPU ($t; bench/run-nvcmp.sh: test/gpu/run-on-device.sh nvcmp)\" font \",11\""
        echo 'set title "putmem 2 PEs, from a kernel: one thread / one warp / one CTA"'
        echo 'set ylabel "GB/s"'
        echo 'set key top left box opaque font ",8"'
        nv_curves "$f" putmem thread:"one thread" warp:"one warp" block:"one CTA" | plot_line
        echo 'unset label 1'
        echo 'set ylabel "time per call (us)"'
        echo 'set key top left box opaque font ",8"'
        for op in fcollect alltoall; do
            echo "set title \"$op called from the host\""
            nv_curves "$f" $op stream:"on a stream + sync" \
                queued:"queued on a stream, per call" blocking:"blocking" | plot_line
            echo 'unset label 1'
        done
        echo 'set title "from a kernel, 8 B unless marked: NVSHMEM time / dmashmem time (above 1: dmashmem ahead)"'
        echo 'unset logscale x'
        echo 'unset logscale y'
        echo 'set xtics rotate by -30 left font ",8"'
        echo 'unset xlabel'
        echo 'set ylabel "ratio"'
        echo 'set yrange [0:*]'
        echo 'set style fill solid 0.6 border -1'
        echo 'set boxwidth 0.6'
        echo 'set key off'
        { [ ! -s "$tmp/nv-ratio" ] ||
            printf '"%s" using 0:2:xtic(1) with boxes ls 1, 1 with lines lc rgb "#777777" dt 2, ' \
                "$tmp/nv-ratio"; } | plot_line
        echo 'unset multiplot'
    } >"$tmp/nvcmp.gp"
    gnuplot "$tmp/nvcmp.gp" && made=$((made + 1)) &&
        echo "plots: $out/nvcmp.png ($(find "$tmp" -name 'nv-*-*' -size +0c | wc -l) curves, $(wc -l <"$tmp/nv-ratio") ratio rows; from $f)"
}

p2p
coll
network
devapi
gpu1
nvcmp
[ "$made" -gt 0 ] || { echo "plots: nothing to plot in $in" >&2; exit 1; }
echo "plots: $made PNG file(s) in $out"
