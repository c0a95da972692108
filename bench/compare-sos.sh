#!/bin/bash
# make bench-sos: dmashmem's network path (SHMEM_FORCE_NETWORK=1) side by
# side with Sandia OpenSHMEM (SOS) over the same system libfabric, on the
# OSU OpenSHMEM micro-benchmarks and bale classic (docs/PERFORMANCE.md,
# "Network: against SOS").
#
# What it does, in order:
#  1. finds the sources: SOS_SRC, OSU_SRC, BALE_SRC (a directory or a
#     tarball); else $CMP_CACHE/src/{sos,osu,bale}; else, where the machine
#     can reach GitHub, downloads the pinned release/commit tarballs below
#     into $CMP_CACHE/dl. A source it cannot find is named in one line and
#     skipped (SOS missing: dmashmem and the other peers still run).
#  2. builds SOS once into $CMP_CACHE/sos-install (configure against the
#     system libfabric, only the OFI transport: no CMA/XPMEM on-node path,
#     so that every PE pair crosses libfabric as ours does); reused while
#     $CMP_CACHE/sos-install/.stamp names the same source.
#  3. builds the OSU programs and bale (libgetput, exstack, std_options,
#     spmat and the apps) with each peer's oshcc into $CMP_CACHE/build/PEER.
#     bale's conveyor models need convey, which is built only when BALE_SRC
#     has it... it never is here: the apps are linked with stand-ins for
#     the functions whose source is missing (each aborts with one line if
#     called) and run with -M 7 (AGP, exstack, exstack2).
#  4. runs every (provider, PE count, benchmark) CMP_RUNS times, the peers
#     alternating within each repetition, each run under `timeout`.
#  5. writes $CMP_OUT/raw.csv (every run), $CMP_OUT/summary.csv (medians and
#     ratios) and prints the table: x = peer/dmashmem for times, so x > 1 is
#     dmashmem ahead; rows where dmashmem is more than 10% behind are marked.
#
# Peers (CMP_PEERS, default "dsm sos oshmem"):
#   dsm     this build (or DSM_PREFIX's install), SHMEM_FORCE_NETWORK=1 and
#           SHMEM_OFI_PROVIDER=<provider>, shmem_launcher
#   base    a second dmashmem build tree (CMP_BASE_BUILD) run the same way:
#           before/after a change
#   sos     SOS built above, SHMEM_OFI_PROVIDER=<provider>, launched with
#           CMP_SOS_RUN (default: its oshrun)
#   oshmem  Open MPI's OSHMEM (/usr/bin/oshcc), UCX's tcp transport on
#           loopback (UCX_TLS=tcp): a network-path peer that needs nothing
#           built; not libfabric, so it is labelled as such
#
# Environment (all optional):
#   CMP_CACHE      cache directory (default ~/.cache/dmashmem-bench)
#   CMP_OUT        results (default $top_builddir/bench/results/sos)
#   CMP_PROVIDERS  libfabric providers (default "tcp;ofi_rxm")
#   CMP_NPES       PE counts (default "2 4"; OSU put/get run at 2 only)
#   CMP_RUNS       repetitions (default 3); the table shows medians
#   CMP_TIMEOUT    seconds per run (default 300)
#   CMP_BENCH      what to run (default "osu bale")
#   CMP_BALE_APPS  default "histo ig randperm transpose_matrix topo triangle"
#   CMP_BALE_ARGS_<app>  the app's arguments (defaults below: sizes a
#                  network run finishes in seconds; "" = the app's defaults)
#   CMP_BALE_MODELS      bale -M mask (default 7)
#   SOS_CONFIGURE  extra SOS configure flags; CMP_SOS_RUN launch command
#                  prefix (e.g. "mpirun -np"; the PE count is appended)
#   DSM_PREFIX     an installed dmashmem instead of the build tree
# Exits 0 when every run that was attempted succeeded, 1 otherwise.
set -u
top_builddir=$(cd "${top_builddir:-.}" && pwd)
top_srcdir=$(cd "${top_srcdir:-$top_builddir}" && pwd)
cache=${CMP_CACHE:-$HOME/.cache/dmashmem-bench}
out=${CMP_OUT:-$top_builddir/bench/results/sos}
providers=${CMP_PROVIDERS:-"tcp;ofi_rxm"}
npes_list=${CMP_NPES:-"2 4"}
runs=${CMP_RUNS:-3}
limit=${CMP_TIMEOUT:-300}
benches=${CMP_BENCH:-"osu bale"}
apps=${CMP_BALE_APPS:-"histo ig randperm transpose_matrix topo triangle"}
models=${CMP_BALE_MODELS:-7}
peers=${CMP_PEERS:-"dsm sos oshmem"}
heap=${CMP_SYMMETRIC_SIZE:-1G}

