#!/bin/sh
# CUDA_MODULE_LOADING (#26): the launcher starts its PEs with EAGER unless
# the user set a value, which stays. Lazy loading makes a kernel's first
# launch wait for the kernels running, and a kernel waiting in the device
# API for the proxy then never ends (shmemx_dev(3), Hazards). 1, 2 and 4
# PEs; every PE prints what it got.
. "$(dirname "$0")/common.sh"

for n in 1 2 4; do
    run env -u CUDA_MODULE_LOADING "$LAUNCHER" -n $n sh -c \
        'echo "PE $DMASHMEM_RANK: ${CUDA_MODULE_LOADING:-unset}"' "$MARK"
    expect_rc 0 "$n PEs, unset"
    [ "$(printf '%s\n' "$OUT" | grep -c ': EAGER$')" -eq $n ] ||
        fail "$n PEs, unset: not EAGER in every PE: $OUT"
    expect_clean "$n PEs, unset"

    run env CUDA_MODULE_LOADING=LAZY "$LAUNCHER" -n $n sh -c \
        'echo "PE $DMASHMEM_RANK: ${CUDA_MODULE_LOADING:-unset}"' "$MARK"
    expect_rc 0 "$n PEs, LAZY"
    [ "$(printf '%s\n' "$OUT" | grep -c ': LAZY$')" -eq $n ] ||
        fail "$n PEs, LAZY: the user's value was not kept: $OUT"
    expect_clean "$n PEs, LAZY"
done
echo "PASS: $TEST_NAME"
