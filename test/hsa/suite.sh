#!/bin/bash
# The hsa backend over the SDMA engine model (no AMD GPU here):
#  1. multi-PE programs (RMA, AMOs, signals, collectives with gated chains,
#     contexts, threads) pass with SHMEM_SDMA_BACKEND=hsa on 2 and 4 PEs
#     (quickstart runs the whole suite this way; this is the part that
#     `make check` runs every time);
#  2. SHMEM_INFO names the hsa queues and says the engine model runs;
#  3. SHMEM_SDMA_STATS prints packets, doorbells and batches per queue;
#  4. a job whose hsa library cannot be loaded fails at init with one line
#     when SHMEM_SDMA_BACKEND=hsa is asked for;
#  5. where no SDMA queue can be created (HSA_MODEL_NO_QUEUES=1 makes the
#     model's hsaKmtCreateQueue fail) the backend falls back to
#     hsa_amd_memory_async_copy, says so in SHMEM_INFO, and the programs
#     still pass;
#  6. SHMEM_HSA_MAX_QUEUES: a queue past the cap is refused with one line
#     naming it, a cap not reached changes nothing (SHMEM_INFO shows it),
#     a negative value is refused at init;
#  7. SHMEM_HSA_SDMA_ENGINE: every SDMA queue (RMA, chains, the device
#     API's) is created on that engine through hsaKmtCreateQueueExt (the
#     model logs each queue's engine); without the Ext entry point
#     (HSA_MODEL_NO_QUEUE_EXT=1) or with an engine the GPU lacks, init
#     fails with one line naming the setting.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
# Engine queues of PEs on one node are what this checks: the suite's
# SHMEM_FORCE_NETWORK=1 pass would take every collective off the engines
# (network puts), so it runs on-node there too.
unset SHMEM_FORCE_NETWORK

. "$top_srcdir/test/hsa/model.sh"
hsa_model
export SHMEM_SDMA_BACKEND=hsa SHMEM_HSA_LIBRARY=$MODEL
B=$top_builddir/test/mp

# --- 1
for prog in ${HSA_SUITE_PROGS:-rma_types rma_nbi fence wait amo_types \
        signal_ops coll_fcollect coll_alltoall coll_bcast coll_reduce \
        coll_sync coll_persist team_split ctx_ops lock_counter \
        thread_multiple nbi_progress}; do
    [ -x "$B/$prog" ] || continue
    for n in 2 4; do
        run "$LAUNCHER" -n "$n" --timeout 120 "$B/$prog" "$MARK"
        expect_rc 0 "$prog on $n PEs (hsa backend over the model)"
    done
done

# --- 2
run env SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_rc 0 "SHMEM_INFO run"
printf '%s\n' "$OUT" | grep -q "^sdma: hsa: .*SDMA queue.*ENGINE MODEL" ||
    fail "SHMEM_INFO does not describe the hsa queues over the model"

# --- 3
run env SHMEM_SDMA_STATS=1 "$LAUNCHER" -n 2 --timeout 60 "$B/coll_fcollect" "$MARK"
expect_rc 0 "SHMEM_SDMA_STATS run"
for pe in 0 1; do
    printf '%s\n' "$ERR" | grep -q "hsa stats PE $pe queue [0-9]* ([^)]*): packets [1-9][0-9]* doorbells [1-9][0-9]* batches [1-9]" ||
        fail "no per-queue packet/doorbell/batch line for PE $pe"
done

# --- 4
run env SHMEM_HSA_LIBRARY=/nonexistent/libhsa-runtime64.so.1 \
    "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_fail "hsa asked for without its library"
expect_err "SHMEM_SDMA_BACKEND=hsa" "the refusal names the setting"
# --- 5
run env HSA_MODEL_NO_QUEUES=1 SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 \
    "$B/rma_types" "$MARK"
expect_rc 0 "async-copy fallback"
printf '%s\n' "$OUT" | grep -q "^sdma: hsa: hsa_amd_memory_async_copy .*no SDMA queue (hsaKmtCreateQueue" ||
    fail "SHMEM_INFO does not name the async-copy fallback and why"