# Pinned sources (where the machine can download them).
SOS_URL=${SOS_URL:-https://github.com/Sandia-OpenSHMEM/SOS/releases/download/v1.5.2/sandia-openshmem-1.5.2.tar.gz}
OSU_URL=${OSU_URL:-https://github.com/forresti/osu-micro-benchmarks/archive/f8cb0427cf9ea82ac189605634ac88431558384b.tar.gz}
BALE_URL=${BALE_URL:-https://github.com/jdevinney/bale/archive/2b2498d0109eb801f98fff34ad4c2b4d7465fa0e.tar.gz}

# bale sizes: the apps' defaults (5M updates per PE, 500k rows per PE) take
# minutes to hours over loopback TCP with any library.
: "${CMP_BALE_ARGS_histo=-n 200000}"
: "${CMP_BALE_ARGS_ig=-n 200000}"
: "${CMP_BALE_ARGS_randperm=-n 200000}"
: "${CMP_BALE_ARGS_transpose_matrix=-n 20000}"
: "${CMP_BALE_ARGS_topo=-n 20000}"
: "${CMP_BALE_ARGS_triangle=-n 5000}"

mkdir -p "$cache/src" "$cache/dl" "$cache/build" "$out" || exit 1
status=0
note() { echo "compare-sos: $*" >&2; }

# ------------------------------------------------------------ sources
# fetch NAME VAR URL: prints the source directory, or nothing.
fetch() {
    local name=$1 given=$2 url=$3 dir=$cache/src/$1
    if [ -n "$given" ]; then
        if [ -d "$given" ]; then (cd "$given" && pwd); return; fi
        if [ -f "$given" ]; then
            rm -rf "$dir" && mkdir -p "$dir" &&
                tar -xf "$given" -C "$dir" --strip-components=1 && echo "$dir"
            return
        fi
        note "$name: $given is neither a directory nor a tarball: skipped"
        return
    fi
    if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then echo "$dir"; return; fi
    local tgz=$cache/dl/$name.tar.gz
    if command -v curl > /dev/null &&
        curl -fsSL --connect-timeout 10 -o "$tgz.part" "$url" 2> /dev/null; then
        mv "$tgz.part" "$tgz" && mkdir -p "$dir" &&
            tar -xzf "$tgz" -C "$dir" --strip-components=1 && echo "$dir"
        return
    fi
    rm -f "$tgz.part"
    note "$name: no source (set ${name^^}_SRC=dir|tarball; $url not reachable): skipped"
}

sos_src=$(fetch sos "${SOS_SRC:-}" "$SOS_URL")
osu_src=$(fetch osu "${OSU_SRC:-}" "$OSU_URL")
bale_src=$(fetch bale "${BALE_SRC:-}" "$BALE_URL")

# ------------------------------------------------------------ compilers
if [ -n "${DSM_PREFIX:-}" ]; then
    dsm_cc=$DSM_PREFIX/bin/oshcc
    dsm_run=$DSM_PREFIX/bin/shmem_launcher
else
    dsm_cc=$top_builddir/src/launcher/oshcc
    dsm_run=$top_builddir/src/launcher/shmem_launcher
fi
base=${CMP_BASE_BUILD:-}
[ -n "$base" ] && base=$(cd "$base" && pwd)

# pcc PEER ARGS...: PEER's oshcc with ARGS. A build tree's oshcc takes its
# headers and library from that tree (OSHCC_INCLUDEDIR and OSHCC_LIBDIR,
# as `make check` does), never from the other build's.
pcc() {
    local peer=$1 inc='' lib=''
    shift
    case $peer in
    dsm) if [ -z "${DSM_PREFIX:-}" ]; then
        inc=$top_srcdir/include lib=$top_builddir/src/.libs
    fi ;;
    base) inc=$(sed -n 's/^abs_top_srcdir = //p' "$base/Makefile")/include
        lib=$base/src/.libs ;;
    esac
    if [ -n "$inc" ]; then
        OSHCC_INCLUDEDIR=$inc OSHCC_LIBDIR=$lib "$(peer_cc "$peer")" "$@"
    else
        "$(peer_cc "$peer")" "$@"
    fi
}
sos_prefix=$cache/sos-install

build_sos() {
    [ -n "$sos_src" ] || return 1
    if [ -x "$sos_prefix/bin/oshcc" ] && [ "$(cat "$sos_prefix/.stamp" 2> /dev/null)" = "$sos_src" ]; then
        return 0
    fi
    local b=$cache/build/sos-tree log=$cache/build/sos-build.log
    rm -rf "$b" && cp -r "$sos_src" "$b" || return 1
    note "building SOS from $sos_src (log: $log)"
    (
        cd "$b" || exit 1
        [ -x configure ] || ./autogen.sh || exit 1
        ./configure --prefix="$sos_prefix" --with-ofi=/usr --enable-ofi-mr=basic \
            --without-xpmem --without-cma --disable-fortran --disable-cxx \
            ${SOS_CONFIGURE:-} && make -j2 && make install
    ) > "$log" 2>&1 || { note "SOS did not build: last lines of $log:"; tail -5 "$log" >&2; return 1; }
    echo "$sos_src" > "$sos_prefix/.stamp"
}

# peer_cc PEER: its compiler, or nothing when the peer is unavailable.
peer_cc() {
    case $1 in
    dsm) echo "$dsm_cc" ;;
    base) [ -n "$base" ] && echo "$base/src/launcher/oshcc" ;;
    sos) [ -x "$sos_prefix/bin/oshcc" ] && echo "$sos_prefix/bin/oshcc" ;;
    oshmem) command -v oshcc > /dev/null && [ -x /usr/bin/oshrun ] && echo /usr/bin/oshcc ;;
    esac
}

