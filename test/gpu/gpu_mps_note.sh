#!/bin/bash
# Several PEs on one GPU without CUDA MPS (#15): the lowest of them prints
# one note at start-up, SHMEM_INFO names the sharing; one PE per GPU, or
# an MPS daemon (started here, private pipe directory, where we are root
# and nvidia-cuda-mps-control exists), gives no note. Skipped (77) where
# there is no GPU.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

GPU_PROG=${GPU_PROG:-$top_builddir/test/gpu/gpu_rma}
command -v nvidia-smi >/dev/null 2>&1 || { echo "SKIP: no nvidia-smi"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
[ -x "$GPU_PROG" ] || { echo "SKIP: $GPU_PROG not built"; exit 77; }
note='share GPU 0 without CUDA MPS'

run() { # tag npes [env...]
    local tag=$1 n=$2; shift 2
    env "$@" SHMEM_CUDA_DEVICE=0 "$LAUNCHER" -n "$n" --timeout 120 "$GPU_PROG" \
        >"$TEST_TMP/$tag.out" 2>"$TEST_TMP/$tag.err" </dev/null
}

default_dir=${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}
if [ -e "$default_dir/control" ]; then
    echo "an MPS daemon already runs ($default_dir): the no-MPS half is skipped"
else
    run two 2 SHMEM_INFO=1 || { cat "$TEST_TMP/two.err"; fail "2 PEs on GPU 0 failed"; }
    grep -q SKIP "$TEST_TMP/two.out" && { echo "SKIP: no usable GPU"; exit 77; }
    c=$(grep -c "$note" "$TEST_TMP/two.err")
    [ "$c" = 1 ] || { cat "$TEST_TMP/two.err"; fail "expected the note once, got $c"; }
    grep -q "^gpu: GPU 0 (PCI .*) shared by 2 PEs of this node, no MPS daemon" \
        "$TEST_TMP/two.out" || { cat "$TEST_TMP/two.out"; fail "SHMEM_INFO has no sharing line"; }
fi

run one 1 || { cat "$TEST_TMP/one.err"; fail "1 PE failed"; }
! grep -q "$note" "$TEST_TMP/one.err" || fail "a note with one PE on the GPU"

if [ "$(id -u)" = 0 ] && command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    mps=$TEST_TMP/mps
    mkdir -p "$mps/pipe" "$mps/log"
    export CUDA_MPS_PIPE_DIRECTORY=$mps/pipe CUDA_MPS_LOG_DIRECTORY=$mps/log
    nvidia-cuda-mps-control -d || fail "cannot start an MPS daemon"
    run mps 2 SHMEM_INFO=1
    rc=$?
    echo quit | nvidia-cuda-mps-control
    [ $rc = 0 ] || { cat "$TEST_TMP/mps.err"; fail "2 PEs under MPS failed"; }
    ! grep -q "$note" "$TEST_TMP/mps.err" || fail "a note although MPS runs"
    grep -q "shared by 2 PEs of this node, MPS daemon found" "$TEST_TMP/mps.out" ||
        { cat "$TEST_TMP/mps.out"; fail "SHMEM_INFO does not see the MPS daemon"; }
else
    echo "not root or no nvidia-cuda-mps-control: the MPS half is skipped"
fi
echo "PASS: the shared-GPU note"
