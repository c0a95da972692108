#!/bin/bash
# A PE killed mid-job (while both PEs move device memory with the copy
# engines, or wait in a kernel) ends the job, and no process of it is left
# on any GPU, nothing in /dev/shm.
# Skipped (77) where there is no GPU or no nvidia-smi.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"

# GPU_PROG (default gpu_rma) is run as `GPU_PROG hang MARK`: it prints
# "ready" once its PEs are busy on the GPU (gpu_rma: copy-engine traffic;
# test/gpu/dev_api.cu: a kernel waiting on a device API signal).
GPU_PROG=${GPU_PROG:-$top_builddir/test/gpu/gpu_rma}
GPU_COMM=$(basename "$GPU_PROG")
command -v nvidia-smi >/dev/null 2>&1 || { echo "SKIP: no nvidia-smi"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no GPU"; exit 77; }
[ -x "$GPU_PROG" ] || { echo "SKIP: $GPU_PROG not built"; exit 77; }

# The PE processes (the launcher carries the marker too).
gpu_pe_pids() {
    local p
    for p in $(pgrep -f -- "$MARK"); do
        case "$(ps -o comm= -p "$p" 2>/dev/null)" in
        "$GPU_COMM" | "lt-$GPU_COMM") echo "$p" ;;
        esac
    done
}

gpu_pids() {
    nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | tr -d ' '
}

"$LAUNCHER" -n 2 --timeout 60 "$GPU_PROG" hang "$MARK" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
lpid=$!
for i in $(seq 300); do
    grep -q ready "$TEST_TMP/out" && break
    grep -q SKIP "$TEST_TMP/out" && { wait "$lpid"; echo "SKIP: no GPU"; exit 77; }
    sleep 0.1
done
grep -q ready "$TEST_TMP/out" || { cat "$TEST_TMP/err"; fail "the 2 GPU PEs did not start"; }
pes=$(gpu_pe_pids)
victim=$(echo "$pes" | sed -n 2p)
[ -n "$victim" ] || fail "no PE process found (pids: $pes)"
sleep 1
t0=$(now_ms)
kill -KILL "$victim"
wait "$lpid"
RC=$?
ELAPSED=$(( $(now_ms) - t0 ))
echo "--- launcher returned $RC $ELAPSED ms after kill -9 of PE pid $victim"
[ "$RC" -ne 0 ] || fail "kill -9 of a GPU PE: the launcher returned 0"
[ "$ELAPSED" -lt 15000 ] || fail "kill -9 of a GPU PE: the job took $ELAPSED ms to end"
# The driver tears down a dead process's contexts asynchronously.
for i in $(seq 100); do
    left=
    for p in $pes; do
        kill -0 "$p" 2>/dev/null && left="$left $p"
        gpu_pids | grep -qx "$p" && left="$left gpu:$p"
    done
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] || fail "after kill -9: still running or on a GPU:$left"
echo "nvidia-smi compute apps after the job: $(gpu_pids | tr '\n' ' ')"
expect_clean "kill -9 of a GPU PE ($GPU_COMM)"
echo "PASS: gpu_kill"
