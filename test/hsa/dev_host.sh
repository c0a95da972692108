#!/bin/bash
# The HIP device API's packet producer (include/shmemx_hip.h) on the host
# against the SDMA engine model (no AMD GPU here): test/hsa/dev_host, the
# header compiled as C, host threads producing into the PE's device SDMA
# queue as GPU threads would, with the handle from shmemx_dev_get over the
# hsa backend.
#  1. 1 PE: 8 producer threads x 1000 puts of varied sizes into one queue
#     (ring wrap-around, puts split across packets, store path and engine
#     mixed), data checked, gets, contended atomics, p/g, signals, device
#     barriers, fcollectmem/alltoallmem by one thread and by a group of
#     threads; SHMEM_SDMA_STATS counts the device queue's packets;
#  2. 2 PEs (8 x 1000) and 4 PEs (4 x 500): PE i's threads put into PE j's
#     heap and signal, PE j waits on the signal and checks every byte;
#     2 PEs again with SHMEM_DEV_STORE_MAX=0 (everything on the engine);
#  3. shmemx_dev_get returns -1 with one line on the cpu backend and where
#     the hsa backend has no SDMA queue (HSA_MODEL_NO_QUEUES=1: async
#     copies);
#  4. a put to a PE that does not exist, a p to an address outside the
#     symmetric segments, a put and an fcollectmem whose destination runs
#     past the end of the heap: one line naming routine,
#     PE and value, the job fails (does not hang), nothing is left behind;
#  5. SHMEM_HSA_MAX_QUEUES=1 (the RMA queue holds it): shmemx_dev_get
#     cannot have its queue and says so; the job fails.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
unset SHMEM_FORCE_NETWORK SHMEM_SDMA_BACKEND

. "$top_srcdir/test/hsa/model.sh"
hsa_model dev_host

# --- 1
run env $HSA SHMEM_SDMA_STATS=1 "$LAUNCHER" -n 1 --timeout 120 "$PROG" 8 1000 "$MARK"
expect_rc 0 "8 producer threads x 1000 puts on 1 PE"
printf '%s\n' "$ERR" | grep -q "hsa stats PE 0 device queue (kernels): packets [1-9][0-9][0-9][0-9]* doorbells [1-9]" ||
    fail "no device-queue packets counted: the puts did not go through the engine"

# --- 2
run env $HSA "$LAUNCHER" -n 2 --timeout 120 "$PROG" 8 1000 "$MARK"
expect_rc 0 "8 producer threads x 1000 puts on 2 PEs"
run env $HSA "$LAUNCHER" -n 4 --timeout 120 "$PROG" 4 500 "$MARK"
expect_rc 0 "4 producer threads x 500 puts on 4 PEs"
# Store threshold 0: every transfer, collectives included, on the engine.
run env $HSA SHMEM_DEV_STORE_MAX=0 "$LAUNCHER" -n 2 --timeout 120 "$PROG" 4 200 "$MARK"
expect_rc 0 "SHMEM_DEV_STORE_MAX=0 on 2 PEs"

# --- 3
run "$LAUNCHER" -n 2 --timeout 60 "$PROG" refuse "$MARK"
expect_rc 0 "refusal on the cpu backend"
expect_err "PE 0: shmemx_dev_get: needs the hsa sdma backend (this PE runs 'cpu')" \
    "the cpu backend's refusal"
run env $HSA HSA_MODEL_NO_QUEUES=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" refuse "$MARK"
expect_rc 0 "refusal without SDMA queues"
expect_err "PE 1: shmemx_dev_get: the hsa backend runs hsa_amd_memory_async_copy here (no SDMA queue: hsaKmtCreateQueue" \
    "the async-copy refusal"

# --- 4
run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" badpe "$MARK"
expect_fail "a put to PE 2 of 2"
expect_err "PE 0: shmemx_dev_putmem_nbi: invalid PE 2 (npes 2)" "the bad PE's line"
expect_clean "the failed job"

run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" badput "$MARK"
expect_fail "a putmem_nbi past the end of the heap"
expect_err "PE 0: shmemx_dev_putmem_nbi: address 0x[0-9a-f]*, the last byte of the symmetric range, is past the end of its segment" \
    "the put's line"
expect_clean "the failed job"
run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" badaddr "$MARK"
expect_fail "a p to an address that is not symmetric"
expect_err "PE 0: shmemx_dev_uint64_p: address 0x[0-9a-f]* is not symmetric" \
    "the address's line"
expect_clean "the failed job"
run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" badcoll "$MARK"
expect_fail "an fcollectmem past the end of the heap"
expect_err "PE 0: shmemx_dev_fcollectmem: address 0x[0-9a-f]*, the last byte of the symmetric range, is past the end of its segment" \
    "the destination's line"
expect_clean "the failed job"

# --- 5
run env $HSA SHMEM_HSA_MAX_QUEUES=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" 1 10 "$MARK"
expect_fail "the device queue past SHMEM_HSA_MAX_QUEUES"
expect_err "shmemx_dev_get: no SDMA queue left for kernels: SHMEM_HSA_MAX_QUEUES=1 are in use" \
    "the device queue's refusal"
echo "PASS"
