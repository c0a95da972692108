#!/bin/bash
# The inter-node path (src/net) on one machine, whatever mode `make check`
# runs in (quickstart also reruns the whole suite with SHMEM_FORCE_NETWORK=1):
#  1. the RMA/AMO/collective programs pass with every PE its own node, on
#     both providers the project supports (tcp;ofi_rxm and sockets);
#  2. a provider that does not exist fails the job at startup with one line
#     naming it and what to set, non-zero, no hang;
#  3. a PE killed in network mode ends the job (137) and leaves nothing.
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
                 coll_fcollect:3 lock_counter:3; do
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
echo "PASS: network"
