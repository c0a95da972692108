#!/bin/bash
# shmem_launcher --launcher mpirun and --hosts: the job is handed to mpirun
# (one line on stderr says exactly what runs), SHMEM_* variables are
# exported with -x, root is allowed without OMPI_ALLOW_RUN_AS_ROOT, exit
# statuses come through, and a missing launcher is a clear error (127).
. "${top_srcdir:-$(dirname "$0")/../..}/test/pmix/common.sh"

bin=$top_builddir/test/mp
root_word=
[ -n "$ROOT_FLAG" ] && root_word=" --allow-run-as-root"
# -x for each SHMEM_*/SMA_* variable the caller's environment holds.
xvars='\( -x [A-Za-z0-9_]*\)*'

for n in 2 4; do
    run timeout -k 5 "$JOB_LIMIT" "$LAUNCHER" -n $n --launcher mpirun "$bin/rma_types" "$MARK"
    expect_rc 0 "--launcher mpirun, rma_types on $n PEs"
    expect_count 1 "^rma_types: $n PEs: every typed, sized and mem RMA form OK\$" "$OUT" "rma_types on $n PEs"
    expect_count 1 "^shmem_launcher: running: " "$ERR" "the running line"
    expect_count 1 "^shmem_launcher: running: $MPIRUN_BIN --oversubscribe -np $n$root_word$xvars $bin/rma_types $MARK\$" "$ERR" "the running line on $n PEs"
done

SHMEM_SYMMETRIC_SIZE=64M run timeout -k 5 "$JOB_LIMIT" "$LAUNCHER" -n 4 --launcher mpirun "$bin/coll_fcollect" "$MARK"
expect_rc 0 "--launcher mpirun with SHMEM_SYMMETRIC_SIZE"
expect_count 1 "^shmem_launcher: running: .* -x SHMEM_SYMMETRIC_SIZE$xvars $bin/coll_fcollect $MARK\$" "$ERR" "-x SHMEM_SYMMETRIC_SIZE"
expect_count 1 "^coll_fcollect (auto): 4 PEs OK\$" "$OUT" "coll_fcollect through shmem_launcher"

run timeout -k 5 "$JOB_LIMIT" "$LAUNCHER" -n 2 --hosts localhost --tag-output "$BOOT_CLIENT" "$MARK" info
expect_rc 0 "--hosts localhost"
expect_count 1 "^shmem_launcher: running: $MPIRUN_BIN --oversubscribe -np 2$root_word --host localhost --tag-output$xvars $BOOT_CLIENT $MARK info\$" "$ERR" "--hosts line"
expect_count 2 "backend pmix rank [01] size 2 node_rank [01] node_size 2 node_id 0 num_nodes 1" "$OUT" "--hosts localhost layout"

run timeout -k 5 "$JOB_LIMIT" "$LAUNCHER" -n 4 --launcher mpirun "$EXIT_PROG" global_exit "$MARK"
expect_rc 7 "--launcher mpirun, shmem_global_exit(7)"
expect_count 1 "^PE 1 called shmem_global_exit(7)\$" "$ERR" "global_exit message through shmem_launcher"
expect_clean "--launcher mpirun"

# Errors: no mpirun in PATH, srun missing, --hosts with the local launcher.
lpath=$(cd "$(dirname "$LAUNCHER")" && pwd)/$(basename "$LAUNCHER")
empty=$TEST_TMP/empty-path
mkdir -p "$empty"
run env PATH="$empty" "$lpath" -n 2 --launcher mpirun "$bin/rma_types"
expect_rc 127 "--launcher mpirun without mpirun"
expect_err "shmem_launcher: --launcher mpirun: 'mpirun' not found in PATH" "--launcher mpirun without mpirun"
run env PATH="$empty" "$lpath" -n 2 --hosts a,b "$bin/rma_types"
expect_rc 127 "--hosts without mpirun"
if ! command -v srun >/dev/null; then
    run "$LAUNCHER" -n 2 --launcher srun "$bin/rma_types"
    expect_rc 127 "--launcher srun without srun"
    expect_err "shmem_launcher: --launcher srun: 'srun' not found in PATH" "--launcher srun without srun"
fi
run "$LAUNCHER" -n 2 --launcher local --hosts a,b "$bin/rma_types"
expect_rc 2 "--hosts with --launcher local"
expect_err "shmem_launcher: --hosts needs --launcher mpirun or srun" "--hosts with --launcher local"
run "$LAUNCHER" -n 2 --launcher qsub "$bin/rma_types"
expect_rc 2 "--launcher qsub"
expect_err "shmem_launcher: invalid launcher 'qsub'" "--launcher qsub"
expect_clean "errors"
echo "PASS: shmem_launcher hands jobs to mpirun"