# ------------------------------------------------------------ building
# build_osu PEER CC: the OSU programs into $cache/build/PEER/osu.
build_osu() {
    local peer=$1 cc=$2 d=$cache/build/$1/osu src
    [ -n "$osu_src" ] || return 1
    src=$(dirname "$(find "$osu_src" -name osu_oshm_put.c | head -1)")
    [ -f "$src/osu_oshm_put.c" ] || { note "osu: no osu_oshm_put.c under $osu_src"; return 1; }
    mkdir -p "$d" || return 1
    local extra=()
    if [ -f "$src/osu_common.c" ]; then
        extra=("$src/osu_common.c")
    elif [ -f "$src/../util/osu_util_pgas.c" ]; then
        extra=("$src/../util/osu_util.c" "$src/../util/osu_util_pgas.c" -I"$src/../util")
    else
        # OMB 5.x keeps getMicrosecondTimeStamp in osu_common.c, which the
        # stored copy lacks: the same gettimeofday timer.
        printf '%s\n' '#include <stdint.h>' '#include <stdio.h>' '#include <stdlib.h>' \
            '#include <sys/time.h>' 'int64_t getMicrosecondTimeStamp(void) {' \
            '    struct timeval tv;' '    if (gettimeofday(&tv, NULL)) { perror("gettimeofday"); abort(); }' \
            '    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;' '}' > "$d/osu_timer.c"
        extra=("$d/osu_timer.c")
    fi
    local p ok=0
    for p in put get put_mr atomics; do
        pcc "$peer" -O2 -w -include stdint.h -I"$src" -o "$d/osu_oshm_$p" \
            "$src/osu_oshm_$p.c" "${extra[@]}" >> "$d/build.log" 2>&1 ||
            { note "osu: osu_oshm_$p did not build with $peer (see $d/build.log)"; ok=1; }
    done
    return $ok
}

