#!/bin/bash
# make bench-coll: bench/coll_bench on dmashmem (auto and every forced
# variant) and on Open MPI's OSHMEM (when configure found it), 2 and 4 PEs,
# then one table: rows op/bytes, a column per run. Results land in
# $BENCH_OUT (default bench/results under the build tree) as coll-*.csv.
#
# Environment: top_builddir, top_srcdir, OSHMEM_RUN (empty: dmashmem only),
# BENCH_ARGS (e.g. --quick), BENCH_OUT, BENCH_NPES (default "2 4"),
# BENCH_TIMEOUT (seconds per run), and for side-by-side figures:
#   BENCH_VARIANTS  dmashmem labels to run (default "auto pcpy b2b direct
#                   bcast+swap eager"; auto is dmashmem's default)
#   BENCH_RUNS      repetitions (default 1): each one runs every label and
#                   OSHMEM once, alternating, so that drift of a shared
#                   machine hits all alike; the tables show the median of
#                   the runs (per-run CSVs in coll-runs/)
#   BENCH_BASE      another build tree (before a change): its coll_bench
#                   runs in every repetition too, as label "base"
# With OSHMEM, a last column x = OSHMEM / dmashmem auto (above 1:
# dmashmem faster; '<' marks the rows where it is behind).
set -u
top_builddir=${top_builddir:-.}
OSHMEM_RUN=${OSHMEM_RUN:-}
BENCH_ARGS=${BENCH_ARGS:-}
out=${BENCH_OUT:-$top_builddir/bench/results}
npes_list=${BENCH_NPES:-2 4}
limit=${BENCH_TIMEOUT:-600}
variants=${BENCH_VARIANTS:-auto pcpy b2b direct bcast+swap eager}
runs=${BENCH_RUNS:-1}
base=${BENCH_BASE:-}
launcher=$top_builddir/src/launcher/shmem_launcher
dsm=$top_builddir/bench/coll_bench
osh=$top_builddir/bench/coll_bench-oshmem
mkdir -p "$out/coll-runs" || exit 1
status=0

run_dsm() { # launcher program npes label csv [VAR=value ...]
    local l=$1 prog=$2 n=$3 label=$4 csv=$5
    shift 5
    env "$@" "$l" -n "$n" --timeout "$limit" "$prog" --label "$label" \
        $BENCH_ARGS --csv "$csv" >/dev/null ||
        { echo "run-coll: $label ($n PEs) failed" >&2; status=1; }
}

variant() { # npes label run
    local n=$1 v=$2 r=$3 csv=$out/coll-runs/coll-$2-$1-$3.csv
    case $v in
    auto) run_dsm "$launcher" "$dsm" "$n" auto "$csv" ;;
    bcast+swap)
        run_dsm "$launcher" "$dsm" "$n" "$v" "$csv" \
            SHMEM_FCOLLECT_ALGORITHM=bcast SHMEM_ALLTOALL_ALGORITHM=swap ;;
    *)
        run_dsm "$launcher" "$dsm" "$n" "$v" "$csv" \
            SHMEM_FCOLLECT_ALGORITHM="$v" SHMEM_ALLTOALL_ALGORITHM="$v" ;;
    esac
}

for n in $npes_list; do
    rm -f "$out"/coll-runs/coll-*-"$n"-*.csv
    for r in $(seq 1 "$runs"); do
        for v in $variants; do
            variant "$n" "$v" "$r"
        done
        if [ -n "$base" ]; then
            run_dsm "$base/src/launcher/shmem_launcher" "$base/bench/coll_bench" \
                "$n" base "$out/coll-runs/coll-base-$n-$r.csv"
        fi
        if [ -n "$OSHMEM_RUN" ] && [ -x "$osh" ]; then
            root=()
            [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
            timeout "$limit" "$OSHMEM_RUN" "${root[@]}" --oversubscribe -np "$n" \
                --mca spml ucx --mca osc ^rdma "$osh" --label oshmem $BENCH_ARGS \
                --csv "$out/coll-runs/coll-oshmem-$n-$r.csv" >/dev/null ||
                { echo "run-coll: OSHMEM ($n PEs) failed" >&2; status=1; }
        fi
    done
    # coll-LABEL-N.csv: the median over the runs of each row (what the
    # plots and the table read).
    for f in "$out"/coll-runs/coll-*-"$n"-1.csv; do
        [ -s "$f" ] || continue
        lab=${f##*/coll-}
        lab=${lab%-"$n"-1.csv}
        cat "$out"/coll-runs/coll-"$lab"-"$n"-*.csv | awk -F, -v runs="$runs" '
            $1 == "label" { hdr = $0; next }
            { k = $1 "," $2 "," $3 "," $4
              if (!(k in c)) order[++nk] = k
              v[k, ++c[k]] = $5 }
            END {
              print hdr
              for (i = 1; i <= nk; i++) {
                k = order[i]; m = c[k]
                for (a = 1; a <= m; a++) s[a] = v[k, a]
                for (a = 2; a <= m; a++)
                  for (b = a; b > 1 && s[b - 1] + 0 > s[b] + 0; b--) {
                    t = s[b]; s[b] = s[b - 1]; s[b - 1] = t }
                med = m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
                printf "%s,%.3f\n", k, med
              } }' >"$out/coll-$lab-$n.csv"
    done
done

# One table per PE count: op, bytes, then us per label.
for n in $npes_list; do
    echo
    echo "==== collectives, $n PEs (us per call; median of $runs run(s)) ===="
    cat "$out"/coll-*-"$n".csv 2>/dev/null | awk -F, '
        $1 == "label" { next }
        { key = $3 "," $4; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
          if (!($1 in lab)) { lab[$1] = 1; labs[++nl] = $1 }
          v[key, $1] = $5 }
        END {
          x = ("auto" in lab) && ("oshmem" in lab)
          printf "%-18s %9s", "op", "bytes"
          for (j = 1; j <= nl; j++) printf " %10s", labs[j]
          if (x) printf " %7s", "x"
          printf "\n"
          for (i = 1; i <= nk; i++) {
            split(keys[i], kb, ",")
            printf "%-18s %9s", kb[1], kb[2]
            for (j = 1; j <= nl; j++)
              printf " %10s", ((keys[i], labs[j]) in v) ? v[keys[i], labs[j]] : "-"
            if (x && ((keys[i], "auto") in v) && ((keys[i], "oshmem") in v) &&
                v[keys[i], "auto"] > 0) {
              r = v[keys[i], "oshmem"] / v[keys[i], "auto"]
              printf " %7.2f%s", r, r < 1 ? " <" : ""
            }
            printf "\n"
          } }' | tee "$out/coll-table-$n.txt"
done
exit $status
