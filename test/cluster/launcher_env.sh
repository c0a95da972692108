#!/bin/bash
# A task that a parallel launcher started but no bootstrap of ours can join
# stops in shmem_init with one line saying how to start the job, instead
# of running as a 1-PE job of its own (issue #32: under srun --mpi=pmi2
# every task printed "PE 0 of 1" and exited 0). The launchers' variables
# are faked here: Slurm's step (SLURM_STEP_NUM_TASKS, and SLURM_NTASKS in
# a step), PMI-1/PMI-2 (PMI_SIZE), Open MPI (OMPI_COMM_WORLD_SIZE). A
# count of 1, a variable of the batch script (SLURM_NTASKS outside a
# step) and SHMEM_BOOTSTRAP=single run as before. Then SHMEM_INFO's
# bootstrap line and SHMEM_DEBUG's path table on one node, 2 and 4 PEs.
. "${top_srcdir:-$(dirname "$0")/../..}/test/mp/common.sh"
unset SHMEM_FORCE_NETWORK SLURM_STEP_NUM_TASKS SLURM_NTASKS SLURM_STEP_ID SLURM_PROCID PMI_SIZE \
    PMI_RANK PMI_FD OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_RANK PMIX_RANK \
    PMIX_NAMESPACE PMIX_SERVER_URI2 PMIX_SERVER_URI21 PMIX_SERVER_URI3 \
    PMIX_SERVER_URI4

# lone VAR=VALUE... PATTERN: the program, started alone with those
# variables, fails at once with one line matching PATTERN.
lone() {
    local pat=${*: -1}
    run env "${@:1:$#-1}" timeout 20 "$EXIT_PROG" ok "$MARK"
    expect_rc 1 "$*"
    [ "$(printf '%s\n' "$ERR" | grep -c 'shmem_init: the launcher started')" -eq 1 ] ||
        fail "$*: not one line saying what the launcher started"
    expect_err "$pat" "$*"
    printf '%s\n' "$OUT" | grep -q ready && fail "$*: the program ran"
    expect_faster 10000 "$*"
}

lone SLURM_STEP_NUM_TASKS=4 SLURM_STEP_ID=0 SLURM_PROCID=2 \
    "started 4 tasks (SLURM_STEP_NUM_TASKS=4), but the single bootstrap sees a job of 1 PE: every task would run alone; srun started it without PMIx (the site's default MPI plugin, or --mpi=pmi2/none): start it with srun --mpi=pmix"
lone SLURM_NTASKS=3 SLURM_STEP_ID=1 "started 3 tasks (SLURM_NTASKS=3)"
lone PMI_SIZE=2 PMI_RANK=1 PMI_FD=9 \
    "started 2 tasks (PMI_SIZE=2).*PMI-1/PMI-2 (srun --mpi=pmi2, MPICH's mpiexec), which dmashmem does not speak: start it with srun --mpi=pmix or Open MPI's mpirun"
lone OMPI_COMM_WORLD_SIZE=8 OMPI_COMM_WORLD_RANK=0 "started 8 tasks (OMPI_COMM_WORLD_SIZE=8)"

# Not a lone task of a parallel job.
for vars in "SLURM_STEP_NUM_TASKS=1 SLURM_STEP_ID=0" "SLURM_NTASKS=4" \
    "PMI_SIZE=1" "OMPI_COMM_WORLD_SIZE=1" \
    "SHMEM_BOOTSTRAP=single SLURM_STEP_NUM_TASKS=4 SLURM_STEP_ID=0"; do
    # shellcheck disable=SC2086
    run env $vars timeout 20 "$EXIT_PROG" ok "$MARK"
    expect_rc 0 "$vars"
    printf '%s\n' "$OUT" | grep -q ready || fail "$vars: the program did not run"
done
# The launcher's own jobs are not affected.
run env SLURM_STEP_NUM_TASKS=4 SLURM_STEP_ID=0 "$LAUNCHER" -n 2 "$EXIT_PROG" ok "$MARK"
expect_rc 0 "shmem_launcher -n 2 inside a Slurm step"
expect_clean "lone tasks"

# SHMEM_INFO names the bootstrap and the nodes; SHMEM_DEBUG prints the path
# table (test/cluster/cluster.sh checks both on three nodes under PMIx).
for n in 2 4; do
    run env SHMEM_INFO=1 SHMEM_DEBUG=1 "$LAUNCHER" -n $n "$EXIT_PROG" ok "$MARK"
    expect_rc 0 "SHMEM_INFO on $n PEs"
    expect_count 1 "^bootstrap: launcher, $n PEs on 1 node\$" "$OUT" "SHMEM_INFO's bootstrap line"
    for pe in $(seq 0 $((n - 1))); do
        expect_count 1 "^dmashmem: debug: PE $pe: paths: PEs 0-$((n - 1)) -> shm (load/store, cpu engines), AMOs shm\$" \
            "$ERR" "PE $pe's path table"
    done
    # The network's side needs the libfabric path.
    grep -q '^#define DSM_HAVE_OFI 1' "$top_builddir/config/dsm_config.h" || continue
    run env SHMEM_FORCE_NETWORK=1 SHMEM_DEBUG=1 "$LAUNCHER" -n $n "$EXIT_PROG" ok "$MARK"
    expect_rc 0 "SHMEM_DEBUG with SHMEM_FORCE_NETWORK on $n PEs"
    others="PEs 1-$((n - 1))"
    [ $n -eq 2 ] && others="PE 1"
    expect_count 1 "^dmashmem: debug: PE 0: paths: $others -> net ([^ ]* on lo), AMOs net\$" \
        "$ERR" "PE 0's path table over the network"
    expect_count 1 "^dmashmem: debug: PE 0: paths: PE 0 -> shm (load/store, cpu engines), AMOs net\$" \
        "$ERR" "PE 0's path to itself"
done
run env SHMEM_INFO=1 "$EXIT_PROG" ok "$MARK"
expect_count 1 "^bootstrap: single, 1 PE on 1 node\$" "$OUT" "a program run alone"
expect_clean "SHMEM_INFO and SHMEM_DEBUG"
echo "PASS: lone tasks of a parallel launch stop with a line saying how to start the job; SHMEM_INFO's bootstrap line and SHMEM_DEBUG's path table"
