#!/bin/bash
# make bench-network: the inter-node path on one machine. shmem_bench
# (put/get latency, pingpong, put_nbi bandwidth, barrier), fence_bench
# (put + fence + flag: stream, fan, the Synch_p2p pipeline; with
# SHMEM_OFI_FENCE=quiet too, the method before per-PE fences, for
# comparison), coll_bench
# (fcollect, alltoall, ...) and net_ctx_bench (what a context costs to
# create, use first, reuse and destroy, for each SHMEM_OFI_CTX_EPS in
# BENCH_CTX_EPS, default "4 0") with SHMEM_FORCE_NETWORK=1 (every PE its own
# node, libfabric on loopback) for each provider in BENCH_PROVIDERS
# (default "tcp;ofi_rxm sockets"), 2 PEs; the on-node figures are
# `make bench`'s. Results land in $BENCH_OUT (default bench/results under
# the build tree) as net-*.csv/txt; the tables are printed as they come.
#
# Environment: top_builddir, BENCH_ARGS (e.g. --quick), BENCH_OUT,
# BENCH_PROVIDERS, BENCH_NPES (default 2), BENCH_TIMEOUT (s per run),
# BENCH_CTX_EPS, BENCH_NET_P2P_ARGS (shmem_bench's own options; default
# "--iters-div 20 --reps 3" where BENCH_ARGS is empty: shmem_bench's
# iteration counts are sized for shared memory, and over tcp;ofi_rxm on
# loopback (20-40 us per operation) its full run took ~1 min per size and
# did not end within the 900 s limit; a twentieth of the iterations is
# still 1,000 round trips per small size, over every size).
set -u
top_builddir=${top_builddir:-.}
BENCH_ARGS=${BENCH_ARGS:-}
out=${BENCH_OUT:-$top_builddir/bench/results}
providers=${BENCH_PROVIDERS:-"tcp;ofi_rxm sockets"}
npes_list=${BENCH_NPES:-2}
limit=${BENCH_TIMEOUT:-900}
ctx_eps_list=${BENCH_CTX_EPS:-4 0}
p2p_args=${BENCH_NET_P2P_ARGS-${BENCH_ARGS:---iters-div 20 --reps 3}}
launcher=$top_builddir/src/launcher/shmem_launcher
mkdir -p "$out" || exit 1
status=0

for prov in $providers; do
    tag=${prov//;/+}
    for n in $npes_list; do
        echo
        echo "==== SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov, $n PEs ===="
        if [ "$n" = 2 ]; then
            SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov \
                "$launcher" -n 2 --timeout "$limit" \
                "$top_builddir/bench/shmem_bench" --label "net-$tag" \
                --tests put,get,pingpong,bw,barrier $p2p_args \
                --csv "$out/net-p2p-$tag.csv" | tee "$out/net-p2p-$tag.txt" ||
                { echo "run-network: shmem_bench over $prov failed" >&2; status=1; }
        fi
        for fm in auto quiet; do
            SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov SHMEM_OFI_FENCE=$fm \
                "$launcher" -n "$n" --timeout "$limit" \
                "$top_builddir/bench/fence_bench" --label "net-$tag-$fm" \
                $BENCH_ARGS --csv "$out/net-fence-$tag-$n-$fm.csv" |
                tee "$out/net-fence-$tag-$n-$fm.txt" ||
                { echo "run-network: fence_bench over $prov ($n PEs, fence $fm) failed" >&2; status=1; }
        done
        SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov \
            "$launcher" -n "$n" --timeout "$limit" \
            "$top_builddir/bench/coll_bench" --label "net-$tag" $BENCH_ARGS \
            --csv "$out/net-coll-$tag-$n.csv" | tee "$out/net-coll-$tag-$n.txt" ||
            { echo "run-network: coll_bench over $prov ($n PEs) failed" >&2; status=1; }
        for eps in $ctx_eps_list; do
            SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER=$prov SHMEM_OFI_CTX_EPS=$eps \
                "$launcher" -n "$n" --timeout "$limit" \
                "$top_builddir/bench/net_ctx_bench" --label "net-$tag-eps$eps" \
                $BENCH_ARGS --csv "$out/net-ctx-$tag-$n-eps$eps.csv" |
                tee "$out/net-ctx-$tag-$n-eps$eps.txt" ||
                { echo "run-network: net_ctx_bench over $prov ($n PEs, SHMEM_OFI_CTX_EPS=$eps) failed" >&2; status=1; }
        done
    done
done
exit $status