for prog in rma_nbi coll_fcollect coll_alltoall coll_persist signal_ops; do
    [ -x "$B/$prog" ] || continue
    for n in 2 4; do
        # MP_ALARM_S: coll_persist's 1,000 starts take 25 s on 4 PEs over
        # this fallback (3 s with queues), 35-60 s and more under ASan on a
        # loaded machine; the launcher's 120 s is the hang bound here.
        run env HSA_MODEL_NO_QUEUES=1 MP_ALARM_S=150 "$LAUNCHER" -n "$n" \
            --timeout 120 "$B/$prog" "$MARK"
        expect_rc 0 "$prog on $n PEs (async-copy fallback over the model)"
    done
done

# --- 6
if [ -x "$B/coll_persist" ]; then
    run env SHMEM_HSA_MAX_QUEUES=2 "$LAUNCHER" -n 2 --timeout 60 \
        "$B/coll_persist" "$MARK"
    expect_fail "persistent collectives with at most 2 SDMA queues per process"
    expect_err "hsa backend: an SDMA queue for a chain queue refused: SHMEM_HSA_MAX_QUEUES=2 SDMA queues per process are in use" \
        "the cap's refusal"
fi
run env SHMEM_HSA_MAX_QUEUES=64 SHMEM_INFO=1 "$LAUNCHER" -n 2 --timeout 60 \
    "$B/coll_fcollect" "$MARK"
expect_rc 0 "coll_fcollect under a cap it does not reach"
printf '%s\n' "$OUT" | grep -q "^sdma: hsa: .*(at most 64: SHMEM_HSA_MAX_QUEUES)" ||
    fail "SHMEM_INFO does not show the SDMA queue cap"
run env SHMEM_HSA_MAX_QUEUES=-1 "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_fail "a negative SHMEM_HSA_MAX_QUEUES"
expect_err "hsa backend: SHMEM_HSA_MAX_QUEUES=-1: must be >= 0" "the bad cap's line"

# --- 7
run env HSA_MODEL_LOG_QUEUES=1 "$LAUNCHER" -n 2 --timeout 60 "$B/coll_fcollect" "$MARK"
expect_rc 0 "queues of the driver's choice"
printf '%s\n' "$ERR" | grep -q "hsa model: SDMA queue [0-9]* on node 1, engine of the driver's choice" ||
    fail "the queues were not created by hsaKmtCreateQueue"
DEV=$top_builddir/test/hsa/dev_host
for prog in "$B/coll_fcollect" "$DEV"; do
    [ -x "$prog" ] || continue
    run env SHMEM_HSA_SDMA_ENGINE=3 HSA_MODEL_LOG_QUEUES=1 SHMEM_INFO=1 \
        "$LAUNCHER" -n 2 --timeout 120 "$prog" 1 20 "$MARK"
    expect_rc 0 "$(basename "$prog") with SHMEM_HSA_SDMA_ENGINE=3"
    printf '%s\n' "$ERR" | grep -q "hsa model: SDMA queue [0-9]* on node 1, engine 3\$" ||
        fail "$(basename "$prog"): no queue on engine 3"
    printf '%s\n' "$ERR" | grep -q "engine of the driver's choice" &&
        fail "$(basename "$prog"): a queue not on engine 3"
    printf '%s\n' "$OUT" | grep -q "^sdma: hsa: .*hsaKmtCreateQueueExt(HSA_QUEUE_SDMA_BY_ENG_ID, engine 3)" ||
        fail "SHMEM_INFO does not name the engine"
done
run env SHMEM_HSA_SDMA_ENGINE=3 HSA_MODEL_NO_QUEUE_EXT=1 "$LAUNCHER" -n 2 \
    --timeout 60 "$B/rma_types" "$MARK"
expect_fail "an engine without hsaKmtCreateQueueExt"
expect_err "hsa backend: SHMEM_HSA_SDMA_ENGINE=3 needs hsaKmtCreateQueueExt (ROCm >= 6.4" \
    "the missing Ext's line"
run env SHMEM_HSA_SDMA_ENGINE=99 "$LAUNCHER" -n 2 --timeout 60 "$B/rma_types" "$MARK"
expect_fail "an engine the GPU lacks"
expect_err "hsa backend: SHMEM_HSA_SDMA_ENGINE=99: hsaKmtCreateQueueExt(HSA_QUEUE_SDMA_BY_ENG_ID, engine 99) on node 1 failed" \
    "the bad engine's line"
echo "PASS"