# build_bale PEER CC: bale's libraries and apps into $cache/build/PEER/bale.
build_bale() {
    local peer=$1 cc=$2 d=$cache/build/$1/bale b
    [ -n "$bale_src" ] || return 1
    b=$bale_src
    [ -d "$b/src/bale_classic" ] && b=$b/src/bale_classic
    mkdir -p "$d/obj" "$d/inc" || return 1
    : > "$d/build.log"
    # convey is not built: a stand-in header for the apps' includes.
    printf '%s\n' '/* compare-sos.sh: convey is not built (conveyor models skipped) */' \
        '#include <stdbool.h>' '#include <stddef.h>' > "$d/inc/convey.h"
    local fl=(-O3 -std=gnu11 -w -DUSE_SHMEM=1 -DHAVE_SHMEM_FREE=1 -I"$d/inc"
        -I"$b/libgetput" -I"$b/exstack" -I"$b/spmat" -I"$b/std_options")
    local f o libobjs=()
    for f in "$b"/libgetput/libgetput.upc "$b"/exstack/exstack.upc \
        "$b"/exstack/exstack2_shmem.c "$b"/std_options/std_options.upc "$b"/spmat/*.upc; do
        [ -f "$f" ] || continue
        case $f in *conveyor*) continue ;; esac
        o=$d/obj/lib-$(basename "${f%.*}").o
        pcc "$peer" "${fl[@]}" -x c -c "$f" -o "$o" >> "$d/build.log" 2>&1 ||
            { note "bale: $(basename "$f") did not build with $peer"; return 1; }
        libobjs+=("$o")
    done
    local app dir objs sym
    for app in $apps; do
        case $app in
        histo) dir=histo_src ;;
        ig) dir=ig_src ;;
        randperm) dir=randperm_src ;;
        transpose_matrix) dir=transpose_matrix_src ;;
        topo) dir=topo_src ;;
        triangle) dir=triangle_src ;;
        *) dir=${app}_src ;;
        esac
        [ -d "$b/apps/$dir" ] || { note "bale: no apps/$dir: $app skipped"; continue; }
        objs=()
        for f in "$b/apps/$dir"/*.upc; do
            case $f in *conveyor*) continue ;; esac
            o=$d/obj/$app-$(basename "${f%.*}").o
            pcc "$peer" "${fl[@]}" -I"$b/apps/$dir" -x c -c "$f" -o "$o" >> "$d/build.log" 2>&1 ||
                { note "bale: $app/$(basename "$f") did not build with $peer"; continue 2; }
            objs+=("$o")
        done
        # Stand-ins for what the missing sources (convey, spmat_io, the
        # alternates) would define: the linker names them.
        : > "$d/obj/$app-stubs.c"
        for sym in $(pcc "$peer" -o "$d/$app" "${objs[@]}" "${libobjs[@]}" -lm 2>&1 |
            sed -n "s/.*undefined reference to \`\\([A-Za-z_0-9]*\\)'.*/\\1/p" | sort -u); do
            printf '#include <stdio.h>\n#include <stdlib.h>\nvoid %s(void) { fprintf(stderr, "bale: %s is not built here (its source is missing)\\n"); abort(); }\n' \
                "$sym" "$sym" >> "$d/obj/$app-stubs.c"
        done
        pcc "$peer" -O2 -w -c "$d/obj/$app-stubs.c" -o "$d/obj/$app-stubs.o" &&
            pcc "$peer" -o "$d/$app" "${objs[@]}" "$d/obj/$app-stubs.o" "${libobjs[@]}" -lm \
                >> "$d/build.log" 2>&1 ||
            note "bale: $app did not link with $peer (see $d/build.log)"
    done
}

# ------------------------------------------------------------ running
raw=$out/raw.csv
echo "peer,provider,npes,bench,metric,unit,run,value" > "$raw"

