#!/bin/bash
# The inter-node path (src/net) on one machine, whatever mode `make check`
# runs in (quickstart also reruns the whole suite with SHMEM_FORCE_NETWORK=1):
#  1. the RMA/AMO/collective programs pass with every PE its own node, on
#     both providers the project supports (tcp;ofi_rxm and sockets), and
#     SHMEM_INFO says non-fetching AMOs to peers go in batches;
#  2. a provider that does not exist fails the job at startup with one line
#     naming it and what to set, non-zero, no hang;
#  3. a PE killed in network mode ends the job (137) and leaves nothing;
#  4. completion by flush reads (SHMEM_OFI_COMPLETION=read: sockets orders
#     reads after writes) passes the completion tests, SHMEM_INFO names the
#     method, and a provider without that order (tcp;ofi_rxm) is refused
#     with one line;
#  5. every fence method (SHMEM_OFI_FENCE: target, quiet) keeps data
#     before flags (fence_net), with delivery-complete writes and with
#     flush reads; SHMEM_INFO names the method; another value is refused
#     with one line;
#  6. waiters that sleep (SHMEM_WAIT_MODE=sleep; auto where PEs outnumber
#     cores) block on the completion queue's wait fd and wake when a peer's
#     operation arrives: the waiting programs pass on 2 and 4 PEs, and
#     SHMEM_INFO names where waiters sleep.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

if ! ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 '; then
    echo "SKIP: libfabric.so.1 not installed"
    exit 77
fi
export SHMEM_FORCE_NETWORK=1
B=$top_builddir/test/mp

