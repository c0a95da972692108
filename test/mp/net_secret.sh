#!/bin/bash
# The network path's job secret (issue #27, docs/SECURITY.md): a local
# process that is not part of the job, knowing the PE's listening ports
# and the address of a word in its heap but not the job's secret, cannot
# complete a write into it (test/mp/net_stranger.c tries the keys a
# small-integer scheme would give, after checking that it can write to
# itself). The job, under SHMEM_FORCE_NETWORK=1, still runs, and SHMEM_INFO
# says where its keys and secret come from. Messages shaped as the
# library's batches of atomics (src/net/ofi_agg.c) without the job's key
# are dropped with one line.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
PROG=$top_builddir/test/mp/misuse
STRANGER=$top_builddir/test/mp/net_stranger
[ -x "$PROG" ] || { echo "SKIP: $PROG not built"; exit 77; }
[ -x "$STRANGER" ] || { echo "SKIP: $STRANGER not built (no libfabric)"; exit 77; }

for prov in "tcp;ofi_rxm" sockets; do
    done_file=$TEST_TMP/done
    rm -f "$done_file"
    SHMEM_FORCE_NETWORK=1 SHMEM_OFI_PROVIDER="$prov" MISUSE_DONE=$done_file \
        SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 120 "$PROG" net_target "$MARK" \
        >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
    lpid=$!
    for i in $(seq 600); do
        grep -q '^target ' "$TEST_TMP/out" && break
        kill -0 $lpid 2>/dev/null || break
        sleep 0.1
    done
    target=$(grep '^target ' "$TEST_TMP/out")
    if [ -z "$target" ]; then
        cat "$TEST_TMP/err"
        grep -q "no libfabric provider" "$TEST_TMP/err" && {
            echo "provider $prov not here: skipped"
            continue
        }
        fail "$prov: the job did not start"
    fi
    set -- $target
    "$STRANGER" "$2" "$3" "$4" "$prov" >"$TEST_TMP/stranger" 2>&1
    src=$?
    touch "$done_file"
    wait $lpid
    RC=$?
    echo "--- $prov: stranger exit $src, job exit $RC"
    cat "$TEST_TMP/stranger"
    cat "$TEST_TMP/out"
    [ $src -ne 77 ] || { echo "stranger: no $prov here: skipped"; continue; }
    [ $src -ne 2 ] || fail "$prov: the stranger could not try"
    [ $src -eq 0 ] || fail "$prov: a write without the job's secret completed"
    [ $RC -eq 0 ] || fail "$prov: the job failed ($RC)"
    grep -q '^word 0$' "$TEST_TMP/out" || fail "$prov: the word was written: $(grep '^word' "$TEST_TMP/out")"
    # The batch-shaped messages arrived and were dropped, said once.
    expect_count 1 "network: dropped a message to the endpoint that does not carry the job's key" \
        "$(cat "$TEST_TMP/err")" "$prov: the stranger's messages"
    grep -q "memory keys: .*address records signed with the job's secret (from the launcher)" "$TEST_TMP/out" ||
        fail "$prov: SHMEM_INFO does not say where the keys come from"
    expect_clean "$prov"
done
echo "PASS: net_secret"
