#!/bin/bash
# The device heap on the hsa backend over the SDMA engine model (no AMD
# GPU here): test/hsa/devheap.
#  1. shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE) on 1, 2 and 4 PEs:
#     each PE's heap from the GPU's device-local pool
#     (hsa_amd_memory_pool_allocate), the local peers' attached through
#     hsa_amd_ipc_memory_create/attach handles exchanged over the
#     bootstrap; put/get/nbi/typed RMA and fcollect/alltoall/broadcast/
#     sum reduction and a persistent fcollect between device-heap
#     objects, data checked;
#  2. the same with the async-copy fallback (HSA_MODEL_NO_QUEUES=1);
#  3. SHMEM_SDMA_STATS: the copies went through the SDMA queues;
#  4. refusal: where the GPU has no device-local pool
#     (HSA_MODEL_NO_DEVICE_POOL=1) the job runs without a device heap and
#     shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE) returns NULL with one
#     line saying why; on the cpu backend the same call returns NULL with
#     its line;
#  5. the model refuses to lock device memory for the engines
#     (hsa_amd_memory_lock is for host memory): no such line in a run,
#     i.e. the backend never asks;
#  6. the on-stream routines (cuda-only) fail with one line on the hsa
#     backend, which has a device heap but no streams;
#  7. the persistent fcollect's exchange through device words
#     (SHMEM_PERSISTENT_SYNC=dev), on SDMA queues and on the
#     async-copy fallback, whose host-run WAIT/SIGNAL must reach device
#     words with hsa_memory_copy;
#  8. CPU-side routines on device-heap words (AMO, wait, test, signal
#     add/fetch, put_signal) end the job with one line, strided put/get
#     works (test/gpu/gpu_devword.sh on cuda).
# The model gives device memory out as a PROT_NONE mapping: a CPU access
# to it anywhere in the runtime kills the PE with SIGSEGV.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
unset SHMEM_FORCE_NETWORK SHMEM_SDMA_BACKEND

. "$top_srcdir/test/hsa/model.sh"
hsa_model devheap
# 5 MiB objects x 4 PEs x 2, and the collectives' words: 256 MiB is ample.
export SHMEM_DEVICE_HEAP_SIZE=256M

# --- 1, 5
for n in 1 2 4; do
    run env $HSA "$LAUNCHER" -n "$n" --timeout 180 "$PROG" "$MARK"
    expect_rc 0 "device heap on $n PE(s) (hsa backend over the model)"
    printf '%s\n' "$OUT" | grep -q "^devheap: $n PEs*: device heap" ||
        fail "devheap on $n PE(s) did not report"
    printf '%s\n' "$ERR" | grep -q "device memory cannot be locked" &&
        fail "the backend asked to lock device memory"
done

# --- 2
run env $HSA HSA_MODEL_NO_QUEUES=1 "$LAUNCHER" -n 2 --timeout 180 "$PROG" "$MARK"
expect_rc 0 "device heap on 2 PEs (async-copy fallback over the model)"

# --- 3
run env $HSA SHMEM_SDMA_STATS=1 "$LAUNCHER" -n 2 --timeout 180 "$PROG" "$MARK"
expect_rc 0 "device heap with SHMEM_SDMA_STATS"
printf '%s\n' "$ERR" | grep -q "hsa stats PE 0 queue [0-9]* ([^)]*): packets [1-9][0-9]* doorbells [1-9][0-9]* batches [1-9][0-9]* commands [1-9][0-9]* cpu-run 0" ||
    fail "no SDMA queue of PE 0 moved the device heap's data (or the CPU ran copies)"

# --- 4
run env $HSA HSA_MODEL_NO_DEVICE_POOL=1 "$LAUNCHER" -n 2 --timeout 60 "$PROG" none "$MARK"
expect_rc 0 "no device-local pool: no device heap"
expect_err "shmem_malloc_with_hints: SHMEMX_MALLOC_DEVICE: no device heap (sdma backend hsa: GPU 0 (model-gfx90a) has no device-local coarse-grained memory pool the runtime may allocate from; SHMEM_DEVICE_HEAP_SIZE=268435456); returns NULL" \
    "the refusal's line"
run "$LAUNCHER" -n 2 --timeout 60 "$PROG" none "$MARK"
expect_rc 0 "the cpu backend: no device heap"
expect_err "shmem_malloc_with_hints: SHMEMX_MALLOC_DEVICE: no device heap (sdma backend cpu; SHMEM_DEVICE_HEAP_SIZE=268435456); returns NULL" \
    "the cpu backend's line"

# --- 7 (before 6: 6 ends the job on purpose)
for q in "" HSA_MODEL_NO_QUEUES=1; do
    run env $HSA $q SHMEM_PERSISTENT_SYNC=dev "$LAUNCHER" -n 2 \
        --timeout 180 "$PROG" "$MARK"
    expect_rc 0 "device heap, SHMEM_PERSISTENT_SYNC=dev ${q:-(SDMA queues)}"
done

# --- 8
run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" iput "$MARK"
expect_rc 0 "strided put/get on the device heap"
for mode in amo wait test signal_add signal_fetch put_signal; do
    run env $HSA "$LAUNCHER" -n 2 --timeout 60 "$PROG" "$mode" "$MARK"
    expect_fail "$mode on a device-heap word"
    expect_err "on the device heap (GPU memory): the CPU cannot operate on it" \
        "$mode: the one-line refusal"
done

# --- 6
run env $HSA "$LAUNCHER" -n 1 --timeout 60 "$PROG" stream "$MARK"
expect_fail "an on-stream routine on the hsa backend"
expect_err "shmemx_putmem_on_stream: the on-stream routines need the cuda backend (this PE runs 'hsa', which has no stream operations)" \
    "the on-stream refusal"
echo "PASS"