# --- 1: programs, both providers, 2 PEs and 3 (a non-power of two)
for prov in "tcp;ofi_rxm" sockets; do
    for run_n in rma_types:2 amo_types:2 signal_ops:2 coll_alltoall:2 \
                 coll_fcollect:3 lock_counter:3 ctx_quiet_mt:2 \
                 pe_quiet_net:3 fence_net:4 pe_quiet_stall:3 \
                 ctx_pool_net:2 amo_batch:2 amo_batch:4; do
        prog=${run_n%:*} n=${run_n#*:}
        run env SHMEM_OFI_PROVIDER="$prov" "$LAUNCHER" -n "$n" --timeout 90 \
            "$B/$prog" "$MARK"
        expect_rc 0 "$prog on $n PEs over $prov"
        [ -n "$OUT" ] || fail "$prog on $n PEs over $prov printed nothing"
    done
    # The provider in use is the one asked for.
    run env SHMEM_OFI_PROVIDER="$prov" SHMEM_VERSION=1 "$LAUNCHER" -n 2 \
        --timeout 60 "$B/rma_types" "$MARK"
    expect_rc 0 "version banner over $prov"
    printf '%s\n' "$OUT" | grep -qF "network $prov" ||
        fail "the banner does not name provider $prov"
    # Software atomics (both providers): AMOs on this PE's words by the
    # CPU, non-fetching ones to peers in batches (src/net/ofi_agg.c).
    run env SHMEM_OFI_PROVIDER="$prov" SHMEM_INFO=1 "$LAUNCHER" -n 2 \
        --timeout 60 "$B/amo_batch" "$MARK"
    expect_rc 0 "SHMEM_INFO over $prov"
    printf '%s\n' "$OUT" | grep -qF "non-fetching ones to a peer in batches" ||
        fail "SHMEM_INFO over $prov does not say AMOs go in batches"
done

# --- 2: a provider that does not exist
run env SHMEM_OFI_PROVIDER=no_such_prov "$LAUNCHER" -n 2 --timeout 60 \
    "$B/rma_types" "$MARK"
expect_fail "unknown provider"
expect_err "no_such_prov" "unknown provider"
expect_err "SHMEM_OFI_PROVIDER" "unknown provider"
expect_faster 20000 "unknown provider"
expect_clean "unknown provider"

# --- 3: kill -9 of one PE in network mode
"$LAUNCHER" -n 3 --timeout 60 "$EXIT_PROG" sleep "$MARK" >"$TEST_TMP/out" \
    2>"$TEST_TMP/err" </dev/null &
lpid=$!
wait_pes 3
victim=$(pe_pids | sed -n 2p)
t0=$(now_ms)
kill -KILL "$victim"
wait "$lpid"
RC=$?
ELAPSED=$(( $(now_ms) - t0 ))
[ "$RC" -eq 137 ] || fail "kill -9 of a PE in network mode: status $RC, expected 137"
[ "$ELAPSED" -lt 10000 ] || fail "kill -9 of a PE in network mode: $ELAPSED ms to end"
expect_clean "kill -9 of a PE in network mode"
# --- 4: flush reads instead of delivery-complete writes
for run_n in ctx_quiet_mt:2 pe_quiet_net:3 rma_nbi:2 signal_ops:2; do
    prog=${run_n%:*} n=${run_n#*:}
    run env SHMEM_OFI_PROVIDER=sockets SHMEM_OFI_COMPLETION=read \
        "$LAUNCHER" -n "$n" --timeout 90 "$B/$prog" "$MARK"
    expect_rc 0 "$prog on $n PEs over sockets with flush reads"
done
for mode in read auto; do
    run env SHMEM_OFI_PROVIDER=sockets SHMEM_OFI_COMPLETION=$mode \
        SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
    expect_rc 0 "SHMEM_INFO over sockets, SHMEM_OFI_COMPLETION=$mode"
    want="quiet: delivery-complete writes"
    [ $mode = read ] && want="quiet: a read per PE written"
    printf '%s\n' "$OUT" | grep -q "^network: sockets .*$want" ||
        fail "SHMEM_INFO does not say '$want' (SHMEM_OFI_COMPLETION=$mode)"
done
run env "SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_OFI_COMPLETION=read \
    "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_fail "flush reads over tcp;ofi_rxm (no read-after-write order)"
expect_err "FI_ORDER_RAW" "flush reads over tcp;ofi_rxm"
expect_faster 20000 "flush reads over tcp;ofi_rxm"
expect_clean "flush reads over tcp;ofi_rxm"
# --- 5: fence methods
for pm in "tcp;ofi_rxm:quiet" "tcp;ofi_rxm:target" sockets:target \
          sockets:quiet; do
    prov=${pm%:*} m=${pm##*:}
    run env SHMEM_OFI_PROVIDER="$prov" SHMEM_OFI_FENCE=$m "$LAUNCHER" -n 3 \
        --timeout 90 "$B/fence_net" "$MARK"
    expect_rc 0 "fence_net on 3 PEs over $prov, SHMEM_OFI_FENCE=$m"
done
run env SHMEM_OFI_PROVIDER=sockets SHMEM_OFI_COMPLETION=read \
    SHMEM_OFI_FENCE=target "$LAUNCHER" -n 3 --timeout 90 "$B/fence_net" "$MARK"
expect_rc 0 "fence_net over sockets with flush reads, SHMEM_OFI_FENCE=target"
run env "SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_INFO=1 "$LAUNCHER" -n 2 \
    --timeout 60 "$B/rma_types" "$MARK"
expect_rc 0 "SHMEM_INFO over tcp;ofi_rxm"
printf '%s\n' "$OUT" | grep -q "^network: tcp;ofi_rxm .*fence: the next write to a PE" ||
    fail "SHMEM_INFO over tcp;ofi_rxm does not name the per-PE fence"
run env "SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_OFI_FENCE=flag "$LAUNCHER" \
    -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_fail "SHMEM_OFI_FENCE=flag"
expect_err "SHMEM_OFI_FENCE" "SHMEM_OFI_FENCE=flag"
expect_faster 20000 "SHMEM_OFI_FENCE=flag"
expect_clean "SHMEM_OFI_FENCE=flag"
# --- 6: sleeping waiters block on the network
for n in 2 4; do
    for prog in signal_ops coll_fcollect lock_counter fence_net; do
        run env "SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_WAIT_MODE=sleep \
            "$LAUNCHER" -n "$n" --timeout 90 "$B/$prog" "$MARK"
        expect_rc 0 "$prog on $n PEs over tcp;ofi_rxm, SHMEM_WAIT_MODE=sleep"
    done
done
for wm in sleep:"on the completion queue's fd" spin:never; do
    run env "SHMEM_OFI_PROVIDER=tcp;ofi_rxm" SHMEM_WAIT_MODE=${wm%%:*} \
        SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
    expect_rc 0 "SHMEM_INFO, SHMEM_WAIT_MODE=${wm%%:*}"
    printf '%s\n' "$OUT" | grep -q "^network: .*waiters sleep: ${wm#*:}" ||
        fail "SHMEM_INFO does not say 'waiters sleep: ${wm#*:}' (SHMEM_WAIT_MODE=${wm%%:*})"
done
echo "PASS: network"
