#!/bin/bash
# Compare two builds of dmashmem on the CPU benchmarks, interleaved, so that
# drift of the machine hits both alike (docs/PERFORMANCE.md, "Before and
# after a change").
#
#   bench/compare-builds.sh BUILD_BEFORE BUILD_AFTER [RUNS]
#
# Runs bench/shmem_bench (2 PEs) and bench/coll_bench (2 PEs) of each build
# RUNS times (default 5), alternating before/after, then prints per row the
# median of the runs' values for each build and after/before. Latency rows
# (us) are worse when higher, bandwidth and rate rows when lower; rows more
# than 5% worse are marked. Exits 0 (it is a measurement, not a test).
# Extra shmem_bench/coll_bench options: SB_ARGS, CB_ARGS.
set -u
before=${1:?usage: $0 BUILD_BEFORE BUILD_AFTER [RUNS]}
after=${2:?usage: $0 BUILD_BEFORE BUILD_AFTER [RUNS]}
runs=${3:-5}
out=$(mktemp -d "${TMPDIR:-/tmp}/dsm-compare.XXXXXX")
trap 'rm -rf "$out"' EXIT

one() { # build tag run
    local b=$1 tag=$2 r=$3
    "$b/src/launcher/shmem_launcher" -n 2 --timeout 600 "$b/bench/shmem_bench" \
        --reps 1 --csv "$out/sb-$tag-$r.csv" ${SB_ARGS:-} >/dev/null || echo "shmem_bench failed ($tag run $r)" >&2
    if [ -x "$b/bench/coll_bench" ]; then
        "$b/src/launcher/shmem_launcher" -n 2 --timeout 600 "$b/bench/coll_bench" \
            --csv "$out/cb-$tag-$r.csv" ${CB_ARGS:-} >/dev/null || echo "coll_bench failed ($tag run $r)" >&2
    fi
}

for r in $(seq 1 "$runs"); do
    one "$before" before "$r"
    one "$after" after "$r"
done

awk -F, -v runs="$runs" '
FNR == 1 { split(FILENAME, p, "/"); f = p[length(p)]; split(f, q, "-"); tag = q[2]; next }
{
    # shmem_bench: library,label,test,size,iters,reps,value,median,unit
    # coll_bench:  label,npes,op,bytes,us
    if (q[1] == "sb") { key = "sb " $3 " " $4; val = $7; unit = $9 }
    else { key = "cb " $3 " " $4; val = $5; unit = "us" }
    k[key] = unit; v[key, tag, ++c[key, tag]] = val
}
function median(key, tag,   m, i, j, a, t) {
    m = c[key, tag]; for (i = 1; i <= m; i++) a[i] = v[key, tag, i] + 0
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
    printf "%-44s %12s %12s %8s\n", "row (median of " runs ")", "before", "after", "after/before"
    for (key in k) {
        if (!c[key, "before"] || !c[key, "after"]) continue
        b = median(key, "before"); a = median(key, "after")
        r = b > 0 ? a / b : 0
        higher_better = (k[key] ~ /GB\/s|Mmsg|rate/)
        worse = higher_better ? (r < 0.95) : (r > 1.05)
        printf "%-44s %12.4g %12.4g %8.3f%s\n", key " (" k[key] ")", b, a, r, worse ? "  WORSE" : ""
    }
}' "$out"/sb-*.csv "$out"/cb-*.csv 2>/dev/null | sort
