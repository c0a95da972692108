#!/bin/bash
# Contexts and locks on the inter-node path (src/net, issue #14) with every
# PE its own node (SHMEM_FORCE_NETWORK=1), on 1, 2 and 4 PEs (4 on 2 cores
# is oversubscribed and must finish, not spin):
#  1. net_ctx_many (64 contexts, data checked) and net_mt_lock (threads of
#     every PE on one lock, counter checked) over the default provider;
#  2. contexts all on the default context's endpoint (SHMEM_OFI_CTX_EPS=0)
#     open no file (ctx_pool_net) and pass net_ctx_many, on both providers;
#  3. SHMEM_INFO names the endpoints contexts may open; a value out of
#     range is refused with one line naming the variable, no hang, nothing
#     left behind;
#  4. every PE's placement line (SHMEM_INFO) names its network domain and
#     why: loopback here with SHMEM_OFI_DOMAIN=auto (one node plays
#     several), the name given with SHMEM_OFI_DOMAIN (test/unit/net_domain
#     checks the choice among several NICs); a domain the provider does
#     not have is refused with one line (tcp;ofi_rxm answered a request
#     for lo with eth0 before).
#  5. a PE opening endpoints for its contexts (fi_enable: ~0.2 s each on
#     tcp;ofi_rxm, seconds on a loaded node) goes on answering its peers:
#     SHMEM_PEER_TIMEOUT=3 with 16 endpoints on 2 PEs, 8 on 4. Before, the
#     open held the shared CQ's lock, the heartbeat's reads and every
#     operation waited behind it and both jobs ended with "lost PE" every
#     run (in CI: default settings, 4 PEs, the ASan build, now and then).
#  6. locks with no progress thread and no heartbeat
#     (SHMEM_OFI_PROGRESS_US=0 SHMEM_PEER_TIMEOUT=0), 1, 2 and 4 PEs: the
#     lock's home PE, whose threads waited for the lock asleep, read no
#     completions, so the other PEs' AMOs on it were never answered (a
#     hang; with the heartbeat on, one answer a second: 23 s on 2 PEs).
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

if ! ldconfig -p 2>/dev/null | grep -q 'libfabric\.so\.1 '; then
    echo "SKIP: libfabric.so.1 not installed"
    exit 77
fi
export SHMEM_FORCE_NETWORK=1
B=$top_builddir/test/mp

# --- 1
for n in 1 2 4; do
    for prog in net_ctx_many net_mt_lock; do
        run "$LAUNCHER" -n "$n" --timeout 110 "$B/$prog" "$MARK"
        expect_rc 0 "$prog on $n PEs"
    done
done

# --- 2
for prov in "tcp;ofi_rxm" sockets; do
    for prog in ctx_pool_net net_ctx_many; do
        run env SHMEM_OFI_PROVIDER="$prov" SHMEM_OFI_CTX_EPS=0 "$LAUNCHER" \
            -n 2 --timeout 110 "$B/$prog" "$MARK"
        expect_rc 0 "$prog on 2 PEs over $prov, SHMEM_OFI_CTX_EPS=0"
    done
done

# --- 3
run env SHMEM_OFI_CTX_EPS=3 SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 \
    "$B/net_ctx_many" "$MARK"
expect_rc 0 "SHMEM_INFO with SHMEM_OFI_CTX_EPS=3"
printf '%s\n' "$OUT" | grep -q "contexts: on 3 endpoint(s) besides" ||
    fail "SHMEM_INFO does not name the 3 context endpoints"
for bad in -1 65; do
    run env SHMEM_OFI_CTX_EPS=$bad "$LAUNCHER" -n 2 --timeout 60 \
        "$B/net_ctx_many" "$MARK"
    expect_fail "SHMEM_OFI_CTX_EPS=$bad"
    expect_err "SHMEM_OFI_CTX_EPS=$bad" "SHMEM_OFI_CTX_EPS=$bad"
    [ "$(printf '%s\n' "$ERR" | grep -c SHMEM_OFI_CTX_EPS)" -le 2 ] ||
        fail "SHMEM_OFI_CTX_EPS=$bad: more than one line per PE"
    expect_faster 20000 "SHMEM_OFI_CTX_EPS=$bad"
    expect_clean "SHMEM_OFI_CTX_EPS=$bad"
done
# --- 4
run env SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 "$B/net_ctx_many" "$MARK"
expect_rc 0 "SHMEM_INFO, SHMEM_OFI_DOMAIN=auto"
[ "$(printf '%s\n' "$OUT" | grep -c '^placement: PE [01] .*, network domain lo (loopback: one node plays several)$')" -eq 2 ] ||
    fail "the placement lines do not name the loopback domain on both PEs"
run env SHMEM_INFO=1 SHMEM_OFI_DOMAIN=lo "$LAUNCHER" -n 2 --timeout 60 \
    "$B/net_ctx_many" "$MARK"
expect_rc 0 "SHMEM_INFO, SHMEM_OFI_DOMAIN=lo"
[ "$(printf '%s\n' "$OUT" | grep -c '^placement: PE [01] .*, network domain lo (SHMEM_OFI_DOMAIN)$')" -eq 2 ] ||
    fail "the placement lines do not say the domain was given"
run env SHMEM_OFI_DOMAIN=no_such_dom "$LAUNCHER" -n 2 --timeout 60 \
    "$B/net_ctx_many" "$MARK"
expect_fail "SHMEM_OFI_DOMAIN=no_such_dom"
expect_err "SHMEM_OFI_DOMAIN=no_such_dom" "SHMEM_OFI_DOMAIN=no_such_dom"
expect_faster 20000 "SHMEM_OFI_DOMAIN=no_such_dom"
expect_clean "SHMEM_OFI_DOMAIN=no_such_dom"
# --- 5
for ne in 2:16 4:8; do
    n=${ne%:*} e=${ne#*:}
    run env SHMEM_OFI_CTX_EPS="$e" SHMEM_PEER_TIMEOUT=3 "$LAUNCHER" -n "$n" \
        --timeout 110 "$B/net_ctx_many" "$MARK"
    expect_rc 0 "net_ctx_many on $n PEs, $e endpoints, SHMEM_PEER_TIMEOUT=3"
    printf '%s\n' "$ERR" | grep -q "lost PE" &&
        fail "net_ctx_many on $n PEs, $e endpoints: a PE was taken for lost"
done
# --- 6
for n in 1 2 4; do
    run env SHMEM_OFI_PROGRESS_US=0 SHMEM_PEER_TIMEOUT=0 "$LAUNCHER" -n "$n" \
        --timeout 60 "$B/net_mt_lock" "$MARK"
    expect_rc 0 "net_mt_lock on $n PEs without a progress thread"
done
echo "net_ctx: ok"