# launch PEER PROVIDER NPES PROGRAM ARGS...: runs it, output to stdout.
launch() {
    local peer=$1 prov=$2 n=$3
    shift 3
    case $peer in
    dsm | base)
        local l=$dsm_run
        [ "$peer" = base ] && l=$base/src/launcher/shmem_launcher
        SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov SHMEM_SYMMETRIC_SIZE=$heap \
            timeout -k 5 "$limit" "$l" -n "$n" "$@" 2>&1 ;;
    sos)
        SHMEM_OFI_PROVIDER=$prov FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo SHMEM_SYMMETRIC_SIZE=$heap \
            timeout -k 5 "$limit" ${CMP_SOS_RUN:-$sos_prefix/bin/oshrun -n} "$n" "$@" 2>&1 ;;
    oshmem)
        timeout -k 5 "$limit" oshrun --allow-run-as-root --oversubscribe -np "$n" \
            --mca spml ucx --mca osc ^rdma -x UCX_TLS=tcp -x UCX_NET_DEVICES=lo \
            -x SHMEM_SYMMETRIC_SIZE=$heap "$@" 2>&1 ;;
    esac
}

# record PEER PROV N BENCH KIND RUN < log: the log's figures as raw.csv
# rows. KIND: osu_put, osu_get, osu_put_mr, osu_atomics or bale.
record() {
    awk -v pre="$1,$2,$3,$4" -v kind="$5" -v run="$6" '
    function row(m, u, v) { printf "%s,%s,%s,%s,%s\n", pre, m, u, run, v }
    (kind == "osu_put" || kind == "osu_get") && $1 ~ /^[0-9]+$/ &&
        ($1 == 8 || $1 == 4096 || $1 == 65536) { row("lat_" $1 "B", "us", $2) }
    kind == "osu_put_mr" && $1 ~ /^[0-9]+$/ {
        if ($1 == 8) row("msgrate_8B", "Mmsg/s", $2 / 1e6)
        if ($1 == 65536 || $1 == 1048576) row("bw_" $1 "B", "GB/s", $1 * $2 / 1e9)
    }
    kind == "osu_atomics" && /^shmem_longlong_/ { m = $1; sub(/^shmem_longlong_/, "", m); row(m "64_lat", "us", $3) }
    kind == "bale" {
        while (match($0, /(AGP|Exstack2|Exstack|Conveyor): +[0-9.]+/)) {
            s = substr($0, RSTART, RLENGTH); split(s, kv, /: +/)
            row(kv[1], "s", kv[2]); $0 = substr($0, RSTART + RLENGTH)
        }
    }' >> "$raw"
}

# one PEER PROV N BENCH RUN: one run of one benchmark; BENCH is osu:PROG or
# bale:APP. Records its rows and its wall time.
one() {
    local peer=$1 prov=$2 n=$3 what=$4 r=$5 cc bin args t0 t1 rc log
    cc=$(peer_cc "$peer")
    [ -n "$cc" ] || return 0
    case $what in
    osu:*) bin=$cache/build/$peer/osu/osu_oshm_${what#osu:}; args=(heap) ;;
    bale:*)
        bin=$cache/build/$peer/bale/${what#bale:}
        local v=CMP_BALE_ARGS_${what#bale:}
        # shellcheck disable=SC2206
        args=(-M "$models" ${!v-}) ;;
    esac
    [ -x "$bin" ] || return 0
    log=$out/log-$peer-${prov//;/+}-$n-${what/:/-}-$r.txt
    t0=$(date +%s.%N)
    launch "$peer" "$prov" "$n" "$bin" "${args[@]}" > "$log"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
        note "$peer $prov $n PEs ${what}: exit $rc (log: $log)"
        echo "$peer,$prov,$n,${what#*:},total,s,$r,fail" >> "$raw"
        status=1
        return
    fi
    case $what in
    osu:*) record "$peer" "$prov" "$n" "${what#osu:}" "osu_${what#osu:}" "$r" < "$log" ;;
    bale:*) record "$peer" "$prov" "$n" "${what#bale:}" bale "$r" < "$log" ;;
    esac
    echo "$peer,$prov,$n,${what#*:},total,s,$r,$(echo "$t1 - $t0" | bc)" >> "$raw"
}

# ------------------------------------------------------------ main
have=()
for p in $peers; do
    [ "$p" = sos ] && { build_sos || note "sos: not available: skipped"; }
    cc=$(peer_cc "$p")
    if [ -z "$cc" ]; then
        [ "$p" = sos ] || note "$p: not available: skipped"
        continue
    fi
    for bn in $benches; do
        case $bn in
        osu) build_osu "$p" "$cc" || status=1 ;;
        bale) build_bale "$p" "$cc" || status=1 ;;
        esac
    done
    have+=("$p")
done
[ ${#have[@]} -gt 0 ] || { note "no peer to run"; exit 1; }
echo "compare-sos: peers ${have[*]}; providers $providers; PEs $npes_list; $runs runs; load $(cut -d' ' -f1-3 /proc/loadavg)"

work=()
for bn in $benches; do
    case $bn in
    osu) work+=(osu:put osu:get osu:put_mr osu:atomics) ;;
    bale) for a in $apps; do work+=("bale:$a"); done ;;
    esac
done
for prov in $providers; do
    for n in $npes_list; do
        for w in "${work[@]}"; do
            # OSU put/get latency needs exactly 2 PEs.
            case $w in osu:put | osu:get) [ "$n" = 2 ] || continue ;; esac
            for ((r = 1; r <= runs; r++)); do
                # Alternate the order of the peers from run to run.
                order=("${have[@]}")
                if ((r % 2 == 0)); then
                    order=(); for ((i = ${#have[@]} - 1; i >= 0; i--)); do order+=("${have[$i]}"); done
                fi
                for p in "${order[@]}"; do one "$p" "$prov" "$n" "$w" "$r"; done
            done
        done
    done
done

# ------------------------------------------------------------ summary
awk -F, -v peers="${have[*]}" '
NR == 1 { next }
{
    k = $2 "," $3 "," $4 "," $5 "," $6
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    if ($8 == "fail") { fail[k, $1] = 1; next }
    n = ++cnt[k, $1]; val[k, $1, n] = $8
}
function median(k, p,   n, i, j, t, a) {
    n = cnt[k, p]; if (!n) return ""
    for (i = 1; i <= n; i++) a[i] = val[k, p, i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
    np = split(peers, P, " ")
    hdr = "provider,npes,bench,metric,unit"
    for (i = 1; i <= np; i++) hdr = hdr "," P[i]
    for (i = 1; i <= np; i++) if (P[i] != "dsm") hdr = hdr ",x_" P[i]
    print hdr > "/dev/stderr"
    for (q = 1; q <= nk; q++) {
        k = keys[q]; split(k, f, ",")
        line = k; d = median(k, "dsm")
        for (i = 1; i <= np; i++) { m = median(k, P[i]); line = line "," (((k, P[i]) in fail) && m == "" ? "fail" : m) }
        behind = ""
        for (i = 1; i <= np; i++) {
            if (P[i] == "dsm") continue
            m = median(k, P[i]); x = ""
            if (d != "" && m != "" && d > 0 && m > 0)
                x = (f[5] == "Mmsg/s" || f[5] == "GB/s") ? d / m : m / d
            if (x != "") { x = sprintf("%.2f", x); if (x < 0.9 && P[i] != "base") behind = " <" }
            line = line "," x
        }
        print line behind > "/dev/stderr"
    }
}' "$raw" 2> "$out/summary.txt"
sed 's/ <$//' "$out/summary.txt" > "$out/summary.csv"
echo
echo "medians of $runs runs; x = peer/dmashmem for times, dmashmem/peer for rates (x > 1: dmashmem ahead; '<': dmashmem more than 10% behind)"
column -s, -t "$out/summary.txt"
echo
echo "raw runs: $raw; summary: $out/summary.csv"
exit $status
